//! The engine: a whole [`Transport`] for anything that can move messages.
//!
//! A transport author writes two loops and hands everything else to the
//! engine: a writer that takes [`Outbound`] items from the engine's queue and
//! puts them on the wire, and a reader that gives every inbound message to
//! [`Engine::receive`] and reports the end of the stream with
//! [`Engine::peer_gone`]. The engine correlates answers, routes
//! notifications, runs server-request handlers, and turns cancels, timeouts
//! and drops into [`Outbound::Cancel`] items. This is the seam seen from
//! both sides: the author only moves messages, the caller gets request and
//! answer.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::{AbortHandle, Abortable, BoxFuture};
use mcp_protocol::result::normalize_result;
use mcp_protocol::{
    ErrorObject, ErrorResponse, Inbound, Message, Notification, ParseError, Request, RequestId,
    Response,
};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::correlation::{Correlator, Route};
use crate::{
    ConnectionHandlers, GoneInfo, RequestOptions, ResponseFuture, Transport, TransportError, events,
};

const CANCELLED: &str = "notifications/cancelled";
const PROGRESS: &str = "notifications/progress";
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
const METHOD_NOT_FOUND: i64 = -32601;

/// One item for the wire, in order.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Outbound {
    /// A message to send as it is.
    Message(Message),
    /// Tell the server a request is given up. How is the wire's business:
    /// [`Outbound::into_message`] makes the `notifications/cancelled` that
    /// stdio and legacy HTTP send; modern HTTP closes the request's stream.
    Cancel {
        /// The request given up.
        id: RequestId,
        /// Why, for the server's logs.
        reason: &'static str,
    },
}

impl Outbound {
    /// The item as a message, a cancel becoming `notifications/cancelled`.
    pub fn into_message(self) -> Message {
        match self {
            Outbound::Message(m) => m,
            Outbound::Cancel { id, reason } => Message::Notification(Notification::new(
                CANCELLED,
                Some(json!({ "requestId": id, "reason": reason })),
            )),
        }
    }
}

/// The receiving end of an engine's outbound queue, for the wire's writer.
pub type OutboundReceiver = mpsc::UnboundedReceiver<Outbound>;

/// A [`Transport`] made of a message queue: see the module docs.
///
/// Cloning gives another handle to the same connection.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

struct Inner {
    correlator: Correlator,
    outbound: mpsc::UnboundedSender<Outbound>,
    handlers: ConnectionHandlers,
    running: Mutex<HashMap<RequestId, AbortHandle>>,
    shutdown: CancellationToken,
    alive: AtomicBool,
}

impl Engine {
    /// An engine delivering inbound traffic to `handlers`, and the queue
    /// its writer drains. Must be used inside a tokio runtime (server
    /// requests run on tasks of their own).
    pub fn new(handlers: ConnectionHandlers) -> (Engine, OutboundReceiver) {
        let (tx, rx) = mpsc::unbounded_channel();
        let sink_tx = tx.clone();
        let correlator = Correlator::new(Arc::new(move |id, reason| {
            // After the wire is gone there is nobody to tell.
            let _ = sink_tx.send(Outbound::Cancel { id, reason });
        }));
        let engine = Engine {
            inner: Arc::new(Inner {
                correlator,
                outbound: tx,
                handlers,
                running: Mutex::new(HashMap::new()),
                shutdown: CancellationToken::new(),
                alive: AtomicBool::new(true),
            }),
        };
        (engine, rx)
    }

    /// The pending-request table.
    pub fn correlator(&self) -> &Correlator {
        &self.inner.correlator
    }

