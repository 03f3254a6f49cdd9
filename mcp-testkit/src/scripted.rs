//! The scripted transport: a server played from a script.
//!
//! A [`Script`] is a list of steps, played in order by a task at the other
//! end of an in-memory wire: expect a request (by method, optionally id and
//! a predicate on its params) and answer it with a result, an error,
//! notifications first, after a delay, never, or by dying; expect a
//! notification; send a notification unprompted; send a server request and
//! check the client's answer; wait; die. [`ScriptedTransport`] is an
//! [`Engine`] over that wire, so it keeps the whole transport contract
//! (`tests/contract_scripted.rs` runs the contract suite on the same wire),
//! and it records everything the client sent ([`ScriptedTransport::sent`]).
//!
//! Anything that does not match the script (a different method, params the
//! predicate refuses, a message after the script ended) is a mismatch: it
//! ends the connection (pending requests fail with
//! [`TransportError::ServerGone`] whose reason holds the mismatch, so the
//! client under test does not hang) and is reported, the expected step and
//! the actual message side by side, by [`ScriptedTransport::finish`].
//! Steps left unused fail `finish` too, and fail the test when the
//! transport is dropped without `finish` (unless the thread is already
//! panicking).
//!
//! ```
//! use mcp_protocol::{Notification, Request};
//! use mcp_testkit::scripted::{Script, ScriptedTransport};
//! use mcp_transport::{ConnectionHandlers, RequestOptions, Transport};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let script = Script::new()
//!     .expect_request("initialize")
//!     .respond(json!({ "protocolVersion": "2025-06-18", "capabilities": {} }))
//!     .expect_notification("notifications/initialized")
//!     .expect_request("tools/call")
//!     .with_params(|p| p["name"] == "echo")
//!     .respond_error(-32602, "unknown tool", Some(json!({ "tool": "echo" })));
//! let transport = ScriptedTransport::new(script, ConnectionHandlers::discard());
//!
//! let init = Request::new(1, "initialize", Some(json!({})));
//! let result = transport.request(init, RequestOptions::new()).await.unwrap();
//! assert_eq!(result["resultType"], "complete");
//! transport.notify(Notification::new("notifications/initialized", None)).unwrap();
//! let call = Request::new(2, "tools/call", Some(json!({ "name": "echo" })));
//! let error = transport.request(call, RequestOptions::new()).await.unwrap_err();
//! assert_eq!(error.rpc_code(), Some(-32602));
//!
//! transport.finish().await.unwrap();
//! assert_eq!(transport.sent().len(), 3);
//! # }
//! ```

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_protocol::{
    ErrorObject, ErrorResponse, Message, Notification, Request, RequestId, Response,
};
use mcp_transport::{
    CancellationToken, ConnectionHandlers, Connector, Engine, GoneInfo, RequestOptions,
    ResponseFuture, Transport, TransportError,
};
use serde_json::Value;
use tokio::sync::Notify;

use crate::contract::{Tap, memory_harness};

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
    steps: Vec<Step>,
    ignored: Vec<String>,
}

