//! What a transport says about its own condition, typed.

use mcp_protocol::{ErrorObject, ParseError, RequestId};

/// A condition of the transport itself, given to the connection's
/// [`ConnectionHandlers::events`](crate::ConnectionHandlers::events)
/// listener. None of these is a protocol message: each reports something a
/// misbehaving peer did and what it cost (nothing else is lost).
///
/// ```
/// use mcp_transport::TransportEvent;
///
/// fn describe(event: &TransportEvent) -> String {
///     match event {
///         TransportEvent::Noise { line, .. } => format!("noise on stdout: {line}"),
///         TransportEvent::TooLarge { size, limit, .. } => format!("{size} > {limit} bytes"),
///         other => other.to_string(),
///     }
/// }
/// let e = TransportEvent::Noise { line: "starting…".into(), len: 11 };
/// assert_eq!(describe(&e), "noise on stdout: starting…");
/// ```
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TransportEvent {
    /// A line or body that is not JSON at all was skipped (a stray print
    /// on a server's stdout, say).
    #[error("skipped {len} bytes that are not JSON: {line:?}")]
    Noise {
        /// Its start, lossily decoded.
        line: String,
        /// Its whole length in bytes.
        len: usize,
    },
    /// A JSON message that is not valid JSON-RPC was skipped. When its id
    /// could be read, the request it answers failed with
    /// [`TransportError::Malformed`](crate::TransportError::Malformed), or,
    /// for a request of the server's, it was answered with `-32600`.
    #[error("skipped a malformed message: {error}")]
    Malformed {
        /// What was wrong, and the id when it could be read.
        error: ParseError,
    },
    /// A message over the size limit was skipped without being read whole.
    /// An answer whose id was found failed its request with
    /// [`TransportError::MessageTooLarge`](crate::TransportError::MessageTooLarge);
    /// a server request whose id was found was answered with `-32600`.
    #[error("skipped a message of {size} bytes or more, over the limit of {limit}")]
    TooLarge {
        /// How many bytes were seen (a lower bound of its length).
        size: usize,
        /// The configured limit.
        limit: usize,
        /// Its id, when found near its start.
        id: Option<RequestId>,
        /// Whether it was a request of the server's (it named a method).
        request: bool,
    },
    /// The server answered with an error whose id is null: it could not
    /// read some request of ours and could not say which.
    #[error("the server sent an error with a null id: {}", .error.message)]
    NullIdError {
        /// The error, verbatim.
        error: ErrorObject,
    },
}
