//! The era verdict: what the client learned about a server when it
//! connected, and how.

use mcp_protocol::types::{Implementation, ServerCapabilities};
use mcp_protocol::{Era, ProtocolVersion};
use serde::{Deserialize, Serialize};

/// What the client knows about the server it is connected to.
///
/// It can be saved (it serializes) and handed to a later connect through
/// [`crate::ClientBuilder::saved_verdict`] to skip the era probe; when a
/// saved verdict no longer holds, the client probes again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Verdict {
    /// The era the server speaks on this connection.
    pub era: Era,
    /// The revision in use.
    pub version: ProtocolVersion,
    /// What the server can do.
    pub capabilities: ServerCapabilities,
    /// Who the server is, when it said.
    pub server_info: Option<Implementation>,
    /// How to use the server, when it said.
    pub instructions: Option<String>,
    /// How the verdict was reached.
    pub reached: Reached,
    /// The stderr tail of a server that died on the probe (the client then
    /// started it again and spoke legacy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_stderr_tail: Option<String>,
    /// A `server/discover` answer arrived after the probe gave up on it and
    /// the legacy handshake had begun. Nothing changes on this connection,
    /// but a later connect may do better with a longer probe timeout.
    #[serde(default)]
    pub late_discover_answer: bool,
}

/// How the client settled on an era.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "how")]
#[non_exhaustive]
pub enum Reached {
    /// `server/discover` answered with a shared modern revision.
    Discover,
    /// `server/discover` was rejected with `-32022` and retried with a
    /// revision from the server's list.
    DiscoverRetried,
    /// The client was pinned to modern.
    PinnedModern,
    /// The client was pinned to legacy.
    PinnedLegacy,
    /// The probe got an error that only legacy servers give.
    LegacyAfterProbeError {
        /// The error code, or the HTTP status for an HTTP answer.
        code: i64,
    },
    /// The probe's answer was no valid `DiscoverResult`.
    LegacyAfterInvalidDiscover,
    /// The server named only legacy revisions.
    LegacyByVersionList,
    /// The probe got no answer in time.
    LegacyAfterSilence,
    /// The server died on the probe; a new connection spoke legacy.
    LegacyAfterServerDied,
    /// `initialize` was answered with `-32022`: the server is modern.
    ModernAfterInitializeRejected,
    /// A saved verdict was used.
    Saved,
}
