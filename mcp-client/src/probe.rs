//! How the era probe reads what `server/discover` got: the probe table of
//! the [connect module's docs](crate::connect) as a function, [`next`],
//! with no I/O, and a test per row named in the table. The probe sends,
//! waits, and carries out the [`Step`] it returns.

use mcp_protocol::error_codes;
use mcp_protocol::types::DiscoverResult;
use mcp_protocol::version::{VersionRejection, VersionRetry, best_shared};
use mcp_protocol::{Era, ProtocolVersion, methods};
use mcp_transport::TransportError;
use serde_json::Value;

use crate::error::{ClientError, ErrorKind};
use crate::verdict::Reached;

/// What the probe saw.
pub(crate) enum Seen {
    /// The probe timer ended before any answer.
    Silence,
    /// A result.
    Answer(Value),
    /// An error, the server's or the transport's.
    Error(TransportError),
}

/// Where the probe stands.
pub(crate) struct Probing<'a> {
    /// The client's revisions, newest first, of either era.
    pub(crate) offered: &'a [ProtocolVersion],
    /// Whether the one retry with a revision of the server's list is made.
    pub(crate) retried: bool,
    /// Whether the transport answers every request (HTTP): silence is then
    /// a fault, not an era.
    pub(crate) answers_every_request: bool,
}

/// What the probe does next.
#[derive(Debug)]
pub(crate) enum Step {
    /// The server is modern and speaks this revision.
    Modern(Box<DiscoverResult>, ProtocolVersion, Reached),
    /// Send `server/discover` again with this revision.
    Retry(ProtocolVersion),
    /// Speak legacy on the same connection.
    Legacy(Reached),
    /// The server died: speak legacy on a new connection, keeping the dead
    /// one's stderr tail.
    LegacyOnNewConnection(Option<String>),
    /// The connect fails: no revision shared with the server's list.
    NoSharedVersion(Vec<ProtocolVersion>),
    /// The connect fails with this error.
    Fail(ClientError),
}

/// The step after `seen`, by the table of the [module docs](self).
pub(crate) fn next(probing: &Probing<'_>, seen: Seen) -> Step {
    let error = match seen {
        Seen::Answer(value) => return read_discover(probing, value),
        Seen::Silence => return Step::Legacy(Reached::LegacyAfterSilence),
        Seen::Error(error) => error,
    };
    match error {
        TransportError::Rpc { code, data, .. }
            if code == error_codes::UNSUPPORTED_PROTOCOL_VERSION =>
        {
            rejected(probing, data.as_ref())
        }
        TransportError::Rpc {
            code,
            message,
            data,
        } if code == error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY => {
            // Resending cannot help: a capability is declared whenever its
            // handler is set.
            let required = data
                .as_ref()
                .and_then(|d| d.get("requiredCapabilities"))
                .cloned()
                .unwrap_or(Value::Null);
            fail(ErrorKind::MissingClientCapability { required, message })
        }
        // Only a transport that sends headers can fix this, by rebuilding
        // them, so nothing is resent here.
        TransportError::Rpc {
            code,
            message,
            data,
        } if code == error_codes::HEADER_MISMATCH => {
            fail(ErrorKind::HeaderMismatch { message, data })
        }
        TransportError::Rpc { code, .. } => Step::Legacy(Reached::LegacyAfterProbeError { code }),
        TransportError::Timeout { .. } if !probing.answers_every_request => {
            Step::Legacy(Reached::LegacyAfterSilence)
        }
        // A malformed answer is no DiscoverResult: legacy evidence.
        TransportError::Malformed { .. } => Step::Legacy(Reached::LegacyAfterInvalidDiscover),
        TransportError::ServerGone(info) => Step::LegacyOnNewConnection(info.stderr_tail),
        TransportError::Http { status, .. } if (400..500).contains(&status) => {
            Step::Legacy(Reached::LegacyAfterProbeError {
                code: i64::from(status),
            })
        }
        other => Step::Fail(ClientError::from(other).with_method(methods::SERVER_DISCOVER)),
    }
}

fn fail(kind: ErrorKind) -> Step {
    Step::Fail(ClientError::new(kind).with_method(methods::SERVER_DISCOVER))
}

