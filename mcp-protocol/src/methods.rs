//! Method names, and the types that tie each request's params to its result
//! ([`RequestMethod`]) and each notification to its params
//! ([`NotificationMethod`]), so a client can offer a typed `request::<M>()`;
//! and what is known of each method ([`facts()`]).

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::types::*;

mod facts;

pub use self::facts::{
    CacheGroup, ClientCapability, MethodFacts, MethodKind, Revisions, Sender, ServerCapability,
    Target,
};

/// `initialize` (legacy).
pub const INITIALIZE: &str = "initialize";
/// `ping` (legacy, both directions).
pub const PING: &str = "ping";
/// `server/discover` (2026-07-28+).
pub const SERVER_DISCOVER: &str = "server/discover";
/// `tools/list`.
pub const TOOLS_LIST: &str = "tools/list";
/// `tools/call`.
pub const TOOLS_CALL: &str = "tools/call";
/// `resources/list`.
pub const RESOURCES_LIST: &str = "resources/list";
/// `resources/templates/list`.
pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
/// `resources/read`.
pub const RESOURCES_READ: &str = "resources/read";
/// `resources/subscribe` (legacy).
pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
/// `resources/unsubscribe` (legacy).
pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
/// `prompts/list`.
pub const PROMPTS_LIST: &str = "prompts/list";
/// `prompts/get`.
pub const PROMPTS_GET: &str = "prompts/get";
/// `completion/complete`.
pub const COMPLETION_COMPLETE: &str = "completion/complete";
/// `logging/setLevel` (legacy).
pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
/// `subscriptions/listen` (2026-07-28+).
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
/// `roots/list` (server to client, or an MRTR input).
pub const ROOTS_LIST: &str = "roots/list";
/// `sampling/createMessage` (server to client, or an MRTR input).
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
/// `elicitation/create` (server to client, or an MRTR input).
pub const ELICITATION_CREATE: &str = "elicitation/create";
/// `tasks/get` (2025-11-25 and the tasks extension).
pub const TASKS_GET: &str = "tasks/get";
/// `tasks/result` (2025-11-25).
pub const TASKS_RESULT: &str = "tasks/result";
/// `tasks/list` (2025-11-25).
pub const TASKS_LIST: &str = "tasks/list";
/// `tasks/cancel` (2025-11-25 and the tasks extension).
pub const TASKS_CANCEL: &str = "tasks/cancel";
/// `tasks/update` (the tasks extension).
pub const TASKS_UPDATE: &str = "tasks/update";
/// `skills/list` (the Skills extension, any revision).
pub const SKILLS_LIST: &str = "skills/list";
/// `skills/get` (the Skills extension, any revision).
pub const SKILLS_GET: &str = "skills/get";
/// `resources/directory/read` (the Skills extension's `directoryRead`).
pub const RESOURCES_DIRECTORY_READ: &str = "resources/directory/read";

/// `notifications/initialized` (legacy).
pub const NOTIFICATION_INITIALIZED: &str = "notifications/initialized";
/// `notifications/cancelled`.
pub const NOTIFICATION_CANCELLED: &str = "notifications/cancelled";
/// `notifications/progress`.
pub const NOTIFICATION_PROGRESS: &str = "notifications/progress";
/// `notifications/message`: a log message.
pub const NOTIFICATION_MESSAGE: &str = "notifications/message";
/// `notifications/resources/updated`.
pub const NOTIFICATION_RESOURCES_UPDATED: &str = "notifications/resources/updated";
/// `notifications/resources/list_changed`.
pub const NOTIFICATION_RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
/// `notifications/tools/list_changed`.
pub const NOTIFICATION_TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
/// `notifications/prompts/list_changed`.
pub const NOTIFICATION_PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
/// `notifications/roots/list_changed` (legacy, client to server).
pub const NOTIFICATION_ROOTS_LIST_CHANGED: &str = "notifications/roots/list_changed";
/// `notifications/subscriptions/acknowledged` (2026-07-28+).
pub const NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED: &str =
    "notifications/subscriptions/acknowledged";
