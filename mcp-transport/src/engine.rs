//! The engine: a whole [`Transport`] for anything that can move messages.
//!
//! A transport author writes two loops and hands everything else to the
//! engine: a writer that takes [`Outbound`] items from the engine's queue and
//! puts them on the wire, and a reader that gives every inbound message to
//! [`Engine::receive`] and reports the end of the stream with
//! [`Engine::peer_gone`] (the writer keeps the receiver for as long as
//! the connection lives: dropping it ends the connection with
//! [`TransportError::ServerGone`]). The engine correlates answers, routes
//! notifications, runs server-request handlers, and turns cancels, timeouts
//! and drops into [`Outbound::Cancel`] items. This is the seam seen from
//! both sides: the author only moves messages, the caller gets request and
//! answer.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::{AbortHandle, Abortable, BoxFuture};
use mcp_protocol::error_codes::{INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND};
use mcp_protocol::framing::{encode_line_into, sniff};
use mcp_protocol::meta::{PROGRESS_TOKEN, SUBSCRIPTION_ID};
use mcp_protocol::methods::{NOTIFICATION_CANCELLED, NOTIFICATION_PROGRESS};
use mcp_protocol::result::normalize_result;
use mcp_protocol::{
    ErrorObject, ErrorResponse, Inbound, Message, Notification, ParseError, Request, RequestId,
    Response,
};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use crate::correlation::{Correlator, Route};
use crate::outbound::{Queue, Refused};
use crate::{
    ConnectionHandlers, GoneInfo, Outbound, OutboundReceiver, RequestOptions, ResponseFuture,
    Transport, TransportError, TransportEvent, TransportProfile,
};

/// A [`Transport`] made of a message queue: see the module docs.
///
/// Cloning gives another handle to the same connection.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

struct Inner {
    correlator: Correlator,
    outbound: Arc<Queue>,
    handlers: ConnectionHandlers,
    running: Mutex<HashMap<RequestId, AbortHandle>>,
    shutdown: CancellationToken,
    alive: AtomicBool,
    /// Whether messages are queued encoded, as [`Outbound::Line`].
    lines: bool,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The writer's `recv` ends once the last handle is gone.
        self.outbound.close();
    }
}

impl Engine {
    /// An engine delivering inbound traffic to `handlers`, and the queue
    /// its writer drains. Must be used inside a tokio runtime (server
    /// requests run on tasks of their own).
    pub fn new(handlers: ConnectionHandlers) -> (Engine, OutboundReceiver) {
        Self::build(handlers, false)
    }

    /// An engine like [`new`](Self::new) whose queue holds every message
    /// of ours already encoded as one line ([`Outbound::Line`]; cancels
    /// stay [`Outbound::Cancel`]), for a wire that carries newline-delimited
    /// JSON. Each message is serialized by the task that sends it, which
    /// made it and so frees it too, and the writer's task only copies
    /// bytes: on a busy connection the writer is the one task every
    /// request goes through.
    ///
    /// ```
    /// use mcp_protocol::Request;
    /// use mcp_transport::{ConnectionHandlers, Engine, Outbound, RequestOptions, Transport};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let (engine, mut outbound) = Engine::with_lines(ConnectionHandlers::discard());
    /// let _answer = engine.request(Request::new(1, "ping", None), RequestOptions::new());
    /// match outbound.try_recv() {
    ///     Some(Outbound::Line { id, line }) => {
    ///         assert_eq!(id, Some(1.into()));
    ///         assert_eq!(line, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
    ///     }
    ///     other => panic!("{other:?}"),
    /// }
    /// # }
    /// ```
    pub fn with_lines(handlers: ConnectionHandlers) -> (Engine, OutboundReceiver) {
        Self::build(handlers, true)
    }

