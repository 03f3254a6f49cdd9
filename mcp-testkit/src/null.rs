//! The null transport: the whole contract, with nobody on the other end.
//!
//! It answers every request at once with an empty complete result
//! (`{"resultType":"complete"}`) and accepts every notification; after
//! [`close`](Transport::close) every request and notification fails with
//! [`TransportError::Closed`] and [`is_alive`](Transport::is_alive) is
//! false. It is the seed's example transport, and the smallest thing a
//! client can be built on in a test that does not care what the server
//! says.
//!
//! ```
//! use mcp_protocol::Request;
//! use mcp_testkit::null::NullTransport;
//! use mcp_transport::{RequestOptions, Transport, TransportError};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let transport = NullTransport::new();
//! let result = transport.request(Request::new(1, "tools/list", None), RequestOptions::new()).await;
//! assert_eq!(result.unwrap(), serde_json::json!({"resultType": "complete"}));
//!
//! transport.close().await;
//! let result = transport.request(Request::new(2, "tools/list", None), RequestOptions::new()).await;
//! assert_eq!(result, Err(TransportError::Closed));
//! assert!(!transport.is_alive());
//! # }
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use futures::future::BoxFuture;
use mcp_protocol::result::normalize_result;
use mcp_protocol::{Notification, Request};
use mcp_transport::{
    ConnectionHandlers, Connector, RequestOptions, ResponseFuture, Transport, TransportError,
};
use serde_json::json;

/// A transport that answers every request with an empty complete result.
///
/// A request whose cancellation token is already cancelled fails with
/// [`TransportError::Cancelled`], as it would on any transport.
#[derive(Debug)]
pub struct NullTransport {
    open: AtomicBool,
    requests: AtomicU64,
    notifications: AtomicU64,
}

impl Default for NullTransport {
    fn default() -> Self {
        Self::new()
    }
}

impl NullTransport {
    /// An open null transport.
    pub fn new() -> Self {
        NullTransport {
            open: AtomicBool::new(true),
            requests: AtomicU64::new(0),
            notifications: AtomicU64::new(0),
        }
    }

    /// An open null transport built the way every transport is. Nothing
    /// ever arrives, so `handlers` is not used.
    pub fn with_handlers(handlers: ConnectionHandlers) -> Self {
        drop(handlers);
        Self::new()
    }

    /// How many requests it answered.
    pub fn requests_answered(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// How many notifications it accepted.
    pub fn notifications_accepted(&self) -> u64 {
        self.notifications.load(Ordering::Relaxed)
    }
}

impl Transport for NullTransport {
    fn request(&self, request: Request, options: RequestOptions) -> ResponseFuture {
        drop(request);
        let answer = if !self.open.load(Ordering::Acquire) {
            Err(TransportError::Closed)
        } else if options
            .cancellation
            .as_ref()
            .is_some_and(|t| t.is_cancelled())
        {
            Err(TransportError::Cancelled)
        } else {
            self.requests.fetch_add(1, Ordering::Relaxed);
            Ok(normalize_result(json!({})))
        };
        Box::pin(std::future::ready(answer))
    }

    fn notify(&self, notification: Notification) -> Result<(), TransportError> {
        drop(notification);
        if !self.open.load(Ordering::Acquire) {
            return Err(TransportError::Closed);
        }
        self.notifications.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn close(&self) -> BoxFuture<'static, ()> {
        self.open.store(false, Ordering::Release);
        Box::pin(std::future::ready(()))
    }

    fn is_alive(&self) -> bool {
        self.open.load(Ordering::Acquire)
    }
}

/// Makes a new [`NullTransport`] for every connection.
#[derive(Clone, Copy, Debug, Default)]
pub struct NullConnector;

impl Connector for NullConnector {
    fn connect(
        &self,
        handlers: ConnectionHandlers,
    ) -> BoxFuture<'static, Result<Arc<dyn Transport>, TransportError>> {
        let transport: Arc<dyn Transport> = Arc::new(NullTransport::with_handlers(handlers));
        Box::pin(std::future::ready(Ok(transport)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_transport::CancellationToken;

    #[tokio::test]
    async fn answers_until_closed() {
        let t = NullTransport::new();
        let r = t
            .request(Request::new(1, "x", None), RequestOptions::new())
            .await;
        assert_eq!(r, Ok(json!({ "resultType": "complete" })));
        assert!(t.notify(Notification::new("n", None)).is_ok());
        assert_eq!(t.requests_answered(), 1);
        assert_eq!(t.notifications_accepted(), 1);
        t.close().await;
        t.close().await;
        assert!(!t.is_alive());
        let r = t
            .request(Request::new(2, "x", None), RequestOptions::new())
            .await;
        assert_eq!(r, Err(TransportError::Closed));
        assert_eq!(
            t.notify(Notification::new("n", None)),
            Err(TransportError::Closed)
        );
    }

    #[tokio::test]
    async fn cancelled_token_cancels() {
        let t = NullTransport::new();
        let token = CancellationToken::new();
        token.cancel();
        let r = t
            .request(
                Request::new(1, "x", None),
                RequestOptions::new().cancellation(token),
            )
            .await;
        assert_eq!(r, Err(TransportError::Cancelled));
    }

    #[tokio::test]
    async fn connector_makes_fresh_ones() {
        let c = NullConnector;
        let a = c.connect(ConnectionHandlers::discard()).await.unwrap();
        a.close().await;
        let b = c.connect(ConnectionHandlers::discard()).await.unwrap();
        assert!(!a.is_alive());
        assert!(b.is_alive());
    }
}
