//! Answering one request, either era: its stream is opened before the
//! server sees it, then the answer goes out as SSE or JSON, as the options
//! and knobs have it.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Response};
use mcp_protocol::error_codes::{INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND};
use mcp_protocol::meta::PROGRESS_TOKEN;
use mcp_protocol::{Message, Notification, Request, RequestId, methods};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::front::{Front, Served};
use super::knobs::HttpKnob;
use super::reply::{self, Body, OnDrop};
use super::streams::{Form, Opening};

/// How long a modern request's first event is waited for, to answer an
/// immediate error with the HTTP status the spec gives it.
const FIRST_EVENT_WAIT: Duration = Duration::from_millis(50);

/// Answers `request` through `served`, with these extra response headers.
pub(super) async fn answer(
    front: &Front,
    served: &Arc<Served>,
    request: Request,
    modern: bool,
    headers: Vec<(&'static str, String)>,
) -> Response<Body> {
    let options = &front.options;
    let method = request.method.clone();
    let id = request.id.clone();
    let initialize = method == methods::INITIALIZE;
    let token = request
        .meta()
        .and_then(|m| m.get(PROGRESS_TOKEN))
        .and_then(RequestId::from_value);
    let content_type = options.find(&method, |k| match k {
        HttpKnob::ContentType(_, t) => Some(t.clone()),
        _ => None,
    });
    let endless = options
        .find(&method, |k| {
            matches!(k, HttpKnob::EndlessBody(_)).then_some(())
        })
        .is_some();
    let pad_to = options.find(&method, |k| match k {
        HttpKnob::Oversized(_, n) => Some(*n),
        _ => None,
    });
    let hub = served.hub.clone();
    let mut response = if options.json || content_type.is_some() || endless {
        let (tx, rx) = oneshot::channel();
        let opening = Opening {
            request: id.clone(),
            token,
            form: Form::Json(Some(tx)),
            pad_to,
        };
        let no = hub.open(opening, initialize);
        let _cancel = modern.then(|| cancel_guard(front, served, no, &id));
        served.session.handle(Message::Request(request));
        let Ok(message) = rx.await else {
            let text = "the server went away before answering";
            return reply::rpc_error(500, id.to_value(), INTERNAL_ERROR, text);
        };
        let code = if modern { modern_status(&message) } else { 200 };
        let bytes = Bytes::from(message.to_value().to_string());
        let kind = content_type.unwrap_or_else(|| Some("application/json".to_owned()));
        let mut response = reply::with_body(code, kind.as_deref(), Bytes::new());
        *response.body_mut() = if endless {
            reply::endless(bytes)
        } else {
            http_body_util::BodyExt::boxed_unsync(http_body_util::Full::new(bytes))
        };
        response
    } else {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let opening = Opening {
            request: id.clone(),
            token,
            form: Form::Sse { ids: !modern },
            pad_to,
        };
        let no = hub.open(opening, initialize);
        let dropped = options
            .find(&method, |k| match k {
                HttpKnob::DropStream(_, retry) => Some(*retry),
                _ => None,
            })
            .filter(|_| !modern);
        if let Some(retry) = dropped.or(options.retry.filter(|_| !modern)) {
            hub.prime(no, Some(retry));
        }
        hub.attach(no, None, tx);
        if dropped.is_some() {
            // The priming event went out; the stream ends before the answer.
            hub.detach(no);
        }
        served.session.handle(Message::Request(request));
        let mut first = None;
        if modern {
            first = tokio::time::timeout(FIRST_EVENT_WAIT, rx.recv())
                .await
                .ok()
                .flatten();
            if let Some(chunk) = &first
                && hub.answered(no)
                && let Some(message) = event_message(chunk)
            {
                let code = modern_status(&message);
                if code != 200 {
                    return reply::json_body(code, &message.to_value());
                }
            }
        }
        let guard = modern.then(|| cancel_guard(front, served, no, &id));
        let drip = options.find(&method, |k| match k {
            HttpKnob::Drip(_, d) => Some(*d),
            _ => None,
        });
        reply::sse(rx, first, drip, guard)
    };
    for (name, value) in headers {
        if let Ok(v) = HeaderValue::from_str(&value) {
            response
                .headers_mut()
                .insert(HeaderName::from_static(name), v);
        }
    }
    response
}

/// Cancels the request when its stream (or its waiting JSON answer) is
/// dropped unanswered: closing a modern stream is the cancel.
fn cancel_guard(front: &Front, served: &Arc<Served>, no: u64, id: &RequestId) -> OnDrop {
    let (session, hub, id) = (served.session.clone(), served.hub.clone(), id.clone());
    let log = front.cancelled.clone();
    OnDrop::new(move || {
        if !hub.answered(no) {
            log.lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(id.clone());
            let params = json!({"requestId": id, "reason": "the client closed the stream"});
            let cancel = Notification::new(methods::NOTIFICATION_CANCELLED, Some(params));
            session.handle(Message::Notification(cancel));
        }
    })
}

/// The HTTP status of a modern answer (the spec's table).
fn modern_status(message: &Message) -> u16 {
    use mcp_protocol::error_codes::{
        HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION,
    };
    match message {
        Message::Error(e) => match e.error.code {
            HEADER_MISMATCH
            | MISSING_REQUIRED_CLIENT_CAPABILITY
            | UNSUPPORTED_PROTOCOL_VERSION
            | INVALID_PARAMS => 400,
            METHOD_NOT_FOUND => 404,
            _ => 200,
        },
        _ => 200,
    }
}

/// The message in an SSE chunk of ours.
fn event_message(chunk: &[u8]) -> Option<Message> {
    let text = std::str::from_utf8(chunk).ok()?;
    let data = text.lines().find_map(|l| l.strip_prefix("data: "))?;
    Message::from_value(serde_json::from_str::<Value>(data).ok()?).ok()
}
