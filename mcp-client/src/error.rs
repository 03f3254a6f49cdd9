//! The client's error: which server, which method, and what happened.

use std::fmt;

use mcp_protocol::ProtocolVersion;
use mcp_transport::TransportError;
use serde_json::Value;

/// Everything a client call can fail with.
///
/// Like [`std::io::Error`], it is a small struct around a [`ErrorKind`],
/// carrying the server's name and the method so that a message in a log
/// says which of several servers failed doing what.
#[derive(Clone, Debug)]
pub struct ClientError {
    server: Option<String>,
    method: Option<String>,
    kind: ErrorKind,
}

/// What went wrong.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The server answered with a JSON-RPC error.
    Server {
        /// The error code (see `mcp_protocol::error_codes`).
        code: i64,
        /// The server's message.
        message: String,
        /// The server's data, verbatim.
        data: Option<Value>,
    },
    /// The transport failed: timeout, server gone, closed, cancelled, ….
    Transport(TransportError),
    /// The negotiated revision has no such method.
    NotInRevision {
        /// The revision in use.
        version: ProtocolVersion,
    },
    /// The server did not advertise the capability the method needs. Turn
    /// [`crate::ClientBuilder::enforce_server_capabilities`] off for
    /// servers that under-advertise.
    CapabilityNotAdvertised {
        /// The capability, such as `resources.subscribe`.
        capability: &'static str,
    },
    /// The client and the server share no protocol revision.
    Negotiation {
        /// The revisions the client offered.
        client: Vec<ProtocolVersion>,
        /// The revisions the server named.
        server: Vec<ProtocolVersion>,
    },
    /// The server's answer is not what the protocol says it must be.
    InvalidResponse {
        /// What was wrong with it.
        detail: String,
    },
    /// A handler of the client's (elicitation, sampling, roots) failed.
    Handler {
        /// What it said.
        detail: String,
    },
    /// The call is not possible in this state or with these arguments.
    Usage {
        /// Why.
        detail: String,
    },
    /// The server needs a client capability the client did not declare
    /// (`-32021`): resending cannot help, since the client declares a
    /// capability exactly when its handler is set. Set the handler (an
    /// elicitation, sampling or roots handler) that declares it.
    MissingClientCapability {
        /// The server's `requiredCapabilities`, verbatim.
        required: Value,
        /// The server's message.
        message: String,
    },
    /// The server says a header does not match the message (`-32020`).
    /// Only an HTTP transport sends headers the server checks; over
    /// stdio this points at a faulty server.
    HeaderMismatch {
        /// The server's message, which names the header.
        message: String,
        /// The server's data, verbatim.
        data: Option<Value>,
    },
    /// The client was pinned to the modern era, but the server does not
    /// speak it: `server/discover` got an answer only a legacy server gives.
    /// Connect with [`EraMode::Auto`](crate::EraMode::Auto) (or `Legacy`).
    NotModern {
        /// What the server answered, in words.
        evidence: String,
    },
    /// The request reached the server but its answer was lost (an HTTP
    /// stream that broke before the response), so the server may have run
    /// it. It was not re-sent, since running it twice may not be harmless
    /// (reads, lists and tools marked read-only or idempotent are re-sent
    /// by the client itself); the caller decides whether to try again.
    MayHaveRun {
        /// What lost the answer.
        cause: TransportError,
    },
    /// A supervised connection ended and could not be restarted within its
    /// budget ([`RestartPolicy`](crate::RestartPolicy)); every later call
    /// fails with this too.
    RestartsExhausted {
        /// The attempts that failed, oldest first.
        attempts: Vec<crate::RestartAttempt>,
    },
    /// A supervised connection is being restarted (the server went away,
    /// or asked to be retried later), and the call's own timeout ran out
    /// while it waited; nothing was sent on a connection that is not
    /// there. The client goes on restarting for later calls: retry the
    /// call after `retry_after`, when the server named a delay.
    Restarting {
        /// How long after the call failed the server asked to be tried
        /// again (its `Retry-After`, at most
        /// [`RestartPolicy::max_retry_after`](crate::RestartPolicy::max_retry_after)),
        /// when it asked.
        retry_after: Option<std::time::Duration>,
        /// Why the connection is being restarted, in words (the last
        /// failure).
        cause: String,
    },
    /// A multi round-trip request needed more rounds than allowed.
    TooManyRounds {
        /// How many rounds ran.
        rounds: u32,
    },
}

impl ClientError {
    pub(crate) fn new(kind: ErrorKind) -> Self {
        ClientError {
            server: None,
            method: None,
            kind,
        }
    }

