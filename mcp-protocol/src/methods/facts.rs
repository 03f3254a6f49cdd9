//! What is known of each method, in one table: the revisions it exists
//! in, who sends it, the capability it needs, its cache group, whether it
//! may ask for input, whether sending it again is harmless, and which
//! param names what it acts on. A client looks these up by name
//! ([`facts`](super::facts())) rather than matching method names itself.

use serde_json::Value;

use crate::types::{ClientCapabilities, ServerCapabilities, SkillsSettings};
use crate::version::{Era, ProtocolVersion};

/// The facts of one method (see [`facts`](super::facts())).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct MethodFacts {
    /// The method name.
    pub name: &'static str,
    /// A request (answered) or a notification.
    pub kind: MethodKind,
    /// Which side sends it.
    pub sender: Sender,
    /// The revisions that have it.
    pub revisions: Revisions,
    /// The server capability a client-sent request needs advertised;
    /// `None` for one that needs none (and for notifications, for which
    /// none is recorded).
    pub server_capability: Option<ServerCapability>,
    /// The client capability a server-sent request needs declared.
    pub client_capability: Option<ClientCapability>,
    /// For a request, the group its answer is cached in; for a
    /// notification, the group it makes stale.
    pub cache_group: Option<CacheGroup>,
    /// Whether the request may answer `input_required` (2026-07-28+):
    /// `tools/call`, `prompts/get`, `resources/read`.
    pub may_require_input: bool,
    /// Whether sending the request again is harmless when the server may
    /// already have run it (see
    /// [`RequestMethod::RESEND_IS_HARMLESS`](super::RequestMethod::RESEND_IS_HARMLESS)).
    pub resend_is_harmless: bool,
    /// What the method acts on, named by one of its params: the tool, the
    /// prompt, the resource.
    pub target: Option<Target>,
}

/// Whether a method is a request or a notification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MethodKind {
    /// Answered with a result or an error.
    Request,
    /// Never answered.
    Notification,
}

/// Which side sends a method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Sender {
    /// The client, to the server.
    Client,
    /// The server, to the client (in 2026-07-28+ a request of the server's
    /// is an input an `input_required` result asks for).
    Server,
    /// Either side.
    Either,
}

impl Sender {
    /// Whether the client sends it.
    pub fn includes_client(self) -> bool {
        matches!(self, Sender::Client | Sender::Either)
    }
}

/// The revisions a method exists in.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Revisions {
    /// Every revision.
    All,
    /// The revisions of one era ([`ProtocolVersion::era`]).
    Era(Era),
    /// This revision and every later one.
    Since(ProtocolVersion),
    /// This revision only.
    Only(ProtocolVersion),
}

impl Revisions {
    /// Whether `version` has the method.
    ///
    /// ```
    /// use mcp_protocol::methods::Revisions;
    /// use mcp_protocol::{Era, ProtocolVersion};
    ///
    /// assert!(Revisions::Era(Era::Legacy).includes(&ProtocolVersion::V2025_06_18));
    /// assert!(!Revisions::Since(ProtocolVersion::V2025_11_25).includes(&ProtocolVersion::V2025_06_18));
    /// ```
    pub fn includes(&self, version: &ProtocolVersion) -> bool {
        match self {
            Revisions::All => true,
            Revisions::Era(era) => version.era() == *era,
            Revisions::Since(first) => version >= first,
            Revisions::Only(only) => version == only,
        }
    }
}

/// A server capability a request needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerCapability {
    /// `tools`.
    Tools,
    /// `prompts`.
    Prompts,
    /// `resources`.
    Resources,
    /// `resources.subscribe`.
    ResourcesSubscribe,
    /// `logging`.
    Logging,
    /// `completions` (2025-03-26+).
    Completions,
    /// The Skills extension (`io.modelcontextprotocol/skills` under
    /// `extensions`), in any revision.
    Skills,
    /// The Skills extension with `directoryRead: true`. A client never
    /// sends `resources/directory/read` without it, even when it sends other
    /// requests regardless of capabilities ([`always_enforced`](Self::always_enforced)).
    SkillsDirectoryRead,
}

