//! One connection's server: its state, the era routing of each request,
//! and the machinery both eras share (answering through the misbehaviour
//! knobs, running requests that take time and can be cancelled, asking the
//! client, notifying).
//!
//! A session takes messages through [`Session::handle`] and puts what it
//! sends on an [`Out`] queue, which the in-process transport, the line
//! server and the stdio binary each drain their own way. It must be used
//! inside a tokio runtime (slow requests run on tasks of their own).

use mcp_protocol::meta::{PROTOCOL_VERSION, SUBSCRIPTION_ID};
use mcp_protocol::methods;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use futures::future::{AbortHandle, Abortable, BoxFuture};
use mcp_protocol::{
    ErrorObject, ErrorResponse, Message, Notification, Request, RequestId, Response,
};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::config::{EraChoice, FakeConfig, Knob};
use super::entries::{FakeResource, FakeTool};
use super::{legacy, modern};

/// What a session sends, in order.
#[derive(Debug)]
pub(crate) enum Out {
    /// A message for the client.
    Message(Message),
    /// A message for the client that belongs to one of its requests (a
    /// server request, a log line or progress sent while serving it): over
    /// HTTP it goes on that request's stream.
    Related {
        /// The message.
        message: Message,
        /// The client's request it belongs to.
        #[cfg_attr(not(feature = "http"), allow(dead_code))]
        request: RequestId,
    },
    /// The server "exits" with this code after writing this to stderr.
    Exit { code: i32, stderr: String },
    /// The input ended; nothing more will come.
    End,
}

/// How a request is answered.
pub(crate) enum Reply {
    /// Now, with this.
    Now(Result<Value, ErrorObject>),
    /// When this finishes (cancellable).
    Later(BoxFuture<'static, Result<Value, ErrorObject>>),
    /// Not now; maybe later through [`Session::answer`] (a listen stream),
    /// maybe never (a silent discover).
    Held,
}

/// A legacy connection's handshake state.
#[derive(Clone, Debug)]
pub(crate) struct LegacyConn {
    /// The capabilities the client declared in `initialize`.
    pub(crate) client_caps: Value,
    /// Whether `notifications/initialized` arrived.
    pub(crate) ready: bool,
    /// The level `logging/setLevel` chose.
    pub(crate) log_level: Option<String>,
    /// URIs subscribed with `resources/subscribe`.
    pub(crate) subscriptions: HashSet<String>,
}

struct Running {
    abort: AbortHandle,
    cancelled: Arc<AtomicBool>,
}

/// A connection's mutable state.
pub(crate) struct State {
    /// Set once `initialize` was answered.
    pub(crate) legacy: Option<LegacyConn>,
    /// (Dual, knob) the first request was modern: `initialize` is refused.
    fixed_modern: bool,
    seen_request: bool,
    /// The current tools (`add_tool` adds to them).
    pub(crate) tools: Vec<FakeTool>,
    /// The current resources (`touch_resource` changes them).
    pub(crate) resources: Vec<FakeResource>,
    /// Open `subscriptions/listen` streams: id → honoured filter.
    pub(crate) listens: HashMap<RequestId, Value>,
    running: HashMap<RequestId, Running>,
    pub(super) pending: HashMap<RequestId, oneshot::Sender<Result<Value, ErrorObject>>>,
    pub(super) next_id: i64,
    dead: bool,
}

/// One connection's server. Cloning gives another handle to it.
#[derive(Clone)]
pub(crate) struct Session {
    inner: Arc<Inner>,
}

struct Inner {
    config: Arc<FakeConfig>,
    out: mpsc::UnboundedSender<Out>,
    state: Mutex<State>,
}

impl Session {
    /// A fresh connection and the queue of what it sends.
    pub(crate) fn new(config: Arc<FakeConfig>) -> (Session, mpsc::UnboundedReceiver<Out>) {
        let (out, rx) = mpsc::unbounded_channel();
        let state = State {
            legacy: None,
            fixed_modern: false,
            seen_request: false,
            tools: config.content.tools.clone(),
            resources: config.content.resources.clone(),
            listens: HashMap::new(),
            running: HashMap::new(),
            pending: HashMap::new(),
            next_id: 0,
            dead: false,
        };
        let inner = Inner {
            config,
            out,
            state: Mutex::new(state),
        };
        (
            Session {
                inner: Arc::new(inner),
            },
            rx,
        )
    }

