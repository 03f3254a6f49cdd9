//! The fake server over HTTP, on a loopback socket: what a real MCP
//! server of each era serves, and the ways real ones misbehave.
//!
//! [`HttpFake::start`] serves a [`FakeConfig`] in process (dropping the
//! handle stops it); `mcp-reference-server --http PORT` serves the same from
//! the binary. It serves:
//!
//! - **`/mcp`, legacy Streamable HTTP** (2025-03-26 … 2025-11-25): an
//!   `initialize` POST makes a session, a server of its own, named by the
//!   `Mcp-Session-Id` of the answer (none when [stateless]); later POSTs,
//!   `GET` and `DELETE` must carry it (missing: `400`; unknown, expired or
//!   deleted: `404`); from 2025-06-18 a `MCP-Protocol-Version` other than
//!   the session's is `400`. Each request is answered on its own SSE stream
//!   (or [as JSON]): progress, log lines and the server's requests
//!   (elicitation, sampling, roots) while serving it go there too; anything
//!   else goes on the GET stream (`GET` with the session: one at a time, a
//!   second gets `409`; [disabled]: `405`). Notifications and answers
//!   POSTed get `202`; `DELETE` ends the session. Every event has an id
//!   (`<stream>-<n>`); `GET` with `Last-Event-ID` replays what that stream
//!   had after it and goes on (the answer to a broken request stream comes
//!   there); a [priming event] can carry `retry:`. A `server/discover`
//!   without a session is answered as a fresh server would (`-32601`,
//!   or as [`Knob::DiscoverAnswer`](crate::Knob::DiscoverAnswer)
//!   says). Sessions expire on demand ([`HttpFake::expire_sessions`],
//!   [`HttpKnob::ExpireSessionsAfter`]).
//! - **`/mcp`, modern Streamable HTTP** (2026-07-28): one POST per message,
//!   no session, one server for all. Before the server sees a message the
//!   front checks `MCP-Protocol-Version` (present, equal to `_meta`'s),
//!   `Mcp-Method` (equal to the method), `Mcp-Name` (decoded, equal to
//!   `params.name` or `params.uri` for `tools/call`, `prompts/get`,
//!   `resources/read`) and `Mcp-Param-*` (exactly those the tool's
//!   `x-mcp-header` annotations ask for, with the argument values): a
//!   mismatch is `400` with `-32020`. Errors the spec gives a status get it
//!   (`-32020`/`-32021`/`-32022`/`-32602`: `400`; `-32601`: `404`). Answers
//!   are SSE without event ids; `subscriptions/listen` is a stream that
//!   stays open with its notifications; closing a request's stream cancels
//!   it. `GET` and `DELETE` get `405`.
//! - **`/sse` and `/messages`, the 2024-11-05 HTTP+SSE transport**: `GET
//!   /sse` opens a stream whose first event, `endpoint`, names
//!   `/messages?sessionId=…`; POSTs there get `202` and every answer comes
//!   as a `message` event on the stream. A server configured for
//!   2024-11-05 alone answers every POST to `/mcp` with `405` (so a client
//!   falls back) and serves the old stream on `GET /mcp` too.
//!
//! Every HTTP request is recorded, headers and body, for tests to assert
//! ([`HttpFake::requests`]).
//!
//! [`ProtectedHttpFake`] (feature `oauth`) serves the same behind an OAuth
//! authorization server on the same origin, as `mcp-reference-server --http
//! PORT --oauth` does.
//!
//! # Knobs
//!
//! [`HttpKnob`]: a `502` HTML page; a request never answered (no head);
//! an SSE body dripped one byte at a time; an answer padded past a size;
//! a JSON body that never ends; `Content-Type` missing or wrong; a `307`
//! to another origin; a POST stream dropped after a primed event id (with
//! `retry:`) so that the client resumes by `GET`; a resumed stream that
//! ends at once with nothing; `server/discover` answered `400`/`-32000`
//! "Server not initialized" and unknown sessions answered `400`, both as
//! server-everything does; sessions expiring after N requests.
//!
//! ```
//! use mcp_reference_server::FakeConfig;
//! use mcp_reference_server::http::HttpFake;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! let server = HttpFake::start(FakeConfig::legacy()).await?;
//! assert!(server.url().starts_with("http://127.0.0.1:"));
//! assert!(server.url().ends_with("/mcp"));
//! assert!(server.requests().is_empty());
//! # Ok(())
//! # }
//! ```
//!
//! [stateless]: HttpOptions::stateless
//! [as JSON]: HttpOptions::json
//! [disabled]: HttpOptions::no_get_stream
//! [priming event]: HttpOptions::retry

