//! Whether a request that may have run may be sent again: what the client
//! knows of the server's tools (their `readOnlyHint` and
//! `idempotentHint`), and the methods harmless to send twice.

use std::collections::HashSet;
use std::sync::RwLock;

use mcp_protocol::methods;
use mcp_protocol::types::Tool;
use serde_json::Value;

/// The tools whose annotations say re-sending a call is harmless.
#[derive(Default)]
pub(crate) struct Resend {
    harmless_tools: RwLock<HashSet<String>>,
}

impl Resend {
    /// Remembers which listed tools are harmless to call twice.
    pub(crate) fn learn_tools(&self, tools: &[Tool]) {
        let mut harmless = self
            .harmless_tools
            .write()
            .unwrap_or_else(|p| p.into_inner());
        for tool in tools {
            let hints = tool.annotations.as_ref();
            let safe = hints
                .is_some_and(|a| a.read_only_hint == Some(true) || a.idempotent_hint == Some(true));
            if safe {
                harmless.insert(tool.name.clone());
            } else {
                harmless.remove(&tool.name);
            }
        }
    }

    /// Whether a request that may have run (its answer lost, or a 503 met
    /// after a gateway forwarded it) may be sent again: its method says
    /// re-sending is harmless ([`methods::resend_is_harmless`]: discover,
    /// lists, reads, `prompts/get`, completion, ping, listens,
    /// subscriptions), or it calls a tool whose annotations say it is
    /// read-only or idempotent.
    pub(crate) fn is_harmless(&self, method: &str, params: Option<&Value>) -> bool {
        if method == methods::TOOLS_CALL {
            return params
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .is_some_and(|name| {
                    self.harmless_tools
                        .read()
                        .unwrap_or_else(|p| p.into_inner())
                        .contains(name)
                });
        }
        methods::resend_is_harmless(method)
    }
}