impl ServerCapability {
    /// Its path in the capabilities, such as `resources.subscribe`.
    pub fn path(self) -> &'static str {
        match self {
            ServerCapability::Tools => "tools",
            ServerCapability::Prompts => "prompts",
            ServerCapability::Resources => "resources",
            ServerCapability::ResourcesSubscribe => "resources.subscribe",
            ServerCapability::Logging => "logging",
            ServerCapability::Completions => "completions",
            ServerCapability::Skills => "extensions.io.modelcontextprotocol/skills",
            ServerCapability::SkillsDirectoryRead => {
                "extensions.io.modelcontextprotocol/skills.directoryRead"
            }
        }
    }

    /// Whether a client holds a request back for want of this capability
    /// even when told to send regardless of what the server advertised:
    /// SEP-2640 says a client MUST NOT call `resources/directory/read`
    /// without `directoryRead: true`.
    ///
    /// ```
    /// use mcp_protocol::methods::ServerCapability;
    /// assert!(ServerCapability::SkillsDirectoryRead.always_enforced());
    /// assert!(!ServerCapability::Tools.always_enforced());
    /// ```
    pub fn always_enforced(self) -> bool {
        matches!(self, ServerCapability::SkillsDirectoryRead)
    }

    /// Whether `version` has the capability: 2024-11-05 had completion
    /// without a `completions` capability.
    pub fn exists_in(self, version: &ProtocolVersion) -> bool {
        match self {
            ServerCapability::Completions => *version > ProtocolVersion::V2024_11_05,
            _ => true,
        }
    }

    /// Whether `caps` advertise it.
    ///
    /// ```
    /// use mcp_protocol::methods::ServerCapability;
    /// use mcp_protocol::types::ServerCapabilities;
    ///
    /// let caps = ServerCapabilities::new().with_tools(None);
    /// assert!(ServerCapability::Tools.advertised_in(&caps));
    /// assert!(!ServerCapability::Prompts.advertised_in(&caps));
    /// ```
    pub fn advertised_in(self, caps: &ServerCapabilities) -> bool {
        match self {
            ServerCapability::Tools => caps.tools.is_some(),
            ServerCapability::Prompts => caps.prompts.is_some(),
            ServerCapability::Resources => caps.resources.is_some(),
            ServerCapability::ResourcesSubscribe => caps
                .resources
                .as_ref()
                .is_some_and(|r| r.subscribe == Some(true)),
            ServerCapability::Logging => caps.logging.is_some(),
            ServerCapability::Completions => caps.completions.is_some(),
            ServerCapability::Skills => SkillsSettings::of(caps).is_some(),
            ServerCapability::SkillsDirectoryRead => {
                SkillsSettings::of(caps).is_some_and(|s| s.directory_read())
            }
        }
    }
}

/// A client capability a server's request needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientCapability {
    /// `roots`.
    Roots,
    /// `sampling`.
    Sampling,
    /// `elicitation`.
    Elicitation,
}

impl ClientCapability {
    /// Its path in the capabilities.
    pub fn path(self) -> &'static str {
        match self {
            ClientCapability::Roots => "roots",
            ClientCapability::Sampling => "sampling",
            ClientCapability::Elicitation => "elicitation",
        }
    }

    /// Whether `caps` declare it.
    pub fn declared_in(self, caps: &ClientCapabilities) -> bool {
        match self {
            ClientCapability::Roots => caps.roots.is_some(),
            ClientCapability::Sampling => caps.sampling.is_some(),
            ClientCapability::Elicitation => caps.elicitation.is_some(),
        }
    }
}

/// A group of cached answers that one kind of notification makes stale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CacheGroup {
    /// `server/discover`.
    Discover,
    /// `tools/list`, stale on `notifications/tools/list_changed`.
    Tools,
    /// `prompts/list`, stale on `notifications/prompts/list_changed`.
    Prompts,
    /// `resources/list` and `resources/templates/list`, stale on
    /// `notifications/resources/list_changed`.
    Resources,
    /// `resources/read`, stale for its URI on
    /// `notifications/resources/updated`.
    Resource,
    /// `skills/list` (the Skills extension): kept for its `ttlMs`; no
    /// notification makes it stale.
    Skills,
}