    /// The configuration.
    pub(crate) fn config(&self) -> &FakeConfig {
        &self.inner.config
    }

    /// The state, locked. Never hold it across an `await` or a send.
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes in one message from the client.
    pub(crate) fn handle(&self, message: Message) {
        if self.state().dead {
            return;
        }
        match message {
            Message::Request(r) => self.request(r),
            Message::Notification(n) => self.notification(n),
            Message::Response(Response { id, result }) => self.resolve(&id, Ok(result)),
            Message::Error(ErrorResponse {
                id: Some(id),
                error,
            }) => self.resolve(&id, Err(error)),
            Message::Error(ErrorResponse { id: None, .. }) => {}
        }
    }

    /// The input ended: stop everything, and tell the writer.
    pub(crate) fn end(&self) {
        self.stop();
        let _ = self.inner.out.send(Out::End);
    }

    /// Aborts every running request.
    pub(crate) fn stop(&self) {
        let running: Vec<Running> = self.state().running.drain().map(|(_, r)| r).collect();
        for r in running {
            r.abort.abort();
        }
    }

    /// The server "exits" with code 1 after writing `stderr`.
    pub(crate) fn die(&self, stderr: String) {
        self.state().dead = true;
        self.stop();
        let _ = self.inner.out.send(Out::Exit { code: 1, stderr });
    }

    fn request(&self, request: Request) {
        let modern = self.routes_modern(&request);
        if !modern
            && request.method != methods::INITIALIZE
            && self.state().legacy.is_none()
            && self.config().has_knob(&Knob::ExitOnRequestBeforeInitialize)
        {
            self.die(format!(
                "Error: expected an initialize request, got {:?}\n\
                 connection closed: the server exits\n",
                request.method
            ));
            return;
        }
        let (id, method) = (request.id.clone(), request.method.clone());
        let reply = if modern {
            modern::handle(self, request)
        } else {
            legacy::handle(self, request)
        };
        self.deliver(id, method, reply);
    }

    /// Whether this request is served by the modern rules.
    fn routes_modern(&self, request: &Request) -> bool {
        let config = self.config();
        let mut state = self.state();
        let first = !std::mem::replace(&mut state.seen_request, true);
        match config.era {
            EraChoice::Legacy => false,
            EraChoice::Modern => true,
            EraChoice::Dual => {
                if state.legacy.is_some() {
                    return false;
                }
                if request.method == methods::INITIALIZE {
                    // An `initialize` carrying a modern version in its
                    // `_meta` is a modern request (of a removed method).
                    return state.fixed_modern || carries_modern_version(request);
                }
                let modern = matches!(
                    request.method.as_str(),
                    methods::SERVER_DISCOVER | methods::SUBSCRIPTIONS_LISTEN
                ) || request
                    .meta()
                    .is_some_and(|m| m.contains_key(PROTOCOL_VERSION));
                if modern && first && config.has_knob(&Knob::FixEraAtFirstMessage) {
                    state.fixed_modern = true;
                }
                modern
            }
        }
    }

    fn notification(&self, notification: Notification) {
        let params = notification.params.unwrap_or(Value::Null);
        match notification.method.as_str() {
            methods::NOTIFICATION_INITIALIZED => legacy::initialized(self),
            methods::NOTIFICATION_CANCELLED => {
                if let Some(id) = params.get("requestId").and_then(RequestId::from_value) {
                    self.cancel(&id);
                }
            }
            _ => {}
        }
    }