enum Step {
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

struct RequestStep {
    method: String,
    id: Option<RequestId>,
    params: Option<(ParamPredicate, String)>,
    notify_first: Vec<Notification>,
    delay: Option<Duration>,
    reply: Reply,
}

enum Reply {
    Result(Value),
    Error(ErrorObject),
    With(Responder),
    Silence,
    Die(GoneInfo),
}

impl Step {
    fn describe(&self) -> String {
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

/// What went wrong with a script: mismatches, and steps left unused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptError {
    /// Each mismatch, the expected step and the actual message side by side.
    pub mismatches: Vec<String>,
    /// The steps never reached, described.
    pub unused: Vec<String>,
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "the script was not followed:")?;
        for m in &self.mismatches {
            writeln!(f, "{m}")?;
        }
        if !self.unused.is_empty() {
            writeln!(f, "{} step(s) left unused:", self.unused.len())?;
            for u in &self.unused {
                writeln!(f, "  {u}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for ScriptError {}

struct State {
    descriptions: Vec<String>,
    /// The first step not yet used.
    next: usize,
    mismatches: Vec<String>,
    /// Whether the player is waiting for the client with nothing queued.
    waiting: bool,
    /// Answers scheduled for later and not yet sent.
    delayed: usize,
    /// Whether the player stopped (after a mismatch).
    stopped: bool,
    /// Whether the result was reported (by `finish`).
    reported: bool,
}

struct Shared {
    state: Mutex<State>,
    changed: Notify,
    tap: Arc<Tap>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn update(&self, f: impl FnOnce(&mut State)) {
        f(&mut self.lock());
        self.changed.notify_waiters();
    }

    fn error(&self, state: &State) -> Option<ScriptError> {
        let unused = state.descriptions[state.next..]
            .iter()
            .enumerate()
            .map(|(i, d)| {
                format!(
                    "step {} of {}: {d}",
                    state.next + i + 1,
                    state.descriptions.len()
                )
            })
            .collect::<Vec<_>>();
        (!state.mismatches.is_empty() || !unused.is_empty()).then(|| ScriptError {
            mismatches: state.mismatches.clone(),
            unused,
        })
    }
}

/// A transport whose server plays a [`Script`]; see the module docs.
pub struct ScriptedTransport {
    engine: Engine,
    shared: Arc<Shared>,
    stop: CancellationToken,
}

impl ScriptedTransport {
    /// Starts playing `script`; inbound traffic goes to `handlers`, as on
    /// every transport. Needs a tokio runtime.
    pub fn new(script: Script, handlers: ConnectionHandlers) -> Self {
        let (engine, peer) = memory_harness(handlers);
        let descriptions = script.steps.iter().map(Step::describe).collect();
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                descriptions,
                next: 0,
                mismatches: Vec::new(),
                waiting: false,
                delayed: 0,
                stopped: false,
                reported: false,
            }),
            changed: Notify::new(),
            tap: peer.tap(),
        });
        let stop = CancellationToken::new();
        let player = Player {
            engine: engine.clone(),
            pushback: Mutex::new(VecDeque::new()),
            shared: shared.clone(),
            ignored: script.ignored,
            total: script.steps.len(),
        };
        let steps: VecDeque<Step> = script.steps.into();
        let stopped = stop.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = stopped.cancelled() => {}
                _ = player.play(steps) => {}
            }
        });
        ScriptedTransport {
            engine,
            shared,
            stop,
        }
    }

    /// A connector handing out one scripted transport per script, in order.
    pub fn connector(scripts: impl IntoIterator<Item = Script>) -> ScriptedConnector {
        ScriptedConnector::new(scripts)
    }

    /// Everything the client sent so far, in order: requests,
    /// notifications, wire cancels (as `notifications/cancelled`), answers
    /// to server requests.
    pub fn sent(&self) -> Vec<Message> {
        self.shared.tap.log()
    }

    /// The engine underneath (its correlator, for instance).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Lets the script catch up with what the client sent (and with
    /// delayed answers), then reports mismatches and unused steps. After
    /// this, dropping the transport checks nothing more.
    pub async fn finish(&self) -> Result<(), ScriptError> {
        loop {
            let changed = self.shared.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let queued = self.shared.tap.drain();
            {
                let mut state = self.shared.lock();
                let idle = state.stopped || (state.waiting && !queued);
                if idle && state.delayed == 0 {
                    state.reported = true;
                    return match self.shared.error(&state) {
                        Some(e) => Err(e),
                        None => Ok(()),
                    };
                }
            }
            changed.await;
        }
    }

    /// [`finish`](Self::finish), panicking with the report on failure.
    #[track_caller]
    pub fn assert_done(&self) -> impl Future<Output = ()> + '_ {
        let caller = std::panic::Location::caller();
        async move {
            if let Err(e) = self.finish().await {
                panic!("{e}(checked at {caller})");
            }
        }
    }
}

impl Transport for ScriptedTransport {
    fn request(&self, request: Request, options: RequestOptions) -> ResponseFuture {
        self.engine.request(request, options)
    }

    fn notify(&self, notification: Notification) -> Result<(), TransportError> {
        self.engine.notify(notification)
    }

    fn close(&self) -> BoxFuture<'static, ()> {
        self.engine.close()
    }

    fn is_alive(&self) -> bool {
        self.engine.is_alive()
    }
}

