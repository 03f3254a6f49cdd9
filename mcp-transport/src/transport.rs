//! The `Transport` and `Connector` traits.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures::future::BoxFuture;
use mcp_protocol::{Notification, Request};
use serde_json::Value;

use crate::{ConnectionHandlers, RequestOptions, TransportError, TransportProfile};

/// The future of a request's result: the `result` member, normalized (an
/// absent `resultType` is `"complete"`), or a [`TransportError`].
///
/// It owns everything it needs (`'static`) and can move between threads.
/// Dropping it before it finishes cancels the request.
pub type ResponseFuture = Pin<Box<dyn Future<Output = Result<Value, TransportError>> + Send>>;

/// One connection to one MCP server, moving messages; the client knows the
/// protocol.
///
/// The contract every implementation keeps, which the client relies on
/// absolutely (the `mcp-testkit` contract suite checks each point):
///
/// 1. **The client owns the ids.** A request arrives with its id; the answer
///    is correlated on it and it is never renumbered.
/// 2. **The future yields the result, not the envelope**, through
///    [`mcp_protocol::result::normalize_result`].
/// 3. **Errors are the closed set of [`TransportError`].** A JSON-RPC error
///    answer is [`TransportError::Rpc`] with code, message and data verbatim.
/// 4. **Ordering.** [`request`](Self::request) and [`notify`](Self::notify)
///    put the message on one ordered outbound queue before they return; the
///    future only waits.
/// 5. **Options** ([`RequestOptions`]): timeout, reset on progress, hard
///    maximum, cancellation token, request listener, wire cancel. Dropping
///    the future is a cancel; a cancel after the answer sends nothing; a
///    timeout cancels on the wire too.
/// 6. **Cancellation on the wire** is the transport's knowledge
///    (`notifications/cancelled` on stdio; closing the stream on modern HTTP).
/// 7. **Inbound routing**: notifications tied to a live request (by progress
///    token or subscription id) go to its listener, others to the
///    connection's [`ConnectionHandlers::listener`]; listeners never block
///    the read loop.
/// 8. **Server requests** go to [`ConnectionHandlers::server_requests`],
///    concurrently; an inbound cancel aborts the handler.
/// 9. **[`close`](Self::close) is idempotent and bounded in time**; pending
///    and later requests then fail with [`TransportError::Closed`].
///
/// Most implementations do not write this logic themselves: they move
/// messages and let [`crate::Engine`] do the rest.
pub trait Transport: Send + Sync {
    /// Queues `request` and returns the future of its result.
    fn request(&self, request: Request, options: RequestOptions) -> ResponseFuture;

    /// Queues a notification.
    fn notify(&self, notification: Notification) -> Result<(), TransportError>;

    /// Closes the connection; pending requests fail with
    /// [`TransportError::Closed`]. Idempotent, and bounded in time.
    fn close(&self) -> BoxFuture<'static, ()>;

    /// Whether requests can still succeed: false once the peer is gone or
    /// the transport is closed.
    fn is_alive(&self) -> bool;

    /// What the transport does beyond moving messages (whether it sends
    /// request headers, whether its wire answers every request, whether it
    /// takes the shared `_meta`). The default, [`TransportProfile::new`],
    /// says none of these.
    fn profile(&self) -> TransportProfile {
        TransportProfile::new()
    }

    /// Where lines of JSON go out as they are, on a newline-delimited
    /// transport that takes them (see [`crate::LineSender`]); the default,
    /// `None`, says it does not.
    fn line_sender(&self) -> Option<crate::LineSender> {
        None
    }
}

impl<T: Transport + ?Sized> Transport for Arc<T> {
    fn request(&self, request: Request, options: RequestOptions) -> ResponseFuture {
        (**self).request(request, options)
    }
    fn notify(&self, notification: Notification) -> Result<(), TransportError> {
        (**self).notify(notification)
    }
    fn close(&self) -> BoxFuture<'static, ()> {
        (**self).close()
    }
    fn is_alive(&self) -> bool {
        (**self).is_alive()
    }
    fn profile(&self) -> TransportProfile {
        (**self).profile()
    }
    fn line_sender(&self) -> Option<crate::LineSender> {
        (**self).line_sender()
    }
}

impl<T: Transport + ?Sized> Transport for Box<T> {
    fn request(&self, request: Request, options: RequestOptions) -> ResponseFuture {
        (**self).request(request, options)
    }
    fn notify(&self, notification: Notification) -> Result<(), TransportError> {
        (**self).notify(notification)
    }
    fn close(&self) -> BoxFuture<'static, ()> {
        (**self).close()
    }
    fn is_alive(&self) -> bool {
        (**self).is_alive()
    }
    fn profile(&self) -> TransportProfile {
        (**self).profile()
    }
    fn line_sender(&self) -> Option<crate::LineSender> {
        (**self).line_sender()
    }
}

/// Makes fresh connections to the same server: starts the command again,
/// opens a new socket, makes a new fake server.
///
/// The client needs one to speak legacy to a server that died on the era
/// probe, and to restart a crashed server.
pub trait Connector: Send + Sync {
    /// Opens a new connection whose inbound traffic goes to `handlers`.
    fn connect(
        &self,
        handlers: ConnectionHandlers,
    ) -> BoxFuture<'static, Result<Arc<dyn Transport>, TransportError>>;
}

impl<F, Fut> Connector for F
where
    F: Fn(ConnectionHandlers) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Arc<dyn Transport>, TransportError>> + Send + 'static,
{
    fn connect(
        &self,
        handlers: ConnectionHandlers,
    ) -> BoxFuture<'static, Result<Arc<dyn Transport>, TransportError>> {
        Box::pin(self(handlers))
    }
}

impl<C: Connector + ?Sized> Connector for Arc<C> {
    fn connect(
        &self,
        handlers: ConnectionHandlers,
    ) -> BoxFuture<'static, Result<Arc<dyn Transport>, TransportError>> {
        (**self).connect(handlers)
    }
}