impl CacheGroup {
    /// Every group, in the order of [`index`](Self::index).
    pub const ALL: [CacheGroup; 6] = [
        CacheGroup::Discover,
        CacheGroup::Tools,
        CacheGroup::Prompts,
        CacheGroup::Resources,
        CacheGroup::Resource,
        CacheGroup::Skills,
    ];

    /// Its place in [`ALL`](Self::ALL), for a table kept per group.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Whether a (legacy) server said it announces changes to the group:
    /// `listChanged` in its capability for the list.
    pub fn changes_announced_in(self, caps: &ServerCapabilities) -> bool {
        match self {
            CacheGroup::Tools => caps.tools.as_ref().and_then(|c| c.list_changed) == Some(true),
            CacheGroup::Prompts => caps.prompts.as_ref().and_then(|c| c.list_changed) == Some(true),
            CacheGroup::Resources => {
                caps.resources.as_ref().and_then(|c| c.list_changed) == Some(true)
            }
            CacheGroup::Discover | CacheGroup::Resource | CacheGroup::Skills => false,
        }
    }
}

/// What a method acts on: the span field a trace records it under, and
/// the param that names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Target {
    /// What it is: `tool`, `prompt` or `resource`.
    pub what: &'static str,
    /// The param naming it: `name` or `uri`.
    pub param: &'static str,
}

impl Target {
    /// A tool, by `name`.
    pub const TOOL: Target = Target {
        what: "tool",
        param: "name",
    };
    /// A prompt, by `name`.
    pub const PROMPT: Target = Target {
        what: "prompt",
        param: "name",
    };
    /// A resource, by `uri`.
    pub const RESOURCE: Target = Target {
        what: "resource",
        param: "uri",
    };
    /// A skill, by the `uri` of its `SKILL.md`.
    pub const SKILL: Target = Target {
        what: "skill",
        param: "uri",
    };

    /// The target as `params` name it, when they do (as a string).
    pub fn in_params<'a>(&self, params: Option<&'a Value>) -> Option<&'a str> {
        params?.get(self.param)?.as_str()
    }
}

const fn request(name: &'static str, sender: Sender, revisions: Revisions) -> MethodFacts {
    MethodFacts {
        name,
        kind: MethodKind::Request,
        sender,
        revisions,
        server_capability: None,
        client_capability: None,
        cache_group: None,
        may_require_input: false,
        resend_is_harmless: false,
        target: None,
    }
}

const fn notification(name: &'static str, sender: Sender, revisions: Revisions) -> MethodFacts {
    let mut facts = request(name, sender, revisions);
    facts.kind = MethodKind::Notification;
    facts
}

// The facts a row adds; `self` is passed through rather than rebuilt with
// `..base`, which would drop the rest of the base at compile time.
impl MethodFacts {
    const fn needs(mut self, capability: ServerCapability) -> Self {
        self.server_capability = Some(capability);
        self
    }

    const fn asks(mut self, capability: ClientCapability) -> Self {
        self.client_capability = Some(capability);
        self
    }

    const fn cached(mut self, group: CacheGroup) -> Self {
        self.cache_group = Some(group);
        self
    }

    const fn input(mut self) -> Self {
        self.may_require_input = true;
        self
    }

    const fn harmless(mut self) -> Self {
        self.resend_is_harmless = true;
        self
    }

    const fn names(mut self, target: Target) -> Self {
        self.target = Some(target);
        self
    }
}

const ALL: Revisions = Revisions::All;
const LEGACY: Revisions = Revisions::Era(Era::Legacy);
const MODERN: Revisions = Revisions::Era(Era::Modern);
/// The experimental tasks of 2025-11-25, and the tasks extension after.
const TASKS: Revisions = Revisions::Since(ProtocolVersion::V2025_11_25);
/// The experimental tasks of 2025-11-25 only, gone from the extension.
const TASKS_2025: Revisions = Revisions::Only(ProtocolVersion::V2025_11_25);