    fn build(handlers: ConnectionHandlers, lines: bool) -> (Engine, OutboundReceiver) {
        let queue = Queue::new(handlers.limits.max_outbound_bytes);
        let sink = queue.clone();
        let correlator = Correlator::new(Arc::new(move |id, reason| {
            // A request that never left the queue is simply taken out of
            // it: the server never saw it, so there is nothing to cancel.
            if sink.remove_request(&id) {
                return;
            }
            // After the wire is gone there is nobody to tell.
            let _ = sink.push_always(Outbound::Cancel { id, reason });
        }));
        let engine = Engine {
            inner: Arc::new(Inner {
                correlator,
                outbound: queue.clone(),
                handlers,
                running: Mutex::new(HashMap::new()),
                shutdown: CancellationToken::new(),
                alive: AtomicBool::new(true),
                lines,
            }),
        };
        // The receiver must not keep the engine alive (the engine's last
        // handle going is what ends the writer's `recv`).
        let weak = Arc::downgrade(&engine.inner);
        let rx = OutboundReceiver::new(
            queue,
            Some(Box::new(move || {
                if let Some(inner) = weak.upgrade() {
                    Engine { inner }.writer_gone();
                }
            })),
        );
        (engine, rx)
    }

    /// Holds every pending request's base timer still until the guard is
    /// dropped (hard maximums keep running). The engine does this itself
    /// while it runs the handler of a server request that belongs to no
    /// request, since a person may be typing the answer (one that arrived
    /// on a request's stream, [`receive_for`](Self::receive_for), holds
    /// only that request's timer); a transport that handles such requests
    /// its own way holds one too.
    pub fn pause_timers(&self) -> crate::TimerPause {
        self.inner.correlator.pause_timers()
    }

    /// Holds one pending request's base timer still until the guard is
    /// dropped; `None` when no request with that id is pending.
    pub fn pause_timer_of(&self, id: &RequestId) -> Option<crate::TimerPause> {
        self.inner.correlator.pause_timer_of(id)
    }

    /// How many requests are waiting for their answer (a connection that
    /// leaks none returns to zero).
    pub fn pending_count(&self) -> usize {
        self.inner.correlator.pending_count()
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

    /// Takes in one message that arrived on the stream of request `owner`
    /// (an HTTP answer stream): a server request there belongs to it, so
    /// only its timer pauses while the request is handled. Anything else is
    /// taken in as by [`receive`](Self::receive).
    pub fn receive_for(&self, owner: &RequestId, message: Message) {
        match message {
            Message::Request(request) => {
                let pause = self.inner.correlator.pause_timer_of(owner);
                self.serve(request, pause, Some(owner));
            }
            other => self.receive(other),
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
                self.event(TransportEvent::NullIdError { error });
            }
            Message::Request(request) => {
                // Not tied to any request: every timer pauses.
                let pause = self.inner.correlator.pause_timers();
                self.serve(request, Some(pause), None);
            }
            Message::Notification(notification) => self.route(notification),
        }
    }

    /// Takes in a success answer whose result is still JSON text, as
    /// [`mcp_protocol::jsonrpc::answer_text`] finds one in a line: the
    /// same as [`receive`](Self::receive) of that answer, but the result
    /// is parsed by the task waiting for it, not by the reader. A reader
    /// then does little more per answer than find its id, and the result's
    /// many small allocations are made and freed on one thread.
    ///
    /// ```
    /// use mcp_protocol::Request;
    /// use mcp_protocol::jsonrpc::answer_text;
    /// use mcp_transport::{ConnectionHandlers, Engine, RequestOptions, Transport};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let (engine, _outbound) = Engine::new(ConnectionHandlers::discard());
    /// let answer = engine.request(Request::new(1, "ping", None), RequestOptions::new());
    /// let line = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    /// let (id, result) = answer_text(line).expect("a well-formed answer");
    /// engine.receive_result(&id, result);
    /// assert_eq!(answer.await.unwrap()["resultType"], "complete");
    /// # }
    /// ```
    pub fn receive_result(&self, id: &RequestId, result: &RawValue) {
        if !self.inner.correlator.resolve_text(id, result) {
            tracing::warn!(%id, "dropped an answer to a request that is not pending (answered twice, or never sent)");
        }
    }

