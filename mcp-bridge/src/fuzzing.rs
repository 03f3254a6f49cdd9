//! The parsers that read outside bytes (the HTTP side's, and the
//! envelope of a line passed through), driven over
//! bytes held in memory, for the workspace's fuzz targets (`fuzz/`) and
//! their replay on stable. Not part of the API: hidden from the docs and
//! free to change.

use http::HeaderMap;
use mcp_protocol::{Message, RequestId};

use crate::http::guard;
use crate::http::streams::{Streams, Weight};

/// Whether a `Host` value names loopback.
pub fn is_loopback_host(host: &str) -> bool {
    guard::is_loopback_host(host)
}

/// Whether an `Origin` value is a loopback origin.
pub fn is_loopback_origin(origin: &str) -> bool {
    guard::is_loopback_origin(origin)
}

/// The checks of a request's head; `Err` says why it was turned away.
pub fn check_head(
    host: Option<&str>,
    origin: Option<&str>,
    authorization: Option<&[u8]>,
    loopback: bool,
    origins: &[String],
    token: Option<&[u8]>,
) -> Result<(), String> {
    guard::check(host, origin, authorization, loopback, origins, token)
        .map_err(|r| format!("{r:?}"))
}

/// The checks of a 2026-07-28 request's headers against its body.
pub fn check_headers(headers: &HeaderMap, message: &Message) -> Result<(), String> {
    crate::http::headers::check_headers(headers, message)
}

/// The `Mcp-Param-*` checks of a `tools/call` against a tool's schema.
pub fn check_params(
    headers: &HeaderMap,
    params: Option<&serde_json::Value>,
    schema: Option<&serde_json::Value>,
) -> Result<(), String> {
    crate::http::headers::check_params(headers, params, schema)
}

/// A request stream that carried `events` events before it broke, resumed
/// from `last_event_id`: how many events the resumed stream replays, or
/// `None` when the id names no stream kept.
pub fn resume(events: usize, last_event_id: &str) -> Option<usize> {
    let mut streams = Streams::default();
    let reader = streams.open_post(&[(RequestId::Number(1), None)]);
    drop(reader);
    for _ in 0..events {
        streams.during(Some(&RequestId::Number(1)), None, b"{}", Weight::Kept);
    }
    let mut resumed = streams.resume(last_event_id)?;
    let mut replayed = 0;
    while resumed.events.try_recv().is_ok() {
        replayed += 1;
    }
    Some(replayed)
}

/// The id and method of a line the bridge may pass through unparsed, or
/// `None` when the engine is left to read it.
pub fn envelope(line: &[u8]) -> Option<(Option<RequestId>, Option<String>)> {
    crate::passthrough::envelope_of(line)
}
