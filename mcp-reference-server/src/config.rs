//! How a fake server is configured: its era and versions, capabilities,
//! content, paging and caching hints, and misbehaviour knobs.

use std::time::Duration;

use mcp_protocol::{Era, ProtocolVersion};
use serde_json::{Value, json};

use super::content::Content;

/// The legacy revisions a legacy (or dual) fake speaks by default, newest first.
pub const DEFAULT_LEGACY_VERSIONS: [&str; 4] =
    ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The modern revisions a modern (or dual) fake speaks by default.
pub const DEFAULT_MODERN_VERSIONS: [&str; 1] = ["2026-07-28"];

/// Which era a fake server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EraChoice {
    /// Only the `initialize` handshake (2025-11-25 and older).
    Legacy,
    /// Only per-request `_meta` (2026-07-28 and later); `initialize` gets
    /// `-32022`.
    Modern,
    /// Both, decided per connection: a request carrying the `_meta`
    /// protocol version, or `server/discover`, is served modern; an
    /// `initialize` makes the connection legacy from then on.
    Dual,
}

/// How a legacy connection answers `server/discover` (the era probe), the
/// ways real legacy servers do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiscoverAnswer {
    /// `-32601` Method not found (TypeScript SDK servers). The default.
    MethodNotFound,
    /// `-32602` Invalid params (Python SDK servers).
    InvalidParams,
    /// `-32000`, an implementation-defined server error.
    ServerError,
    /// No answer at all.
    Silent,
}

impl DiscoverAnswer {
    /// Reads `-32601`, `-32602`, `-32000` or `silent`.
    pub fn parse(text: &str) -> Option<DiscoverAnswer> {
        use mcp_protocol::error_codes::{INVALID_PARAMS, METHOD_NOT_FOUND};
        if matches!(text, "silent" | "none") {
            return Some(DiscoverAnswer::Silent);
        }
        match text.parse::<i64>().ok()? {
            METHOD_NOT_FOUND => Some(DiscoverAnswer::MethodNotFound),
            INVALID_PARAMS => Some(DiscoverAnswer::InvalidParams),
            super::errors::SERVER_ERROR => Some(DiscoverAnswer::ServerError),
            _ => None,
        }
    }
}

/// Which requests a knob applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Methods {
    /// Every request.
    All,
    /// Requests of this method only.
    Named(String),
}

impl Methods {
    /// Whether `method` is covered.
    pub fn covers(&self, method: &str) -> bool {
        match self {
            Methods::All => true,
            Methods::Named(m) => m == method,
        }
    }

    /// `*` means every method; anything else names one.
    pub fn parse(text: &str) -> Methods {
        if text == "*" {
            Methods::All
        } else {
            Methods::Named(text.to_owned())
        }
    }
}

/// A way to misbehave, as real servers do.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Knob {
    /// Exit (code 1, with a line on stderr) on any request other than
    /// `initialize` before the handshake (`ping` and `server/discover`
    /// included), as rmcp servers before 3.0 do. A dual server exits only on
    /// requests it serves by the legacy rules. In process the connection
    /// dies: the client sees `ServerGone` with the exit code and stderr.
    ExitOnRequestBeforeInitialize,
    /// Never answer these requests.
    NeverAnswer(Methods),
    /// Answer these requests only after a delay.
    AnswerLate(Methods, Duration),
    /// Answer these requests twice.
    AnswerTwice(Methods),
    /// Answer these requests with an id that is not theirs.
    AnswerWithWrongId(Methods),
    /// How a legacy connection answers `server/discover`.
    DiscoverAnswer(DiscoverAnswer),
    /// (Dual.) The first request fixes the era: after a modern first
    /// request, `initialize` gets `-32022` (as Python SDK servers do).
    FixEraAtFirstMessage,
    /// Right after `notifications/initialized`, send a `roots/list` request
    /// and `notifications/tools/list_changed` unasked (as server-everything
    /// does).
    UnsolicitedAfterInitialized,
    /// After a cancel, keep sending the cancelled request's progress (its
    /// answer is still withheld).
    ProgressAfterCancel,
    /// Never read the input at all (the binary's stdin fills up).
    NeverReadInput,
}

/// `cacheScope` of modern list and read results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheScope {
    /// Shareable across authorization contexts.
    Public,
    /// Only within one authorization context.
    Private,
}

impl CacheScope {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            CacheScope::Public => "public",
            CacheScope::Private => "private",
        }
    }
}