/// A result: modern if it is a `DiscoverResult` sharing a modern revision.
fn read_discover(probing: &Probing<'_>, value: Value) -> Step {
    let Ok(discover) = serde_json::from_value::<DiscoverResult>(value) else {
        return Step::Legacy(Reached::LegacyAfterInvalidDiscover);
    };
    if discover.supported_versions.is_empty() {
        return Step::Legacy(Reached::LegacyAfterInvalidDiscover);
    }
    let reached = if probing.retried {
        Reached::DiscoverRetried
    } else {
        Reached::Discover
    };
    match best_shared(probing.offered, Era::Modern, &discover.supported_versions) {
        Some(v) => Step::Modern(Box::new(discover), v, reached),
        None => Step::Legacy(Reached::LegacyByVersionList),
    }
}

/// A `-32022`: the one retry, legacy, or no revision shared.
fn rejected(probing: &Probing<'_>, data: Option<&Value>) -> Step {
    let rejection = VersionRejection::read(data, probing.offered, !probing.retried);
    let supported = rejection.supported;
    match rejection.next {
        VersionRetry::Retry(v) => return Step::Retry(v),
        VersionRetry::NoRetry(_) => {}
        VersionRetry::NoneShared => {
            // Modern revisions the client does not know beside a legacy
            // one it does: speak legacy.
            let legacy_listed = supported.iter().all(|v| v.era() == Era::Legacy)
                || best_shared(probing.offered, Era::Legacy, &supported).is_some();
            if !supported.is_empty() && legacy_listed {
                return Step::Legacy(Reached::LegacyByVersionList);
            }
        }
    }
    Step::NoSharedVersion(supported)
}

#[cfg(test)]
mod tests {
    use mcp_transport::GoneInfo;
    use serde_json::json;

    use super::*;

    static OFFERED: [ProtocolVersion; 2] =
        [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25];

