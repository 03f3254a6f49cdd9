//! HTTP answers: bodies, JSON-RPC errors, SSE streams (dripped or not)
//! that notice their reader leaving.

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// Every answer's body.
pub(super) type Body = UnsyncBoxBody<Bytes, Infallible>;

/// A bare status.
pub(super) fn status(code: u16) -> Response<Body> {
    with_body(code, None, Bytes::new())
}

/// A status with a body of this type (`None`: no `Content-Type`).
pub(super) fn with_body(code: u16, content_type: Option<&str>, body: Bytes) -> Response<Body> {
    let mut response = Response::new(Full::new(body).boxed_unsync());
    *response.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::OK);
    if let Some(t) = content_type.and_then(|t| HeaderValue::from_str(t).ok()) {
        response.headers_mut().insert(http::header::CONTENT_TYPE, t);
    }
    response
}

/// A JSON body.
pub(super) fn json_body(code: u16, value: &Value) -> Response<Body> {
    with_body(
        code,
        Some("application/json"),
        Bytes::from(value.to_string()),
    )
}

/// A JSON-RPC error with this HTTP status.
pub(super) fn rpc_error(code: u16, id: Value, error: i64, message: &str) -> Response<Body> {
    json_body(
        code,
        &json!({"jsonrpc": "2.0", "id": id, "error": {"code": error, "message": message}}),
    )
}

/// What a proxy in front of a dead server answers.
pub(super) fn bad_gateway() -> Response<Body> {
    let page = "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\
                <body><h1>502 Bad Gateway</h1><p>The upstream server is not answering.</p>\
                </body></html>\n";
    with_body(502, Some("text/html; charset=utf-8"), Bytes::from(page))
}

/// A 307 to `location`.
pub(super) fn redirect(location: &str) -> Response<Body> {
    let mut response = status(307);
    if let Ok(v) = HeaderValue::from_str(location) {
        response.headers_mut().insert(http::header::LOCATION, v);
    }
    response
}

/// A body that writes `bytes`, then stays open forever.
pub(super) fn endless(bytes: Bytes) -> Body {
    let stream = futures::stream::unfold(Some(bytes), |first| async move {
        match first {
            Some(b) => Some((Ok::<_, Infallible>(Frame::data(b)), None)),
            None => futures::future::pending().await,
        }
    });
    StreamBody::new(stream).boxed_unsync()
}

/// Runs its closure when dropped: when the body it sits in is dropped,
/// that is when the client went away or the stream ended.
pub(super) struct OnDrop(Option<Box<dyn FnOnce() + Send>>);

impl OnDrop {
    pub(super) fn new(f: impl FnOnce() + Send + 'static) -> OnDrop {
        OnDrop(Some(Box::new(f)))
    }
}

impl Drop for OnDrop {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f();
        }
    }
}

struct Reading {
    rx: mpsc::UnboundedReceiver<Bytes>,
    first: Option<Bytes>,
    /// The bytes of a chunk still to drip.
    rest: Bytes,
    drip: Option<Duration>,
    _guard: Option<OnDrop>,
}

/// An SSE answer whose chunks come from `rx` (and `first` before them),
/// one byte per `drip` when given; `guard` is dropped with the body.
pub(super) fn sse(
    rx: mpsc::UnboundedReceiver<Bytes>,
    first: Option<Bytes>,
    drip: Option<Duration>,
    guard: Option<OnDrop>,
) -> Response<Body> {
    let reading = Reading {
        rx,
        first,
        rest: Bytes::new(),
        drip,
        _guard: guard,
    };
    let stream = futures::stream::unfold(reading, |mut r| async move {
        if r.rest.is_empty() {
            r.rest = match r.first.take() {
                Some(b) => b,
                None => r.rx.recv().await?,
            };
        }
        let chunk = match r.drip {
            Some(interval) => {
                tokio::time::sleep(interval).await;
                r.rest.split_to(1)
            }
            None => std::mem::take(&mut r.rest),
        };
        Some((Ok::<_, Infallible>(Frame::data(chunk)), r))
    });
    let mut response = Response::new(StreamBody::new(stream).boxed_unsync());
    let headers = response.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        http::header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache"),
    );
    // Proxies must pass events on as they come.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}
