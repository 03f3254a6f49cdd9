//! The script: its builder, the request and server-request step
//! builders, and the steps they make.

use std::fmt;
use std::time::Duration;

use mcp_protocol::{ErrorObject, Message, Notification, Request, RequestId};
use mcp_transport::GoneInfo;
use serde_json::Value;

type ParamPredicate = Box<dyn Fn(&Value) -> bool + Send + Sync>;

type Responder = Box<dyn FnOnce(&Request) -> Result<Value, ErrorObject> + Send>;

type AnswerCheck = Box<dyn FnOnce(&Message) -> Result<(), String> + Send>;

/// The steps a scripted server plays, in order. Build it with the
/// methods below; each returns the script, except
/// [`expect_request`](Self::expect_request) and
/// [`send_request`](Self::send_request), whose builders return it once the
/// answer is said.
#[derive(Default)]
pub struct Script {
    pub(super) steps: Vec<Step>,
    pub(super) ignored: Vec<String>,
}

pub(super) enum Step {
    Request(RequestStep),
    Notification {
        method: String,
        params: Option<(ParamPredicate, String)>,
    },
    Send(Notification),
    ServerRequest {
        request: Request,
        check: AnswerCheck,
        expected: String,
    },
    Delay(Duration),
    Die(GoneInfo),
}

pub(super) struct RequestStep {
    pub(super) method: String,
    pub(super) id: Option<RequestId>,
    pub(super) params: Option<(ParamPredicate, String)>,
    pub(super) notify_first: Vec<Notification>,
    pub(super) delay: Option<Duration>,
    pub(super) reply: Reply,
}

pub(super) enum Reply {
    Result(Value),
    Error(ErrorObject),
    With(Responder),
    Silence,
    Die(GoneInfo),
}

impl Step {
    pub(super) fn describe(&self) -> String {
        match self {
            Step::Request(r) => {
                let mut s = format!("expect request {:?}", r.method);
                if let Some(id) = &r.id {
                    s.push_str(&format!(" with id {id}"));
                }
                if let Some((_, what)) = &r.params {
                    s.push_str(&format!(" with params {what}"));
                }
                s.push_str(match &r.reply {
                    Reply::Result(_) | Reply::With(_) => ", then answer it",
                    Reply::Error(_) => ", then answer it with an error",
                    Reply::Silence => ", then never answer",
                    Reply::Die(_) => ", then die",
                });
                s
            }
            Step::Notification { method, params } => match params {
                Some((_, what)) => format!("expect notification {method:?} with params {what}"),
                None => format!("expect notification {method:?}"),
            },
            Step::Send(n) => format!("send notification {:?}", n.method),
            Step::ServerRequest {
                request, expected, ..
            } => format!(
                "send server request {} ({:?}) and expect {expected}",
                request.id, request.method
            ),
            Step::Delay(d) => format!("wait {d:?}"),
            Step::Die(_) => "die".to_owned(),
        }
    }
}

impl Script {
    /// An empty script.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many steps it has.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether it has no steps.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Expects the client's next message to be a request for `method`;
    /// the builder says how to answer it.
    pub fn expect_request(self, method: impl Into<String>) -> ExpectRequest {
        ExpectRequest {
            script: self,
            step: RequestStep {
                method: method.into(),
                id: None,
                params: None,
                notify_first: Vec::new(),
                delay: None,
                reply: Reply::Silence,
            },
        }
    }

    /// Expects the client's next message to be a notification for `method`.
    pub fn expect_notification(mut self, method: impl Into<String>) -> Self {
        self.steps.push(Step::Notification {
            method: method.into(),
            params: None,
        });
        self
    }

    /// Expects a notification for `method` whose params (`null` when
    /// absent) satisfy `predicate`.
    pub fn expect_notification_with(
        mut self,
        method: impl Into<String>,
        predicate: impl Fn(&Value) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.steps.push(Step::Notification {
            method: method.into(),
            params: Some((Box::new(predicate), "matching the step's predicate".into())),
        });
        self
    }

    /// Sends a notification to the client, unprompted.
    pub fn send_notification(mut self, method: impl Into<String>, params: Option<Value>) -> Self {
        self.steps
            .push(Step::Send(Notification::new(method, params)));
        self
    }

    /// Sends a request to the client (as a legacy server does) and waits
    /// for its answer; the builder says what answer to expect. What the
    /// client sends meanwhile (its handler runs on a task of its own) is
    /// matched by the steps after this one, in order.
    pub fn send_request(self, request: Request) -> ExpectAnswer {
        ExpectAnswer {
            script: self,
            request,
        }
    }

    /// Waits before the next step (on tokio's clock, so a paused clock
    /// skips it).
    pub fn delay(mut self, duration: Duration) -> Self {
        self.steps.push(Step::Delay(duration));
        self
    }

