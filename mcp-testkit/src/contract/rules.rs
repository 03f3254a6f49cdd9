//! The rules, one function each.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use mcp_protocol::{
    ErrorObject, ErrorResponse, Message, Notification, Request, RequestId, Response,
};
use mcp_transport::{
    CancellationToken, ConnectionHandlers, Listener, ListenerStream, RequestOptions,
    ResponseFuture, ServerRequestHandler, Transport, TransportError,
};
use serde_json::{Value, json};
use tokio::time::{Instant, sleep, timeout};

use super::{DIE_CODE, DIE_STDERR, Outcome, Peer, PeerFactory};

const CANCELLED: &str = "notifications/cancelled";
const PROGRESS: &str = "notifications/progress";
const SENTINEL: &str = "notifications/contract/sentinel";
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

pub(super) struct Rule {
    pub(super) name: &'static str,
    pub(super) summary: &'static str,
    run: fn(Ctx) -> BoxFuture<'static, Checked>,
}

macro_rules! rule {
    ($name:literal, $summary:literal, $f:ident) => {
        Rule {
            name: $name,
            summary: $summary,
            run: |ctx| Box::pin($f(ctx)),
        }
    };
}

pub(super) const RULES: &[Rule] = &[
    rule!(
        "ids_not_renumbered",
        "the peer sees the id the client chose (numbers and strings) and answers correlate on it",
        ids_not_renumbered
    ),
    rule!(
        "result_normalized",
        "the future yields the result member, an absent resultType defaulted to \"complete\"",
        result_normalized
    ),
    rule!(
        "rpc_error_verbatim",
        "a JSON-RPC error answer is Rpc with code, message and data verbatim",
        rpc_error_verbatim
    ),
    rule!(
        "timeout",
        "a timeout gives Timeout, sends the wire cancel, and forgets the request",
        timeout_rule
    ),
    rule!(
        "timeout_resets_on_progress",
        "progress restarts the timeout only when the options ask for it",
        timeout_resets_on_progress
    ),
    rule!(
        "hard_maximum",
        "the hard maximum holds however much progress arrives",
        hard_maximum
    ),
    rule!(
        "cancel_by_token",
        "cancelling the token gives Cancelled at once and sends the wire cancel",
        cancel_by_token
    ),
    rule!(
        "drop_sends_cancel",
        "dropping the future (polled or not) sends the wire cancel",
        drop_sends_cancel
    ),
    rule!(
        "no_cancel_after_answer",
        "a cancel or drop after the answer arrived sends nothing",
        no_cancel_after_answer
    ),
    rule!(
        "no_wire_cancel",
        "with no_wire_cancel, cancel, drop and timeout send nothing",
        no_wire_cancel
    ),
    rule!(
        "ordering",
        "request and notify share one ordered queue",
        ordering
    ),
    rule!(
        "duplicate_id_refused",
        "an id already in flight is refused with DuplicateId and not sent",
        duplicate_id_refused
    ),
    rule!(
        "peer_death",
        "the peer dying fails pending and later requests with ServerGone; is_alive turns false",
        peer_death
    ),
    rule!(
        "close",
        "close is idempotent and bounded; pending and later requests and notifications get Closed",
        close_rule
    ),
    rule!(
        "server_speaks_first",
        "a notification sent before any request reaches the connection listener",
        server_speaks_first
    ),
    rule!(
        "notification_routing",
        "notifications tied to a live request (progress token, subscription id) reach its listener, others the connection's, never a result",
        notification_routing
    ),
    rule!(
        "listeners_cannot_block",
        "a listener that panics or is never read does not hold up other requests",
        listeners_cannot_block
    ),
    rule!(
        "server_requests",
        "server requests reach the handler concurrently, answers go back, an inbound cancel aborts the handler",
        server_requests
    ),
    rule!(
        "unhandled_server_request",
        "without a handler a server request is answered -32601",
        unhandled_server_request
    ),
    rule!(
        "thousand_concurrent",
        "a thousand concurrent requests answered out of order all correlate",
        thousand_concurrent
    ),
    rule!(
        "malformed_line_skipped",
        "a malformed line is skipped and the next answer still correlates",
        malformed_line_skipped
    ),
];

/// Runs one rule on its own task, so a panic becomes a failure, bounded
/// in time.
pub(super) async fn run_one(rule: &Rule, factory: Arc<dyn PeerFactory>, unit: Duration) -> Outcome {
    let ctx = Ctx { factory, unit };
    let budget = unit * 400;
    let task = tokio::spawn((rule.run)(ctx));
    let abort = task.abort_handle();
    match timeout(budget, task).await {
        Ok(Ok(Ok(()))) => Outcome::Passed,
        Ok(Ok(Err(Verdict::Fail(why)))) => Outcome::Failed(why),
        Ok(Ok(Err(Verdict::NotApplicable(why)))) => Outcome::NotApplicable(why),
        Ok(Err(join)) => match join.try_into_panic() {
            Ok(payload) => Outcome::Failed(format!("panicked: {}", panic_text(&payload))),
            Err(e) => Outcome::Failed(format!("the rule's task failed: {e}")),
        },
        Err(_) => {
            abort.abort();
            Outcome::Failed(format!(
                "did not finish within {budget:?} (a hang: an answer or close that never came)"
            ))
        }
    }
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a non-text panic)".to_owned()
    }
}