    pub(crate) fn usage(detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::Usage {
            detail: detail.into(),
        })
    }

    pub(crate) fn invalid(detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidResponse {
            detail: detail.into(),
        })
    }

    pub(crate) fn with_method(mut self, method: &str) -> Self {
        if self.method.is_none() {
            self.method = Some(method.to_owned());
        }
        self
    }

    pub(crate) fn with_server(mut self, server: Option<&str>) -> Self {
        if self.server.is_none() {
            self.server = server.map(str::to_owned);
        }
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The server's name, when known.
    pub fn server(&self) -> Option<&str> {
        self.server.as_deref()
    }

    /// The method that failed, when there was one.
    pub fn method(&self) -> Option<&str> {
        self.method.as_deref()
    }

    /// The JSON-RPC error code, for an error the server sent.
    pub fn code(&self) -> Option<i64> {
        match &self.kind {
            ErrorKind::Server { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The transport's error, when the transport failed.
    pub fn transport_error(&self) -> Option<&TransportError> {
        match &self.kind {
            ErrorKind::Transport(e) | ErrorKind::MayHaveRun { cause: e } => Some(e),
            _ => None,
        }
    }

    /// Whether the server may have run the request although the call
    /// failed ([`ErrorKind::MayHaveRun`]): retry only what is harmless to
    /// run twice.
    pub fn may_have_run(&self) -> bool {
        matches!(self.kind, ErrorKind::MayHaveRun { .. })
    }

    /// Whether the call ran out of time (waiting for the answer, or for a
    /// supervised connection's restart).
    pub fn is_timeout(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::Transport(TransportError::Timeout { .. }) | ErrorKind::Restarting { .. }
        )
    }
}

impl From<TransportError> for ClientError {
    fn from(e: TransportError) -> Self {
        match e {
            TransportError::Rpc {
                code,
                message,
                data,
            } => ClientError::new(ErrorKind::Server {
                code,
                message,
                data,
            }),
            other => ClientError::new(ErrorKind::Transport(other)),
        }
    }
}

impl From<ErrorKind> for ClientError {
    fn from(kind: ErrorKind) -> Self {
        ClientError::new(kind)
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(server) = &self.server {
            write!(f, "server {server:?}: ")?;
        }
        if let Some(method) = &self.method {
            write!(f, "{method}: ")?;
        }
        fmt::Display::fmt(&self.kind, f)
    }
}

fn list(versions: &[ProtocolVersion]) -> String {
    if versions.is_empty() {
        return "none".into();
    }
    versions
        .iter()
        .map(ProtocolVersion::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Server { code, message, .. } => {
                write!(f, "the server answered with error {code}: {message}")
            }
            ErrorKind::Transport(e) => fmt::Display::fmt(e, f),
            ErrorKind::NotInRevision { version } => write!(
                f,
                "protocol revision {version} has no such method; nothing was sent"
            ),
            ErrorKind::CapabilityNotAdvertised { capability } => write!(
                f,
                "the server did not advertise the `{capability}` capability; nothing was sent \
                 (turn off enforce_server_capabilities for servers that under-advertise)"
            ),
            ErrorKind::Negotiation { client, server } => write!(
                f,
                "no protocol revision in common: the client offers {}, the server supports {} \
                 (if the client was limited with protocol_versions, offer one of the \
                 server's; otherwise the server or the client needs an update)",
                list(client),
                list(server)
            ),
            ErrorKind::InvalidResponse { detail } => {
                write!(f, "the server's answer is invalid: {detail}")
            }
            ErrorKind::Handler { detail } => write!(f, "a client handler failed: {detail}"),
            ErrorKind::Usage { detail } => f.write_str(detail),
            ErrorKind::MissingClientCapability { required, message } => write!(
                f,
                "the server requires client capabilities {required} that the client did not \
                 declare ({message}); set the handler that declares them"
            ),
            ErrorKind::HeaderMismatch { message, .. } => write!(
                f,
                "the server says a request header does not match the message: {message}"
            ),
            ErrorKind::NotModern { evidence } => write!(
                f,
                "the client is pinned to the modern era (2026-07-28), but the server does not \
                 speak it ({evidence}); connect with EraMode::Auto to speak its era"
            ),
            ErrorKind::MayHaveRun { cause } => write!(
                f,
                "{cause}; the server may have run the request, so it was not re-sent \
                 (retry only if running it twice is harmless)"
            ),
            ErrorKind::RestartsExhausted { attempts } => {
                write!(
                    f,
                    "the connection ended and {} restart attempts failed",
                    attempts.len()
                )?;
                if let Some(last) = attempts.last() {
                    write!(f, " (the last: {})", last.failure.as_deref().unwrap_or("?"))?;
                }
                f.write_str("; connect again when the server is back")
            }
            ErrorKind::Restarting { retry_after, cause } => {
                write!(
                    f,
                    "the call's timeout ran out while the connection was being restarted \
                     ({cause}); nothing was sent"
                )?;
                match retry_after {
                    Some(d) => write!(f, "; the server asked to be retried in {d:?}"),
                    None => f.write_str("; try again later"),
                }
            }
            ErrorKind::TooManyRounds { rounds } => write!(
                f,
                "the server still asked for input after {rounds} rounds; giving up \
                 (raise the round limit if this server needs more)"
            ),
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Transport(e) | ErrorKind::MayHaveRun { cause: e } => Some(e),
            _ => None,
        }
    }
}

/// The result of a client call.
pub type Result<T, E = ClientError> = std::result::Result<T, E>;
