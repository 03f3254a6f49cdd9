//! Legacy Streamable HTTP (2025-03-26 … 2025-11-25): sessions made by
//! `initialize` and named by `Mcp-Session-Id`, the version header from
//! 2025-06-18 on, the GET stream, resumption with `Last-Event-ID`, and
//! `DELETE`.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use http::Response;
use mcp_protocol::{Message, ProtocolVersion, methods};
use serde_json::Value;
use tokio::sync::mpsc;

use super::exchange;
use super::front::{Front, RecordedRequest, Served};
use super::knobs::HttpKnob;
use super::reply::{self, Body};
use super::streams::{Attach, STANDALONE, parse_event_id};
use crate::errors::SERVER_ERROR;

/// `Mcp-Session-Id`.
pub(super) const SESSION_HEADER: &str = "mcp-session-id";
/// `MCP-Protocol-Version`.
pub(super) const VERSION_HEADER: &str = "mcp-protocol-version";

/// A POST of the legacy rules; `session` is the id the client named.
pub(super) async fn post(
    front: &Arc<Front>,
    seen: &RecordedRequest,
    message: Message,
    session: Option<String>,
) -> Response<Body> {
    let initialize = message.method() == Some(methods::INITIALIZE);
    let served = if front.options.stateless {
        front.stateless()
    } else if let Some(id) = &session {
        match known(front, seen, id) {
            Ok(served) => served,
            Err(refused) => return *refused,
        }
    } else if initialize && matches!(message, Message::Request(_)) {
        let (id, served) = front.new_session();
        let Message::Request(request) = message else {
            unreachable!("checked above")
        };
        let header = vec![(SESSION_HEADER, id)];
        return exchange::answer(front, &served, request, false, header).await;
    } else if message.method() == Some(methods::SERVER_DISCOVER) {
        if front.options.has_knob(&HttpKnob::DiscoverNotInitialized) {
            let text = "Bad Request: Server not initialized";
            return reply::rpc_error(400, id_of(&message), SERVER_ERROR, text);
        }
        // No session yet: a server of its own answers it, as a fresh
        // server would.
        Served::new(front.config.clone(), false, true)
    } else {
        let text = "Bad Request: Mcp-Session-Id header is required";
        return reply::rpc_error(400, id_of(&message), SERVER_ERROR, text);
    };
    match message {
        Message::Request(request) => {
            let n = served.requests.fetch_add(1, Ordering::Relaxed) + 1;
            let limit = front.options.find("", |k| match k {
                HttpKnob::ExpireSessionsAfter(n) => Some(*n),
                _ => None,
            });
            if let (Some(limit), Some(id)) = (limit, &session)
                && n > limit
            {
                front.end_session(id);
                return unknown_session(front, request.id.to_value());
            }
            exchange::answer(front, &served, request, false, Vec::new()).await
        }
        other => {
            served.session.handle(other);
            reply::status(202)
        }
    }
}

/// `GET`: the session's GET stream, or a stream resumed by `Last-Event-ID`.
pub(super) fn get(front: &Arc<Front>, seen: &RecordedRequest) -> Response<Body> {
    if !front.streamable_legacy() || front.options.stateless || front.options.no_get_stream {
        return reply::status(405);
    }
    let Some(id) = seen.header(SESSION_HEADER) else {
        let text = "Bad Request: Mcp-Session-Id header is required";
        return reply::rpc_error(400, Value::Null, SERVER_ERROR, text);
    };
    let served = match known(front, seen, id) {
        Ok(served) => served,
        Err(refused) => return *refused,
    };
    let drip = front.options.find("", |k| match k {
        HttpKnob::Drip(_, d) => Some(*d),
        _ => None,
    });
    let (tx, rx) = mpsc::unbounded_channel();
    let attached = match seen.header("last-event-id") {
        Some(last) => {
            if front.options.has_knob(&HttpKnob::ResumeEmpty) {
                drop(tx);
                return reply::sse(rx, None, None, None);
            }
            let Some((no, after)) = parse_event_id(last) else {
                let text = "Bad Request: unknown Last-Event-ID";
                return reply::rpc_error(400, Value::Null, SERVER_ERROR, text);
            };
            served.hub.attach(no, Some(after), tx)
        }
        None => served.hub.attach(STANDALONE, None, tx),
    };
    match attached {
        Attach::Attached => reply::sse(rx, None, drip, None),
        Attach::Busy => {
            let text = "Conflict: only one stream per session is allowed";
            reply::rpc_error(409, Value::Null, SERVER_ERROR, text)
        }
        Attach::Unknown => {
            let text = "Bad Request: no stream has that Last-Event-ID";
            reply::rpc_error(400, Value::Null, SERVER_ERROR, text)
        }
    }
}

/// `DELETE`: ends the session.
pub(super) fn delete(front: &Arc<Front>, seen: &RecordedRequest) -> Response<Body> {
    if !front.streamable_legacy() || front.options.stateless {
        return reply::status(405);
    }
    let Some(id) = seen.header(SESSION_HEADER) else {
        let text = "Bad Request: Mcp-Session-Id header is required";
        return reply::rpc_error(400, Value::Null, SERVER_ERROR, text);
    };
    if let Err(refused) = known(front, seen, id) {
        return *refused;
    }
    front.end_session(id);
    reply::status(200)
}

/// The session `id` names, its version header checked.
fn known(
    front: &Front,
    seen: &RecordedRequest,
    id: &str,
) -> Result<Arc<Served>, Box<Response<Body>>> {
    let Some(served) = front.session(id) else {
        return Err(Box::new(unknown_session(front, id_of_body(seen))));
    };
    if let Some(version) = served.hub.version()
        && ProtocolVersion::new(version.clone()) >= ProtocolVersion::V2025_06_18
        && let Some(sent) = seen.header(VERSION_HEADER)
        && sent != version
    {
        let text = format!(
            "Bad Request: Unsupported protocol version {sent:?} (this session speaks {version})"
        );
        return Err(Box::new(reply::rpc_error(
            400,
            id_of_body(seen),
            SERVER_ERROR,
            &text,
        )));
    }
    Ok(served)
}

fn unknown_session(front: &Front, id: Value) -> Response<Body> {
    if front.options.has_knob(&HttpKnob::UnknownSessionIs400) {
        let text = "Bad Request: No valid session ID provided";
        return reply::rpc_error(400, id, SERVER_ERROR, text);
    }
    reply::rpc_error(404, id, -32001, "Session not found")
}

fn id_of(message: &Message) -> Value {
    match message {
        Message::Request(r) => r.id.to_value(),
        _ => Value::Null,
    }
}

fn id_of_body(seen: &RecordedRequest) -> Value {
    seen.json().get("id").cloned().unwrap_or(Value::Null)
}
