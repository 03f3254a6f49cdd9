//! The closed set of errors a transport may produce.

use std::fmt;
use std::time::Duration;

use mcp_protocol::{ErrorObject, RequestId};
use serde_json::Value;

/// Why a request failed, as a transport reports it.
///
/// This is a closed set: the era probe in `mcp-client` reads [`Rpc`] as
/// evidence about the server and every other variant as a fact about the
/// connection, so a transport must not express its own failures as `Rpc`.
/// How the probe reads each variant is said on the variant.
///
/// [`Rpc`]: TransportError::Rpc
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The server answered with a JSON-RPC error; code, message and data
    /// are verbatim from the wire.
    ///
    /// *Probe:* the code and data are the evidence (`-32022` and friends
    /// mean a modern server, anything else a legacy one).
    #[error("the server answered with error {code}: {message}")]
    Rpc {
        /// The JSON-RPC error code.
        code: i64,
        /// The server's message.
        message: String,
        /// The server's data, verbatim.
        data: Option<Value>,
    },

    /// No answer came in time. The request was cancelled on the wire when
    /// its options allowed it.
    ///
    /// *Probe:* silence; the probe uses its own timer and reads it as legacy.
    #[error(
        "no answer to {method} within {after:?}; the server may be busy or stuck \
         (a longer timeout may help, or progress-based resets for a server that reports progress)"
    )]
    Timeout {
        /// The method of the request that timed out.
        method: String,
        /// The limit that ran out.
        after: Duration,
    },

    /// The server went away: its process exited or its stream ended (or
    /// the transport's writer stopped, so nothing more can reach it).
    ///
    /// *Probe:* the server may have died on the probe itself (some legacy
    /// servers exit on any request before `initialize`); the client retries
    /// legacy on a fresh connection.
    #[error("{0}")]
    ServerGone(Box<GoneInfo>),

    /// The transport was closed by its owner; nothing more can be sent.
    ///
    /// *Probe:* fatal.
    #[error("the transport is closed")]
    Closed,

    /// The caller cancelled the request.
    ///
    /// *Probe:* fatal.
    #[error("the request was cancelled")]
    Cancelled,

    /// The answer was larger than the transport's limit and was skipped.
    ///
    /// *Probe:* fatal (the connection is healthy, but the answer is lost).
    #[error(
        "the answer was {size} bytes or more, over the limit of {limit} bytes; \
         raise the transport's maximum message size"
    )]
    MessageTooLarge {
        /// How many bytes were seen before giving up (a lower bound).
        size: usize,
        /// The configured limit.
        limit: usize,
    },

    /// The server's answer to this request was not valid JSON-RPC (both
    /// `result` and `error`, a malformed `error` member, a wrong `jsonrpc`
    /// version…); the request fails at once instead of waiting out its
    /// timeout. The answer itself was skipped.
    ///
    /// *Probe:* a malformed answer to `server/discover` is evidence of a
    /// legacy server, as a success that is no `DiscoverResult` is.
    #[error(
        "the server's answer was not valid JSON-RPC ({detail}); \
         the server is faulty: report it to its authors"
    )]
    Malformed {
        /// What was wrong with it.
        detail: String,
    },

    /// The connection's outbound queue is full: the peer is not reading
    /// what was already sent. Nothing was queued; the call may be retried
    /// once the peer catches up.
    ///
    /// *Probe:* fatal (the server is not reading its input).
    #[error(
        "{limit} bytes are already waiting to be written to the server, which is not \
         reading them; nothing was sent (the server may be stuck, or raise \
         ConnectionLimits::max_outbound_bytes)"
    )]
    QueueFull {
        /// The configured limit, in bytes.
        limit: usize,
    },

    /// The request's id is already in flight on this connection. Ids are
    /// the caller's to choose and must be unique among in-flight requests;
    /// the transport refuses rather than mix up two answers.
    ///
    /// *Probe:* fatal (a bug in the caller).
    #[error("request id {0} is already in flight on this connection")]
    DuplicateId(RequestId),

    /// An HTTP answer that is not JSON-RPC: a status and the start of the
    /// body. Only HTTP transports produce it.
    ///
    /// *Probe:* a 4xx whose body is no modern error means a legacy server;
    /// a 5xx is a connection failure, not an era verdict.
    #[error("the server answered HTTP {status}: {body}")]
    Http {
        /// The HTTP status code.
        status: u16,
        /// The body, possibly cut short.
        body: String,
    },

    /// The server wants authorization (HTTP 401 or 403). Only HTTP
    /// transports produce it.
    ///
    /// *Probe:* not an era verdict; the connect fails until authorized.
    #[error(
        "the server requires authorization (HTTP {status}){}; authorize the connection \
         (an OAuth provider, or the credentials the server expects in a header)",
        challenge_suffix(.challenge)
    )]
    AuthorizationRequired {
        /// 401 or 403.
        status: u16,
        /// The `WWW-Authenticate` challenge, if any.
        challenge: Option<String>,
    },

    /// The request's credentials could not be had, so nothing was sent: a
    /// header provider failed (an OAuth access token was due for refresh
    /// and the token endpoint could not be reached, say). The connection
    /// and the session are fine, and the request may be sent again later.
    /// Only HTTP transports produce it.
    ///
    /// *Probe:* fatal, not an era verdict. A supervised client does not
    /// restart for it: a new connection would need the same credentials.
    #[error("the request's credentials could not be had: {cause}")]
    Credentials {
        /// What failed, in words.
        cause: String,
    },

    /// Nothing could be sent: the connection was refused, the name did not
    /// resolve, TLS failed, or the connect timeout ran out. The server never
    /// saw the request, so it is always safe to send again. Only HTTP
    /// transports produce it.
    ///
    /// *Probe:* fatal, never evidence of an era (a legacy HTTP server
    /// answers every POST; one that cannot be reached says nothing).
    #[error(
        "the server could not be reached: {cause}; check the address, that the server \
         is running there, and any proxy settings"
    )]
    Unreachable {
        /// What failed, in words (the cause chain of the I/O error).
        cause: String,
    },

    /// The request was sent but its answer was lost: the connection was
    /// reset, or the response stream ended before the answer. Only HTTP
    /// transports produce it.
    ///
    /// *Probe:* fatal, not an era verdict. The client re-sends a request
    /// with a new id only when that is safe (reads, lists, a tool marked
    /// read-only or idempotent); otherwise the call fails saying it may
    /// have run.
    #[error(
        "the answer was lost: {cause}{}",
        if *.may_have_run { " (the server may have run the request)" } else { "" }
    )]
    StreamBroken {
        /// Whether the server may have received (and run) the request.
        may_have_run: bool,
        /// What happened, in words.
        cause: String,
    },

    /// The server no longer knows the session this request named (legacy
    /// Streamable HTTP: a 404, or a 400 speaking of the session or carrying
    /// `-32001`, on a request that carried `Mcp-Session-Id`). The transport
    /// has forgotten the session id; the server did not run the request.
    /// Only HTTP transports produce it.
    ///
    /// *Probe:* cannot happen (there is no session before `initialize`).
    /// After the handshake the client re-initializes once and retries.
    #[error("the server's session expired (HTTP {status}); a new initialize is needed")]
    SessionExpired {
        /// The HTTP status that said so.
        status: u16,
    },

    /// The server redirected the request somewhere the transport will not
    /// follow: another origin (scheme, host or port), a status other than
    /// 307/308, or too many hops. Nothing was sent to the new location.
    /// Only HTTP transports produce it.
    ///
    /// *Probe:* fatal (the URL is wrong or the server is hostile).
    #[error("refused to follow HTTP {status} redirect to {location}: {reason}")]
    RedirectRefused {
        /// The redirect's status.
        status: u16,
        /// Its `Location`, as sent.
        location: String,
        /// Why it was not followed.
        reason: String,
    },

    /// The server is overloaded or rate-limiting (HTTP 429 or 503); the
    /// request did not run. `retry_after` is its `Retry-After`, when it
    /// sent one (in seconds, or as a date turned into a delay). Only HTTP
    /// transports produce it.
    ///
    /// *Probe:* fatal, not an era verdict (the connect may be retried after
    /// the delay).
    #[error(
        "the server asks to retry later (HTTP {status}){}",
        match .retry_after { Some(d) => format!(", after {d:?}"), None => String::new() }
    )]
    RetryLater {
        /// 429 or 503.
        status: u16,
        /// How long the server asks to wait, when it said.
        retry_after: Option<Duration>,
        /// The body, possibly cut short.
        body: String,
    },
}

