//! Calls that run as tasks, behind one API for both flavours: the
//! experimental tasks of 2025-11-25 (`task` param, `CreateTaskResult`,
//! `tasks/get`, `tasks/result`, `tasks/cancel`) and the 2026-07-28 tasks
//! extension (`io.modelcontextprotocol/tasks`: `resultType: "task"`,
//! `tasks/get` with the result or input requests inline, `tasks/update`,
//! `tasks/cancel`).

use std::time::Duration;

use mcp_protocol::result::{ClassifiedResult, classify_result};
use mcp_protocol::types::{
    CallToolRequestParams, CallToolResult, CreateTaskResult, DetailedTask, Task, TaskStatus,
    UpdateTaskParams,
};
use mcp_protocol::{Era, ProtocolVersion, methods};
use serde_json::{Value, json};

use crate::call;
use crate::client::{Client, parse, to_params};
use crate::error::{ClientError, ErrorKind, Result};
use crate::mrtr::{InputRound, fulfil};
use crate::options::CallOptions;

/// How often to poll when the server does not say.
const DEFAULT_POLL: Duration = Duration::from_secs(1);

/// What a call made with [`Client::call_tool_as_task`] gave.
#[derive(Debug)]
#[non_exhaustive]
pub enum TaskStart {
    /// The server ran the call at once.
    Complete(CallToolResult),
    /// The server runs the call as a task.
    Task(TaskHandle),
}

/// The flavour of tasks in use on a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flavor {
    /// 2025-11-25 experimental tasks.
    Experimental,
    /// The 2026-07-28 tasks extension.
    Extension,
}

/// Where a task stands.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct TaskState {
    /// The task's status.
    pub status: TaskStatus,
    /// The server's words about it.
    pub message: Option<String>,
    /// How long to wait before asking again, when the server said.
    pub poll_interval: Option<Duration>,
}

/// A task running on the server.
#[derive(Clone, Debug)]
pub struct TaskHandle {
    client: Client,
    id: String,
    flavor: Flavor,
    poll_interval: Option<Duration>,
}

impl Client {
    /// Calls a tool, asking the server to run it as a task when it can.
    ///
    /// Legacy (2025-11-25): the call carries `task` when the server
    /// advertises task support for `tools/call`. Modern: the client must
    /// have declared the tasks extension ([`crate::ClientBuilder::tasks`]);
    /// the server then decides. Either way the server may answer at once.
    pub async fn call_tool_as_task(
        &self,
        params: CallToolRequestParams,
        ttl: Option<Duration>,
    ) -> Result<TaskStart> {
        let method = methods::TOOLS_CALL;
        self.session.gate(method)?;
        let flavor = self.task_flavor().ok_or_else(|| {
            ClientError::usage(
                "tasks are not available on this connection: they need a 2025-11-25 server \
                 advertising tasks, or the tasks extension declared and a modern server",
            )
            .with_method(method)
        })?;
        let mut value = to_params(method, &params)?;
        if flavor == Flavor::Experimental {
            let mut task = json!({});
            if let Some(ttl) = ttl {
                task["ttl"] = json!(ttl.as_millis() as u64);
            }
            value["task"] = task;
        }
        let options = CallOptions::new();
        let result = call::as_is(&self.session, method, value, &options).await?;
        match flavor {
            Flavor::Experimental => {
                if result.get("task").is_some_and(Value::is_object) {
                    let created: CreateTaskResult = parse(method, result)?;
                    return Ok(TaskStart::Task(self.handle(flavor, &created.task)));
                }
                Ok(TaskStart::Complete(parse(method, result)?))
            }
            Flavor::Extension => {
                match classify_result(result, &self.session.registered_result_types()) {
                    Ok(ClassifiedResult::Complete(v)) => Ok(TaskStart::Complete(parse(method, v)?)),
                    Ok(ClassifiedResult::Task(task)) => Ok(TaskStart::Task(TaskHandle {
                        client: self.clone(),
                        id: task.task_id.clone(),
                        flavor,
                        poll_interval: task.poll_interval_ms.map(Duration::from_millis),
                    })),
                    Ok(ClassifiedResult::InputRequired(_)) => Err(ClientError::usage(
                        "the server asked for input before creating the task; call the tool \
                         with call_tool to have the input fulfilled",
                    )
                    .with_method(method)),
                    Err(e) => Err(ClientError::invalid(e.to_string()).with_method(method)),
                }
            }
        }
    }