impl Drop for ScriptedTransport {
    fn drop(&mut self) {
        self.stop.cancel();
        if std::thread::panicking() {
            return;
        }
        let state = self.shared.lock();
        if state.reported {
            return;
        }
        if let Some(e) = self.shared.error(&state) {
            drop(state);
            panic!(
                "{e}(the scripted transport was dropped without `finish().await`, \
                 which lets the script catch up before judging)"
            );
        }
    }
}

impl fmt::Debug for ScriptedTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.lock();
        f.debug_struct("ScriptedTransport")
            .field("engine", &self.engine)
            .field("next_step", &state.next)
            .field("steps", &state.descriptions.len())
            .field("mismatches", &state.mismatches.len())
            .finish()
    }
}

/// The task at the other end of the wire, playing the script.
struct Player {
    engine: Engine,
    /// Messages that arrived while a server request's answer was awaited.
    pushback: Mutex<VecDeque<Message>>,
    shared: Arc<Shared>,
    ignored: Vec<String>,
    total: usize,
}

impl Player {
    async fn play(self, mut steps: VecDeque<Step>) {
        let mut index = 0;
        while let Some(step) = steps.pop_front() {
            if !self.step(index, step).await {
                return;
            }
            index += 1;
            self.shared.update(|s| s.next = index);
        }
        // The script is over: anything else the client sends is unexpected.
        if let Some(m) = self.next_message().await {
            let text = format!(
                "after the script's {} step(s), unexpected: {}",
                self.total,
                m.to_value()
            );
            self.fail(text);
        }
    }

    /// Plays one step; false when the script stops here.
    async fn step(&self, index: usize, step: Step) -> bool {
        let expected = step.describe();
        match step {
            Step::Request(r) => {
                let Some(m) = self.next_message().await else {
                    return false;
                };
                let request = match m {
                    Message::Request(req)
                        if req.method == r.method
                            && r.id.as_ref().is_none_or(|id| *id == req.id)
                            && r.params.as_ref().is_none_or(|(p, _)| {
                                p(req.params.as_ref().unwrap_or(&Value::Null))
                            }) =>
                    {
                        req
                    }
                    other => {
                        self.mismatch(index, &expected, &other);
                        return false;
                    }
                };
                self.reply(request, r);
                true
            }
            Step::Notification { method, params } => {
                let Some(m) = self.next_message().await else {
                    return false;
                };
                let ok = matches!(&m, Message::Notification(n)
                    if n.method == method
                        && params.as_ref().is_none_or(|(p, _)| p(n.params.as_ref().unwrap_or(&Value::Null))));
                if !ok {
                    self.mismatch(index, &expected, &m);
                }
                ok
            }
            Step::Send(n) => {
                self.engine.receive(Message::Notification(n));
                true
            }
            Step::ServerRequest { request, check, .. } => {
                let id = request.id.clone();
                self.engine.receive(Message::Request(request));
                // The client answers from a task of its own, so what it sends
                // meanwhile is kept for the steps after this one.
                let mut meanwhile = Vec::new();
                let m = loop {
                    let Some(m) = self.next_message().await else {
                        return false;
                    };
                    let is_answer = match &m {
                        Message::Response(r) => r.id == id,
                        Message::Error(e) => e.id.as_ref() == Some(&id),
                        _ => false,
                    };
                    if is_answer {
                        break m;
                    }
                    meanwhile.push(m);
                };
                self.pushback
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .extend(meanwhile);
                if let Err(what) = check(&m) {
                    self.mismatch(index, &format!("{expected}: {what}"), &m);
                    return false;
                }
                true
            }
            Step::Delay(d) => {
                tokio::time::sleep(d).await;
                true
            }
            Step::Die(info) => {
                self.engine.peer_gone(info);
                true
            }
        }
    }

