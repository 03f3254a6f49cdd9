//! The 2024-11-05 HTTP+SSE transport: `GET` opens the event stream, whose
//! first event, `endpoint`, names where to POST (`/messages?sessionId=…`,
//! same origin); POSTs there get `202`, and everything the server sends,
//! answers included, arrives as `message` events on the stream. Closing
//! the stream ends the server.

use std::sync::Arc;

use http::Response;
use mcp_protocol::Message;
use serde_json::Value;
use tokio::sync::mpsc;

use super::front::{Front, RecordedRequest, Served};
use super::reply::{self, Body, OnDrop};
use super::streams::STANDALONE;
use mcp_protocol::error_codes::{INVALID_REQUEST, PARSE_ERROR};

/// `GET`: a new connection and its event stream.
pub(super) fn open(front: &Arc<Front>, _seen: &RecordedRequest) -> Response<Body> {
    let id = front.fresh_id();
    let served = Served::new(front.config.clone(), true, false);
    front
        .old
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(id.clone(), served.clone());
    let (tx, rx) = mpsc::unbounded_channel();
    served
        .hub
        .push_event(STANDALONE, "endpoint", &format!("/messages?sessionId={id}"));
    served.hub.attach(STANDALONE, None, tx);
    let gone = {
        let front = Arc::downgrade(front);
        OnDrop::new(move || {
            // No resumption in this transport: a closed stream is the end.
            if let Some(front) = front.upgrade() {
                let served = front
                    .old
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&id);
                if let Some(served) = served {
                    served.stop();
                }
            }
        })
    };
    reply::sse(rx, None, None, Some(gone))
}

/// `POST /messages?sessionId=…`: a message for that connection.
pub(super) fn post(front: &Arc<Front>, seen: &RecordedRequest) -> Response<Body> {
    let id = seen
        .uri
        .split_once('?')
        .and_then(|(_, q)| q.split('&').find_map(|kv| kv.strip_prefix("sessionId=")));
    let served = id.and_then(|id| {
        front
            .old
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
    });
    let Some(served) = served else {
        return reply::with_body(404, Some("text/plain"), "Could not find session".into());
    };
    let message = match serde_json::from_slice::<Value>(&seen.body) {
        Err(e) => return reply::rpc_error(400, Value::Null, PARSE_ERROR, &e.to_string()),
        Ok(v) => match Message::from_value(v) {
            Ok(m) => m,
            Err(e) => return reply::rpc_error(400, Value::Null, INVALID_REQUEST, &e.to_string()),
        },
    };
    served.session.handle(message);
    reply::with_body(202, Some("text/plain"), "Accepted".into())
}