    fn task_flavor(&self) -> Option<Flavor> {
        let verdict = self.verdict();
        match verdict.era {
            Era::Modern if self.session.config.tasks => Some(Flavor::Extension),
            Era::Legacy if verdict.version >= ProtocolVersion::V2025_11_25 => {
                let caps = serde_json::to_value(&verdict.capabilities).ok()?;
                caps.pointer("/tasks/requests/tools/call")
                    .is_some()
                    .then_some(Flavor::Experimental)
            }
            _ => None,
        }
    }

    fn handle(&self, flavor: Flavor, task: &Task) -> TaskHandle {
        TaskHandle {
            client: self.clone(),
            id: task.task_id.clone(),
            flavor,
            poll_interval: task.poll_interval.map(Duration::from_millis),
        }
    }
}

impl TaskHandle {
    /// The task's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    async fn get(&self) -> Result<(TaskState, Option<DetailedTask>)> {
        let params = json!({ "taskId": self.id });
        let session = &self.client.session;
        let value = call::as_is(session, methods::TASKS_GET, params, &CallOptions::new()).await?;
        match self.flavor {
            Flavor::Experimental => {
                let task: Task = parse(methods::TASKS_GET, value)?;
                Ok((
                    TaskState {
                        status: task.status,
                        message: task.status_message,
                        poll_interval: task.poll_interval.map(Duration::from_millis),
                    },
                    None,
                ))
            }
            Flavor::Extension => {
                let task: DetailedTask = parse(methods::TASKS_GET, value)?;
                let state = TaskState {
                    status: task.status.clone(),
                    message: task.status_message.clone(),
                    poll_interval: task.poll_interval_ms.map(Duration::from_millis),
                };
                Ok((state, Some(task)))
            }
        }
    }

    /// Asks where the task stands (`tasks/get`).
    pub async fn status(&self) -> Result<TaskState> {
        self.get().await.map(|(state, _)| state)
    }

    /// Cancels the task (`tasks/cancel`).
    pub async fn cancel(&self) -> Result<()> {
        let params = json!({ "taskId": self.id });
        let session = &self.client.session;
        call::as_is(session, methods::TASKS_CANCEL, params, &CallOptions::new())
            .await
            .map(drop)
    }

    /// Waits for the task's result, polling at the server's interval;
    /// input the task asks for (extension) is answered through the
    /// client's handlers with `tasks/update`.
    pub async fn result(&self) -> Result<CallToolResult> {
        if self.flavor == Flavor::Experimental {
            // `tasks/result` blocks until the task is done.
            let params = json!({ "taskId": self.id });
            let session = &self.client.session;
            let options = CallOptions::new().timeout(session.config.max_total_timeout);
            let value = call::as_is(session, methods::TASKS_RESULT, params, &options).await?;
            return parse(methods::TASKS_RESULT, value);
        }
        loop {
            let (state, detail) = self.get().await?;
            let detail =
                detail.unwrap_or_else(|| DetailedTask::new(self.id.clone(), state.status.clone()));
            if let Some(requests) = &detail.input_requests {
                let session = &self.client.session;
                let round = InputRound {
                    method: Some(methods::TASKS_GET),
                    target: Some(self.id.clone()),
                    round: 1,
                    version: session.version(),
                    request_id: None,
                    on_behalf_of: None,
                    handlers: session.config.handlers.clone(),
                };
                let responses = fulfil(&session.config, requests, &round, None).await?;
                let update = UpdateTaskParams::new(self.id.clone(), responses);
                let params = to_params(methods::TASKS_UPDATE, &update)?;
                call::as_is(session, methods::TASKS_UPDATE, params, &CallOptions::new()).await?;
                continue;
            }
            match state.status {
                TaskStatus::Completed => {
                    let result = detail.result.ok_or_else(|| {
                        ClientError::invalid("a completed task carries no result")
                            .with_method(methods::TASKS_GET)
                    })?;
                    return parse(methods::TASKS_GET, Value::Object(result));
                }
                TaskStatus::Failed | TaskStatus::Cancelled => {
                    return Err(ClientError::new(ErrorKind::Server {
                        code: detail
                            .error
                            .as_ref()
                            .and_then(|e| e.get("code"))
                            .and_then(Value::as_i64)
                            .unwrap_or(mcp_protocol::error_codes::INTERNAL_ERROR),
                        message: format!(
                            "the task {} {}",
                            self.id,
                            if state.status == TaskStatus::Failed {
                                "failed"
                            } else {
                                "was cancelled"
                            }
                        ),
                        data: detail.error,
                    })
                    .with_method(methods::TASKS_GET));
                }
                _ => {
                    let pause = state
                        .poll_interval
                        .or(self.poll_interval)
                        .unwrap_or(DEFAULT_POLL);
                    tokio::time::sleep(pause).await;
                }
            }
        }
    }
}
