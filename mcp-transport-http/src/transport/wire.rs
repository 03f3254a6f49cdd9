//! The wires a request can go out on, and which one it takes: the seam
//! between the writer, which keeps the order of the queue, and each
//! wire's exchange (`modern`, `session`, `fallback`).

use http::HeaderMap;
use mcp_protocol::Message;
use mcp_transport::SharedMeta;
use tokio::sync::oneshot;

/// One of the three wires of MCP over HTTP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Wire {
    /// 2026-07-28: no session; the version, method and name in headers.
    Modern,
    /// Streamable HTTP of 2025-03-26 to 2025-11-25: the session the
    /// server gave, resumption, the fallback on a refused `initialize`.
    Session,
    /// 2024-11-05 HTTP+SSE: POSTs to the endpoint the GET stream named,
    /// answers on that stream.
    HttpSse,
}

impl Wire {
    /// The wire of a request at its turn: HTTP+SSE once the connection
    /// fell back to it, whatever the request; else modern when the
    /// request's `_meta` (with the shared members) names a modern
    /// version, else the session-based one.
    pub(super) fn of(http_sse: bool, modern: bool) -> Wire {
        match (http_sse, modern) {
            (true, _) => Wire::HttpSse,
            (false, true) => Wire::Modern,
            (false, false) => Wire::Session,
        }
    }
}

/// A request at its turn, as the writer prepared it: what a wire's
/// exchange takes.
pub(super) struct Outgoing {
    /// The request (a `Message::Request`).
    pub(super) message: Message,
    /// The connection's shared `_meta`, spliced into the body.
    pub(super) shared: Option<SharedMeta>,
    /// Its own extra headers (the client's `Mcp-Param-*`).
    pub(super) extra: Vec<(String, String)>,
    /// Its headers, taken at its place in the queue.
    pub(super) headers: HeaderMap,
    /// The session epoch those headers carry, if any.
    pub(super) sent_under: Option<u64>,
    /// Told once its response head came.
    pub(super) head: oneshot::Sender<()>,
    /// Told once the HTTP client took its body.
    pub(super) taken: oneshot::Sender<bool>,
}

#[cfg(test)]
mod tests {
    use super::Wire;

    #[test]
    fn each_request_takes_the_wire_of_its_row() {
        assert_eq!(Wire::of(true, true), Wire::HttpSse);
        assert_eq!(Wire::of(true, false), Wire::HttpSse);
        assert_eq!(Wire::of(false, true), Wire::Modern);
        assert_eq!(Wire::of(false, false), Wire::Session);
    }
}
