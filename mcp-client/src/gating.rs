//! Which methods a revision has, and which server capability each needs.
//! A call that fails here fails before anything is sent.

use mcp_protocol::types::ServerCapabilities;
use mcp_protocol::{Era, ProtocolVersion, methods};

use crate::error::ErrorKind;

/// Whether `version` has `method` (a client-sent method). Methods this
/// table does not know are allowed: they go out as raw requests.
pub(crate) fn check_revision(method: &str, version: &ProtocolVersion) -> Result<(), ErrorKind> {
    let era = version.era();
    let ok = match method {
        methods::INITIALIZE
        | methods::PING
        | methods::LOGGING_SET_LEVEL
        | methods::RESOURCES_SUBSCRIBE
        | methods::RESOURCES_UNSUBSCRIBE => era == Era::Legacy,
        methods::SERVER_DISCOVER | methods::SUBSCRIPTIONS_LISTEN | methods::TASKS_UPDATE => {
            era == Era::Modern
        }
        // Experimental tasks of 2025-11-25, gone from the core in 2026.
        methods::TASKS_RESULT | methods::TASKS_LIST => *version == ProtocolVersion::V2025_11_25,
        methods::TASKS_GET | methods::TASKS_CANCEL => *version >= ProtocolVersion::V2025_11_25,
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(ErrorKind::NotInRevision {
            version: version.clone(),
        })
    }
}

/// Whether the server advertised what `method` needs.
pub(crate) fn check_capability(
    method: &str,
    version: &ProtocolVersion,
    caps: &ServerCapabilities,
) -> Result<(), ErrorKind> {
    let missing = |capability| Err(ErrorKind::CapabilityNotAdvertised { capability });
    match method {
        methods::TOOLS_LIST | methods::TOOLS_CALL if caps.tools.is_none() => missing("tools"),
        methods::PROMPTS_LIST | methods::PROMPTS_GET if caps.prompts.is_none() => {
            missing("prompts")
        }
        methods::RESOURCES_LIST | methods::RESOURCES_TEMPLATES_LIST | methods::RESOURCES_READ
            if caps.resources.is_none() =>
        {
            missing("resources")
        }
        methods::RESOURCES_SUBSCRIBE | methods::RESOURCES_UNSUBSCRIBE
            if caps
                .resources
                .as_ref()
                .is_none_or(|r| r.subscribe != Some(true)) =>
        {
            missing("resources.subscribe")
        }
        methods::LOGGING_SET_LEVEL if caps.logging.is_none() => missing("logging"),
        // 2024-11-05 had completion without a `completions` capability.
        methods::COMPLETION_COMPLETE
            if caps.completions.is_none() && *version > ProtocolVersion::V2024_11_05 =>
        {
            missing("completions")
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
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