    fn first() -> Probing<'static> {
        Probing {
            offered: &OFFERED,
            retried: false,
            answers_every_request: false,
        }
    }

    fn rpc(code: i64, data: Value) -> Seen {
        Seen::Error(TransportError::Rpc {
            code,
            message: "no".into(),
            data: Some(data),
        })
    }

    fn discover(versions: Value) -> Seen {
        Seen::Answer(json!({"supportedVersions": versions, "capabilities": {}}))
    }

    fn legacy(step: Step) -> Reached {
        match step {
            Step::Legacy(reached) => reached,
            other => panic!("not legacy: {other:?}"),
        }
    }

    fn failed(step: Step) -> ClientError {
        match step {
            Step::Fail(e) => e,
            other => panic!("not a failure: {other:?}"),
        }
    }

    #[test]
    fn discover_sharing_a_modern_revision() {
        let step = next(&first(), discover(json!(["2026-07-28", "2025-11-25"])));
        let Step::Modern(result, version, reached) = step else {
            panic!("not modern: {step:?}");
        };
        assert_eq!(version, ProtocolVersion::V2026_07_28);
        assert_eq!(reached, Reached::Discover);
        assert_eq!(result.supported_versions.len(), 2);
        let retried = Probing {
            retried: true,
            ..first()
        };
        let step = next(&retried, discover(json!(["2026-07-28"])));
        assert!(matches!(step, Step::Modern(_, _, Reached::DiscoverRetried)));
    }

    #[test]
    fn discover_sharing_no_modern_revision() {
        let step = next(&first(), discover(json!(["2027-01-01", "2025-11-25"])));
        assert_eq!(legacy(step), Reached::LegacyByVersionList);
    }

    #[test]
    fn no_valid_discover_result() {
        for seen in [
            Seen::Answer(json!({"tools": []})),
            discover(json!([])),
            Seen::Error(TransportError::Malformed {
                detail: "not JSON".into(),
            }),
        ] {
            assert_eq!(
                legacy(next(&first(), seen)),
                Reached::LegacyAfterInvalidDiscover
            );
        }
    }

    #[test]
    fn rejected_sharing_a_modern_revision() {
        // Even the revision just sent: the server lists it.
        let seen = rpc(
            -32022,
            json!({"supported": ["2026-07-28"], "requested": "2026-07-28"}),
        );
        assert!(matches!(
            next(&first(), seen),
            Step::Retry(v) if v == ProtocolVersion::V2026_07_28
        ));
    }

    #[test]
    fn rejected_again_after_the_retry() {
        let retried = Probing {
            retried: true,
            ..first()
        };
        let seen = rpc(-32022, json!({"supported": ["2026-07-28"]}));
        assert!(matches!(
            next(&retried, seen),
            Step::NoSharedVersion(s) if s == [ProtocolVersion::V2026_07_28]
        ));
    }

    #[test]
    fn rejected_listing_legacy_revisions() {
        for listed in [json!(["2025-06-18"]), json!(["2027-01-01", "2025-11-25"])] {
            let seen = rpc(-32022, json!({ "supported": listed }));
            assert_eq!(legacy(next(&first(), seen)), Reached::LegacyByVersionList);
        }
    }

    #[test]
    fn rejected_sharing_nothing() {
        for listed in [json!(["2027-01-01"]), json!([]), json!("garbled")] {
            let seen = rpc(-32022, json!({ "supported": listed.clone() }));
            let step = next(&first(), seen);
            assert!(
                matches!(&step, Step::NoSharedVersion(_)),
                "{listed}: {step:?}"
            );
        }
        let seen = rpc(-32022, json!({"supported": ["2027-01-01"]}));
        assert!(matches!(
            next(&first(), seen),
            Step::NoSharedVersion(s) if s == [ProtocolVersion::new("2027-01-01")]
        ));
    }

    #[test]
    fn missing_client_capability() {
        let required = json!({"sampling": {}});
        let seen = rpc(-32021, json!({ "requiredCapabilities": required.clone() }));
        let e = failed(next(&first(), seen));
        assert!(matches!(
            e.kind(),
            ErrorKind::MissingClientCapability { required: r, .. } if *r == required
        ));
        assert_eq!(e.method(), Some(methods::SERVER_DISCOVER));
    }

    #[test]
    fn header_mismatch() {
        let e = failed(next(&first(), rpc(-32020, json!({"header": "Mcp-Method"}))));
        assert!(matches!(e.kind(), ErrorKind::HeaderMismatch { .. }));
        assert_eq!(e.method(), Some(methods::SERVER_DISCOVER));
    }

    #[test]
    fn other_json_rpc_error() {
        for code in [-32601, -32602, -32600, 1] {
            let step = next(&first(), rpc(code, Value::Null));
            assert_eq!(legacy(step), Reached::LegacyAfterProbeError { code });
        }
    }

    #[test]
    fn http_client_error() {
        for status in [400, 404, 405, 499] {
            let seen = Seen::Error(TransportError::Http {
                status,
                body: String::new(),
            });
            let code = i64::from(status);
            assert_eq!(
                legacy(next(&first(), seen)),
                Reached::LegacyAfterProbeError { code }
            );
        }
        let seen = Seen::Error(TransportError::Http {
            status: 503,
            body: String::new(),
        });
        failed(next(&first(), seen));
    }

    #[test]
    fn silence_where_not_every_request_is_answered() {
        assert_eq!(
            legacy(next(&first(), Seen::Silence)),
            Reached::LegacyAfterSilence
        );
        let timeout = TransportError::Timeout {
            method: methods::SERVER_DISCOVER.into(),
            after: std::time::Duration::from_secs(1),
        };
        let step = next(&first(), Seen::Error(timeout));
        assert_eq!(legacy(step), Reached::LegacyAfterSilence);
    }

    #[test]
    fn timeout_where_every_request_is_answered() {
        let http = Probing {
            answers_every_request: true,
            ..first()
        };
        let timeout = TransportError::Timeout {
            method: methods::SERVER_DISCOVER.into(),
            after: std::time::Duration::from_secs(1),
        };
        let e = failed(next(&http, Seen::Error(timeout)));
        assert!(matches!(
            e.kind(),
            ErrorKind::Transport(TransportError::Timeout { .. })
        ));
        assert_eq!(e.method(), Some(methods::SERVER_DISCOVER));
    }

    #[test]
    fn server_died() {
        let mut info = GoneInfo::new("the server exited");
        info.stderr_tail = Some("panic: no".into());
        let step = next(
            &first(),
            Seen::Error(TransportError::ServerGone(Box::new(info))),
        );
        assert!(matches!(step, Step::LegacyOnNewConnection(Some(t)) if t == "panic: no"));
    }

    #[test]
    fn closed_cancelled_or_anything_else() {
        for error in [
            TransportError::Closed,
            TransportError::Cancelled,
            TransportError::QueueFull { limit: 1 },
        ] {
            let e = failed(next(&first(), Seen::Error(error)));
            assert!(matches!(e.kind(), ErrorKind::Transport(_)), "{e}");
            assert_eq!(e.method(), Some(methods::SERVER_DISCOVER));
        }
    }
}
