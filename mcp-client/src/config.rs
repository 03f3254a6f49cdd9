//! The client's settings once built, and what follows from them: which
//! revisions it offers and which capabilities it declares in each.

use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::types::{ClientCapabilities, Implementation, LoggingLevel};
use mcp_protocol::{Era, ProtocolVersion};

use crate::events::EventCallback;
use crate::handlers::Handlers;

/// How the client finds out which era a server is in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum EraMode {
    /// Probe with `server/discover`, fall back to `initialize` (the default).
    #[default]
    Auto,
    /// Speak legacy only: `initialize`, never `server/discover`.
    Legacy,
    /// Speak modern only: per-request `_meta`, one `server/discover` to
    /// learn the server's capabilities.
    Modern,
}

/// The tasks the client declares support for (opt-in).
pub(crate) const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

#[derive(Clone)]
pub(crate) struct Config {
    pub(crate) client_info: Implementation,
    pub(crate) mode: EraMode,
    /// Offered revisions, newest first.
    pub(crate) versions: Vec<ProtocolVersion>,
    pub(crate) probe_timeout: Duration,
    pub(crate) request_timeout: Duration,
    pub(crate) max_total_timeout: Duration,
    pub(crate) handler_timeout: Duration,
    pub(crate) enforce_server_capabilities: bool,
    pub(crate) reject_unassociated_server_requests: bool,
    pub(crate) log_level: Option<LoggingLevel>,
    pub(crate) max_list_pages: usize,
    pub(crate) max_rounds: u32,
    /// Restart the connection when it ends (a supervised client).
    pub(crate) restart: Option<crate::RestartPolicy>,
    pub(crate) tasks: bool,
    pub(crate) validate_structured_output: bool,
    pub(crate) cache_capacity: usize,
    pub(crate) cache_max_entry_bytes: usize,
    pub(crate) legacy_cache_max_age: Duration,
    pub(crate) cache_partition: Option<String>,
    pub(crate) handlers: Handlers,
    pub(crate) limits: mcp_transport::ConnectionLimits,
    pub(crate) event_callback: Option<Arc<EventCallback>>,
    pub(crate) name: Option<String>,
    /// The constant keys of a modern request's `_meta`, once made.
    pub(crate) modern_meta: crate::meta_cache::ModernMetaCache,
}

impl Config {
    /// The offered revisions of one era, newest first.
    pub(crate) fn offered(&self, era: Era) -> Vec<ProtocolVersion> {
        self.versions
            .iter()
            .filter(|v| v.era() == era)
            .cloned()
            .collect()
    }

    /// The newest offered revision both sides know, from the server's list.
    pub(crate) fn best_shared(
        &self,
        era: Era,
        server: &[ProtocolVersion],
    ) -> Option<ProtocolVersion> {
        mcp_protocol::version::best_shared(&self.versions, era, server)
    }

    /// The capabilities the client declares when speaking `version`: only
    /// what it has handlers for, shaped as that revision defines them.
    pub(crate) fn capabilities(&self, version: &ProtocolVersion) -> ClientCapabilities {
        let mut caps = ClientCapabilities::new();
        let modern = version.era() == Era::Modern;
        if self.handlers.roots.is_some() {
            // `notifications/roots/list_changed` is gone in 2026-07-28.
            caps = caps.with_roots((!modern).then_some(true));
        }
        if let Some(sampling) = &self.handlers.sampling {
            let tools = sampling.supports_tools() && *version >= ProtocolVersion::V2025_11_25;
            caps = caps.with_sampling(tools);
        }
        if let Some(elicitation) = &self.handlers.elicitation {
            if *version >= ProtocolVersion::V2025_11_25 {
                caps = caps.with_elicitation(true, elicitation.supports_url());
            } else if *version >= ProtocolVersion::V2025_06_18 {
                // 2025-06-18 knows only `{}`, which means form mode.
                caps = caps.with_elicitation(false, false);
            }
        }
        if self.tasks && modern {
            caps = caps.with_extension(TASKS_EXTENSION);
        }
        caps
    }
}
