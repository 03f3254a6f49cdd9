//! HTTP answers: JSON bodies, JSON-RPC errors, and SSE streams read from
//! a session's or a request's queue.

use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use serde_json::{Value, json};

use super::streams::Reader;

/// Every answer's body.
pub(crate) type Body = UnsyncBoxBody<Bytes, Infallible>;

/// A bare status.
pub(crate) fn status(code: StatusCode) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::new()).boxed_unsync());
    *response.status_mut() = code;
    response
}

/// A JSON body with this status.
pub(crate) fn json(code: StatusCode, body: Vec<u8>) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed_unsync());
    *response.status_mut() = code;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// A JSON-RPC error (id `id`, or null) with this status.
pub(crate) fn rpc_error(code: StatusCode, id: Value, error: i64, message: &str) -> Response<Body> {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": error, "message": message}});
    json(code, body.to_string().into_bytes())
}

/// The headers every SSE answer carries.
pub(crate) fn sse_headers(response: &mut Response<Body>) {
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
}

/// How often an SSE stream with nothing to say carries a comment: a
/// client that vanished is noticed when writing to it fails, and proxies
/// keep the stream open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// An SSE answer whose events come from `reader` until its stream ends.
pub(crate) fn sse(reader: Reader) -> Response<Body> {
    let state = (reader, tokio::time::Instant::now() + KEEP_ALIVE);
    let stream = futures::stream::unfold(state, |(mut reader, quiet_until)| async move {
        let frame = tokio::select! {
            frame = reader.events.recv() => {
                let frame = frame?;
                reader.queued.fetch_sub(1, Ordering::Relaxed);
                frame
            }
            () = tokio::time::sleep_until(quiet_until) => Bytes::from_static(b": keep-alive\n\n"),
        };
        let next = (reader, tokio::time::Instant::now() + KEEP_ALIVE);
        Some((Ok::<_, Infallible>(Frame::data(frame)), next))
    });
    let mut response = Response::new(StreamBody::new(stream).boxed_unsync());
    sse_headers(&mut response);
    response
}