    /// Takes in a message that could not be parsed. Nothing is lost: an
    /// answer whose id could be read fails its request at once with
    /// [`TransportError::Malformed`]; a request of the server's whose id
    /// could be read is answered with `-32600` (invalid request). Either
    /// way the fault is logged and given to the events listener as
    /// [`TransportEvent::Malformed`].
    pub fn receive_malformed(&self, error: ParseError) {
        tracing::warn!(%error, id = ?error.id, "skipped a malformed message from the server");
        match &error.id {
            Some(id) if error.request => self.refuse(
                id.clone(),
                INVALID_REQUEST,
                format!("the client could not read this request: {error}"),
            ),
            Some(id) => {
                let failure = TransportError::Malformed {
                    detail: error.kind.to_string(),
                };
                if !self.inner.correlator.resolve(id, Err(failure)) {
                    tracing::debug!(%id, "the malformed answer was for no pending request");
                }
            }
            None => {}
        }
        self.event(TransportEvent::Malformed { error });
    }

    /// Takes in the news that a message over the transport's size limit was
    /// skipped, with its first bytes (`prefix`, a few hundred are enough)
    /// and the bytes seen. An answer whose id is found fails its request
    /// with [`TransportError::MessageTooLarge`]; a server request whose id
    /// is found (it names a method) is answered with `-32600`, so the
    /// server is not left waiting. Reported as [`TransportEvent::TooLarge`].
    pub fn receive_oversized(&self, prefix: &[u8], size: usize, limit: usize) {
        let sniffed = sniff(prefix);
        tracing::warn!(
            size,
            limit,
            id = ?sniffed.id,
            request = sniffed.request,
            "skipping a message over the size limit (raise the maximum message size to read it)"
        );
        match &sniffed.id {
            Some(id) if sniffed.request => self.refuse(
                id.clone(),
                INVALID_REQUEST,
                format!(
                    "the request is {size} bytes or more, over the client's limit of {limit} bytes"
                ),
            ),
            Some(id) => {
                self.fail_request(id, TransportError::MessageTooLarge { size, limit });
            }
            None => {}
        }
        self.event(TransportEvent::TooLarge {
            size,
            limit,
            id: sniffed.id,
            request: sniffed.request,
        });
    }

    /// Fails one pending request with a transport error. Returns false
    /// when it was not pending.
    pub fn fail_request(&self, id: &RequestId, error: TransportError) -> bool {
        self.inner.correlator.resolve(id, Err(error))
    }

    /// [`Transport::request`] for a writer whose step for a request does
    /// not wait (an HTTP writer starts an exchange and goes on): when the
    /// writer waits for work with nothing queued, `start` takes the
    /// request at once, on the caller's call, instead of the queue, which
    /// saves the hand-off to the writer's task. Order holds as if the
    /// writer had taken it: `start` runs under the queue's lock, so nothing
    /// is queued or taken meanwhile, and a writer busy with an earlier item
    /// gets this one through the queue. `start` must not queue anything.
    /// The writer waits from the moment its [`OutboundReceiver::recv`]
    /// found the queue empty; one that polls `recv` while still busy with
    /// an item must not rely on this.
    ///
    /// A request with [`RequestOptions::shared_meta`] and an engine of
    /// lines ([`Engine::with_lines`]) always go through the queue.
    ///
    /// ```
    /// use mcp_protocol::Request;
    /// use mcp_transport::{ConnectionHandlers, Engine, RequestOptions};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use futures::FutureExt;
    ///
    /// let (engine, mut outbound) = Engine::new(ConnectionHandlers::discard());
    /// let options = || RequestOptions::new();
    /// // The writer has not looked at the queue yet: this one is queued.
    /// let _first = engine.request_or_start(Request::new(1, "ping", None), options(), |_| {
    ///     unreachable!("queued")
    /// });
    /// assert!(outbound.recv().now_or_never().flatten().is_some());
    /// // Now the writer waits, with nothing queued: `start` takes the next.
    /// assert!(outbound.recv().now_or_never().is_none());
    /// let mut started = None;
    /// let _second = engine.request_or_start(Request::new(2, "ping", None), options(), |r| {
    ///     started = Some(r.id)
    /// });
    /// assert_eq!(started, Some(2.into()));
    /// # }
    /// ```
    pub fn request_or_start(
        &self,
        request: Request,
        options: RequestOptions,
        start: impl FnOnce(Request),
    ) -> ResponseFuture {
        if self.inner.lines || options.shared_meta.is_some() {
            return Transport::request(self, request, options);
        }
        let id = request.id.clone();
        let future = match self.inner.correlator.register(&request, options) {
            Ok(f) => f,
            Err(e) => return Box::pin(std::future::ready(Err(e))),
        };
        if let Err(request) = self.inner.outbound.run_if_idle(request, start)
            && let Err(refused) = self
                .inner
                .outbound
                .push(Outbound::Message(Message::Request(request)))
        {
            let e = self.refused(refused);
            self.inner.correlator.resolve(&id, Err(e));
        }
        future
    }