fn challenge_suffix(challenge: &Option<String>) -> String {
    match challenge {
        Some(c) => format!(": {c}"),
        None => String::new(),
    }
}

impl TransportError {
    /// A `ServerGone` error from its details.
    pub fn gone(info: GoneInfo) -> Self {
        TransportError::ServerGone(Box::new(info))
    }

    /// The error a JSON-RPC error answer becomes.
    pub fn from_rpc(error: ErrorObject) -> Self {
        TransportError::Rpc {
            code: error.code,
            message: error.message,
            data: error.data,
        }
    }

    /// The JSON-RPC error code, for [`TransportError::Rpc`].
    pub fn rpc_code(&self) -> Option<i64> {
        match self {
            TransportError::Rpc { code, .. } => Some(*code),
            _ => None,
        }
    }
}

/// What is known about a server that went away.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GoneInfo {
    /// What happened, in words: "the server exited", "stdout closed", ….
    pub reason: String,
    /// How the process ended, when the transport runs one.
    pub exit: Option<ExitInfo>,
    /// The last lines the server wrote to stderr, when captured.
    pub stderr_tail: Option<String>,
}

impl GoneInfo {
    /// Details with only a reason.
    pub fn new(reason: impl Into<String>) -> Self {
        GoneInfo {
            reason: reason.into(),
            ..Default::default()
        }
    }

    /// The same details with an exit status.
    pub fn with_exit(mut self, exit: ExitInfo) -> Self {
        self.exit = Some(exit);
        self
    }

    /// The same details with a stderr tail.
    pub fn with_stderr_tail(mut self, tail: impl Into<String>) -> Self {
        let tail = tail.into();
        self.stderr_tail = (!tail.is_empty()).then_some(tail);
        self
    }
}

impl fmt::Display for GoneInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the server is gone: {}", self.reason)?;
        if let Some(exit) = &self.exit {
            write!(f, " ({exit})")?;
        }
        if let Some(tail) = &self.stderr_tail {
            let last = tail.trim_end().lines().last().unwrap_or_default();
            write!(f, "; its last stderr line: {last:?}")?;
        }
        Ok(())
    }
}

/// How a server process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExitInfo {
    /// The exit code, when it exited normally.
    pub code: Option<i32>,
    /// The signal that ended it, on Unix.
    pub signal: Option<i32>,
}

impl ExitInfo {
    /// An exit with a code.
    pub fn code(code: i32) -> Self {
        ExitInfo {
            code: Some(code),
            signal: None,
        }
    }

    /// An end by a signal.
    pub fn signal(signal: i32) -> Self {
        ExitInfo {
            code: None,
            signal: Some(signal),
        }
    }
}

impl fmt::Display for ExitInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.code, self.signal) {
            (Some(c), _) => write!(f, "exit code {c}"),
            (None, Some(s)) => write!(f, "killed by signal {s}"),
            (None, None) => write!(f, "exit status unknown"),
        }
    }
}