/// One row per method: `NAME: request(sender, revisions).facts()…;`, the
/// facts not given being none or false. Each row is a static of the name
/// of the method's constant in [`super`], and [`lookup`] matches on it.
macro_rules! table {
    ($(
        $name:ident: $make:ident($sender:ident, $revisions:expr) $(.$fact:ident($($arg:expr)?))*;
    )+) => {
        $(
            #[doc = concat!("The facts of `", stringify!($name), "`.")]
            pub(super) static $name: MethodFacts =
                $make(super::$name, Sender::$sender, $revisions) $(.$fact($($arg)?))*;
        )+

        /// Every row, in the table's order.
        pub(super) static ROWS: &[&MethodFacts] = &[$(&$name),+];

        /// The row of `method`.
        pub(super) fn lookup(method: &str) -> Option<&'static MethodFacts> {
            match method {
                $(super::$name => Some(&$name),)+
                _ => None,
            }
        }
    };
}

use CacheGroup as Cached;
use ClientCapability as Declared;
use ServerCapability as Needs;

#[rustfmt::skip]
table! {
    // Not harmless to send again: a second `initialize` on a session that
    // has one is refused, or opens a session left behind.
    INITIALIZE: request(Client, LEGACY);
    PING: request(Either, LEGACY).harmless();
    SERVER_DISCOVER: request(Client, MODERN).cached(Cached::Discover).harmless();
    TOOLS_LIST: request(Client, ALL).needs(Needs::Tools).cached(Cached::Tools).harmless();
    TOOLS_CALL: request(Client, ALL).needs(Needs::Tools).input().names(Target::TOOL);
    RESOURCES_LIST: request(Client, ALL)
        .needs(Needs::Resources).cached(Cached::Resources).harmless();
    RESOURCES_TEMPLATES_LIST: request(Client, ALL)
        .needs(Needs::Resources).cached(Cached::Resources).harmless();
    RESOURCES_READ: request(Client, ALL)
        .needs(Needs::Resources).cached(Cached::Resource).input().harmless()
        .names(Target::RESOURCE);
    RESOURCES_SUBSCRIBE: request(Client, LEGACY)
        .needs(Needs::ResourcesSubscribe).harmless().names(Target::RESOURCE);
    RESOURCES_UNSUBSCRIBE: request(Client, LEGACY)
        .needs(Needs::ResourcesSubscribe).harmless().names(Target::RESOURCE);
    PROMPTS_LIST: request(Client, ALL).needs(Needs::Prompts).cached(Cached::Prompts).harmless();
    PROMPTS_GET: request(Client, ALL)
        .needs(Needs::Prompts).input().harmless().names(Target::PROMPT);
    COMPLETION_COMPLETE: request(Client, ALL).needs(Needs::Completions).harmless();
    LOGGING_SET_LEVEL: request(Client, LEGACY).needs(Needs::Logging).harmless();
    SUBSCRIPTIONS_LISTEN: request(Client, MODERN).harmless();
    ROOTS_LIST: request(Server, ALL).asks(Declared::Roots).harmless();
    SAMPLING_CREATE_MESSAGE: request(Server, ALL).asks(Declared::Sampling);
    ELICITATION_CREATE: request(Server, Revisions::Since(ProtocolVersion::V2025_06_18))
        .asks(Declared::Elicitation);
    TASKS_GET: request(Either, TASKS).harmless();
    TASKS_RESULT: request(Either, TASKS_2025).harmless();
    TASKS_LIST: request(Either, TASKS_2025).harmless();
    TASKS_CANCEL: request(Either, TASKS);
    TASKS_UPDATE: request(Client, MODERN);
    // The Skills extension: off the spec's timeline, the same in every
    // revision; `skills/list` carries `ttlMs` in 2026-07-28.
    SKILLS_LIST: request(Client, ALL).needs(Needs::Skills).cached(Cached::Skills).harmless();
    SKILLS_GET: request(Client, ALL).needs(Needs::Skills).harmless().names(Target::SKILL);
    RESOURCES_DIRECTORY_READ: request(Client, ALL)
        .needs(Needs::SkillsDirectoryRead).harmless().names(Target::RESOURCE);

    NOTIFICATION_INITIALIZED: notification(Client, LEGACY);
    NOTIFICATION_CANCELLED: notification(Either, ALL);
    NOTIFICATION_PROGRESS: notification(Either, ALL);
    NOTIFICATION_MESSAGE: notification(Server, ALL);
    NOTIFICATION_RESOURCES_UPDATED: notification(Server, ALL)
        .cached(Cached::Resource).names(Target::RESOURCE);
    NOTIFICATION_RESOURCES_LIST_CHANGED: notification(Server, ALL).cached(Cached::Resources);
    NOTIFICATION_TOOLS_LIST_CHANGED: notification(Server, ALL).cached(Cached::Tools);
    NOTIFICATION_PROMPTS_LIST_CHANGED: notification(Server, ALL).cached(Cached::Prompts);
    NOTIFICATION_ROOTS_LIST_CHANGED: notification(Client, LEGACY);
    NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED: notification(Server, MODERN);
    NOTIFICATION_TASKS_STATUS: notification(Either, TASKS);
    NOTIFICATION_ELICITATION_COMPLETE: notification(Server, TASKS_2025);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_row_is_found_by_its_name_and_named_once() {
        for row in ROWS {
            assert_eq!(lookup(row.name), Some(*row), "{}", row.name);
        }
        let mut names: Vec<_> = ROWS.iter().map(|r| r.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ROWS.len(), "a method has two rows");
        assert_eq!(lookup("vendor/launch"), None);
    }

    #[test]
    fn what_only_requests_have_is_on_requests() {
        for row in ROWS.iter().filter(|r| r.kind == MethodKind::Notification) {
            assert!(
                !row.may_require_input && !row.resend_is_harmless,
                "{}",
                row.name
            );
            assert_eq!(row.server_capability, None, "{}", row.name);
            assert_eq!(row.client_capability, None, "{}", row.name);
        }
        for row in ROWS.iter().filter(|r| r.may_require_input) {
            assert!(row.target.is_some(), "{} names no target", row.name);
            assert_eq!(row.revisions, Revisions::All, "{}", row.name);
        }
    }

    #[test]
    fn capabilities_by_path() {
        let caps = ServerCapabilities::new();
        for need in [
            Needs::Tools,
            Needs::Prompts,
            Needs::Resources,
            Needs::ResourcesSubscribe,
            Needs::Logging,
            Needs::Completions,
            Needs::Skills,
            Needs::SkillsDirectoryRead,
        ] {
            assert!(!need.advertised_in(&caps), "{}", need.path());
        }
        let skills = ServerCapabilities::new().with_extension(crate::types::SKILLS_EXTENSION);
        assert!(Needs::Skills.advertised_in(&skills));
        assert!(!Needs::SkillsDirectoryRead.advertised_in(&skills));
        let json = serde_json::json!({"resources": {"subscribe": true, "listChanged": true},
            "logging": {}, "completions": {}});
        let caps: ServerCapabilities = serde_json::from_value(json).unwrap();
        assert!(Needs::ResourcesSubscribe.advertised_in(&caps));
        assert!(Needs::Resources.advertised_in(&caps));
        assert!(Needs::Logging.advertised_in(&caps));
        assert!(Needs::Completions.advertised_in(&caps));
        assert!(!Needs::Completions.exists_in(&ProtocolVersion::V2024_11_05));
        assert!(Needs::Completions.exists_in(&ProtocolVersion::V2025_03_26));
        assert!(Cached::Resources.changes_announced_in(&caps));
        assert!(!Cached::Tools.changes_announced_in(&caps));
        assert!(!Cached::Resource.changes_announced_in(&caps));
        let client = ClientCapabilities::new().with_roots(None);
        assert!(Declared::Roots.declared_in(&client));
        assert!(!Declared::Sampling.declared_in(&client));
        assert_eq!(Declared::Elicitation.path(), "elicitation");
    }

    #[test]
    fn groups_index_their_place() {
        for (i, group) in CacheGroup::ALL.iter().enumerate() {
            assert_eq!(group.index(), i);
        }
    }

    #[test]
    fn targets_read_from_params() {
        let params = serde_json::json!({"name": "echo", "uri": 3});
        assert_eq!(Target::TOOL.in_params(Some(&params)), Some("echo"));
        assert_eq!(Target::RESOURCE.in_params(Some(&params)), None);
        assert_eq!(Target::PROMPT.in_params(None), None);
    }
}
