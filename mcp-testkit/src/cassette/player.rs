//! The player: the task at the server end of the wire that replays one
//! recorded connection.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use mcp_protocol::{
    ErrorObject, ErrorResponse, Message, Notification, Request, RequestId, Response,
};
use mcp_transport::record::failure_from_value;
use mcp_transport::{Engine, GoneInfo, TransportError};
use serde_json::{Value, json};
use tokio::sync::{Notify, oneshot};

use super::MISMATCH_CODE;
use super::diff;
use super::file::Kind;
use super::rules::MatchRules;
use super::timeline::Timeline;
use crate::contract::{MemoryPeer, Peer, Tap};

pub(super) struct State {
    pub(super) timeline: Timeline,
    pub(super) mismatches: Vec<String>,
    /// Whether the player waits for the client with nothing left to play.
    pub(super) idle: bool,
    /// Whether the player ended (the connection is over).
    pub(super) stopped: bool,
}

pub(super) struct Shared {
    pub(super) state: Mutex<State>,
    pub(super) changed: Notify,
    pub(super) tap: Arc<Tap>,
    /// Requests in flight that a recorded failure (no JSON-RPC answer)
    /// may end, by the id the client used.
    pub(super) failures: Mutex<HashMap<RequestId, oneshot::Sender<TransportError>>>,
    pub(super) rules: MatchRules,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn failures(
        &self,
    ) -> MutexGuard<'_, HashMap<RequestId, oneshot::Sender<TransportError>>> {
        self.failures.lock().unwrap_or_else(|p| p.into_inner())
    }
}

pub(super) struct Player {
    pub(super) engine: Engine,
    pub(super) peer: MemoryPeer,
    pub(super) shared: Arc<Shared>,
}

impl Player {
    pub(super) async fn play(mut self) {
        loop {
            if !self.play_ready() {
                break;
            }
            {
                let mut state = self.shared.lock();
                state.idle = true;
            }
            self.shared.changed.notify_waiters();
            let Some(message) = self.peer.recv().await else {
                break;
            };
            self.shared.lock().idle = false;
            self.handle(message);
        }
        self.shared.lock().stopped = true;
        self.shared.changed.notify_waiters();
    }

    /// Plays every server entry whose turn has come; false once the
    /// connection ended (a recorded dead server).
    fn play_ready(&self) -> bool {
        loop {
            let (kind, live) = {
                let mut state = self.shared.lock();
                let Some(i) = state.timeline.next_playable() else {
                    return true;
                };
                state.timeline.played[i] = true;
                let kind = state.timeline.entries[i].kind.clone();
                let live = self.rewrite(&state.timeline, kind);
                (state.timeline.entries[i].kind.clone(), live)
            };
            match (kind, live) {
                (Kind::Failure { failure, .. }, Some(Outgoing::Failure(id))) => {
                    if failure["kind"] == "gone" {
                        let reason = failure["reason"]
                            .as_str()
                            .unwrap_or("the recorded server went away");
                        self.engine.peer_gone(GoneInfo::new(reason));
                        return false;
                    }
                    if let Some(tx) = self.shared.failures().remove(&id) {
                        let _ = tx.send(failure_from_value(&failure));
                    }
                }
                (_, Some(Outgoing::Message(m))) => self.engine.receive(m),
                _ => {}
            }
        }
    }

    /// A recorded server message as it must be sent this time: with the
    /// client's ids and progress tokens.
    fn rewrite(&self, timeline: &Timeline, kind: Kind) -> Option<Outgoing> {
        let live = |id: &RequestId| timeline.ids.get(id).cloned();
        Some(match kind {
            Kind::Recv(Message::Response(r)) => Outgoing::Message(Message::Response(Response {
                id: live(&r.id)?,
                result: r.result,
            })),
            Kind::Recv(Message::Error(e)) => Outgoing::Message(Message::Error(ErrorResponse {
                id: match e.id {
                    Some(id) => Some(live(&id)?),
                    None => None,
                },
                error: e.error,
            })),
            Kind::Recv(Message::Notification(mut n)) => {
                if let Some(params) = n.params.as_mut() {
                    rewrite_notification(timeline, &n.method, params);
                }
                Outgoing::Message(Message::Notification(n))
            }
            Kind::Recv(request @ Message::Request(_)) => Outgoing::Message(request),
            Kind::Failure { id, .. } => Outgoing::Failure(live(&id)?),
            Kind::Send(_) => return None,
        })
    }

    fn handle(&self, message: Message) {
        match message {
            Message::Request(request) => self.on_request(request),
            Message::Notification(n) => self.on_notification(n),
            Message::Response(r) => self.on_answer(r.id.clone(), Ok(r.result)),
            Message::Error(e) => match e.id {
                Some(id) => self.on_answer(id, Err(e.error)),
                None => self.mismatch(format!("the client sent an error with no id: {}", e.error)),
            },
        }
    }

