//! Tasks, in two generations:
//!
//! - 2025-11-25, experimental: a request with `task` params answers with a
//!   [`CreateTaskResult`]; `tasks/get`, `tasks/result`, `tasks/list`,
//!   `tasks/cancel` and `notifications/tasks/status` follow ([`Task`]).
//! - 2026-07-28, the extension `io.modelcontextprotocol/tasks`: the server
//!   may answer a request with `resultType: "task"` ([`DetailedTask`]); the
//!   client polls with `tasks/get`, answers input with `tasks/update` and
//!   stops it with `tasks/cancel`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{JsonObject, Meta, ResultType};
use super::input::{InputRequests, InputResponses};
use super::list::{ListItem, ListResult};

/// The identifier of the tasks extension (2026-07-28+).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

string_enum! {
    /// A task's status.
    TaskStatus {
        /// Running.
        Working = "working",
        /// Waiting for input from the requestor.
        InputRequired = "input_required",
        /// Finished; the result is ready.
        Completed = "completed",
        /// Finished with an error.
        Failed = "failed",
        /// Cancelled.
        Cancelled = "cancelled",
    }
}

impl TaskStatus {
    /// Whether the status is final.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// The `task` params member asking for a request to run as a task
/// (2025-11-25).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskMetadata {
    /// How long to keep the task, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl TaskMetadata {
    /// Task params with a time to live, in milliseconds.
    pub fn with_ttl(ttl: u64) -> Self {
        TaskMetadata {
            ttl: Some(ttl),
            extra: JsonObject::new(),
        }
    }
}

/// A task (2025-11-25): also the result of `tasks/get` and `tasks/cancel`
/// and the params of `notifications/tasks/status`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Task {
    /// The task's id.
    pub task_id: String,
    /// Its status.
    pub status: TaskStatus,
    /// A message about the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was created (ISO 8601).
    pub created_at: String,
    /// When it last changed (ISO 8601).
    pub last_updated_at: String,
    /// How long it is kept from creation, in milliseconds; `None` (null) for
    /// unlimited.
    #[serde(default)]
    pub ttl: Option<u64>,
    /// A suggested polling interval, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<u64>,
    /// The `_meta` of the result or notification.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Result of `tasks/get` (2025-11-25).
pub type GetTaskResult = Task;
/// Result of `tasks/cancel` (2025-11-25).
pub type CancelTaskResult = Task;
/// Params of `notifications/tasks/status` (2025-11-25).
pub type TaskStatusNotificationParams = Task;

/// The answer to a request run as a task (2025-11-25).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CreateTaskResult {
    /// The task created.
    pub task: Task,
    /// The result's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Result of `tasks/list` (2025-11-25): a page of [`Task`]s under
/// `"tasks"`.
pub type ListTasksResult = ListResult<Task>;

impl ListItem for Task {
    const MEMBER: &'static str = "tasks";
    const EXPECTING: &'static str = "a tasks/list result";
}

/// Params naming a task: `tasks/get`, `tasks/result`, `tasks/cancel` (both
/// generations).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskIdParams {
    /// The task's id.
    pub task_id: String,
    /// The request's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl TaskIdParams {
    /// Params naming `task_id`.
    pub fn new(task_id: impl Into<String>) -> Self {
        TaskIdParams {
            task_id: task_id.into(),
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// `_meta["io.modelcontextprotocol/related-task"]`: the task a message
/// belongs to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RelatedTaskMetadata {
    /// The task's id.
    pub task_id: String,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A task of the tasks extension (2026-07-28+): the `resultType: "task"`
/// answer to a request, and the result of `tasks/get`, whose status-specific
/// members (`inputRequests`, `result`, `error`) are filled by status.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DetailedTask {
    /// The task's id.
    pub task_id: String,
    /// Its status.
    pub status: TaskStatus,
    /// A message about the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was created (ISO 8601).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// When it last changed (ISO 8601).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated_at: Option<String>,
    /// How long it is kept from creation, in milliseconds; `None` (null)
    /// for unlimited.
    #[serde(default)]
    pub ttl_ms: Option<u64>,
    /// A suggested polling interval, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// What the task waits for (status `input_required`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// The original request's result (status `completed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<JsonObject>,
    /// The JSON-RPC error it failed with (status `failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
    /// `resultType`: `task` when it answers the original request,
    /// `complete` on `tasks/get`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The result's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl DetailedTask {
    /// A task answering a request: `resultType: "task"`.
    pub fn new(task_id: impl Into<String>, status: TaskStatus) -> Self {
        DetailedTask {
            task_id: task_id.into(),
            status,
            status_message: None,
            created_at: None,
            last_updated_at: None,
            ttl_ms: None,
            poll_interval_ms: None,
            input_requests: None,
            result: None,
            error: None,
            result_type: Some(ResultType::Task),
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Params of `tasks/update` (tasks extension).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UpdateTaskParams {
    /// The task's id.
    pub task_id: String,
    /// Answers to the task's outstanding `inputRequests`.
    pub input_responses: InputResponses,
    /// The request's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl UpdateTaskParams {
    /// Params answering `task_id`'s input requests.
    pub fn new(task_id: impl Into<String>, input_responses: InputResponses) -> Self {
        UpdateTaskParams {
            task_id: task_id.into(),
            input_responses,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

unknown_fields! {
    TaskMetadata;
    Task { status: "status" };
    CreateTaskResult { task: "task" };
    TaskIdParams;
    RelatedTaskMetadata;
    DetailedTask {
        status: "status",
        input_requests: "inputRequests",
        result_type: "resultType",
    };
    UpdateTaskParams { input_responses: "inputResponses" };
}
