//! Method names, and the types that tie each request's params to its result
//! ([`RequestMethod`]) and each notification to its params
//! ([`NotificationMethod`]), so a client can offer a typed `request::<M>()`.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::types::*;

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
    /// `tools/call`, `prompts/get`, `resources/read`.
    const MAY_REQUIRE_INPUT: bool = false;
    /// Whether sending the request again is harmless when the server may
    /// already have run it (an answer lost on the way back, a gateway's
    /// 503 after it forwarded the request): true for what only reads,
    /// lists, listens or sets state to the same value again (`initialize`,
    /// `server/discover`, `ping`, lists, reads, `prompts/get`, completion,
    /// subscribing, the log level); false for what may act or cost
    /// (`tools/call`, sampling, elicitation, cancelling or updating a
    /// task). [`resend_is_harmless`] asks the same by name.
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
/// uses.
macro_rules! request_methods {
    ($(
        $(#[$doc:meta])*
        $name:ident = $method:ident, $params:ty => $result:ty
            $([$moved:ident])? $(, input = $input:literal)? $(, harmless = $harmless:literal)?;
    )+) => {
        $(
            $(#[$doc])*
            #[derive(Clone, Copy, Debug)]
            pub enum $name {}

            impl RequestMethod for $name {
                const METHOD: &'static str = $method;
                $(const MAY_REQUIRE_INPUT: bool = $input;)?
                $(const RESEND_IS_HARMLESS: bool = $harmless;)?
                type Params = $params;
                type Result = $result;
                $(request_methods!(@$moved $result);)?
            }
        )+

        /// Every request method's name and whether re-sending it is
        /// harmless, for [`resend_is_harmless`].
        const RESEND_TABLE: &[(&str, bool)] = &[
            $(($method, <$name as RequestMethod>::RESEND_IS_HARMLESS),)+
        ];
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
    Ping = PING, RequestParams => EmptyResult, harmless = true;
    /// `server/discover` (2026-07-28+).
    Discover = SERVER_DISCOVER, RequestParams => DiscoverResult, harmless = true;
    /// `tools/list`.
    ListTools = TOOLS_LIST, PaginatedRequestParams => ListToolsResult [moved], harmless = true;
    /// `tools/call`.
    CallTool = TOOLS_CALL, CallToolRequestParams => CallToolResult [moved], input = true;
    /// `resources/list`.
    ListResources = RESOURCES_LIST, PaginatedRequestParams => ListResourcesResult [moved], harmless = true;
    /// `resources/templates/list`.
    ListResourceTemplates = RESOURCES_TEMPLATES_LIST, PaginatedRequestParams => ListResourceTemplatesResult [moved], harmless = true;
    /// `resources/read`.
    ReadResource = RESOURCES_READ, ReadResourceRequestParams => ReadResourceResult, input = true, harmless = true;
    /// `resources/subscribe` (legacy).
    Subscribe = RESOURCES_SUBSCRIBE, SubscribeRequestParams => EmptyResult, harmless = true;
    /// `resources/unsubscribe` (legacy).
    Unsubscribe = RESOURCES_UNSUBSCRIBE, UnsubscribeRequestParams => EmptyResult, harmless = true;
    /// `prompts/list`.
    ListPrompts = PROMPTS_LIST, PaginatedRequestParams => ListPromptsResult [moved], harmless = true;
    /// `prompts/get`.
    GetPrompt = PROMPTS_GET, GetPromptRequestParams => GetPromptResult, input = true, harmless = true;
    /// `completion/complete`.
    Complete = COMPLETION_COMPLETE, CompleteRequestParams => CompleteResult, harmless = true;
    /// `logging/setLevel` (legacy).
    SetLevel = LOGGING_SET_LEVEL, SetLevelRequestParams => EmptyResult, harmless = true;
    /// `subscriptions/listen` (2026-07-28+).
    SubscriptionsListen = SUBSCRIPTIONS_LISTEN, SubscriptionsListenRequestParams => SubscriptionsListenResult, harmless = true;
    /// `roots/list`, which a legacy server sends the client.
    ListRoots = ROOTS_LIST, RequestParams => ListRootsResult, harmless = true;
    /// `sampling/createMessage`, which a legacy server sends the client.
    CreateMessage = SAMPLING_CREATE_MESSAGE, CreateMessageRequestParams => CreateMessageResult;
    /// `elicitation/create`, which a legacy server sends the client.
    Elicit = ELICITATION_CREATE, ElicitRequestParams => ElicitResult;
    /// `tasks/get` of 2025-11-25 (experimental tasks).
    GetTask = TASKS_GET, TaskIdParams => GetTaskResult, harmless = true;
    /// `tasks/result` of 2025-11-25: the task's original result, raw.
    GetTaskPayload = TASKS_RESULT, TaskIdParams => Value, harmless = true;
    /// `tasks/list` of 2025-11-25.
    ListTasks = TASKS_LIST, PaginatedRequestParams => ListTasksResult [moved], harmless = true;
    /// `tasks/cancel` of 2025-11-25.
    CancelTask = TASKS_CANCEL, TaskIdParams => CancelTaskResult;
    /// `tasks/get` of the tasks extension (2026-07-28+).
    GetExtensionTask = TASKS_GET, TaskIdParams => DetailedTask, harmless = true;
    /// `tasks/update` of the tasks extension (2026-07-28+).
    UpdateTask = TASKS_UPDATE, UpdateTaskParams => EmptyResult;
    /// `tasks/cancel` of the tasks extension (2026-07-28+).
    CancelExtensionTask = TASKS_CANCEL, TaskIdParams => EmptyResult;
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
    RESEND_TABLE
        .iter()
        .any(|(name, harmless)| *name == method && *harmless)
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
