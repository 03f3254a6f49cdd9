//! The connection a rule works on, and the helpers the rules share.

use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::{Message, Notification, Request, RequestId, Response};
use mcp_transport::{
    ConnectionHandlers, RequestOptions, ResponseFuture, Transport, TransportError,
};
use serde_json::{Value, json};
use tokio::time::{sleep, timeout};

use mcp_protocol::meta::PROGRESS_TOKEN;
use mcp_protocol::methods::NOTIFICATION_CANCELLED;

use super::{SENTINEL, Verdict, fail, no_peer};
use crate::{Peer, PeerFactory};

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
            reports_exit_status: harness.reports_exit_status,
            reports_stderr_tail: harness.reports_stderr_tail,
            unit: self.unit,
            sentinels: 0,
            early: Vec::new(),
        }
    }

    pub(super) async fn connect_discard(&self) -> Conn {
        self.connect(ConnectionHandlers::discard()).await
    }
}

/// How long [`Conn::expect_quiet`] waits, in units, before it sends its
/// sentinel; whatever the transport queues in that time reaches the peer
/// before the sentinel and is caught.
///
/// The messages it watches for are wire cancels that must not be sent (a
/// cancel after the answer, a cancel with `no_wire_cancel`). A correct
/// transport that did send one would queue it when it gave the request
/// up, before the future ended; a late one comes from a task the give-up
/// woke, a poll interval, or a timer of the transport's own. Five units is
/// half the 10-unit request timeout the rules set: a transport whose
/// cancel machinery lags by more than that cannot keep a 10-unit timeout
/// within the `timeout` rule's margin of 3 units either, so a lag that
/// slips past this wait is caught there. Under a paused clock the wait
/// costs nothing; on the real clock (100 ms units) it is half a second.
const QUIET_UNITS: u32 = 5;

/// A connection for one rule, with the helpers the rules share.
pub(super) struct Conn {
    pub(super) transport: Arc<dyn Transport>,
    pub(super) peer: Option<Box<dyn Peer>>,
    pub(super) reports_exit_status: bool,
    pub(super) reports_stderr_tail: bool,
    pub(super) unit: Duration,
    pub(super) sentinels: u64,
    /// Requests the peer saw before the one a rule waited for: requests
    /// sent together may reach it in any order (over HTTP each is a POST
    /// of its own), and a rule asks for them by id.
    early: Vec<Request>,
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
        let found = |r: &Request| r.id == id && r.method == method;
        if let Some(i) = self.early.iter().position(found) {
            return Ok(self.early.remove(i));
        }
        loop {
            match self.recv(&what).await? {
                Message::Request(r) if found(&r) => return Ok(r),
                Message::Request(r) if self.early.len() < 64 => self.early.push(r),
                other => {
                    return Err(fail(format!(
                        "expected {what}, the peer saw {}",
                        show(&other)
                    )));
                }
            }
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
            if n.method == NOTIFICATION_CANCELLED && target.as_ref() == Some(&id) {
                return Ok(());
            }
        }
        Err(fail(format!("expected {what}, the peer saw {}", show(&m))))
    }

    /// Checks that nothing reaches the peer: waits [`QUIET_UNITS`], then
    /// sends a notification, which must be the next thing the peer sees.
    pub(super) async fn expect_quiet(&mut self, after: &str) -> Result<(), Verdict> {
        sleep(self.u(QUIET_UNITS)).await;
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
    pub(super) async fn outcome<T>(
        &mut self,
        future: impl std::future::Future<Output = T>,
        n: u32,
        what: &str,
    ) -> Result<T, Verdict> {
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
    json!({ PROGRESS_TOKEN: token, "progress": n, "total": 100 })
}

pub(super) fn with_token(token: &str) -> Option<Value> {
    Some(json!({ "_meta": { PROGRESS_TOKEN: token } }))
}
