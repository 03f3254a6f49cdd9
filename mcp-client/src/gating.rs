//! Which methods a revision has, and which server capability each needs.
//! A call that fails here fails before anything is sent.

use mcp_protocol::ProtocolVersion;
use mcp_protocol::methods::{MethodKind, facts};
use mcp_protocol::types::ServerCapabilities;

use crate::error::ErrorKind;

/// Whether `version` has `method` (a client-sent method), by the method's
/// [facts](mcp_protocol::methods::MethodFacts::revisions). Methods the
/// table does not know, and those only a server sends, are allowed: they
/// go out as raw requests.
pub(crate) fn check_revision(method: &str, version: &ProtocolVersion) -> Result<(), ErrorKind> {
    match facts(method) {
        Some(f)
            if f.kind == MethodKind::Request
                && f.sender.includes_client()
                && !f.revisions.includes(version) =>
        {
            Err(ErrorKind::NotInRevision {
                version: version.clone(),
            })
        }
        _ => Ok(()),
    }
}

/// Whether the server advertised what `method` needs
/// ([`MethodFacts::server_capability`](mcp_protocol::methods::MethodFacts::server_capability),
/// where `version` has that capability).
pub(crate) fn check_capability(
    method: &str,
    version: &ProtocolVersion,
    caps: &ServerCapabilities,
) -> Result<(), ErrorKind> {
    match facts(method).and_then(|f| f.server_capability) {
        Some(need) if need.exists_in(version) && !need.advertised_in(caps) => {
            Err(ErrorKind::CapabilityNotAdvertised {
                capability: need.path(),
            })
        }
        _ => Ok(()),
    }
}

/// [`check_capability`] for the capabilities a client never sends
/// without, even when told to send regardless of what the server
/// advertised ([`ServerCapability::always_enforced`](mcp_protocol::methods::ServerCapability::always_enforced):
/// `resources/directory/read` needs `directoryRead: true`).
pub(crate) fn check_always_enforced(
    method: &str,
    version: &ProtocolVersion,
    caps: &ServerCapabilities,
) -> Result<(), ErrorKind> {
    match facts(method).and_then(|f| f.server_capability) {
        Some(need) if need.always_enforced() => check_capability(method, version, caps),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use mcp_protocol::methods;

    use super::*;

    #[test]
    fn revision_table() {
        let legacy = ProtocolVersion::V2025_06_18;
        let modern = ProtocolVersion::V2026_07_28;
        for m in [
            methods::PING,
            methods::LOGGING_SET_LEVEL,
            methods::RESOURCES_SUBSCRIBE,
        ] {
            assert!(check_revision(m, &legacy).is_ok());
            assert!(check_revision(m, &modern).is_err());
        }
        for m in [methods::SERVER_DISCOVER, methods::SUBSCRIPTIONS_LISTEN] {
            assert!(check_revision(m, &legacy).is_err());
            assert!(check_revision(m, &modern).is_ok());
        }
        assert!(check_revision(methods::TASKS_GET, &legacy).is_err());
        assert!(check_revision(methods::TASKS_GET, &ProtocolVersion::V2025_11_25).is_ok());
        assert!(check_revision("vendor/x", &legacy).is_ok());
        // What only a server sends goes out raw in any revision.
        let old = ProtocolVersion::V2025_03_26;
        assert!(check_revision(methods::ELICITATION_CREATE, &old).is_ok());
        assert!(check_revision(methods::TASKS_RESULT, &modern).is_err());
        assert!(check_revision(methods::TASKS_UPDATE, &legacy).is_err());
    }

    #[test]
    fn subscribing_needs_resources_subscribe() {
        let v = ProtocolVersion::V2025_06_18;
        let caps: ServerCapabilities =
            serde_json::from_value(serde_json::json!({"resources": {}})).unwrap();
        let refused = check_capability(methods::RESOURCES_SUBSCRIBE, &v, &caps);
        assert!(matches!(
            refused,
            Err(ErrorKind::CapabilityNotAdvertised {
                capability: "resources.subscribe"
            })
        ));
        assert!(check_capability(methods::RESOURCES_READ, &v, &caps).is_ok());
        assert!(check_capability(methods::PROMPTS_GET, &v, &caps).is_err());
        assert!(check_capability("vendor/x", &v, &caps).is_ok());
    }

    #[test]
    fn directory_read_needs_its_setting_even_unenforced() {
        let v = ProtocolVersion::V2025_11_25;
        let skills =
            ServerCapabilities::new().with_extension(mcp_protocol::types::SKILLS_EXTENSION);
        let read = methods::RESOURCES_DIRECTORY_READ;
        assert!(check_always_enforced(read, &v, &skills).is_err());
        assert!(
            check_always_enforced(methods::SKILLS_LIST, &v, &ServerCapabilities::new()).is_ok()
        );
        assert!(check_capability(methods::SKILLS_LIST, &v, &ServerCapabilities::new()).is_err());
        assert!(check_capability(methods::SKILLS_GET, &v, &skills).is_ok());
        let with: ServerCapabilities = serde_json::from_value(serde_json::json!({
            "extensions": {"io.modelcontextprotocol/skills": {"directoryRead": true}}
        }))
        .unwrap();
        assert!(check_always_enforced(read, &v, &with).is_ok());
    }

    #[test]
    fn completion_without_capability_only_in_2024() {
        let caps = ServerCapabilities::new();
        let v = ProtocolVersion::V2024_11_05;
        assert!(check_capability(methods::COMPLETION_COMPLETE, &v, &caps).is_ok());
        let v = ProtocolVersion::V2025_03_26;
        assert!(check_capability(methods::COMPLETION_COMPLETE, &v, &caps).is_err());
        assert!(check_capability(methods::TOOLS_CALL, &v, &caps.with_tools(None)).is_ok());
    }
}
