//! The player: the task at the other end of the wire that plays the
//! script, and the state through which it reports mismatches and unused
//! steps.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use mcp_protocol::{ErrorResponse, Message, Request, RequestId, Response};
use mcp_transport::{Engine, GoneInfo};
use serde_json::Value;
use tokio::sync::Notify;

use super::script::{Reply, RequestStep, Step};
use crate::contract::Tap;

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

pub(super) struct State {
    pub(super) descriptions: Vec<String>,
    /// The first step not yet used.
    pub(super) next: usize,
    pub(super) mismatches: Vec<String>,
    /// Whether the player is waiting for the client with nothing queued.
    pub(super) waiting: bool,
    /// Answers scheduled for later and not yet sent.
    pub(super) delayed: usize,
    /// Whether the player stopped (after a mismatch).
    pub(super) stopped: bool,
    /// Whether the result was reported (by `finish`).
    pub(super) reported: bool,
}

pub(super) struct Shared {
    pub(super) state: Mutex<State>,
    pub(super) changed: Notify,
    pub(super) tap: Arc<Tap>,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn update(&self, f: impl FnOnce(&mut State)) {
        f(&mut self.lock());
        self.changed.notify_waiters();
    }

    pub(super) fn error(&self, state: &State) -> Option<ScriptError> {
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

/// The task at the other end of the wire, playing the script.
pub(super) struct Player {
    pub(super) engine: Engine,
    /// Messages that arrived while a server request's answer was awaited.
    pub(super) pushback: Mutex<VecDeque<Message>>,
    pub(super) shared: Arc<Shared>,
    pub(super) ignored: Vec<String>,
    pub(super) total: usize,
}

impl Player {
    pub(super) async fn play(self, mut steps: VecDeque<Step>) {
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
            Step::Request(r) => self.expected_request(index, &expected, r).await,
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
                let Some(m) = self.answer_to(&id).await else {
                    return false;
                };
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

    /// Plays a request step: the client's next message is that request,
    /// which gets the step's reply.
    async fn expected_request(&self, index: usize, expected: &str, r: RequestStep) -> bool {
        let Some(m) = self.next_message().await else {
            return false;
        };
        let request = match m {
            Message::Request(req)
                if req.method == r.method
                    && r.id.as_ref().is_none_or(|id| *id == req.id)
                    && r.params
                        .as_ref()
                        .is_none_or(|(p, _)| p(req.params.as_ref().unwrap_or(&Value::Null))) =>
            {
                req
            }
            other => {
                self.mismatch(index, expected, &other);
                return false;
            }
        };
        self.reply(request, r);
        true
    }

    /// The client's answer to the server request `id`; `None` when the
    /// wire ended first.
    async fn answer_to(&self, id: &RequestId) -> Option<Message> {
        // The client answers from a task of its own, so what it sends
        // meanwhile is kept for the steps after this one.
        let mut meanwhile = Vec::new();
        let m = loop {
            let m = self.next_message().await?;
            let is_answer = match &m {
                Message::Response(r) => r.id == *id,
                Message::Error(e) => e.id.as_ref() == Some(id),
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
        Some(m)
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
                // A wire that ended waits for nothing more, as idle as one
                // that waits for the client.
                let waiting = !matches!(polled, std::task::Poll::Ready(Some(_)));
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
