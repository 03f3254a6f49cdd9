//! What a connection does with what the server sends unasked.

use std::sync::Arc;

use futures::future::BoxFuture;
use mcp_protocol::{ErrorObject, Request};
use serde_json::Value;

use crate::Listener;

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
}

impl<F> ServerRequestHandler for F
where
    F: Fn(Request) -> BoxFuture<'static, Result<Value, ErrorObject>> + Send + Sync + 'static,
{
    fn handle(&self, request: Request) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        self(request)
    }
}

/// What a connection is given when it is built, before it reads anything:
/// servers may speak first (a list-changed notification right after
/// `initialized`), so there is no window in which a message has nowhere to go.
#[derive(Clone)]
#[non_exhaustive]
pub struct ConnectionHandlers {
    /// Receives every notification that is not tied to a live request, and
    /// the transport's own events (see [`crate::events`]).
    pub listener: Listener,
    /// Answers the server's requests; without one they get `-32601`.
    pub server_requests: Option<Arc<dyn ServerRequestHandler>>,
}

impl ConnectionHandlers {
    /// Handlers with a listener and no server-request handler.
    pub fn new(listener: Listener) -> Self {
        ConnectionHandlers {
            listener,
            server_requests: None,
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
}

impl std::fmt::Debug for ConnectionHandlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectionHandlers")
            .field("listener", &self.listener)
            .field("server_requests", &self.server_requests.is_some())
            .finish()
    }
}
