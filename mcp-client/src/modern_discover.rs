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
#[derive(Debug)]
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A modern revision newer than the library's, the library's modern
    /// one, and the newest legacy one; the newest is sent.
    fn offered() -> Vec<ProtocolVersion> {
        vec![
            ProtocolVersion::new("2026-12-01"),
            ProtocolVersion::V2026_07_28,
            ProtocolVersion::V2025_11_25,
        ]
    }

    fn step(retried: bool, outcome: Result<Value, TransportError>) -> Step {
        let offered = offered();
        let at = Discovering {
            offered: &offered,
            version: &offered[0],
            retried,
        };
        next(&at, outcome)
    }

    fn rpc(code: i64, data: Value) -> Result<Value, TransportError> {
        Err(TransportError::Rpc {
            code,
            message: "no".into(),
            data: Some(data),
        })
    }

    fn discover(versions: Value) -> Result<Value, TransportError> {
        Ok(json!({"supportedVersions": versions, "capabilities": {}}))
    }

    fn failed(step: Step) -> ClientError {
        match step {
            Step::Fail(e) => {
                assert_eq!(e.method(), Some(methods::SERVER_DISCOVER));
                e
            }
            other => panic!("not a failure: {other:?}"),
        }
    }

    fn not_modern(step: Step) -> bool {
        matches!(failed(step).kind(), ErrorKind::NotModern { .. })
    }

    #[test]
    fn discover_listing_the_revision_sent() {
        let got = step(false, discover(json!(["2026-12-01"])));
        assert!(matches!(got, Step::Done(d) if d.supported_versions.len() == 1));
    }

    #[test]
    fn discover_listing_another_shared_revision() {
        let got = step(false, discover(json!(["2026-07-28"])));
        assert!(matches!(got, Step::Retry(v) if v == ProtocolVersion::V2026_07_28));
        let got = step(true, discover(json!(["2026-07-28"])));
        assert!(matches!(
            got,
            Step::NoSharedVersion(s) if s == [ProtocolVersion::V2026_07_28]
        ));
    }

    #[test]
    fn no_discover_result() {
        assert!(not_modern(step(false, Ok(json!({"tools": []})))));
    }

    #[test]
    fn rejected_sharing_a_modern_revision() {
        let got = step(false, rpc(-32022, json!({"supported": ["2026-07-28"]})));
        assert!(matches!(got, Step::Retry(v) if v == ProtocolVersion::V2026_07_28));
    }

    #[test]
    fn rejected_sharing_nothing() {
        let got = step(false, rpc(-32022, json!({"supported": ["2027-01-01"]})));
        assert!(matches!(
            got,
            Step::NoSharedVersion(s) if s == [ProtocolVersion::new("2027-01-01")]
        ));
    }

    #[test]
    fn rejected_again_after_the_retry() {
        for listed in [json!(["2026-07-28"]), json!(["2027-01-01"])] {
            let got = step(true, rpc(-32022, json!({ "supported": listed })));
            assert!(!not_modern(got));
        }
    }

    #[test]
    fn legacy_evidence_is_not_modern() {
        assert!(not_modern(step(false, rpc(-32601, Value::Null))));
        let malformed = TransportError::Malformed {
            detail: "not JSON".into(),
        };
        assert!(not_modern(step(false, Err(malformed))));
        for status in [404, 405] {
            let http = TransportError::Http {
                status,
                body: String::new(),
            };
            assert!(not_modern(step(false, Err(http))));
        }
    }

    #[test]
    fn other_errors_as_they_are() {
        assert!(!not_modern(step(false, rpc(-32021, json!({})))));
        let http = TransportError::Http {
            status: 503,
            body: String::new(),
        };
        assert!(!not_modern(step(false, Err(http))));
        assert!(!not_modern(step(false, Err(TransportError::Cancelled))));
    }
}
