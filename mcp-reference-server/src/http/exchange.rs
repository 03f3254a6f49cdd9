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
    let asked = Asked::new(front, served, &request, modern);
    let options = &front.options;
    let content_type = options.find(&asked.method, |k| match k {
        HttpKnob::ContentType(_, t) => Some(t.clone()),
        _ => None,
    });
    let endless = options
        .find(&asked.method, |k| {
            matches!(k, HttpKnob::EndlessBody(_)).then_some(())
        })
        .is_some();
    let mut response = if options.json || content_type.is_some() || endless {
        answer_json(&asked, request, content_type, endless).await
    } else {
        answer_sse(&asked, request).await
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

/// What either form of answer needs to know of the request it answers.
struct Asked<'a> {
    front: &'a Front,
    served: &'a Arc<Served>,
    modern: bool,
    method: String,
    id: RequestId,
    initialize: bool,
    /// Its `_meta.progressToken`.
    token: Option<RequestId>,
    /// The `Oversized` knob's size, if one applies to the method.
    pad_to: Option<usize>,
}

impl<'a> Asked<'a> {
    fn new(front: &'a Front, served: &'a Arc<Served>, request: &Request, modern: bool) -> Self {
        let method = request.method.clone();
        let token = request
            .meta()
            .and_then(|m| m.get(PROGRESS_TOKEN))
            .and_then(RequestId::from_value);
        let pad_to = front.options.find(&method, |k| match k {
            HttpKnob::Oversized(_, n) => Some(*n),
            _ => None,
        });
        Self {
            front,
            served,
            modern,
            initialize: method == methods::INITIALIZE,
            id: request.id.clone(),
            method,
            token,
            pad_to,
        }
    }

    /// Opens the request's stream in this form (before the server sees the
    /// request), and returns its number.
    fn open(&self, form: Form) -> u64 {
        let opening = Opening {
            request: self.id.clone(),
            token: self.token.clone(),
            form,
            pad_to: self.pad_to,
        };
        self.served.hub.open(opening, self.initialize)
    }

    /// A modern request's cancel guard for stream `no`.
    fn cancel_guard(&self, no: u64) -> Option<OnDrop> {
        self.modern
            .then(|| cancel_guard(self.front, self.served, no, &self.id))
    }
}

/// Answers as one JSON body, of `content_type` if a knob sets one, never
/// ending if `endless`.
async fn answer_json(
    asked: &Asked<'_>,
    request: Request,
    content_type: Option<Option<String>>,
    endless: bool,
) -> Response<Body> {
    let (tx, rx) = oneshot::channel();
    let no = asked.open(Form::Json(Some(tx)));
    let _cancel = asked.cancel_guard(no);
    asked.served.session.handle(Message::Request(request));
    let Ok(message) = rx.await else {
        let text = "the server went away before answering";
        return reply::rpc_error(500, asked.id.to_value(), INTERNAL_ERROR, text);
    };
    let code = if asked.modern {
        modern_status(&message)
    } else {
        200
    };
    let bytes = Bytes::from(message.to_value().to_string());
    let kind = content_type.unwrap_or_else(|| Some("application/json".to_owned()));
    let mut response = reply::with_body(code, kind.as_deref(), Bytes::new());
    *response.body_mut() = if endless {
        reply::endless(bytes)
    } else {
        http_body_util::BodyExt::boxed_unsync(http_body_util::Full::new(bytes))
    };
    response
}

/// Answers as an SSE stream; a modern request's immediate error goes out
/// as JSON instead, with the HTTP status the spec gives it.
async fn answer_sse(asked: &Asked<'_>, request: Request) -> Response<Body> {
    let (options, hub, modern) = (&asked.front.options, &asked.served.hub, asked.modern);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let no = asked.open(Form::Sse { ids: !modern });
    let dropped = options
        .find(&asked.method, |k| match k {
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
    asked.served.session.handle(Message::Request(request));
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
    let guard = asked.cancel_guard(no);
    let drip = options.find(&asked.method, |k| match k {
        HttpKnob::Drip(_, d) => Some(*d),
        _ => None,
    });
    reply::sse(rx, first, drip, guard)
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
