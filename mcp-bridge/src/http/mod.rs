//! The bridge over Streamable HTTP: one endpoint, `/mcp`, for clients of
//! either era.
//!
//! * **Legacy clients** (2025-03-26 to 2025-11-25): an `initialize` POST
//!   opens a session with its own upstream session, named by a random
//!   `Mcp-Session-Id`; each POST that carries requests is answered on an
//!   SSE stream of its own, which also carries what the server says during
//!   them (progress, its requests); the `GET` stream carries the rest;
//!   `DELETE` ends the session; every event has an id, and a `GET` with
//!   `Last-Event-ID` resumes a broken stream. A session whose server died
//!   ends (later requests get `404`, and the client starts a new one).
//! * **2026-07-28 clients**: one POST per message, no session; the
//!   headers that mirror the body (`MCP-Protocol-Version`, `Mcp-Method`,
//!   `Mcp-Name`, `Mcp-Param-*`) are checked (`400`, `-32020`), each
//!   request is answered as JSON or, when the server says something before
//!   answering, as SSE; closing the stream cancels the call;
//!   `subscriptions/listen` stays open with its notifications. Their
//!   requests share one upstream connection, under ids of the bridge's own.
//!
//! Who may connect: the bridge listens on loopback unless a bearer token
//! of its own is required ([`HttpOptions::bearer_token`]); `Host` must
//! then name loopback and `Origin`, when sent, be a loopback origin or one
//! allowed (DNS rebinding: `403`).

mod accept;
mod front;
pub(crate) mod guard;
pub(crate) mod headers;
mod modern;
mod reply;
mod session;
pub(crate) mod streams;

use std::sync::Arc;
use std::time::Duration;

pub(crate) use accept::serve;
pub(crate) use front::Front;

/// How the bridge serves clients over HTTP
/// ([`Bridge::serve_http`](crate::Bridge::serve_http)): limits, and who
/// may connect.
///
/// ```
/// use std::time::Duration;
/// use mcp_bridge::HttpOptions;
///
/// let options = HttpOptions::new()
///     .max_sessions(16)
///     .idle_timeout(Duration::from_secs(300))
///     .allow_origin("https://app.example.com");
/// assert_eq!(options.max_sessions, 16);
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// Legacy sessions served at once (default 64); one more `initialize`
    /// gets `503`.
    pub max_sessions: usize,
    /// A session with nothing under way and no stream open for this long
    /// is ended (default 10 minutes).
    pub idle_timeout: Duration,
    /// Origins allowed besides loopback ones (`https://app.example.com`).
    pub allowed_origins: Vec<String>,
    /// How long a client has to send a request's head, and then its body
    /// (default 30 s); a connection idle between requests for this long
    /// is closed. A client that sends a byte now and then holds no
    /// connection for ever (the bridge serves at most 1,024 at once).
    pub request_timeout: Duration,
    bearer_token: Option<Arc<[u8]>>,
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("max_sessions", &self.max_sessions)
            .field("idle_timeout", &self.idle_timeout)
            .field("allowed_origins", &self.allowed_origins)
            .field("request_timeout", &self.request_timeout)
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "[redacted]"),
            )
            .finish()
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            max_sessions: 64,
            idle_timeout: Duration::from_secs(600),
            allowed_origins: Vec::new(),
            request_timeout: Duration::from_secs(30),
            bearer_token: None,
        }
    }
}

impl HttpOptions {
    /// The defaults: 64 sessions, 10 minutes idle, loopback origins only,
    /// 30 s to send a request, no token.
    pub fn new() -> HttpOptions {
        HttpOptions::default()
    }

    /// Sets [`max_sessions`](Self::max_sessions) (at least one).
    pub fn max_sessions(mut self, sessions: usize) -> HttpOptions {
        self.max_sessions = sessions.max(1);
        self
    }

    /// Sets [`idle_timeout`](Self::idle_timeout).
    pub fn idle_timeout(mut self, idle: Duration) -> HttpOptions {
        self.idle_timeout = idle;
        self
    }

    /// Sets [`request_timeout`](Self::request_timeout).
    ///
    /// ```
    /// use std::time::Duration;
    /// let options = mcp_bridge::HttpOptions::new().request_timeout(Duration::from_secs(5));
    /// assert_eq!(options.request_timeout, Duration::from_secs(5));
    /// ```
    pub fn request_timeout(mut self, timeout: Duration) -> HttpOptions {
        self.request_timeout = timeout;
        self
    }

    /// Allows one more origin (as a browser sends it: scheme, host, port).
    pub fn allow_origin(mut self, origin: impl Into<String>) -> HttpOptions {
        self.allowed_origins.push(origin.into());
        self
    }

    /// Requires every request to carry `Authorization: Bearer TOKEN`
    /// (compared in constant time; a wrong or missing one gets `401`).
    /// Required to listen beyond loopback. Read it from a file or the
    /// environment, never a command line, which other users can see.
    ///
    /// ```
    /// let options = mcp_bridge::HttpOptions::new().bearer_token("a long random string");
    /// assert!(!format!("{options:?}").contains("random"));
    /// ```
    pub fn bearer_token(mut self, token: impl AsRef<[u8]>) -> HttpOptions {
        self.bearer_token = Some(Arc::from(token.as_ref().trim_ascii()));
        self
    }

    /// The token required, if one is: an empty one is none (it would
    /// match no request, and must not count as protection).
    pub(crate) fn token(&self) -> Option<&[u8]> {
        self.bearer_token.as_deref().filter(|t| !t.is_empty())
    }
}