/// `notifications/tasks/status`.
pub const NOTIFICATION_TASKS_STATUS: &str = "notifications/tasks/status";
/// `notifications/elicitation/complete` (2025-11-25 only).
pub const NOTIFICATION_ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";

/// A request method: its name, params type and (complete) result type.
pub trait RequestMethod {
    /// The method name.
    const METHOD: &'static str;
    /// Whether the method may answer `input_required` (2026-07-28+):
    /// `tools/call`, `prompts/get`, `resources/read`. For the methods
    /// declared here, [`MethodFacts::may_require_input`] of its row.
    const MAY_REQUIRE_INPUT: bool = false;
    /// Whether sending the request again is harmless when the server may
    /// already have run it (an answer lost on the way back, a gateway's
    /// 503 after it forwarded the request): true for what only reads,
    /// lists, listens or sets state to the same value again (`initialize`,
    /// `server/discover`, `ping`, lists, reads, `prompts/get`, completion,
    /// subscribing, the log level); false for what may act or cost
    /// (`tools/call`, sampling, elicitation, cancelling or updating a
    /// task). For the methods declared here,
    /// [`MethodFacts::resend_is_harmless`] of its row;
    /// [`resend_is_harmless`] asks the same by name.
    const RESEND_IS_HARMLESS: bool = false;
    /// The params.
    type Params: Serialize + DeserializeOwned;
    /// The result, once complete.
    type Result: Serialize + DeserializeOwned;

    /// Types a complete result held as a `Value`: `serde_json::from_value`,
    /// except for the results whose members are JSON as it is (a tool's
    /// schemas, a call's structured content), which are moved into place
    /// rather than rebuilt (same result, same errors).
    ///
    /// ```
    /// use mcp_protocol::methods::{ListTools, RequestMethod};
    /// let value = serde_json::json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]});
    /// let list = ListTools::result_from_value(value).unwrap();
    /// assert_eq!(list.items[0].name, "echo");
    /// ```
    fn result_from_value(value: Value) -> Result<Self::Result, serde_json::Error> {
        serde_json::from_value(value)
    }
}

/// A notification method: its name and params type.
pub trait NotificationMethod {
    /// The method name.
    const METHOD: &'static str;
    /// The params.
    type Params: Serialize + DeserializeOwned;
}