enum Verdict {
    Fail(String),
    NotApplicable(String),
}

type Checked = Result<(), Verdict>;

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(Verdict::Fail(format!($($fmt)+)));
        }
    };
}

fn fail(why: impl Into<String>) -> Verdict {
    Verdict::Fail(why.into())
}

fn no_peer() -> Verdict {
    Verdict::NotApplicable("the harness has no peer".into())
}

struct Ctx {
    factory: Arc<dyn PeerFactory>,
    unit: Duration,
}

impl Ctx {
    async fn connect(&self, handlers: ConnectionHandlers) -> Conn {
        let harness = self.factory.connect(handlers).await;
        Conn {
            transport: harness.transport.clone(),
            peer: harness.peer,
            unit: self.unit,
            sentinels: 0,
        }
    }

    async fn connect_discard(&self) -> Conn {
        self.connect(ConnectionHandlers::discard()).await
    }
}

/// A connection for one rule, with the helpers the rules share.
struct Conn {
    transport: Arc<dyn Transport>,
    peer: Option<Box<dyn Peer>>,
    unit: Duration,
    sentinels: u64,
}

impl Conn {
    fn u(&self, n: u32) -> Duration {
        self.unit * n
    }

    fn peer(&mut self) -> Result<&mut Box<dyn Peer>, Verdict> {
        self.peer.as_mut().ok_or_else(no_peer)
    }

    fn request(
        &self,
        id: impl Into<RequestId>,
        method: &str,
        params: Option<Value>,
    ) -> ResponseFuture {
        self.transport
            .request(Request::new(id, method, params), RequestOptions::new())
    }