mod exchange;
mod front;
mod knobs;
mod legacy;
mod modern;
#[cfg(feature = "oauth")]
mod oauth;
#[cfg(feature = "oauth")]
mod protected;
mod reply;
mod sse_old;
mod streams;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;

use super::config::FakeConfig;
pub use front::RecordedRequest;
pub use knobs::{HttpKnob, HttpOptions};
#[cfg(feature = "oauth")]
#[cfg_attr(docsrs, doc(cfg(feature = "oauth")))]
pub use oauth::OAuthOptions;
#[cfg(feature = "oauth")]
#[cfg_attr(docsrs, doc(cfg(feature = "oauth")))]
pub use protected::ProtectedHttpFake;

/// The fake server on a loopback HTTP socket. Dropping it stops it: the
/// socket closes, open streams end, running requests stop.
pub struct HttpFake {
    addr: SocketAddr,
    front: Arc<front::Front>,
    stop: watch::Sender<bool>,
}

impl HttpFake {
    /// Serves `config` with the default [`HttpOptions`] on `127.0.0.1`, on
    /// a port of the system's choosing.
    pub async fn start(config: FakeConfig) -> io::Result<HttpFake> {
        HttpFake::start_with(config, HttpOptions::new()).await
    }

    /// Serves `config` with these options on `127.0.0.1`, on a port of the
    /// system's choosing.
    pub async fn start_with(config: FakeConfig, options: HttpOptions) -> io::Result<HttpFake> {
        HttpFake::start_on(config, options, SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    /// Serves `config` with these options on `addr` (port 0: any).
    pub async fn start_on(
        config: FakeConfig,
        options: HttpOptions,
        addr: SocketAddr,
    ) -> io::Result<HttpFake> {
        let listener = TcpListener::bind(addr).await?;
        HttpFake::serve(listener, front::Front::new(config, options))
    }

    /// Serves `front` on `listener`.
    fn serve(listener: TcpListener, front: front::Front) -> io::Result<HttpFake> {
        let addr = listener.local_addr()?;
        let front = Arc::new(front);
        let (stop, stopped) = watch::channel(false);
        tokio::spawn(accept(listener, front.clone(), stopped));
        Ok(HttpFake { addr, front, stop })
    }

    /// The Streamable HTTP endpoint: `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// The 2024-11-05 HTTP+SSE stream: `http://127.0.0.1:PORT/sse`.
    pub fn sse_url(&self) -> String {
        format!("http://{}/sse", self.addr)
    }

    /// The socket's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every HTTP request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.front.seen()
    }

    /// The POSTs received so far whose JSON-RPC method is `method`.
    pub fn posts_of(&self, method: &str) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.rpc_method().as_deref() == Some(method))
            .collect()
    }

    /// The ids of the modern requests the client cancelled by closing
    /// their stream before the answer, in order.
    pub fn cancelled_by_close(&self) -> Vec<mcp_protocol::RequestId> {
        self.front
            .cancelled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The legacy sessions alive now.
    pub fn session_ids(&self) -> Vec<String> {
        self.front.session_ids()
    }

    /// Ends every legacy session now, as a server that restarted or timed
    /// them out: requests naming them then get `404` (or `400` with
    /// [`HttpKnob::UnknownSessionIs400`]). Returns how many ended.
    pub fn expire_sessions(&self) -> usize {
        self.front.expire_all()
    }

    /// The configuration served.
    pub fn config(&self) -> &FakeConfig {
        &self.front.config
    }
}

impl Drop for HttpFake {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        self.front.shutdown();
    }
}

impl std::fmt::Debug for HttpFake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpFake")
            .field("url", &self.url())
            .field("sessions", &self.session_ids().len())
            .finish()
    }
}

async fn accept(
    listener: TcpListener,
    front: Arc<front::Front>,
    mut stopped: watch::Receiver<bool>,
) {
    loop {
        let socket = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((socket, _)) => socket,
                Err(_) => continue,
            },
            _ = stopped.changed() => return,
        };
        // Small SSE chunks must not wait for the client's delayed ACK.
        let _ = socket.set_nodelay(true);
        let front = front.clone();
        let mut stopped = stopped.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let front = front.clone();
                async move { Ok::<_, std::convert::Infallible>(front.serve(request).await) }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(socket), service);
            tokio::select! {
                _ = connection => {}
                _ = stopped.changed() => {}
            }
        });
    }
}
