//! Typed params and results for every method of every revision from
//! 2024-11-05 to 2026-07-28, organised by concept and all re-exported here.
//!
//! Every struct keeps members it does not know in `extra`, and every enum
//! keeps values it does not know in an `Unknown` variant, so a message from
//! a newer peer parses and survives a round trip. Members a revision lacks
//! are `Option`s, absent on the wire when `None`.

pub mod cache;
pub mod capabilities;
pub mod common;
pub mod completion;
pub mod content;
pub mod elicitation;
pub mod form_schema;
pub mod input;
pub mod lifecycle;
pub mod list;
pub mod logging;
pub mod notifications;
pub mod pagination;
pub mod prompts;
pub mod resources;
pub mod roots;
pub mod sampling;
pub mod skills;
pub mod subscriptions;
pub mod tasks;
pub mod tools;

pub use cache::{CacheScope, Cacheable};
pub use capabilities::{
    ClientCapabilities, ElicitationCapability, ListChangedCapability, ResourcesCapability,
    RootsCapability, SamplingCapability, ServerCapabilities, TasksCapability,
};
pub use common::{EmptyResult, JsonObject, Meta, NotificationParams, RequestParams, ResultType};
pub use completion::{
    CompleteRequestParams, CompleteResult, Completion, CompletionArgument, CompletionContext,
    PromptReference, Reference, ResourceTemplateReference,
};
pub use content::{
    Annotations, AudioContent, ContentBlock, EmbeddedResource, ImageContent, MediaContent,
    ResourceLink, Role, TextContent, ToolResultContent, ToolUseContent,
};
pub use elicitation::{
    ElicitAction, ElicitRequestFormParams, ElicitRequestParams, ElicitRequestUrlParams,
    ElicitResult, ElicitationCompleteNotificationParams, ElicitationMode, ElicitationSchema,
};
pub use form_schema::{
    BooleanSchema, EnumOption, EnumSchema, MultiSelectEnumSchema, MultiSelectItems, NumberKind,
    NumberSchema, PrimitiveSchemaDefinition, StringFormat, StringSchema, TitledEnumSchema,
};
pub use input::{
    InputRequest, InputRequestParams, InputRequests, InputRequiredResult, InputResponse,
    InputResponses, RetryParams,
};
pub use lifecycle::{
    DiscoverResult, Icon, IconTheme, Implementation, InitializeRequestParams, InitializeResult,
};
pub use list::{ListItem, ListResult};
pub use logging::{LoggingLevel, LoggingMessageNotificationParams, SetLevelRequestParams};
pub use notifications::{CancelledNotificationParams, ProgressNotificationParams, ProgressToken};
pub use pagination::{Cursor, Paginated, PaginatedRequestParams};
pub use prompts::{
    GetPromptRequestParams, GetPromptResult, ListPromptsResult, Prompt, PromptArgument,
    PromptMessage,
};
pub use resources::{
    BlobResourceContents, ListResourceTemplatesResult, ListResourcesResult,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
    ResourceUpdatedNotificationParams, SubscribeRequestParams, TextResourceContents,
    UnsubscribeRequestParams,
};
pub use roots::{ListRootsResult, Root};
pub use sampling::{
    CreateMessageRequestParams, CreateMessageResult, IncludeContext, ModelHint, ModelPreferences,
    SamplingContent, SamplingMessage, StopReason, ToolChoice, ToolChoiceMode,
};
pub use skills::{
    DIRECTORY_MIME_TYPE, GetSkillRequestParams, GetSkillResult, ListSkillsResult,
    ReadDirectoryRequestParams, ReadDirectoryResult, SKILLS_EXTENSION, SkillEntry, SkillFile,
    SkillResources, SkillsSettings,
};
pub use subscriptions::{
    SubscriptionFilter, SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams, SubscriptionsListenResult,
};
pub use tasks::{
    CancelTaskResult, CreateTaskResult, DetailedTask, GetTaskResult, ListTasksResult,
    RelatedTaskMetadata, TASKS_EXTENSION, Task, TaskIdParams, TaskMetadata, TaskStatus,
    TaskStatusNotificationParams, UpdateTaskParams,
};
pub use tools::{
    CallToolRequestParams, CallToolResult, ListToolsResult, TaskSupport, Tool, ToolAnnotations,
    ToolExecution,
};