    fn reply(&self, request: Request, step: RequestStep) {
        let engine = self.engine.clone();
        let RequestStep {
            notify_first,
            delay,
            reply,
            ..
        } = step;
        let send = move || {
            for n in notify_first {
                engine.receive(Message::Notification(n));
            }
            let id = request.id.clone();
            let answer = match reply {
                Reply::Result(result) => Ok(result),
                Reply::Error(error) => Err(error),
                Reply::With(f) => f(&request),
                Reply::Silence => return,
                Reply::Die(info) => return engine.peer_gone(info),
            };
            engine.receive(match answer {
                Ok(result) => Message::Response(Response { id, result }),
                Err(error) => Message::Error(ErrorResponse {
                    id: Some(id),
                    error,
                }),
            });
        };
        match delay {
            None => send(),
            Some(d) => {
                self.shared.update(|s| s.delayed += 1);
                let shared = self.shared.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(d).await;
                    send();
                    shared.update(|s| s.delayed -= 1);
                });
            }
        }
    }

    /// The client's next message that is not ignored; `None` when the
    /// wire ended.
    async fn next_message(&self) -> Option<Message> {
        let kept = self
            .pushback
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop_front();
        if kept.is_some() {
            return kept;
        }
        loop {
            let m = std::future::poll_fn(|cx| {
                let polled = self.shared.tap.poll_recv(cx);
                let waiting = polled.is_pending();
                self.shared.update(|s| s.waiting = waiting);
                polled
            })
            .await?;
            if let Message::Notification(n) = &m
                && self.ignored.contains(&n.method)
            {
                continue;
            }
            return Some(m);
        }
    }

    fn mismatch(&self, index: usize, expected: &str, actual: &Message) {
        let text = format!(
            "step {} of {} did not match\n  expected: {expected}\n    actual: {}",
            index + 1,
            self.total,
            actual.to_value()
        );
        self.fail(text);
    }

    fn fail(&self, text: String) {
        self.engine.peer_gone(GoneInfo::new(format!(
            "the script was not followed: {text}"
        )));
        self.shared.update(|s| {
            s.mismatches.push(text);
            s.stopped = true;
        });
    }
}

/// Hands out one [`ScriptedTransport`] per script, in order, and keeps
/// them for inspection. When the scripts run out, a connect fails with
/// [`TransportError::ServerGone`].
pub struct ScriptedConnector {
    scripts: Mutex<VecDeque<Script>>,
    made: Mutex<Vec<Arc<ScriptedTransport>>>,
}

impl ScriptedConnector {
    /// A connector for these scripts.
    pub fn new(scripts: impl IntoIterator<Item = Script>) -> Self {
        ScriptedConnector {
            scripts: Mutex::new(scripts.into_iter().collect()),
            made: Mutex::new(Vec::new()),
        }
    }

    /// The transports made so far, in order.
    pub fn transports(&self) -> Vec<Arc<ScriptedTransport>> {
        self.made.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// How many scripts are not used yet.
    pub fn scripts_left(&self) -> usize {
        self.scripts.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// [`ScriptedTransport::finish`] on every transport made, and fails
    /// when scripts were left unused.
    pub async fn finish(&self) -> Result<(), ScriptError> {
        let mut all = ScriptError {
            mismatches: Vec::new(),
            unused: Vec::new(),
        };
        for (i, t) in self.transports().iter().enumerate() {
            if let Err(e) = t.finish().await {
                all.mismatches.extend(
                    e.mismatches
                        .into_iter()
                        .map(|m| format!("connection {}: {m}", i + 1)),
                );
                all.unused.extend(
                    e.unused
                        .into_iter()
                        .map(|u| format!("connection {}: {u}", i + 1)),
                );
            }
        }
        let left = self.scripts_left();
        if left > 0 {
            all.unused.push(format!("{left} script(s) never connected"));
        }
        if all.mismatches.is_empty() && all.unused.is_empty() {
            Ok(())
        } else {
            Err(all)
        }
    }
}

impl Connector for ScriptedConnector {
    fn connect(
        &self,
        handlers: ConnectionHandlers,
    ) -> BoxFuture<'static, Result<Arc<dyn Transport>, TransportError>> {
        let script = self
            .scripts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop_front();
        let result = match script {
            Some(script) => {
                let t = Arc::new(ScriptedTransport::new(script, handlers));
                self.made
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(t.clone());
                Ok(t as Arc<dyn Transport>)
            }
            None => Err(TransportError::gone(GoneInfo::new(
                "the scripted connector has no script left",
            ))),
        };
        Box::pin(std::future::ready(result))
    }
}

impl fmt::Debug for ScriptedConnector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptedConnector")
            .field("scripts_left", &self.scripts_left())
            .field("made", &self.transports().len())
            .finish()
    }
}