/// The whole configuration of a fake server.
///
/// ```
/// use mcp_reference_server::{FakeConfig, Knob};
///
/// let config = FakeConfig::dual()
///     .page_size(2)
///     .knob(Knob::FixEraAtFirstMessage);
/// assert!(config.has_knob(&Knob::FixEraAtFirstMessage));
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct FakeConfig {
    /// Which era it speaks.
    pub era: EraChoice,
    /// Legacy revisions it accepts, newest first.
    pub legacy_versions: Vec<String>,
    /// Modern revisions it accepts, newest first.
    pub modern_versions: Vec<String>,
    /// The server capabilities it advertises.
    pub capabilities: Value,
    /// `serverInfo` (legacy) and `_meta` serverInfo (modern).
    pub server_info: Value,
    /// The instructions it gives, if any.
    pub instructions: Option<String>,
    /// Its tools, resources, templates and prompts.
    pub content: Content,
    /// Items per page of list results; `None` sends everything at once.
    pub page_size: Option<usize>,
    /// `ttlMs` of modern discover, list and read results.
    pub ttl_ms: u64,
    /// `cacheScope` of modern discover, list and read results.
    pub cache_scope: CacheScope,
    /// Misbehaviours.
    pub knobs: Vec<Knob>,
    /// Whether it serves the official conformance suite's fixtures (see
    /// [`FakeConfig::conformance`]); besides the content, this makes
    /// multi-round requests read `inputResponses` as SEP-2322 has a server
    /// read them (unrequested keys ignored, responses without
    /// `requestState` taken as answers to the first round) rather than as
    /// a strict test of the client.
    pub conformance: bool,
}

impl FakeConfig {
    fn with_era(era: EraChoice) -> FakeConfig {
        let strings = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        FakeConfig {
            era,
            legacy_versions: strings(&DEFAULT_LEGACY_VERSIONS),
            modern_versions: strings(&DEFAULT_MODERN_VERSIONS),
            capabilities: default_capabilities(),
            server_info: json!({
                "name": "mcp-testkit-fake",
                "version": env!("CARGO_PKG_VERSION"),
            }),
            instructions: Some("A fake MCP server for tests: call `echo` first.".to_owned()),
            content: Content::default(),
            page_size: None,
            ttl_ms: 60_000,
            cache_scope: CacheScope::Public,
            knobs: Vec::new(),
            conformance: false,
        }
    }

    /// A legacy server (2025-11-25 … 2024-11-05) with the default content.
    pub fn legacy() -> FakeConfig {
        Self::with_era(EraChoice::Legacy)
    }

    /// A modern server (2026-07-28) with the default content.
    pub fn modern() -> FakeConfig {
        Self::with_era(EraChoice::Modern)
    }

    /// A server of both eras, deciding per connection.
    pub fn dual() -> FakeConfig {
        Self::with_era(EraChoice::Dual)
    }

    /// A server of the given era.
    pub fn of_era(era: EraChoice) -> FakeConfig {
        Self::with_era(era)
    }