    fn request_with(
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
    async fn recv(&mut self, what: &str) -> Result<Message, Verdict> {
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
    async fn recv_request(
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
    async fn recv_cancel(&mut self, id: impl Into<RequestId>) -> Result<(), Verdict> {
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
    async fn expect_quiet(&mut self, after: &str) -> Result<(), Verdict> {
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

    async fn send(&mut self, message: impl Into<Message>) -> Result<(), Verdict> {
        self.peer()?.send(message.into()).await;
        Ok(())
    }

    async fn answer(&mut self, id: impl Into<RequestId>, result: Value) -> Result<(), Verdict> {
        let id = id.into();
        self.send(Response { id, result }).await
    }

    async fn notify_from_peer(&mut self, method: &str, params: Value) -> Result<(), Verdict> {
        self.send(Notification::new(method, Some(params))).await
    }

    /// Awaits a request's outcome, which must come within `n` units.
    async fn outcome(
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
    async fn expect_result(
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
    async fn end(self) {
        let _ = timeout(self.u(50), self.transport.close()).await;
        drop(self.peer);
    }
}

fn show(m: &Message) -> String {
    m.to_value().to_string()
}

fn complete(mut v: Value) -> Value {
    v["resultType"] = json!("complete");
    v
}

fn spawn(future: ResponseFuture) -> tokio::task::JoinHandle<Result<Value, TransportError>> {
    tokio::spawn(future)
}

async fn joined(
    handle: tokio::task::JoinHandle<Result<Value, TransportError>>,
) -> Result<Value, TransportError> {
    match handle.await {
        Ok(r) => r,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

fn progress(token: &str, n: u64) -> Value {
    json!({ "progressToken": token, "progress": n, "total": 100 })
}

fn with_token(token: &str) -> Option<Value> {
    Some(json!({ "_meta": { "progressToken": token } }))
}

// ---------------------------------------------------------------- rules

async fn ids_not_renumbered(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    let ids: Vec<RequestId> = vec![
        RequestId::Number(7),
        RequestId::String("req-α/1".into()),
        RequestId::Number(0),
        RequestId::Number(i64::MAX),
        RequestId::Number(-5),
        RequestId::String(String::new()),
        RequestId::String("42".into()),
        RequestId::Number(42),
    ];
    let mut futures = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        futures.push(c.request(id.clone(), "contract/echo", Some(json!({ "i": i }))));
    }
    for (i, id) in ids.iter().enumerate() {
        let r = c.recv_request(id.clone(), "contract/echo").await?;
        ensure!(
            r.params == Some(json!({ "i": i })),
            "request {id} reached the peer with params {:?}",
            r.params
        );
    }
    for (i, id) in ids.iter().enumerate().rev() {
        c.answer(id.clone(), json!({ "i": i, "id": id })).await?;
    }
    for (i, (f, id)) in futures.into_iter().zip(&ids).enumerate() {
        c.expect_result(
            f,
            complete(json!({ "i": i, "id": id })),
            &format!("request {id}"),
        )
        .await?;
    }
    c.end().await;
    Ok(())
}

async fn result_normalized(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    if c.peer.is_none() {
        let r = c
            .outcome(c.request(1, "tools/list", None), 30, "request 1")
            .await?;
        let v = r.map_err(|e| fail(format!("expected a result, got {e:?}")))?;
        ensure!(
            v.get("resultType") == Some(&json!("complete")),
            "the result {v} has no resultType \"complete\""
        );
        c.end().await;
        return Ok(());
    }
    let cases = [
        (
            json!({ "tools": [] }),
            json!({ "tools": [], "resultType": "complete" }),
        ),
        (json!({}), json!({ "resultType": "complete" })),
        (
            json!({ "resultType": "input_required", "inputRequests": {}, "requestState": "s" }),
            json!({ "resultType": "input_required", "inputRequests": {}, "requestState": "s" }),
        ),
        (
            json!({ "resultType": "complete", "_meta": { "x": 1 } }),
            json!({ "resultType": "complete", "_meta": { "x": 1 } }),
        ),
    ];
    for (i, (wire, expected)) in cases.into_iter().enumerate() {
        let id = i as i64 + 1;
        let f = c.request(id, "contract/result", None);
        c.recv_request(id, "contract/result").await?;
        c.answer(id, wire.clone()).await?;
        c.expect_result(f, expected, &format!("the answer {wire}"))
            .await?;
    }
    c.end().await;
    Ok(())
}

async fn rpc_error_verbatim(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    let cases = [
        ErrorObject::new(-32022, "Unsupported protocol version").with_data(json!({
            "supported": ["2025-06-18", "2025-11-25"],
            "requested": "2026-07-28",
            "nested": { "a": [1, 2.5, null, true, "ü"] },
        })),
        ErrorObject::new(-32601, "Method not found"),
        ErrorObject::new(42, "a custom code").with_data(json!("just a string")),
        ErrorObject::new(-32000, "").with_data(json!(null)),
    ];
    for (i, error) in cases.into_iter().enumerate() {
        let id = i as i64 + 1;
        let f = c.request(id, "contract/error", None);
        c.recv_request(id, "contract/error").await?;
        c.send(ErrorResponse {
            id: Some(id.into()),
            error: error.clone(),
        })
        .await?;
        let got = c.outcome(f, 30, "the error answer").await?;
        // A `"data": null` on the wire reads as no data in JSON-RPC terms;
        // either form is verbatim.
        let ok = match &got {
            Err(TransportError::Rpc {
                code,
                message,
                data,
            }) => {
                *code == error.code
                    && *message == error.message
                    && (*data == error.data || (error.data == Some(Value::Null) && data.is_none()))
            }
            _ => false,
        };
        ensure!(ok, "the error answer {error:?} came out as {got:?}");
    }
    c.end().await;
    Ok(())
}

async fn timeout_rule(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    let limit = c.u(10);
    let start = Instant::now();
    let h = spawn(c.request_with(
        1,
        "contract/slow",
        None,
        RequestOptions::new().timeout(limit),
    ));
    c.recv_request(1, "contract/slow").await?;
    let got = c
        .outcome(joined(h), 40, "the request with a timeout")
        .await?;
    let elapsed = start.elapsed();
    match &got {
        Err(TransportError::Timeout { method, after }) => {
            ensure!(
                method == "contract/slow",
                "Timeout names the method {method:?}"
            );
            ensure!(
                *after == limit,
                "Timeout says {after:?}, the limit was {limit:?}"
            );
        }
        other => return Err(fail(format!("expected Timeout, got {other:?}"))),
    }
    ensure!(
        elapsed >= limit,
        "the timeout of {limit:?} fired after {elapsed:?}"
    );
    c.recv_cancel(1).await?;
    // The late answer must be ignored, and the id free again.
    c.answer(1, json!({ "late": true })).await?;
    let f = c.request(2, "contract/next", None);
    c.recv_request(2, "contract/next").await?;
    c.answer(2, json!({ "n": 2 })).await?;
    c.expect_result(
        f,
        complete(json!({ "n": 2 })),
        "the request after a timeout",
    )
    .await?;
    let f = c.request(1, "contract/again", None);
    c.recv_request(1, "contract/again").await?;
    c.answer(1, json!({ "again": true })).await?;
    c.expect_result(
        f,
        complete(json!({ "again": true })),
        "a new request reusing the timed-out id",
    )
    .await?;
    c.end().await;
    Ok(())
}

async fn timeout_resets_on_progress(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    // With resets: progress every 5 units keeps a 10-unit timeout alive.
    let options = RequestOptions::new()
        .timeout(c.u(10))
        .reset_timeout_on_progress(c.u(200));
    let h = spawn(c.request_with(1, "contract/long", with_token("p-1"), options));
    c.recv_request(1, "contract/long").await?;
    for k in 1..=3 {
        sleep(c.u(5)).await;
        ensure!(
            !h.is_finished(),
            "the request ended after {} units although progress arrived every 5 units: {:?}",
            5 * k,
            joined(h).await
        );
        c.notify_from_peer(PROGRESS, progress("p-1", k)).await?;
    }
    sleep(c.u(5)).await;
    ensure!(
        !h.is_finished(),
        "the request ended 20 units in (the timeout is 10), 5 units after the last progress: {:?}",
        joined(h).await
    );
    c.answer(1, json!({ "done": true })).await?;
    c.expect_result(
        joined(h),
        complete(json!({ "done": true })),
        "the long request",
    )
    .await?;

    // Without: progress does not extend the timeout.
    let limit = c.u(10);
    let start = Instant::now();
    let h = spawn(c.request_with(
        2,
        "contract/long",
        with_token("p-2"),
        RequestOptions::new().timeout(limit),
    ));
    c.recv_request(2, "contract/long").await?;
    sleep(c.u(6)).await;
    c.notify_from_peer(PROGRESS, progress("p-2", 1)).await?;
    let got = c
        .outcome(joined(h), 40, "the request without resets")
        .await?;
    let elapsed = start.elapsed();
    ensure!(
        matches!(got, Err(TransportError::Timeout { .. })),
        "expected Timeout without resets, got {got:?}"
    );
    ensure!(
        elapsed < c.u(15),
        "without resets the timeout of {limit:?} fired after {elapsed:?}: progress extended it"
    );
    c.recv_cancel(2).await?;
    c.end().await;
    Ok(())
}

async fn hard_maximum(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    let max = c.u(30);
    let options = RequestOptions::new()
        .timeout(c.u(10))
        .reset_timeout_on_progress(max);
    let start = Instant::now();
    let h = spawn(c.request_with(1, "contract/endless", with_token("p-max"), options));
    c.recv_request(1, "contract/endless").await?;
    let mut k = 0;
    while !h.is_finished() && k < 20 {
        sleep(c.u(5)).await;
        k += 1;
        if !h.is_finished() {
            c.notify_from_peer(PROGRESS, progress("p-max", k)).await?;
        }
    }
    let got = c.outcome(joined(h), 20, "the endless request").await?;
    let elapsed = start.elapsed();
    match &got {
        Err(TransportError::Timeout { after, .. }) => {
            ensure!(
                *after == max,
                "Timeout says {after:?}; the hard maximum was {max:?}"
            )
        }
        other => {
            return Err(fail(format!(
                "expected Timeout at the hard maximum, got {other:?}"
            )));
        }
    }
    ensure!(
        elapsed >= max && elapsed < max + c.u(10),
        "the hard maximum of {max:?} fired after {elapsed:?}"
    );
    c.recv_cancel(1).await?;
    c.end().await;
    Ok(())
}

async fn cancel_by_token(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    let token = CancellationToken::new();
    let h = spawn(c.request_with(
        1,
        "contract/slow",
        None,
        RequestOptions::new().cancellation(token.clone()),
    ));
    c.recv_request(1, "contract/slow").await?;
    token.cancel();
    let got = c.outcome(joined(h), 5, "the cancelled request").await?;
    ensure!(
        matches!(got, Err(TransportError::Cancelled)),
        "expected Cancelled, got {got:?}"
    );
    c.recv_cancel(1).await?;
    // A token cancelled before the request is sent cancels it too.
    let token = CancellationToken::new();
    token.cancel();
    let f = c.request_with(
        2,
        "contract/slow",
        None,
        RequestOptions::new().cancellation(token),
    );
    let got = c.outcome(f, 5, "a request with a cancelled token").await?;
    ensure!(
        matches!(got, Err(TransportError::Cancelled)),
        "a request whose token was already cancelled gave {got:?}"
    );
    c.end().await;
    Ok(())
}

async fn drop_sends_cancel(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    let f = c.request(1, "contract/slow", None);
    c.recv_request(1, "contract/slow").await?;
    drop(f);
    c.recv_cancel(1).await?;
    let h = spawn(c.request(2, "contract/slow", None));
    c.recv_request(2, "contract/slow").await?;
    sleep(c.u(1)).await;
    h.abort();
    c.recv_cancel(2).await?;
    c.end().await;
    Ok(())
}

async fn no_cancel_after_answer(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    let token = CancellationToken::new();
    let f = c.request_with(
        1,
        "contract/quick",
        None,
        RequestOptions::new().cancellation(token.clone()),
    );
    c.recv_request(1, "contract/quick").await?;
    c.answer(1, json!({})).await?;
    c.expect_result(f, complete(json!({})), "request 1").await?;
    token.cancel();
    c.expect_quiet("for a token cancelled after the answer")
        .await?;

    // Answered but never polled, then dropped.
    let unpolled = c.request(2, "contract/quick", None);
    c.recv_request(2, "contract/quick").await?;
    c.answer(2, json!({})).await?;
    // A round trip behind it proves the answer was read.
    let f = c.request(3, "contract/quick", None);
    c.recv_request(3, "contract/quick").await?;
    c.answer(3, json!({})).await?;
    c.expect_result(f, complete(json!({})), "request 3").await?;
    drop(unpolled);
    c.expect_quiet("for a dropped future whose answer had arrived")
        .await?;
    c.end().await;
    Ok(())
}

async fn no_wire_cancel(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    let token = CancellationToken::new();
    let options = RequestOptions::new()
        .no_wire_cancel()
        .cancellation(token.clone());
    let h = spawn(c.request_with(1, "initialize", None, options));
    c.recv_request(1, "initialize").await?;
    token.cancel();
    let got = c.outcome(joined(h), 5, "the cancelled request").await?;
    ensure!(
        matches!(got, Err(TransportError::Cancelled)),
        "expected Cancelled, got {got:?}"
    );
    let f = c.request_with(
        2,
        "initialize",
        None,
        RequestOptions::new().no_wire_cancel(),
    );
    c.recv_request(2, "initialize").await?;
    drop(f);
    let f = c.request_with(
        3,
        "initialize",
        None,
        RequestOptions::new().no_wire_cancel().timeout(c.u(5)),
    );
    c.recv_request(3, "initialize").await?;
    let got = c.outcome(f, 30, "the request with a timeout").await?;
    ensure!(
        matches!(got, Err(TransportError::Timeout { .. })),
        "expected Timeout, got {got:?}"
    );
    c.expect_quiet("for requests with no_wire_cancel").await?;
    c.end().await;
    Ok(())
}

async fn ordering(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    let notify = |c: &Conn, n: u64| {
        c.transport
            .notify(Notification::new(
                "notifications/initialized",
                Some(json!({ "n": n })),
            ))
            .map_err(|e| fail(format!("notify failed: {e}")))
    };
    notify(&c, 1)?;
    let f1 = c.request(1, "contract/first", None);
    notify(&c, 2)?;
    let f2 = c.request(2, "contract/second", None);
    notify(&c, 3)?;
    for (k, expect_request) in [(1, false), (1, true), (2, false), (2, true), (3, false)] {
        let m = c.recv("the next message in order").await?;
        let ok = match (&m, expect_request) {
            (Message::Notification(n), false) => n.params == Some(json!({ "n": k })),
            (Message::Request(r), true) => r.id == RequestId::Number(k),
            _ => false,
        };
        let expected = if expect_request {
            format!("request {k}")
        } else {
            format!("notification {k}")
        };
        ensure!(
            ok,
            "out of order: expected {expected} next, the peer saw {}",
            show(&m)
        );
    }
    c.answer(1, json!({})).await?;
    c.answer(2, json!({})).await?;
    c.expect_result(f1, complete(json!({})), "request 1")
        .await?;
    c.expect_result(f2, complete(json!({})), "request 2")
        .await?;
    c.end().await;
    Ok(())
}

async fn duplicate_id_refused(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    let first = c.request(5, "contract/first", None);
    c.recv_request(5, "contract/first").await?;
    let second = c.request(5, "contract/second", None);
    let got = c
        .outcome(second, 10, "the second request with id 5")
        .await?;
    ensure!(
        matches!(&got, Err(TransportError::DuplicateId(id)) if *id == RequestId::Number(5)),
        "a second request with an id in flight gave {got:?}, not DuplicateId"
    );
    c.expect_quiet("for a refused duplicate").await?;
    c.answer(5, json!({ "first": true })).await?;
    c.expect_result(
        first,
        complete(json!({ "first": true })),
        "the first request",
    )
    .await?;
    c.end().await;
    Ok(())
}

async fn peer_death(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    ensure!(c.transport.is_alive(), "a new transport is not alive");
    let a = spawn(c.request(1, "contract/slow", None));
    let b = spawn(c.request_with(
        2,
        "contract/slow",
        None,
        RequestOptions::new().timeout(c.u(200)),
    ));
    c.recv_request(1, "contract/slow").await?;
    c.recv_request(2, "contract/slow").await?;
    c.peer()?.die().await;
    for (id, h) in [(1, a), (2, b)] {
        let got = c
            .outcome(joined(h), 30, &format!("pending request {id}"))
            .await?;
        check_gone(&got, &format!("pending request {id}"))?;
    }
    let deadline = Instant::now() + c.u(30);
    while c.transport.is_alive() && Instant::now() < deadline {
        sleep(c.u(1) / 10).await;
    }
    ensure!(
        !c.transport.is_alive(),
        "is_alive is still true after the peer died"
    );
    let got = c
        .outcome(c.request(3, "contract/later", None), 10, "a later request")
        .await?;
    check_gone(&got, "a request after the death")?;
    c.end().await;
    Ok(())
}

fn check_gone(got: &Result<Value, TransportError>, what: &str) -> Checked {
    let Err(TransportError::ServerGone(info)) = got else {
        return Err(fail(format!("{what}: expected ServerGone, got {got:?}")));
    };
    if let Some(exit) = &info.exit {
        ensure!(
            exit.code.is_none() || exit.code == Some(DIE_CODE),
            "{what}: the server exited with code {DIE_CODE}, ServerGone says {exit}"
        );
    }
    if let Some(tail) = &info.stderr_tail {
        ensure!(
            tail.contains(DIE_STDERR),
            "{what}: the server's stderr ended {DIE_STDERR:?}, ServerGone's tail is {tail:?}"
        );
    }
    Ok(())
}

async fn close_rule(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    ensure!(c.transport.is_alive(), "a new transport is not alive");
    c.transport
        .notify(Notification::new("notifications/initialized", None))
        .map_err(|e| fail(format!("notify on a live transport failed: {e}")))?;
    let pending = if c.peer.is_some() {
        c.recv("the notification").await?;
        let h = spawn(c.request(1, "contract/slow", None));
        c.recv_request(1, "contract/slow").await?;
        Some(h)
    } else {
        None
    };
    let within = c.u(20);
    timeout(within, c.transport.close())
        .await
        .map_err(|_| fail(format!("close did not finish within {within:?}")))?;
    if let Some(h) = pending {
        let got = c.outcome(joined(h), 10, "the pending request").await?;
        ensure!(
            matches!(got, Err(TransportError::Closed)),
            "a pending request got {got:?} at close, not Closed"
        );
    }
    ensure!(!c.transport.is_alive(), "is_alive is true after close");
    let got = c
        .outcome(
            c.request(2, "contract/later", None),
            10,
            "a request after close",
        )
        .await?;
    ensure!(
        matches!(got, Err(TransportError::Closed)),
        "a request after close got {got:?}, not Closed"
    );
    let sent = c
        .transport
        .notify(Notification::new("notifications/late", None));
    ensure!(
        matches!(sent, Err(TransportError::Closed)),
        "a notification after close gave {sent:?}, not Err(Closed)"
    );
    timeout(within, c.transport.close())
        .await
        .map_err(|_| fail(format!("a second close did not finish within {within:?}")))?;
    c.end().await;
    Ok(())
}

/// The connection listener's notifications up to a sentinel, without the
/// transport's own `$/` events.
async fn until_sentinel(
    stream: &mut ListenerStream,
    within: Duration,
) -> Result<Vec<Notification>, Verdict> {
    let mut seen = Vec::new();
    let deadline = Instant::now() + within;
    loop {
        let n = tokio::time::timeout_at(deadline, stream.recv())
            .await
            .map_err(|_| {
                fail(format!(
                    "the connection listener did not get the sentinel within {within:?}; it got {:?}",
                    methods(&seen)
                ))
            })?
            .ok_or_else(|| fail("the connection listener ended"))?;
        if n.method == SENTINEL {
            return Ok(seen);
        }
        if !n.method.starts_with("$/") {
            seen.push(n);
        }
    }
}

fn methods(ns: &[Notification]) -> Vec<&str> {
    ns.iter().map(|n| n.method.as_str()).collect()
}

async fn server_speaks_first(ctx: Ctx) -> Checked {
    let (listener, mut stream) = Listener::channel(64);
    let mut c = ctx.connect(ConnectionHandlers::new(listener)).await;
    c.peer()?;
    c.notify_from_peer("notifications/tools/list_changed", json!({}))
        .await?;
    c.notify_from_peer(SENTINEL, json!({})).await?;
    let seen = until_sentinel(&mut stream, c.u(30)).await?;
    ensure!(
        methods(&seen) == ["notifications/tools/list_changed"],
        "the connection listener got {:?}",
        methods(&seen)
    );
    c.end().await;
    Ok(())
}

async fn notification_routing(ctx: Ctx) -> Checked {
    let (listener, mut conn_stream) = Listener::channel(64);
    let mut c = ctx.connect(ConnectionHandlers::new(listener)).await;
    c.peer()?;
    let (la, mut a_stream) = Listener::channel(64);
    let (lb, mut b_stream) = Listener::channel(64);
    let fa = c.request_with(
        1,
        "tools/call",
        with_token("tok-1"),
        RequestOptions::new().listener(la),
    );
    let fb = c.request_with(
        "sub-2",
        "subscriptions/listen",
        None,
        RequestOptions::new().listener(lb),
    );
    c.recv_request(1, "tools/call").await?;
    c.recv_request("sub-2", "subscriptions/listen").await?;
    c.notify_from_peer(PROGRESS, progress("tok-1", 1)).await?;
    c.notify_from_peer(
        "notifications/message",
        json!({ "level": "info", "data": "working", "_meta": { "progressToken": "tok-1" } }),
    )
    .await?;
    c.notify_from_peer(
        "notifications/resources/updated",
        json!({ "uri": "file:///a", "_meta": { SUBSCRIPTION_ID: "sub-2" } }),
    )
    .await?;
    c.notify_from_peer("notifications/tools/list_changed", json!({}))
        .await?;
    c.notify_from_peer(
        "notifications/resources/updated",
        json!({ "uri": "file:///b", "_meta": { SUBSCRIPTION_ID: "sub-unknown" } }),
    )
    .await?;
    c.notify_from_peer(PROGRESS, progress("tok-unknown", 1))
        .await?;
    c.answer(1, json!({ "a": 1 })).await?;
    c.answer("sub-2", json!({ "b": 2 })).await?;
    c.expect_result(
        fa,
        complete(json!({ "a": 1 })),
        "the request with a progress token",
    )
    .await?;
    c.expect_result(fb, complete(json!({ "b": 2 })), "the subscription request")
        .await?;
    // Progress for a finished request is dropped quietly.
    c.notify_from_peer(PROGRESS, progress("tok-1", 2)).await?;
    c.notify_from_peer(SENTINEL, json!({})).await?;

    let conn = until_sentinel(&mut conn_stream, c.u(30)).await?;
    let uri_b = conn
        .iter()
        .any(|n| n.params.as_ref().map(|p| &p["uri"]) == Some(&json!("file:///b")));
    ensure!(
        methods(&conn)
            == [
                "notifications/tools/list_changed",
                "notifications/resources/updated"
            ]
            && uri_b,
        "the connection listener got {:?}; expected list_changed and the update of an unknown subscription only",
        conn.iter()
            .map(|n| Message::from(n.clone()).to_value())
            .collect::<Vec<_>>()
    );
    let a: Vec<Notification> = std::iter::from_fn(|| a_stream.try_recv()).collect();
    ensure!(
        methods(&a) == [PROGRESS, "notifications/message"],
        "the request's listener got {:?}; expected its progress and its message",
        methods(&a)
    );
    ensure!(
        a[0].params.as_ref().map(|p| &p["progress"]) == Some(&json!(1)),
        "the request's listener got the progress {:?}",
        a[0].params
    );
    let b: Vec<Notification> = std::iter::from_fn(|| b_stream.try_recv()).collect();
    ensure!(
        methods(&b) == ["notifications/resources/updated"]
            && b[0].params.as_ref().map(|p| &p["uri"]) == Some(&json!("file:///a")),
        "the subscription's listener got {:?}",
        methods(&b)
    );
    c.end().await;
    Ok(())
}

async fn listeners_cannot_block(ctx: Ctx) -> Checked {
    let listener = Listener::from_fn(4, |n| {
        if n.method != SENTINEL {
            panic!(
                "a connection listener panics on purpose (the contract suite checks this is survived)"
            );
        }
    });
    let mut c = ctx.connect(ConnectionHandlers::new(listener)).await;
    c.peer()?;
    // A request listener whose queue is never read.
    let (blocked, _unread) = Listener::channel(1);
    let fa = c.request_with(
        1,
        "tools/call",
        with_token("tok-b"),
        RequestOptions::new().listener(blocked),
    );
    let fb = c.request(2, "tools/list", None);
    c.recv_request(1, "tools/call").await?;
    c.recv_request(2, "tools/list").await?;
    for k in 0..50 {
        c.notify_from_peer(PROGRESS, progress("tok-b", k)).await?;
    }
    // One panic is enough: request 3 below shows the read loop survived.
    c.notify_from_peer("notifications/tools/list_changed", json!({}))
        .await?;
    c.answer(2, json!({ "b": 2 })).await?;
    c.answer(1, json!({ "a": 1 })).await?;
    c.expect_result(fb, complete(json!({ "b": 2 })), "the other request")
        .await?;
    c.expect_result(
        fa,
        complete(json!({ "a": 1 })),
        "the request with the unread listener",
    )
    .await?;
    let f = c.request(3, "tools/list", None);
    c.recv_request(3, "tools/list").await?;
    c.answer(3, json!({ "c": 3 })).await?;
    c.expect_result(f, complete(json!({ "c": 3 })), "a request after the panics")
        .await?;
    c.end().await;
    Ok(())
}

/// The handler the server-request rule installs.
struct TestHandler {
    started: tokio::sync::mpsc::UnboundedSender<RequestId>,
    aborted: tokio::sync::mpsc::UnboundedSender<RequestId>,
}

struct OnDrop(Option<(tokio::sync::mpsc::UnboundedSender<RequestId>, RequestId)>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        if let Some((tx, id)) = self.0.take() {
            let _ = tx.send(id);
        }
    }
}

impl ServerRequestHandler for TestHandler {
    fn handle(&self, request: Request) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        match request.method.as_str() {
            "ping" => std::future::ready(Ok(json!({}))).boxed(),
            "roots/list" => std::future::ready(Ok(json!({
                "roots": [{ "uri": "file:///tmp", "name": "tmp" }]
            })))
            .boxed(),
            "elicitation/create" => std::future::ready(Err(ErrorObject::new(-32042, "declined")
                .with_data(json!({ "why": "the contract suite" }))))
            .boxed(),
            "contract/slow" => {
                let _ = self.started.send(request.id.clone());
                let guard = OnDrop(Some((self.aborted.clone(), request.id)));
                async move {
                    let _guard = guard;
                    std::future::pending::<()>().await;
                    Ok(json!({ "finished": true }))
                }
                .boxed()
            }
            _ => std::future::ready(Err(ErrorObject::new(-32601, "not handled"))).boxed(),
        }
    }
}

async fn server_requests(ctx: Ctx) -> Checked {
    let (started_tx, mut started) = tokio::sync::mpsc::unbounded_channel();
    let (aborted_tx, mut aborted) = tokio::sync::mpsc::unbounded_channel();
    let handler = TestHandler {
        started: started_tx,
        aborted: aborted_tx,
    };
    let handlers = ConnectionHandlers::discard().with_server_requests(Arc::new(handler));
    let mut c = ctx.connect(handlers).await;
    c.peer()?;

    c.send(Request::new("s-1", "ping", None)).await?;
    expect_answer(&mut c, "s-1".into(), Ok(json!({}))).await?;
    c.send(Request::new(2, "roots/list", Some(json!({}))))
        .await?;
    expect_answer(
        &mut c,
        2.into(),
        Ok(json!({ "roots": [{ "uri": "file:///tmp", "name": "tmp" }] })),
    )
    .await?;
    c.send(Request::new(
        3,
        "elicitation/create",
        Some(json!({ "message": "?" })),
    ))
    .await?;
    expect_answer(
        &mut c,
        3.into(),
        Err(ErrorObject::new(-32042, "declined").with_data(json!({ "why": "the contract suite" }))),
    )
    .await?;

    // A slow handler holds up nothing, and an inbound cancel aborts it.
    c.send(Request::new(4, "contract/slow", None)).await?;
    let within = c.u(30);
    let got = timeout(within, started.recv()).await;
    ensure!(
        matches!(&got, Ok(Some(id)) if *id == RequestId::Number(4)),
        "the handler did not start on request 4 within {within:?}"
    );
    c.send(Request::new("s-5", "ping", None)).await?;
    expect_answer(&mut c, "s-5".into(), Ok(json!({}))).await?;
    c.notify_from_peer(
        CANCELLED,
        json!({ "requestId": 4, "reason": "changed my mind" }),
    )
    .await?;
    let got = timeout(within, aborted.recv()).await;
    ensure!(
        matches!(&got, Ok(Some(id)) if *id == RequestId::Number(4)),
        "an inbound notifications/cancelled did not abort the handler within {within:?}"
    );
    c.expect_quiet("for an aborted server request").await?;
    c.end().await;
    Ok(())
}

async fn expect_answer(
    c: &mut Conn,
    id: RequestId,
    expected: Result<Value, ErrorObject>,
) -> Checked {
    let what = format!("the answer to server request {id}");
    let m = c.recv(&what).await?;
    let ok = match (&m, &expected) {
        (Message::Response(r), Ok(v)) => r.id == id && r.result == *v,
        (Message::Error(e), Err(err)) => e.id.as_ref() == Some(&id) && e.error == *err,
        _ => false,
    };
    let expected = match expected {
        Ok(result) => Message::Response(Response {
            id: id.clone(),
            result,
        }),
        Err(error) => Message::Error(ErrorResponse {
            id: Some(id.clone()),
            error,
        }),
    };
    ensure!(
        ok,
        "{what}: expected {}, the peer saw {}",
        show(&expected),
        show(&m)
    );
    Ok(())
}

async fn unhandled_server_request(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    c.send(Request::new(7, "sampling/createMessage", Some(json!({}))))
        .await?;
    let m = c.recv("the answer to server request 7").await?;
    ensure!(
        matches!(&m, Message::Error(e) if e.id == Some(7.into()) && e.error.code == -32601),
        "an unhandled server request got {}, not a -32601 error",
        show(&m)
    );
    c.end().await;
    Ok(())
}

async fn thousand_concurrent(ctx: Ctx) -> Checked {
    const N: usize = 1000;
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    let id_of = |i: usize| -> RequestId {
        if i.is_multiple_of(2) {
            RequestId::Number(10_000 + i as i64)
        } else {
            RequestId::String(format!("c-{i}"))
        }
    };
    let futures: Vec<ResponseFuture> = (0..N)
        .map(|i| c.request(id_of(i), "contract/many", Some(json!({ "i": i }))))
        .collect();
    let mut seen: HashMap<RequestId, usize> = HashMap::new();
    for _ in 0..N {
        let m = c.recv("the next of a thousand requests").await?;
        let Message::Request(r) = &m else {
            return Err(fail(format!(
                "expected a request, the peer saw {}",
                show(&m)
            )));
        };
        let i = r
            .params
            .as_ref()
            .and_then(|p| p["i"].as_u64())
            .ok_or_else(|| fail(format!("a request lost its params: {}", show(&m))))?
            as usize;
        ensure!(r.id == id_of(i), "request {i} arrived with the id {}", r.id);
        seen.insert(r.id.clone(), i);
    }
    ensure!(
        seen.len() == N,
        "only {} distinct requests arrived",
        seen.len()
    );
    // 7919 is prime to 1000: a permutation that is far from the order sent.
    for k in 0..N {
        let i = (k * 7919) % N;
        c.answer(id_of(i), json!({ "i": i })).await?;
    }
    let within = c.u(100);
    let results = timeout(within, futures::future::join_all(futures))
        .await
        .map_err(|_| fail(format!("not every answer arrived within {within:?}")))?;
    for (i, r) in results.into_iter().enumerate() {
        ensure!(
            r.as_ref().ok() == Some(&complete(json!({ "i": i }))),
            "request {i} yielded {r:?}"
        );
    }
    c.end().await;
    Ok(())
}

async fn malformed_line_skipped(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    if !c.peer()?.can_send_raw() {
        return Err(Verdict::NotApplicable(
            "the peer cannot send raw bytes".into(),
        ));
    }
    let f = c.request(1, "tools/list", None);
    c.recv_request(1, "tools/list").await?;
    let lines: [&[u8]; 7] = [
        b"{not json",
        b"\"a string\"",
        b"[]",
        b"{\"jsonrpc\":\"2.0\"}",
        b"{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{}}",
        b"hello, this is a log line on stdout",
        b"[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}, 5]",
    ];
    for line in lines {
        c.peer()?.send_raw(line.to_vec()).await;
    }
    c.answer(1, json!({ "tools": [] })).await?;
    c.expect_result(
        f,
        complete(json!({ "tools": [] })),
        "the request answered after the bad lines",
    )
    .await?;
    let f = c.request(2, "tools/list", None);
    c.recv_request(2, "tools/list").await?;
    c.answer(2, json!({ "n": 2 })).await?;
    c.expect_result(f, complete(json!({ "n": 2 })), "a later request")
        .await?;
    ensure!(
        c.transport.is_alive(),
        "the transport died of malformed lines"
    );
    c.end().await;
    Ok(())
}
