//! The connection a rule works on, and the helpers the rules share.

use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::{Message, Notification, Request, RequestId, Response};
use mcp_transport::{
    ConnectionHandlers, RequestOptions, ResponseFuture, Transport, TransportError,
};
use serde_json::{Value, json};
use tokio::time::{sleep, timeout};

use super::{CANCELLED, SENTINEL, Verdict, fail, no_peer};
use crate::contract::{Peer, PeerFactory};

pub(super) struct Ctx {
    pub(super) factory: Arc<dyn PeerFactory>,
    pub(super) unit: Duration,
}

impl Ctx {
    pub(super) async fn connect(&self, handlers: ConnectionHandlers) -> Conn {
        let harness = self.factory.connect(handlers).await;
        Conn {
            transport: harness.transport.clone(),
            peer: harness.peer,
            unit: self.unit,
            sentinels: 0,
        }
    }

    pub(super) async fn connect_discard(&self) -> Conn {
        self.connect(ConnectionHandlers::discard()).await
    }
}

/// A connection for one rule, with the helpers the rules share.
pub(super) struct Conn {
    pub(super) transport: Arc<dyn Transport>,
    pub(super) peer: Option<Box<dyn Peer>>,
    pub(super) unit: Duration,
    pub(super) sentinels: u64,
}

impl Conn {
    pub(super) fn u(&self, n: u32) -> Duration {
        self.unit * n
    }

    pub(super) fn peer(&mut self) -> Result<&mut Box<dyn Peer>, Verdict> {
        self.peer.as_mut().ok_or_else(no_peer)
    }

    pub(super) fn request(
        &self,
        id: impl Into<RequestId>,
        method: &str,
        params: Option<Value>,
    ) -> ResponseFuture {
        self.transport
            .request(Request::new(id, method, params), RequestOptions::new())
    }

    pub(super) fn request_with(
        &self,
        id: impl Into<RequestId>,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> ResponseFuture {
        self.transport
            .request(Request::new(id, method, params), options)
    }

    /// The next message the peer sees.
    pub(super) async fn recv(&mut self, what: &str) -> Result<Message, Verdict> {
        let within = self.u(30);
        let peer = self.peer()?;
        match timeout(within, peer.recv()).await {
            Ok(Some(m)) => Ok(m),
            Ok(None) => Err(fail(format!(
                "the connection ended while the peer waited for {what}"
            ))),
            Err(_) => Err(fail(format!(
                "the peer saw nothing within {within:?} while it waited for {what}"
            ))),
        }
    }

    /// The next message, which must be a request with this id and method.
    pub(super) async fn recv_request(
        &mut self,
        id: impl Into<RequestId>,
        method: &str,
    ) -> Result<Request, Verdict> {
        let id = id.into();
        let what = format!("request {id} ({method})");
        match self.recv(&what).await? {
            Message::Request(r) if r.id == id && r.method == method => Ok(r),
            other => Err(fail(format!(
                "expected {what}, the peer saw {}",
                show(&other)
            ))),
        }
    }

    /// The next message, which must be a wire cancel for `id`.
    pub(super) async fn recv_cancel(&mut self, id: impl Into<RequestId>) -> Result<(), Verdict> {
        let id = id.into();
        let what = format!("the wire cancel of request {id}");
        let m = self.recv(&what).await?;
        if let Message::Notification(n) = &m {
            let target = n
                .params
                .as_ref()
                .and_then(|p| p.get("requestId"))
                .and_then(RequestId::from_value);
            if n.method == CANCELLED && target.as_ref() == Some(&id) {
                return Ok(());
            }
        }
        Err(fail(format!("expected {what}, the peer saw {}", show(&m))))
    }

    /// Checks that nothing reaches the peer: waits a little, then sends a
    /// notification, which must be the next thing the peer sees.
    pub(super) async fn expect_quiet(&mut self, after: &str) -> Result<(), Verdict> {
        sleep(self.u(2)).await;
        self.sentinels += 1;
        let n = self.sentinels;
        self.transport
            .notify(Notification::new(SENTINEL, Some(json!({ "n": n }))))
            .map_err(|e| fail(format!("notify failed: {e}")))?;
        let m = self.recv("a sentinel notification").await?;
        match &m {
            Message::Notification(s)
                if s.method == SENTINEL
                    && s.params.as_ref().map(|p| &p["n"]) == Some(&json!(n)) =>
            {
                Ok(())
            }
            _ => Err(fail(format!(
                "nothing should have been sent {after}, but the peer saw {}",
                show(&m)
            ))),
        }
    }

    pub(super) async fn send(&mut self, message: impl Into<Message>) -> Result<(), Verdict> {
        self.peer()?.send(message.into()).await;
        Ok(())
    }

    pub(super) async fn answer(
        &mut self,
        id: impl Into<RequestId>,
        result: Value,
    ) -> Result<(), Verdict> {
        let id = id.into();
        self.send(Response { id, result }).await
    }

    pub(super) async fn notify_from_peer(
        &mut self,
        method: &str,
        params: Value,
    ) -> Result<(), Verdict> {
        self.send(Notification::new(method, Some(params))).await
    }

    /// Awaits a request's outcome, which must come within `n` units.
    pub(super) async fn outcome(
        &mut self,
        future: impl std::future::Future<Output = Result<Value, TransportError>>,
        n: u32,
        what: &str,
    ) -> Result<Result<Value, TransportError>, Verdict> {
        let within = self.u(n);
        timeout(within, future)
            .await
            .map_err(|_| fail(format!("{what}: no outcome within {within:?}")))
    }

    /// Awaits a result, which must be `Ok` and equal `expected`.
    pub(super) async fn expect_result(
        &mut self,
        future: impl std::future::Future<Output = Result<Value, TransportError>>,
        expected: Value,
        what: &str,
    ) -> Result<(), Verdict> {
        match self.outcome(future, 30, what).await? {
            Ok(v) if v == expected => Ok(()),
            Ok(v) => Err(fail(format!(
                "{what}: expected the result {expected}, got {v}"
            ))),
            Err(e) => Err(fail(format!(
                "{what}: expected the result {expected}, got the error {e:?}"
            ))),
        }
    }

    /// Closes the transport at the end of a rule (bounded).
    pub(super) async fn end(self) {
        let _ = timeout(self.u(50), self.transport.close()).await;
        drop(self.peer);
    }
}

pub(super) fn show(m: &Message) -> String {
    m.to_value().to_string()
}

pub(super) fn complete(mut v: Value) -> Value {
    v["resultType"] = json!("complete");
    v
}

pub(super) fn spawn(
    future: ResponseFuture,
) -> tokio::task::JoinHandle<Result<Value, TransportError>> {
    tokio::spawn(future)
}

pub(super) async fn joined(
    handle: tokio::task::JoinHandle<Result<Value, TransportError>>,
) -> Result<Value, TransportError> {
    match handle.await {
        Ok(r) => r,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

pub(super) fn progress(token: &str, n: u64) -> Value {
    json!({ "progressToken": token, "progress": n, "total": 100 })
}

pub(super) fn with_token(token: &str) -> Option<Value> {
    Some(json!({ "_meta": { "progressToken": token } }))
}
