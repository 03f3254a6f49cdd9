//! How a connection already known to be modern (pinned, resumed on a saved
//! verdict, or switched to after `initialize` got `-32022`) reads what its
//! `server/discover` got: [`next`], with no I/O. Unlike the
//! [probe's](crate::probe) table it has no legacy row: evidence of a legacy
//! server fails the connect as `NotModern`.

use mcp_protocol::error_codes;
use mcp_protocol::types::DiscoverResult;
use mcp_protocol::version::{VersionRejection, VersionRetry};
use mcp_protocol::{ProtocolVersion, methods};
use mcp_transport::TransportError;
use serde_json::Value;

use crate::error::{ClientError, ErrorKind};

/// Where the exchange stands.
pub(crate) struct Discovering<'a> {
    /// The client's revisions, newest first, of either era.
    pub(crate) offered: &'a [ProtocolVersion],
    /// The revision the request was sent with.
    pub(crate) version: &'a ProtocolVersion,
    /// Whether the one retry with a revision of the server's list is made.
    pub(crate) retried: bool,
}

/// What the connection does next.
pub(crate) enum Step {
    /// The server speaks the revision sent: the connection is modern.
    Done(Box<DiscoverResult>),
    /// Send `server/discover` again with this revision.
    Retry(ProtocolVersion),
    /// The connect fails: no revision shared with the server's list.
    NoSharedVersion(Vec<ProtocolVersion>),
    /// The connect fails with this error.
    Fail(ClientError),
}

/// The step after one `server/discover` got `outcome`.
pub(crate) fn next(at: &Discovering<'_>, outcome: Result<Value, TransportError>) -> Step {
    match outcome {
        Ok(value) => read_discover(at, value),
        Err(error) => read_error(at, error),
    }
}

fn not_modern(evidence: String) -> Step {
    Step::Fail(
        ClientError::new(ErrorKind::NotModern { evidence }).with_method(methods::SERVER_DISCOVER),
    )
}

/// A result: done if it is a `DiscoverResult` listing the revision sent.
fn read_discover(at: &Discovering<'_>, value: Value) -> Step {
    let mut discover: DiscoverResult = match serde_json::from_value(value) {
        Ok(discover) => discover,
        Err(e) => {
            return not_modern(format!(
                "its server/discover answer is no DiscoverResult: {e}"
            ));
        }
    };
    if discover.supported_versions.contains(at.version) {
        return Step::Done(Box::new(discover));
    }
    let supported = std::mem::take(&mut discover.supported_versions);
    let rejection = VersionRejection::decide(supported, at.offered, !at.retried);
    match rejection.next {
        VersionRetry::Retry(v) => Step::Retry(v),
        VersionRetry::NoRetry(_) | VersionRetry::NoneShared => {
            Step::NoSharedVersion(rejection.supported)
        }
    }
}

/// An error: the one retry after `-32022`, or why the connect fails.
fn read_error(at: &Discovering<'_>, error: TransportError) -> Step {
    match &error {
        TransportError::Rpc { code, data, .. }
            if *code == error_codes::UNSUPPORTED_PROTOCOL_VERSION =>
        {
            let rejection = VersionRejection::read(data.as_ref(), at.offered, !at.retried);
            match rejection.next {
                VersionRetry::Retry(v) => Step::Retry(v),
                VersionRetry::NoneShared if !at.retried => {
                    Step::NoSharedVersion(rejection.supported)
                }
                // The one retry is spent: the server's refusal stands.
                VersionRetry::NoRetry(_) | VersionRetry::NoneShared => {
                    Step::Fail(ClientError::from(error).with_method(methods::SERVER_DISCOVER))
                }
            }
        }
        TransportError::Rpc { code, message, .. } if !error_codes::is_modern_only(*code) => {
            not_modern(format!(
                "it answered server/discover with error {code}: {message}"
            ))
        }
        TransportError::Malformed { detail } => not_modern(format!(
            "its server/discover answer is not JSON-RPC: {detail}"
        )),
        // What the probe reads as legacy (an HTTP+SSE server has no POST
        // at its URL: 404 or 405) is no modern server either.
        TransportError::Http { status, .. } if (400..500).contains(status) => not_modern(format!(
            "it answered server/discover with HTTP {status} and no JSON-RPC error"
        )),
        _ => Step::Fail(ClientError::from(error).with_method(methods::SERVER_DISCOVER)),
    }
}