    fn cancel(&self, id: &RequestId) {
        let mut state = self.state();
        if state.listens.remove(id).is_some() {
            drop(state);
            let end = json!({ "resultType": "complete", "_meta": { SUBSCRIPTION_ID: id } });
            self.answer(id, methods::SUBSCRIPTIONS_LISTEN, Ok(end));
            return;
        }
        if self.config().has_knob(&Knob::ProgressAfterCancel) {
            if let Some(r) = state.running.get(id) {
                r.cancelled.store(true, Ordering::Release);
            }
        } else if let Some(r) = state.running.remove(id) {
            r.abort.abort();
        }
    }

    fn deliver(&self, id: RequestId, method: String, reply: Reply) {
        let delay = self.config().knobs.iter().find_map(|k| match k {
            Knob::AnswerLate(m, d) if m.covers(&method) => Some(*d),
            _ => None,
        });
        let work = match (reply, delay) {
            (Reply::Held, _) => return,
            (Reply::Now(result), None) => return self.answer(&id, &method, result),
            (Reply::Now(result), Some(d)) => Box::pin(async move {
                tokio::time::sleep(d).await;
                result
            }) as BoxFuture<'static, _>,
            (Reply::Later(work), None) => work,
            (Reply::Later(work), Some(d)) => Box::pin(async move {
                let result = work.await;
                tokio::time::sleep(d).await;
                result
            }),
        };
        let (abort, registration) = AbortHandle::new_pair();
        let cancelled = Arc::new(AtomicBool::new(false));
        let running = Running {
            abort,
            cancelled: cancelled.clone(),
        };
        self.state().running.insert(id.clone(), running);
        let session = self.clone();
        tokio::spawn(async move {
            let outcome = Abortable::new(work, registration).await;
            let live = session.state().running.remove(&id).is_some();
            if let Ok(result) = outcome
                && live
                && !cancelled.load(Ordering::Acquire)
            {
                session.answer(&id, &method, result);
            }
        });
    }

    /// Sends the answer to a request, as the knobs have it.
    pub(crate) fn answer(&self, id: &RequestId, method: &str, result: Result<Value, ErrorObject>) {
        let knobs = &self.config().knobs;
        let on = |f: fn(&Knob) -> Option<&super::config::Methods>| {
            knobs.iter().filter_map(f).any(|m| m.covers(method))
        };
        if on(|k| match k {
            Knob::NeverAnswer(m) => Some(m),
            _ => None,
        }) {
            return;
        }
        let id = if on(|k| match k {
            Knob::AnswerWithWrongId(m) => Some(m),
            _ => None,
        }) {
            match id {
                RequestId::Number(n) => RequestId::Number(n.wrapping_add(1_000_000)),
                RequestId::String(s) => RequestId::String(format!("{s}-wrong")),
            }
        } else {
            id.clone()
        };
        let message = match result {
            Ok(result) => Message::Response(Response { id, result }),
            Err(error) => Message::Error(ErrorResponse {
                id: Some(id),
                error,
            }),
        };
        if on(|k| match k {
            Knob::AnswerTwice(m) => Some(m),
            _ => None,
        }) {
            self.send(message.clone());
        }
        self.send(message);
    }

    /// Sends a message.
    pub(crate) fn send(&self, message: Message) {
        let _ = self.inner.out.send(Out::Message(message));
    }

    /// Sends a notification.
    pub(crate) fn notify(&self, method: &str, params: Value) {
        self.send(Message::Notification(Notification::new(
            method,
            Some(params),
        )));
    }

    /// Sends a message that belongs to the client's request `related`
    /// (none: to the connection).
    pub(crate) fn send_for(&self, message: Message, related: Option<&RequestId>) {
        let out = match related {
            Some(request) => Out::Related {
                message,
                request: request.clone(),
            },
            None => Out::Message(message),
        };
        let _ = self.inner.out.send(out);
    }
}

/// Whether a request's `_meta` names a modern protocol version.
fn carries_modern_version(request: &Request) -> bool {
    request
        .meta()
        .and_then(|m| m.get(PROTOCOL_VERSION))
        .and_then(Value::as_str)
        .is_some_and(|v| mcp_protocol::ProtocolVersion::new(v).era() == mcp_protocol::Era::Modern)
}