    fn on_request(&self, request: Request) {
        let rules = &self.shared.rules;
        let sent = rules.normalize(&request.method, request.params.as_ref());
        let mut state = self.shared.lock();
        match state.timeline.find_request(&request.method, &sent, rules) {
            Some(i) => {
                state.timeline.consumed[i] = true;
                if let Kind::Send(Message::Request(recorded)) =
                    state.timeline.entries[i].kind.clone()
                {
                    state
                        .timeline
                        .ids
                        .insert(recorded.id.clone(), request.id.clone());
                    if let (Some(old), Some(new)) = (token(&recorded), token(&request)) {
                        state.timeline.tokens.insert(old.to_string(), new.clone());
                    }
                }
            }
            None => {
                let text =
                    state
                        .timeline
                        .explain_request(&request.method, &request.id, &sent, rules);
                state.mismatches.push(text.clone());
                drop(state);
                // Answered, so that the client under test fails at once
                // with the diff instead of waiting out its timeout.
                let error = ErrorObject::new(MISMATCH_CODE, text)
                    .with_data(json!({ "cassette": "mismatch" }));
                self.engine.receive(Message::Error(ErrorResponse {
                    id: Some(request.id),
                    error,
                }));
            }
        }
    }

    fn on_notification(&self, n: Notification) {
        let rules = &self.shared.rules;
        if rules.ignores_notification(&n.method) {
            return;
        }
        let sent = rules.normalize(&n.method, n.params.as_ref());
        let mut state = self.shared.lock();
        match state.timeline.find_notification(&n.method, &sent, rules) {
            Some(i) => state.timeline.consumed[i] = true,
            None => {
                let text = format!(
                    "the cassette has no notification matching {} with params {}",
                    n.method,
                    diff::short(&sent)
                );
                state.mismatches.push(text);
            }
        }
    }

    fn on_answer(&self, id: RequestId, answer: Result<Value, ErrorObject>) {
        let rules = &self.shared.rules;
        let mut state = self.shared.lock();
        let Some(i) = state.timeline.find_answer(&id) else {
            state.mismatches.push(format!(
                "the client answered server request {id}, which the cassette has no answer to"
            ));
            return;
        };
        state.timeline.consumed[i] = true;
        let method = state.timeline.server_request_method(&id);
        let line = state.timeline.entries[i].line;
        let recorded = match &state.timeline.entries[i].kind {
            Kind::Send(Message::Response(r)) => Ok(rules.normalize(&method, Some(&r.result))),
            Kind::Send(Message::Error(e)) => Err(e.error.clone()),
            _ => return,
        };
        let sent = answer.map(|v| rules.normalize(&method, Some(&v)));
        let differences = match (&recorded, &sent) {
            (Ok(a), Ok(b)) => diff::differences(a, b),
            (Err(a), Err(b)) => diff::differences(
                &json!({ "code": a.code, "message": a.message }),
                &json!({ "code": b.code, "message": b.message }),
            ),
            (Ok(_), Err(e)) => vec![format!("recorded a result, sent the error {e}")],
            (Err(e), Ok(_)) => vec![format!("recorded the error {e}, sent a result")],
        };
        if !differences.is_empty() {
            let mut text = format!(
                "the client's answer to server request {id} ({method}) differs from line {line}:"
            );
            for d in differences {
                text.push_str("\n    ");
                text.push_str(&d);
            }
            state.mismatches.push(text);
        }
    }

    fn mismatch(&self, text: String) {
        self.shared.lock().mismatches.push(text);
    }
}

enum Outgoing {
    Message(Message),
    /// End the request with this (live) id with its recorded failure.
    Failure(RequestId),
}

fn token(request: &Request) -> Option<&Value> {
    request.meta()?.get(mcp_protocol::meta::PROGRESS_TOKEN)
}

/// Puts the client's progress token and request ids where the recording
/// had its own: a progress notification's token, a subscription's id (the
/// id of its `subscriptions/listen` request).
fn rewrite_notification(timeline: &Timeline, method: &str, params: &mut Value) {
    let token = mcp_protocol::meta::PROGRESS_TOKEN;
    if method == mcp_protocol::methods::NOTIFICATION_PROGRESS
        && let Some(t) = params.get(token).map(Value::to_string)
        && let Some(live) = timeline.tokens.get(&t)
    {
        params[token] = live.clone();
    }
    let live_id = |v: &Value| {
        RequestId::from_value(v)
            .and_then(|id| timeline.ids.get(&id))
            .map(RequestId::to_value)
    };
    let key = mcp_protocol::meta::SUBSCRIPTION_ID;
    if let Some(meta) = params.get_mut("_meta").and_then(Value::as_object_mut)
        && let Some(id) = meta.get(key).and_then(live_id)
    {
        meta.insert(key.to_owned(), id);
    }
}