    /// Dies: every pending and later request fails with
    /// [`TransportError::ServerGone`] carrying `info` (build it with
    /// [`GoneInfo::new`], [`GoneInfo::with_exit`] and
    /// [`GoneInfo::with_stderr_tail`]).
    ///
    /// [`TransportError::ServerGone`]: mcp_transport::TransportError::ServerGone
    pub fn die(mut self, info: GoneInfo) -> Self {
        self.steps.push(Step::Die(info));
        self
    }

    /// Lets notifications for `method` through at any point without a step
    /// (they are still recorded). `notifications/cancelled` is a common
    /// one, for tests that drop requests.
    pub fn ignore_notifications(mut self, method: impl Into<String>) -> Self {
        self.ignored.push(method.into());
        self
    }
}

impl fmt::Debug for Script {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Script")
            .field(
                "steps",
                &self.steps.iter().map(Step::describe).collect::<Vec<_>>(),
            )
            .field("ignored", &self.ignored)
            .finish()
    }
}

/// A request step being built: narrow what is expected, then say how to
/// answer.
#[must_use = "a request step is added to the script when its answer is said"]
pub struct ExpectRequest {
    script: Script,
    step: RequestStep,
}

impl ExpectRequest {
    /// Expects params (`null` when absent) that satisfy `predicate`.
    pub fn with_params(
        mut self,
        predicate: impl Fn(&Value) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.step.params = Some((Box::new(predicate), "matching the step's predicate".into()));
        self
    }

    /// Expects exactly these params.
    pub fn with_params_eq(mut self, params: Value) -> Self {
        let shown = params.to_string();
        self.step.params = Some((Box::new(move |p| *p == params), format!("equal to {shown}")));
        self
    }

    /// Expects this id.
    pub fn with_id(mut self, id: impl Into<RequestId>) -> Self {
        self.step.id = Some(id.into());
        self
    }

    /// Sends this notification before the answer (repeatable; in order).
    pub fn notify_first(mut self, method: impl Into<String>, params: Option<Value>) -> Self {
        self.step
            .notify_first
            .push(Notification::new(method, params));
        self
    }

    /// Answers (notifications first) after `delay`, on tokio's clock. The
    /// script goes on meanwhile, so later steps can expect other requests.
    pub fn after(mut self, delay: Duration) -> Self {
        self.step.delay = Some(delay);
        self
    }

    /// Answers with this result (the transport normalizes it).
    pub fn respond(self, result: Value) -> Script {
        self.finish(Reply::Result(result))
    }

    /// Answers with a JSON-RPC error.
    pub fn respond_error(
        self,
        code: i64,
        message: impl Into<String>,
        data: Option<Value>,
    ) -> Script {
        let mut error = ErrorObject::new(code, message);
        error.data = data;
        self.finish(Reply::Error(error))
    }

    /// Answers with what `f` makes of the request (echo its params, say).
    pub fn respond_with(
        self,
        f: impl FnOnce(&Request) -> Result<Value, ErrorObject> + Send + 'static,
    ) -> Script {
        self.finish(Reply::With(Box::new(f)))
    }

    /// Never answers (the client's timeout or cancel is what ends it).
    pub fn never_respond(self) -> Script {
        self.finish(Reply::Silence)
    }

    /// Dies instead of answering: see [`Script::die`].
    pub fn die(self, info: GoneInfo) -> Script {
        self.finish(Reply::Die(info))
    }

    fn finish(mut self, reply: Reply) -> Script {
        self.step.reply = reply;
        self.script.steps.push(Step::Request(self.step));
        self.script
    }
}

/// A server-request step being built: say what answer to expect.
#[must_use = "a server-request step is added to the script when its expected answer is said"]
pub struct ExpectAnswer {
    script: Script,
    request: Request,
}

impl ExpectAnswer {
    /// Expects a result equal to `result`.
    pub fn expect_result(self, result: Value) -> Script {
        let expected = format!("the result {result}");
        self.finish(expected, move |m| match m {
            Message::Response(r) if r.result == result => Ok(()),
            _ => Err(format!("the result {result}")),
        })
    }

    /// Expects a JSON-RPC error with this code.
    pub fn expect_error(self, code: i64) -> Script {
        self.finish(format!("an error with code {code}"), move |m| match m {
            Message::Error(e) if e.error.code == code => Ok(()),
            _ => Err(format!("an error with code {code}")),
        })
    }

    /// Checks the answer (a [`Message::Response`] or [`Message::Error`]
    /// with the request's id) with `check`, which says what was wrong.
    pub fn expect_answer(
        self,
        check: impl FnOnce(&Message) -> Result<(), String> + Send + 'static,
    ) -> Script {
        self.finish("an answer the step's check accepts".into(), check)
    }

    fn finish(
        mut self,
        expected: String,
        check: impl FnOnce(&Message) -> Result<(), String> + Send + 'static,
    ) -> Script {
        self.script.steps.push(Step::ServerRequest {
            request: self.request,
            check: Box::new(check),
            expected,
        });
        self.script
    }
}