    /// Gives the events listener a transport event.
    pub fn event(&self, event: TransportEvent) {
        self.inner.handlers.events.push(event);
    }

    /// The peer is gone: every pending and later request fails with
    /// [`TransportError::ServerGone`] carrying `info`.
    pub fn peer_gone(&self, info: GoneInfo) {
        self.end(TransportError::gone(info));
    }

    /// The writer dropped its [`OutboundReceiver`] while the connection was
    /// still up: nothing can be sent any more, so the connection ends as if
    /// the peer were gone.
    fn writer_gone(&self) {
        if self.inner.shutdown.is_cancelled() {
            return;
        }
        tracing::warn!("the transport's writer stopped without saying why; the connection ends");
        self.peer_gone(GoneInfo::new("the transport's writer stopped"));
    }

    fn end(&self, error: TransportError) {
        self.inner.alive.store(false, Ordering::Release);
        self.inner.correlator.fail_all(error);
        // Cancelled before the queue closes: a writer woken by the closed
        // queue must find the shutdown under way, or its going reads as a
        // writer that stopped on its own.
        self.inner.shutdown.cancel();
        self.inner.outbound.close();
        let running: Vec<AbortHandle> = self.running().drain().map(|(_, h)| h).collect();
        for handle in running {
            handle.abort();
        }
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, AbortHandle>> {
        self.inner.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues a request or notification of ours, within the byte bound.
    fn send(&self, message: Message) -> Result<(), TransportError> {
        self.inner
            .outbound
            .push(self.outbound(message))
            .map_err(|refused| self.refused(refused))
    }

    /// Queues an answer to the server, which is never refused for size.
    fn answer(&self, message: Message) {
        let _ = self.inner.outbound.push_always(self.outbound(message));
    }

    /// The queue's item for `message`: itself, or its line.
    fn outbound(&self, message: Message) -> Outbound {
        if !self.inner.lines {
            return Outbound::Message(message);
        }
        let id = match &message {
            Message::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        let mut line = Vec::with_capacity(crate::outbound::size_hint(&message) + 1);
        encode_line_into(&message, &mut line);
        Outbound::Line { id, line }
    }

    fn refuse(&self, id: RequestId, code: i64, message: String) {
        self.answer(Message::Error(ErrorResponse {
            id: Some(id),
            error: ErrorObject::new(code, message),
        }));
    }

    fn refused(&self, refused: Refused) -> TransportError {
        match refused {
            Refused::Full(limit) => TransportError::QueueFull { limit },
            Refused::Closed => self.terminal(),
        }
    }

    pub(crate) fn queue(&self) -> &Queue {
        &self.inner.outbound
    }

    /// The tap that sees each line before this engine, if its handlers
    /// have one ([`ConnectionHandlers::with_line_tap`]).
    pub fn line_tap(&self) -> Option<&Arc<dyn crate::LineTap>> {
        self.inner.handlers.line_tap.as_ref()
    }

    pub(crate) fn ended(&self) -> Option<TransportError> {
        self.inner.correlator.terminal_error()
    }

    pub(crate) fn terminal(&self) -> TransportError {
        self.inner
            .correlator
            .terminal_error()
            .unwrap_or(TransportError::Closed)
    }

    fn route(&self, notification: Notification) {
        let params = notification.params.as_ref();
        if notification.method == NOTIFICATION_CANCELLED {
            let target = params
                .and_then(|p| p.get("requestId"))
                .and_then(RequestId::from_value);
            if let Some(handle) = target.and_then(|id| self.running().remove(&id)) {
                handle.abort();
                return;
            }
        }
        let meta = notification.meta();
        let token = if notification.method == NOTIFICATION_PROGRESS {
            params.and_then(|p| p.get(PROGRESS_TOKEN))
        } else {
            meta.and_then(|m| m.get(PROGRESS_TOKEN))
        }
        .and_then(RequestId::from_value);
        if let Some(token) = token {
            let is_progress = notification.method == NOTIFICATION_PROGRESS;
            match self.inner.correlator.route_progress(&token) {
                Route::Live(Some(listener)) => return listener.push(notification),
                // Progress of a request that has no listener is nobody's.
                Route::Live(None) if is_progress => return,
                Route::NotFound if is_progress => {
                    tracing::debug!(%token, "dropped progress for a request that is no longer pending");
                    return;
                }
                // Anything else naming the request (a log message, say) is
                // still a message from the server: with no request listener
                // to take it, it goes on to the subscription lookup and then
                // the connection.
                Route::Live(None) | Route::NotFound => {}
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

    /// Runs the server-request handler, holding `pause` (the timers to hold
    /// still) until it answered; `owner` is the client request it belongs
    /// to, when the stream it came on says.
    fn serve(&self, request: Request, pause: Option<crate::TimerPause>, owner: Option<&RequestId>) {
        let Some(handler) = self.inner.handlers.server_requests.clone() else {
            return self.refuse(
                request.id,
                METHOD_NOT_FOUND,
                format!("the client does not handle {:?}", request.method),
            );
        };
        let id = request.id.clone();
        let (abort, registration) = AbortHandle::new_pair();
        {
            let mut running = self.running();
            let cap = self.inner.handlers.limits.max_concurrent_server_requests;
            if running.len() >= cap && !running.contains_key(&id) {
                drop(running);
                tracing::warn!(%id, method = %request.method, cap, "refused a server request over the concurrency cap");
                return self.refuse(
                    id,
                    INTERNAL_ERROR,
                    format!(
                        "the client is already handling {cap} requests from this server; \
                         try again when one has been answered"
                    ),
                );
            }
            if let Some(previous) = running.insert(id.clone(), abort) {
                tracing::warn!(%id, "the server reused the id of a request still being handled; the earlier one is aborted");
                previous.abort();
            }
        }
        let engine = self.clone();
        let answer = match owner {
            Some(owner) => handler.handle_during(request, owner),
            None => handler.handle(request),
        };
        let work = Abortable::new(answer, registration);
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
            engine.answer(message);
        });
    }
}

impl Transport for Engine {
    fn request(&self, mut request: Request, mut options: RequestOptions) -> ResponseFuture {
        let id = request.id.clone();
        let mut shared = options.shared_meta.take();
        // Spliced into the line, or merged here for a queue of messages
        // (and for params that are not an object, which have no `_meta`).
        if let Some(s) = &shared
            && !(self.inner.lines && matches!(request.params, None | Some(Value::Object(_))))
        {
            request.params = s.merge_into(request.params.take());
            shared = None;
        }
        let future = match self.inner.correlator.register(&request, options) {
            Ok(f) => f,
            Err(e) => return Box::pin(std::future::ready(Err(e))),
        };
        let item = match shared {
            Some(shared) => {
                let mut line = Vec::with_capacity(
                    crate::outbound::request_size_hint(&request) + shared.len() + 1,
                );
                shared.encode_request_line(&request, &mut line);
                Outbound::Line {
                    id: Some(id.clone()),
                    line,
                }
            }
            None => self.outbound(Message::Request(request)),
        };
        if let Err(refused) = self.inner.outbound.push(item) {
            let e = self.refused(refused);
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

    /// The engine splices the shared `_meta` into each request itself.
    fn profile(&self) -> TransportProfile {
        TransportProfile::new().takes_shared_meta(true)
    }

    /// An engine made with [`Engine::with_lines`] queues lines as they
    /// are; one of messages does not.
    fn line_sender(&self) -> Option<crate::LineSender> {
        self.inner
            .lines
            .then(|| crate::LineSender::new(self.clone()))
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