/// `[moved]` after a result type: the type has `from_value` (see
/// `deserialize_with_extra!`), which [`RequestMethod::result_from_value`]
/// uses. What a method may do comes from its row of the facts table.
macro_rules! request_methods {
    ($(
        $(#[$doc:meta])*
        $name:ident = $method:ident, $params:ty => $result:ty $([$moved:ident])?;
    )+) => {
        $(
            $(#[$doc])*
            #[derive(Clone, Copy, Debug)]
            pub enum $name {}

            impl RequestMethod for $name {
                const METHOD: &'static str = $method;
                const MAY_REQUIRE_INPUT: bool = facts::$method.may_require_input;
                const RESEND_IS_HARMLESS: bool = facts::$method.resend_is_harmless;
                type Params = $params;
                type Result = $result;
                $(request_methods!(@$moved $result);)?
            }
        )+
    };
    (@moved $result:ty) => {
        fn result_from_value(value: Value) -> Result<$result, serde_json::Error> {
            <$result>::from_value(value)
        }
    };
}

macro_rules! notification_methods {
    ($( $(#[$doc:meta])* $name:ident = $method:ident, $params:ty; )+) => {
        $(
            $(#[$doc])*
            #[derive(Clone, Copy, Debug)]
            pub enum $name {}

            impl NotificationMethod for $name {
                const METHOD: &'static str = $method;
                type Params = $params;
            }
        )+
    };
}

request_methods! {
    /// `initialize` (legacy).
    /// Not harmless to send again: a second `initialize` on a session that
    /// has one is refused, or opens a session left behind.
    Initialize = INITIALIZE, InitializeRequestParams => InitializeResult;
    /// `ping` (legacy).
    Ping = PING, RequestParams => EmptyResult;
    /// `server/discover` (2026-07-28+).
    Discover = SERVER_DISCOVER, RequestParams => DiscoverResult;
    /// `tools/list`.
    ListTools = TOOLS_LIST, PaginatedRequestParams => ListToolsResult [moved];
    /// `tools/call`.
    CallTool = TOOLS_CALL, CallToolRequestParams => CallToolResult [moved];
    /// `resources/list`.
    ListResources = RESOURCES_LIST, PaginatedRequestParams => ListResourcesResult [moved];
    /// `resources/templates/list`.
    ListResourceTemplates = RESOURCES_TEMPLATES_LIST, PaginatedRequestParams => ListResourceTemplatesResult [moved];
    /// `resources/read`.
    ReadResource = RESOURCES_READ, ReadResourceRequestParams => ReadResourceResult;
    /// `resources/subscribe` (legacy).
    Subscribe = RESOURCES_SUBSCRIBE, SubscribeRequestParams => EmptyResult;
    /// `resources/unsubscribe` (legacy).
    Unsubscribe = RESOURCES_UNSUBSCRIBE, UnsubscribeRequestParams => EmptyResult;
    /// `prompts/list`.
    ListPrompts = PROMPTS_LIST, PaginatedRequestParams => ListPromptsResult [moved];
    /// `prompts/get`.
    GetPrompt = PROMPTS_GET, GetPromptRequestParams => GetPromptResult;
    /// `completion/complete`.
    Complete = COMPLETION_COMPLETE, CompleteRequestParams => CompleteResult;
    /// `logging/setLevel` (legacy).
    SetLevel = LOGGING_SET_LEVEL, SetLevelRequestParams => EmptyResult;
    /// `subscriptions/listen` (2026-07-28+).
    SubscriptionsListen = SUBSCRIPTIONS_LISTEN, SubscriptionsListenRequestParams => SubscriptionsListenResult;
    /// `roots/list`, which a legacy server sends the client.
    ListRoots = ROOTS_LIST, RequestParams => ListRootsResult;
    /// `sampling/createMessage`, which a legacy server sends the client.
    CreateMessage = SAMPLING_CREATE_MESSAGE, CreateMessageRequestParams => CreateMessageResult;
    /// `elicitation/create`, which a legacy server sends the client.
    Elicit = ELICITATION_CREATE, ElicitRequestParams => ElicitResult;
    /// `tasks/get` of 2025-11-25 (experimental tasks).
    GetTask = TASKS_GET, TaskIdParams => GetTaskResult;
    /// `tasks/result` of 2025-11-25: the task's original result, raw.
    GetTaskPayload = TASKS_RESULT, TaskIdParams => Value;
    /// `tasks/list` of 2025-11-25.
    ListTasks = TASKS_LIST, PaginatedRequestParams => ListTasksResult;
    /// `tasks/cancel` of 2025-11-25.
    CancelTask = TASKS_CANCEL, TaskIdParams => CancelTaskResult;
    /// `tasks/get` of the tasks extension (2026-07-28+).
    GetExtensionTask = TASKS_GET, TaskIdParams => DetailedTask;
    /// `tasks/update` of the tasks extension (2026-07-28+).
    UpdateTask = TASKS_UPDATE, UpdateTaskParams => EmptyResult;
    /// `tasks/cancel` of the tasks extension (2026-07-28+).
    CancelExtensionTask = TASKS_CANCEL, TaskIdParams => EmptyResult;
    /// `skills/list` (the Skills extension): a page of skill entries.
    ListSkills = SKILLS_LIST, PaginatedRequestParams => ListSkillsResult [moved];
    /// `skills/get` (the Skills extension): one skill's entry, by URI.
    GetSkill = SKILLS_GET, GetSkillRequestParams => GetSkillResult;
    /// `resources/directory/read` (the Skills extension's `directoryRead`):
    /// a page of a directory resource's direct children.
    ReadDirectory = RESOURCES_DIRECTORY_READ, ReadDirectoryRequestParams => ReadDirectoryResult [moved];
}

/// Whether sending the request `method` again is harmless when the server
/// may already have run it ([`RequestMethod::RESEND_IS_HARMLESS`], by
/// name). An unknown method is not: nothing is known of what it does. For
/// `tools/call` this says only what the method says; a tool's annotations
/// (`readOnlyHint`, `idempotentHint`) may say more.
///
/// ```
/// use mcp_protocol::methods::{self, resend_is_harmless};
///
/// assert!(resend_is_harmless(methods::TOOLS_LIST));
/// assert!(!resend_is_harmless(methods::TOOLS_CALL));
/// assert!(!resend_is_harmless("vendor/launch"));
/// // A second `initialize` on a session is refused, or opens another.
/// assert!(!resend_is_harmless(methods::INITIALIZE));
/// ```
pub fn resend_is_harmless(method: &str) -> bool {
    facts(method).is_some_and(|f| f.resend_is_harmless)
}

/// What is known of `method`: the revisions that have it, who sends it,
/// the capability it needs, its cache group, whether it may ask for input,
/// whether sending it again is harmless, and which param names what it
/// acts on. `None` for a method this library does not know. No I/O: a
/// lookup in one table, which every method declared here has a row of.
///
/// ```
/// use mcp_protocol::methods::{self, CacheGroup, Revisions, ServerCapability, Target, facts};
/// use mcp_protocol::{Era, ProtocolVersion};
///
/// let call = facts(methods::TOOLS_CALL).unwrap();
/// assert_eq!(call.server_capability, Some(ServerCapability::Tools));
/// assert!(call.may_require_input && !call.resend_is_harmless);
/// assert_eq!(call.target, Some(Target::TOOL));
///
/// let read = facts(methods::RESOURCES_READ).unwrap();
/// assert_eq!(read.cache_group, Some(CacheGroup::Resource));
/// assert_eq!(read.target.unwrap().param, "uri");
///
/// let setlevel = facts(methods::LOGGING_SET_LEVEL).unwrap();
/// assert_eq!(setlevel.revisions, Revisions::Era(Era::Legacy));
/// assert!(!setlevel.revisions.includes(&ProtocolVersion::V2026_07_28));
///
/// assert!(facts("vendor/launch").is_none());
/// ```
pub fn facts(method: &str) -> Option<&'static MethodFacts> {
    facts::lookup(method)
}

/// Every method's facts, requests then notifications.
pub fn all_facts() -> &'static [&'static MethodFacts] {
    facts::ROWS
}

notification_methods! {
    /// `notifications/initialized` (legacy).
    Initialized = NOTIFICATION_INITIALIZED, NotificationParams;
    /// `notifications/cancelled`.
    Cancelled = NOTIFICATION_CANCELLED, CancelledNotificationParams;
    /// `notifications/progress`.
    Progress = NOTIFICATION_PROGRESS, ProgressNotificationParams;
    /// `notifications/message`.
    LoggingMessage = NOTIFICATION_MESSAGE, LoggingMessageNotificationParams;
    /// `notifications/resources/updated`.
    ResourceUpdated = NOTIFICATION_RESOURCES_UPDATED, ResourceUpdatedNotificationParams;
    /// `notifications/resources/list_changed`.
    ResourceListChanged = NOTIFICATION_RESOURCES_LIST_CHANGED, NotificationParams;
    /// `notifications/tools/list_changed`.
    ToolListChanged = NOTIFICATION_TOOLS_LIST_CHANGED, NotificationParams;
    /// `notifications/prompts/list_changed`.
    PromptListChanged = NOTIFICATION_PROMPTS_LIST_CHANGED, NotificationParams;
    /// `notifications/roots/list_changed` (legacy).
    RootsListChanged = NOTIFICATION_ROOTS_LIST_CHANGED, NotificationParams;
    /// `notifications/subscriptions/acknowledged` (2026-07-28+).
    SubscriptionsAcknowledged = NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED, SubscriptionsAcknowledgedNotificationParams;
    /// `notifications/tasks/status` of 2025-11-25.
    TaskStatusChanged = NOTIFICATION_TASKS_STATUS, TaskStatusNotificationParams;
    /// `notifications/elicitation/complete` (2025-11-25 only).
    ElicitationComplete = NOTIFICATION_ELICITATION_COMPLETE, ElicitationCompleteNotificationParams;
}