    /// Cancelled when the connection ends (closed, or the peer gone); the
    /// wire's loops stop on it.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.inner.shutdown.clone()
    }

    /// Takes in whatever one line or body held.
    pub fn receive_inbound(&self, inbound: Inbound) {
        for message in inbound.into_messages(|e| self.receive_malformed(e)) {
            self.receive(message);
        }
    }

    /// Takes in one message from the peer.
    pub fn receive(&self, message: Message) {
        match message {
            Message::Response(Response { id, result }) => {
                if !self
                    .inner
                    .correlator
                    .resolve(&id, Ok(normalize_result(result)))
                {
                    tracing::warn!(%id, "dropped an answer to a request that is not pending (answered twice, or never sent)");
                }
            }
            Message::Error(ErrorResponse {
                id: Some(id),
                error,
            }) => {
                if !self
                    .inner
                    .correlator
                    .resolve(&id, Err(TransportError::from_rpc(error)))
                {
                    tracing::warn!(%id, "dropped an error answer to a request that is not pending");
                }
            }
            Message::Error(ErrorResponse { id: None, error }) => {
                tracing::warn!(code = error.code, message = %error.message, "the server sent an error with a null id");
                self.event(
                    events::NULL_ID_ERROR,
                    json!({ "error": serde_json::to_value(&error).unwrap_or_default() }),
                );
            }
            Message::Request(request) => self.serve(request),
            Message::Notification(notification) => self.route(notification),
        }
    }

    /// Reports a message that could not be parsed. Nothing is failed (its
    /// request, if any, still has its timeout); the fault is logged and
    /// given to the connection listener as an [`events::MALFORMED`] event.
    pub fn receive_malformed(&self, error: ParseError) {
        tracing::warn!(%error, id = ?error.id, "skipped a malformed message from the server");
        self.event(
            events::MALFORMED,
            json!({ "error": error.to_string(), "id": error.id }),
        );
    }

    /// Fails one pending request with a transport error (a message too
    /// large to read, say). Returns false when it was not pending.
    pub fn fail_request(&self, id: &RequestId, error: TransportError) -> bool {
        self.inner.correlator.resolve(id, Err(error))
    }

    /// Gives the connection listener a transport event (see [`events`]).
    pub fn event(&self, method: &str, params: Value) {
        self.inner
            .handlers
            .listener
            .push(Notification::new(method, Some(params)));
    }

    /// The peer is gone: every pending and later request fails with
    /// [`TransportError::ServerGone`] carrying `info`.
    pub fn peer_gone(&self, info: GoneInfo) {
        self.end(TransportError::gone(info));
    }

    fn end(&self, error: TransportError) {
        self.inner.alive.store(false, Ordering::Release);
        self.inner.correlator.fail_all(error);
        self.inner.shutdown.cancel();
        let running: Vec<AbortHandle> = self.running().drain().map(|(_, h)| h).collect();
        for handle in running {
            handle.abort();
        }
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, AbortHandle>> {
        self.inner.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn send(&self, message: Message) -> Result<(), TransportError> {
        self.inner
            .outbound
            .send(Outbound::Message(message))
            .map_err(|_| self.terminal())
    }

    fn terminal(&self) -> TransportError {
        self.inner
            .correlator
            .terminal_error()
            .unwrap_or(TransportError::Closed)
    }

    fn route(&self, notification: Notification) {
        let params = notification.params.as_ref();
        if notification.method == CANCELLED {
            let target = params
                .and_then(|p| p.get("requestId"))
                .and_then(RequestId::from_value);
            if let Some(handle) = target.and_then(|id| self.running().remove(&id)) {
                handle.abort();
                return;
            }
        }
        let meta = notification.meta();
        let token = if notification.method == PROGRESS {
            params.and_then(|p| p.get("progressToken"))
        } else {
            meta.and_then(|m| m.get("progressToken"))
        }
        .and_then(RequestId::from_value);
        if let Some(token) = token {
            match self.inner.correlator.route_progress(&token) {
                Route::Live(Some(listener)) => return listener.push(notification),
                Route::Live(None) => return,
                Route::NotFound if notification.method == PROGRESS => {
                    tracing::debug!(%token, "dropped progress for a request that is no longer pending");
                    return;
                }
                Route::NotFound => {}
            }
        }
        let subscription = meta
            .and_then(|m| m.get(SUBSCRIPTION_ID))
            .and_then(RequestId::from_value);
        if let Some(id) = subscription
            && let Route::Live(Some(listener)) = self.inner.correlator.route_request(&id)
        {
            return listener.push(notification);
        }
        self.inner.handlers.listener.push(notification);
    }

    fn serve(&self, request: Request) {
        let Some(handler) = self.inner.handlers.server_requests.clone() else {
            let error = ErrorObject::new(
                METHOD_NOT_FOUND,
                format!("the client does not handle {:?}", request.method),
            );
            let _ = self.send(Message::Error(ErrorResponse {
                id: Some(request.id),
                error,
            }));
            return;
        };
        let id = request.id.clone();
        let (abort, registration) = AbortHandle::new_pair();
        if let Some(previous) = self.running().insert(id.clone(), abort) {
            tracing::warn!(%id, "the server reused the id of a request still being handled; the earlier one is aborted");
            previous.abort();
        }
        let engine = self.clone();
        let pause = self.inner.correlator.pause_timers();
        let work = Abortable::new(handler.handle(request), registration);
        tokio::spawn(async move {
            let outcome = work.await;
            drop(pause);
            let Ok(outcome) = outcome else { return };
            if engine.running().remove(&id).is_none() {
                return;
            }
            let message = match outcome {
                Ok(result) => Message::Response(Response { id, result }),
                Err(error) => Message::Error(ErrorResponse {
                    id: Some(id),
                    error,
                }),
            };
            let _ = engine.send(message);
        });
    }
}

impl Transport for Engine {
    fn request(&self, request: Request, options: RequestOptions) -> ResponseFuture {
        let id = request.id.clone();
        let future = match self.inner.correlator.register(&request, options) {
            Ok(f) => f,
            Err(e) => return Box::pin(std::future::ready(Err(e))),
        };
        if let Err(e) = self.send(Message::Request(request)) {
            self.inner.correlator.resolve(&id, Err(e));
        }
        future
    }

    fn notify(&self, notification: Notification) -> Result<(), TransportError> {
        if let Some(e) = self.inner.correlator.terminal_error() {
            return Err(e);
        }
        self.send(Message::Notification(notification))
    }

    fn close(&self) -> BoxFuture<'static, ()> {
        self.end(TransportError::Closed);
        Box::pin(std::future::ready(()))
    }

    fn is_alive(&self) -> bool {
        self.inner.alive.load(Ordering::Acquire)
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("alive", &self.is_alive())
            .field("pending", &self.inner.correlator.pending_count())
            .finish()
    }
}