    /// Replaces the accepted revisions: each is sorted into the legacy or
    /// the modern list by its date. An era given no revision keeps none.
    pub fn versions<I, S>(mut self, versions: I) -> FakeConfig
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.legacy_versions.clear();
        self.modern_versions.clear();
        for v in versions {
            let v = v.into();
            match ProtocolVersion::new(v.clone()).era() {
                Era::Legacy => self.legacy_versions.push(v),
                Era::Modern => self.modern_versions.push(v),
            }
        }
        self.legacy_versions.sort_by(|a, b| b.cmp(a));
        self.modern_versions.sort_by(|a, b| b.cmp(a));
        self
    }

    /// Replaces the advertised capabilities.
    pub fn capabilities(mut self, capabilities: Value) -> FakeConfig {
        self.capabilities = capabilities;
        self
    }

    /// Replaces the server's name and version.
    pub fn server_info(mut self, name: &str, version: &str) -> FakeConfig {
        self.server_info = json!({ "name": name, "version": version });
        self
    }

    /// Replaces the instructions (`None`: none given).
    pub fn instructions(mut self, instructions: Option<&str>) -> FakeConfig {
        self.instructions = instructions.map(str::to_owned);
        self
    }

    /// Replaces the content.
    pub fn content(mut self, content: Content) -> FakeConfig {
        self.content = content;
        self
    }

    /// Serves the fixtures the official MCP conformance suite's server
    /// scenarios call (`@modelcontextprotocol/conformance`, `conformance
    /// server`) in place of the content: the `test_*` tools, `test://`
    /// resources and template, and `test_*` prompts (see
    /// [`Content::conformance`]). Off by default: the default content is
    /// what tests, examples, benchmarks and `mcp inspect` see.
    ///
    /// ```
    /// use mcp_reference_server::FakeConfig;
    ///
    /// let config = FakeConfig::dual().conformance();
    /// assert!(config.content.tools.iter().any(|t| t.name() == "test_simple_text"));
    /// assert!(!FakeConfig::dual().conformance);
    /// ```
    pub fn conformance(mut self) -> FakeConfig {
        self.content = Content::conformance();
        self.instructions = Some(
            "The fixtures of the MCP conformance suite's server scenarios: call test_simple_text first."
                .to_owned(),
        );
        self.conformance = true;
        self
    }

    /// Pages list results by `n` items (at least one).
    pub fn page_size(mut self, n: usize) -> FakeConfig {
        self.page_size = Some(n.max(1));
        self
    }

    /// Sets the caching hints of modern results.
    pub fn cache_hint(mut self, ttl_ms: u64, scope: CacheScope) -> FakeConfig {
        self.ttl_ms = ttl_ms;
        self.cache_scope = scope;
        self
    }

    /// Serves `skills` (the Skills extension, SEP-2640): declares
    /// `io.modelcontextprotocol/skills` (with `directoryRead` when asked)
    /// and answers `skills/list`, `skills/get`, `resources/read` of their
    /// files and, with `directory_read`, `resources/directory/read`.
    ///
    /// ```
    /// use mcp_reference_server::{FakeConfig, demo_skills};
    ///
    /// let config = FakeConfig::legacy().with_skills(demo_skills(), true);
    /// assert_eq!(config.capabilities["extensions"]["io.modelcontextprotocol/skills"]["directoryRead"], true);
    /// ```
    pub fn with_skills(
        mut self,
        skills: Vec<crate::FakeSkill>,
        directory_read: bool,
    ) -> FakeConfig {
        self.content.skills.extend(skills);
        let settings = if directory_read {
            json!({"directoryRead": true})
        } else {
            json!({})
        };
        if let Some(caps) = self.capabilities.as_object_mut() {
            let extensions = caps.entry("extensions").or_insert_with(|| json!({}));
            extensions[mcp_protocol::types::SKILLS_EXTENSION] = settings;
        }
        self
    }

    /// Adds a misbehaviour.
    pub fn knob(mut self, knob: Knob) -> FakeConfig {
        self.knobs.push(knob);
        self
    }

    /// Whether a knob is set.
    pub fn has_knob(&self, knob: &Knob) -> bool {
        self.knobs.contains(knob)
    }

    /// How a legacy connection answers `server/discover`.
    pub fn discover_answer(&self) -> DiscoverAnswer {
        self.knobs
            .iter()
            .find_map(|k| match k {
                Knob::DiscoverAnswer(a) => Some(*a),
                _ => None,
            })
            .unwrap_or(DiscoverAnswer::MethodNotFound)
    }

    /// Every accepted revision, newest first.
    pub fn all_versions(&self) -> Vec<String> {
        let mut all = Vec::new();
        if self.era != EraChoice::Legacy {
            all.extend(self.modern_versions.iter().cloned());
        }
        if self.era != EraChoice::Modern {
            all.extend(self.legacy_versions.iter().cloned());
        }
        all
    }

    /// Whether a server capability is advertised (`"tools"`, `"logging"`…).
    pub fn advertises(&self, capability: &str) -> bool {
        self.capabilities.get(capability).is_some()
    }

    /// Whether `capabilities[capability][flag]` is true (`listChanged`…).
    pub fn advertises_flag(&self, capability: &str, flag: &str) -> bool {
        self.capabilities
            .get(capability)
            .and_then(|c| c.get(flag))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }
}

impl Default for FakeConfig {
    /// A dual-era server.
    fn default() -> Self {
        FakeConfig::dual()
    }
}

/// Tools, resources (with subscriptions), prompts, logging and
/// completions, each list announcing its changes.
pub fn default_capabilities() -> Value {
    json!({
        "tools": { "listChanged": true },
        "resources": { "subscribe": true, "listChanged": true },
        "prompts": { "listChanged": true },
        "logging": {},
        "completions": {},
    })
}
