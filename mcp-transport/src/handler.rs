//! What a connection does with what the server sends unasked.

use std::sync::Arc;

use futures::future::BoxFuture;
use mcp_protocol::{ErrorObject, Request, RequestId};
use serde_json::Value;

use crate::{Listener, TransportEvent};

/// Answers requests the server sends to the client (legacy servers only:
/// `ping`, `roots/list`, `sampling/createMessage`, `elicitation/create`).
///
/// Each request runs on a task of its own, so a slow handler (a person
/// typing an answer) holds up nothing else; an inbound
/// `notifications/cancelled` for the request aborts it, and then nothing is
/// sent back.
pub trait ServerRequestHandler: Send + Sync + 'static {
    /// Answers one request with a result or a JSON-RPC error.
    fn handle(&self, request: Request) -> BoxFuture<'static, Result<Value, ErrorObject>>;

    /// Answers one request that belongs to the client's request `during`:
    /// it arrived on that request's own answer stream (over Streamable
    /// HTTP, a server request sent on a `POST`'s SSE stream is part of that
    /// `POST`'s request), so a handler serving several callers can answer
    /// it for the one who made that request. A request no stream ties to
    /// one of the client's (stdio, the GET stream) goes to
    /// [`handle`](Self::handle), as does this one unless a handler says
    /// otherwise.
    fn handle_during(
        &self,
        request: Request,
        during: &RequestId,
    ) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        let _ = during;
        self.handle(request)
    }
}

impl<F> ServerRequestHandler for F
where
    F: Fn(Request) -> BoxFuture<'static, Result<Value, ErrorObject>> + Send + Sync + 'static,
{
    fn handle(&self, request: Request) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        self(request)
    }
}

/// Bounds a connection keeps so that a misbehaving peer costs memory and
/// tasks only up to a limit, never without one.
///
/// ```
/// use mcp_transport::ConnectionLimits;
/// let limits = ConnectionLimits::default()
///     .max_outbound_bytes(8 << 20)
///     .max_concurrent_server_requests(4);
/// assert_eq!(limits.max_concurrent_server_requests, 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionLimits {
    /// How many bytes of messages may wait to be written (an estimate of
    /// their JSON size). A request that would go past it fails at once with
    /// [`TransportError::QueueFull`](crate::TransportError::QueueFull); one
    /// message alone is always accepted, however large, so a big call never
    /// fails on an idle connection. Default 64 MiB.
    pub max_outbound_bytes: usize,
    /// How many server requests may be handled at once; one more is
    /// answered with a JSON-RPC error (`-32603`, saying so) and never
    /// reaches the handler. Default 64.
    pub max_concurrent_server_requests: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max_outbound_bytes: 64 << 20,
            max_concurrent_server_requests: 64,
        }
    }
}

impl ConnectionLimits {
    /// Sets [`max_outbound_bytes`](Self::max_outbound_bytes).
    pub fn max_outbound_bytes(mut self, bytes: usize) -> Self {
        self.max_outbound_bytes = bytes;
        self
    }

    /// Sets [`max_concurrent_server_requests`](Self::max_concurrent_server_requests)
    /// (at least one).
    pub fn max_concurrent_server_requests(mut self, handlers: usize) -> Self {
        self.max_concurrent_server_requests = handlers.max(1);
        self
    }
}

/// What a connection is given when it is built, before it reads anything:
/// servers may speak first (a list-changed notification right after
/// `initialized`), so there is no window in which a message has nowhere to go.
#[derive(Clone)]
#[non_exhaustive]
pub struct ConnectionHandlers {
    /// Receives every notification that is not tied to a live request.
    pub listener: Listener,
    /// Receives the transport's own events: skipped noise, malformed or
    /// oversized messages, errors with a null id.
    pub events: Listener<TransportEvent>,
    /// Answers the server's requests; without one they get `-32601`.
    pub server_requests: Option<Arc<dyn ServerRequestHandler>>,
    /// The connection's bounds.
    pub limits: ConnectionLimits,
    /// Sees each line a newline-delimited transport reads before its
    /// engine, and may take it ([`LineTap`](crate::LineTap)); other
    /// transports never call it.
    pub line_tap: Option<Arc<dyn crate::LineTap>>,
}

impl ConnectionHandlers {
    /// Handlers with a listener, no server-request handler, transport
    /// events discarded and the default limits.
    pub fn new(listener: Listener) -> Self {
        ConnectionHandlers {
            listener,
            events: Listener::sink(),
            server_requests: None,
            limits: ConnectionLimits::default(),
            line_tap: None,
        }
    }

    /// Handlers that discard notifications and refuse server requests.
    pub fn discard() -> Self {
        Self::new(Listener::discard())
    }

    /// The same handlers with a server-request handler.
    pub fn with_server_requests(mut self, handler: Arc<dyn ServerRequestHandler>) -> Self {
        self.server_requests = Some(handler);
        self
    }

    /// The same handlers, giving the transport's own events to `events`.
    ///
    /// ```
    /// use mcp_transport::{ConnectionHandlers, Listener, TransportEvent};
    /// let (events, _stream) = Listener::<TransportEvent>::bounded("transport events", 64);
    /// let handlers = ConnectionHandlers::discard().with_events(events);
    /// # let _ = handlers;
    /// ```
    pub fn with_events(mut self, events: Listener<TransportEvent>) -> Self {
        self.events = events;
        self
    }

    /// The same handlers, each line read shown to `tap` first (on a
    /// newline-delimited transport).
    pub fn with_line_tap(mut self, tap: Arc<dyn crate::LineTap>) -> Self {
        self.line_tap = Some(tap);
        self
    }

    /// The same handlers with other limits.
    pub fn with_limits(mut self, limits: ConnectionLimits) -> Self {
        self.limits = limits;
        self
    }
}

impl std::fmt::Debug for ConnectionHandlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectionHandlers")
            .field("listener", &self.listener)
            .field("events", &self.events)
            .field("server_requests", &self.server_requests.is_some())
            .field("limits", &self.limits)
            .field("line_tap", &self.line_tap.is_some())
            .finish()
    }
}
