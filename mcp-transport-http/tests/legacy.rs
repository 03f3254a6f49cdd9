//! Legacy Streamable HTTP (2025-03-26 … 2025-11-25) against a real
//! loopback socket: the session, the version header, server requests on a
//! stream, cancellation, expiry, DELETE on close.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{TestServer, event, json, sse, status, until_closed};
use futures::future::BoxFuture;
use mcp_protocol::{ErrorObject, Notification, Request};
use mcp_transport::{
    CancellationToken, ConnectionHandlers, RequestOptions, ServerRequestHandler, Transport,
    TransportError,
};
use mcp_transport_http::HttpTransportBuilder;
use serde_json::{Value, json};

fn initialize(id: i64) -> Request {
    Request::new(
        id,
        "initialize",
        Some(json!({"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}})),
    )
}

/// A legacy server: `initialize` opens session "s-1"; a request with
/// another (or no) session after that gets 404; `tools/list` answers as
/// SSE; notifications get 202; DELETE ends the session.
async fn legacy_server(version: &'static str) -> TestServer {
    TestServer::start(move |seen| async move {
        let body = seen.json();
        if seen.method == http::Method::DELETE {
            return status(200);
        }
        if body["method"] == "initialize" {
            let mut response = json(
                200,
                json!({"jsonrpc": "2.0", "id": body["id"], "result": {
                    "protocolVersion": version, "capabilities": {"tools": {}},
                    "serverInfo": {"name": "legacy", "version": "1"}}}),
            );
            response
                .headers_mut()
                .insert("mcp-session-id", "s-1".parse().unwrap());
            return response;
        }
        if seen.header("mcp-session-id") != Some("s-1") {
            return json(
                404,
                json!({"jsonrpc": "2.0", "id": null,
                "error": {"code": -32001, "message": "Session not found"}}),
            );
        }
        if body.get("id").is_none() || body.get("method").is_none() {
            return status(202);
        }
        let id = body["id"].clone();
        let (tx, response) = sse();
        tokio::spawn(async move {
            let _ = tx.send("id: 1\ndata:\n\n".into()).await;
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"tools": []}});
            let _ = tx.send(event(&answer)).await;
        });
        response
    })
    .await
}

#[tokio::test]
async fn the_session_and_version_learned_from_initialize_go_on_every_later_request() {
    let server = legacy_server("2025-06-18").await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    let init = transport
        .request(initialize(1), RequestOptions::new().no_wire_cancel())
        .await
        .unwrap();
    assert_eq!(init["protocolVersion"], "2025-06-18");
    assert_eq!(transport.session_id().as_deref(), Some("s-1"));
    transport
        .notify(Notification::new("notifications/initialized", None))
        .unwrap();
    let tools = transport
        .request(Request::new(2, "tools/list", None), RequestOptions::new())
        .await
        .unwrap();
    assert_eq!(tools["tools"], json!([]));

    let all = server.seen();
    // The GET stream was tried once (this server answers it 202, no SSE:
    // it offers none) and never again.
    assert_eq!(
        all.iter().filter(|s| s.method == http::Method::GET).count(),
        1
    );
    let seen: Vec<_> = all
        .into_iter()
        .filter(|s| s.method == http::Method::POST)
        .collect();
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[0].header("mcp-session-id"), None);
    assert_eq!(seen[0].header("mcp-protocol-version"), None);
    for later in &seen[1..] {
        assert_eq!(later.header("mcp-session-id"), Some("s-1"));
        assert_eq!(later.header("mcp-protocol-version"), Some("2025-06-18"));
        assert_eq!(
            later.header("mcp-method"),
            None,
            "no modern headers in legacy"
        );
        assert_eq!(
            later.header("accept"),
            Some("application/json, text/event-stream")
        );
    }
    assert_eq!(
        seen[1].rpc_method().as_deref(),
        Some("notifications/initialized")
    );

    // Close ends the session with DELETE.
    transport.close().await;
    let seen = server.seen();
    let delete = seen.last().unwrap();
    assert_eq!(delete.method, http::Method::DELETE);
    assert_eq!(delete.header("mcp-session-id"), Some("s-1"));
    assert!(!transport.is_alive());
}

#[tokio::test]
async fn no_version_header_for_2025_03_26() {
    let server = legacy_server("2025-03-26").await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    transport
        .request(initialize(1), RequestOptions::new())
        .await
        .unwrap();
    transport
        .request(Request::new(2, "tools/list", None), RequestOptions::new())
        .await
        .unwrap();
    let seen = server.seen();
    assert_eq!(seen[1].header("mcp-session-id"), Some("s-1"));
    assert_eq!(seen[1].header("mcp-protocol-version"), None);
    transport.close().await;
}

#[tokio::test]
async fn a_404_with_a_session_is_session_expired_and_the_id_is_forgotten() {
    // This server forgets every session at once.
    let server = TestServer::start(|seen| async move {
        let body = seen.json();
        if body["method"] == "initialize" {
            let mut response = json(
                200,
                json!({"jsonrpc": "2.0", "id": body["id"],
                "result": {"protocolVersion": "2025-11-25", "capabilities": {},
                    "serverInfo": {"name": "x", "version": "1"}}}),
            );
            response
                .headers_mut()
                .insert("mcp-session-id", "gone".parse().unwrap());
            return response;
        }
        if seen.header("mcp-session-id").is_some() {
            return status(404);
        }
        // Without a session: 400, as servers that need one answer.
        json(
            400,
            json!({"jsonrpc": "2.0", "id": null,
            "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"}}),
        )
    })
    .await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    transport
        .request(initialize(1), RequestOptions::new())
        .await
        .unwrap();
    let expired = transport
        .request(Request::new(2, "tools/list", None), RequestOptions::new())
        .await;
    assert_eq!(expired, Err(TransportError::SessionExpired { status: 404 }));
    assert_eq!(transport.session_id(), None);
    // Until a new initialize opens a session, requests fail at once and
    // nothing is sent (with no session they would only be refused).
    let after = transport
        .request(Request::new(3, "tools/list", None), RequestOptions::new())
        .await;
    assert_eq!(after, Err(TransportError::SessionExpired { status: 404 }));
    assert_eq!(server.seen().len(), 2, "nothing sent on an expired session");
    transport
        .request(initialize(4), RequestOptions::new())
        .await
        .unwrap();
    let renewed = transport
        .request(Request::new(5, "tools/list", None), RequestOptions::new())
        .await;
    assert_eq!(renewed, Err(TransportError::SessionExpired { status: 404 }));
    let seen = server.seen();
    assert_eq!(seen[1].header("mcp-session-id"), Some("gone"));
    assert_eq!(
        seen[2].header("mcp-session-id"),
        None,
        "initialize has none"
    );
    assert_eq!(
        seen[3].header("mcp-session-id"),
        Some("gone"),
        "the new session's"
    );
    transport.close().await;
    // No session left, so no DELETE.
    assert!(server.seen().iter().all(|s| s.method == http::Method::POST));
}

#[tokio::test]
async fn a_400_naming_the_session_is_session_expired_too() {
    let server = TestServer::start(|seen| async move {
        let body = seen.json();
        if body["method"] == "initialize" {
            let mut response = json(
                200,
                json!({"jsonrpc": "2.0", "id": body["id"],
                "result": {"protocolVersion": "2025-11-25", "capabilities": {},
                    "serverInfo": {"name": "x", "version": "1"}}}),
            );
            response
                .headers_mut()
                .insert("mcp-session-id", "old".parse().unwrap());
            return response;
        }
        json(
            400,
            json!({"jsonrpc": "2.0", "id": null,
            "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"}}),
        )
    })
    .await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    transport
        .request(initialize(1), RequestOptions::new())
        .await
        .unwrap();
    let expired = transport
        .request(Request::new(2, "ping", None), RequestOptions::new())
        .await;
    assert_eq!(expired, Err(TransportError::SessionExpired { status: 400 }));
    transport.close().await;
}

/// A 2025-11-25 `initialize` answer opening session "s".
fn initialized(id: &Value) -> http::Response<common::Body> {
    let mut response = json(
        200,
        json!({"jsonrpc": "2.0", "id": id,
        "result": {"protocolVersion": "2025-11-25", "capabilities": {},
            "serverInfo": {"name": "x", "version": "1"}}}),
    );
    response
        .headers_mut()
        .insert("mcp-session-id", "s".parse().unwrap());
    response
}

struct Pong;

impl ServerRequestHandler for Pong {
    fn handle(&self, request: Request) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        assert_eq!(request.method, "ping");
        Box::pin(async { Ok(json!({})) })
    }
}

#[tokio::test]
async fn a_server_request_on_a_stream_is_answered_by_post_then_cancel_is_posted() {
    let (answered_tx, answered_rx) = tokio::sync::watch::channel(false);
    let answered_tx = Arc::new(answered_tx);
    let server = TestServer::start(move |seen| {
        let answered_tx = answered_tx.clone();
        async move {
            let body = seen.json();
            if body["method"] == "initialize" {
                return initialized(&body["id"]);
            }
            if body.get("result").is_some() {
                // The client's answer to our ping.
                answered_tx.send_replace(true);
                return status(202);
            }
            if body.get("id").is_none() {
                return status(202);
            }
            let (tx, response) = sse();
            tokio::spawn(async move {
                let ping = json!({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"});
                let _ = tx.send(event(&ping)).await;
                until_closed(&tx, Duration::from_secs(5)).await;
            });
            response
        }
    })
    .await;
    let handlers = ConnectionHandlers::discard().with_server_requests(Arc::new(Pong));
    let transport = HttpTransportBuilder::new(server.url())
        .build(handlers)
        .unwrap();
    transport
        .request(initialize(1), RequestOptions::new())
        .await
        .unwrap();
    let token = CancellationToken::new();
    let call = Request::new(
        2,
        "tools/call",
        Some(json!({"name": "elicit", "arguments": {}})),
    );
    let pending =
        tokio::spawn(transport.request(call, RequestOptions::new().cancellation(token.clone())));
    let mut answered = answered_rx.clone();
    tokio::time::timeout(Duration::from_secs(5), answered.wait_for(|a| *a))
        .await
        .unwrap()
        .unwrap();
    token.cancel();
    assert_eq!(pending.await.unwrap(), Err(TransportError::Cancelled));
    // The cancel is POSTed as notifications/cancelled, with the session.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let cancel = loop {
        if let Some(c) = server.seen_method("notifications/cancelled").pop() {
            break c;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no cancel was posted"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(cancel.json()["params"]["requestId"], 2);
    assert_eq!(cancel.header("mcp-session-id"), Some("s"));
    let answer = server
        .seen()
        .into_iter()
        .find(|s| s.json().get("result").is_some())
        .unwrap();
    assert_eq!(answer.json()["id"], "srv-1");
    assert_eq!(answer.header("mcp-session-id"), Some("s"));
    transport.close().await;
}

/// A legacy server whose GET handler is `get`; `initialize` opens "g".
async fn server_with_get<F, Fut>(get: F) -> TestServer
where
    F: Fn(common::Seen) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = http::Response<common::Body>> + Send + 'static,
{
    let get = Arc::new(get);
    TestServer::start(move |seen| {
        let get = get.clone();
        async move {
            let body = seen.json();
            if seen.method == http::Method::GET {
                return get(seen).await;
            }
            if body["method"] == "initialize" {
                let mut response = json(
                    200,
                    json!({"jsonrpc": "2.0", "id": body["id"],
                    "result": {"protocolVersion": "2025-11-25", "capabilities": {},
                        "serverInfo": {"name": "x", "version": "1"}}}),
                );
                response
                    .headers_mut()
                    .insert("mcp-session-id", "g".parse().unwrap());
                return response;
            }
            status(202)
        }
    })
    .await
}

async fn handshake(transport: &mcp_transport_http::HttpTransport) {
    transport
        .request(initialize(1), RequestOptions::new())
        .await
        .unwrap();
    transport
        .notify(Notification::new("notifications/initialized", None))
        .unwrap();
}

async fn wait_until(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !check() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn the_get_stream_carries_notifications_and_server_requests() {
    let server = server_with_get(|_seen| async move {
        let (tx, response) = sse();
        tokio::spawn(async move {
            let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
            let ping = json!({"jsonrpc": "2.0", "id": "srv-9", "method": "ping"});
            let _ = tx.send(format!("id: ev-1\n{}", event(&changed))).await;
            let _ = tx.send(event(&ping)).await;
            until_closed(&tx, Duration::from_secs(5)).await;
        });
        response
    })
    .await;
    let (listener, mut notes) = mcp_transport::Listener::channel(8);
    let handlers = ConnectionHandlers::new(listener).with_server_requests(Arc::new(Pong));
    let transport = HttpTransportBuilder::new(server.url())
        .build(handlers)
        .unwrap();
    handshake(&transport).await;
    use futures::StreamExt;
    let note = tokio::time::timeout(Duration::from_secs(5), notes.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(note.method, "notifications/tools/list_changed");
    wait_until("the ping's answer", || {
        server.seen().iter().any(|s| s.json()["id"] == "srv-9")
    })
    .await;
    let seen = server.seen();
    let gets: Vec<_> = seen
        .iter()
        .filter(|s| s.method == http::Method::GET)
        .collect();
    assert_eq!(gets.len(), 1);
    assert_eq!(gets[0].header("accept"), Some("text/event-stream"));
    assert_eq!(gets[0].header("mcp-session-id"), Some("g"));
    assert_eq!(gets[0].header("mcp-protocol-version"), Some("2025-11-25"));
    // The GET was opened right after initialized, before anything else.
    let order: Vec<String> = seen
        .iter()
        .map(|s| s.rpc_method().unwrap_or_else(|| s.method.to_string()))
        .collect();
    assert_eq!(
        &order[..3],
        ["initialize", "notifications/initialized", "GET"]
    );
    transport.close().await;
}

#[tokio::test]
async fn a_405_to_the_get_stream_is_never_retried() {
    let server = server_with_get(|_seen| async move { status(405) }).await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    handshake(&transport).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let gets = server
        .seen()
        .into_iter()
        .filter(|s| s.method == http::Method::GET)
        .count();
    assert_eq!(gets, 1);
    transport.close().await;
}

#[tokio::test]
async fn a_closed_get_stream_is_reopened_with_last_event_id_after_retry() {
    let server = server_with_get(|seen| async move {
        let (tx, response) = sse();
        let first = seen.header("last-event-id").is_none();
        tokio::spawn(async move {
            if first {
                let note = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
                let _ = tx
                    .send(format!("id: e-7\nretry: 700\n{}", event(&note)))
                    .await;
                // Ends the stream.
            } else {
                until_closed(&tx, Duration::from_secs(5)).await;
            }
        });
        response
    })
    .await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    handshake(&transport).await;
    let start = tokio::time::Instant::now();
    wait_until("a second GET", || {
        server
            .seen()
            .iter()
            .filter(|s| s.method == http::Method::GET)
            .count()
            >= 2
    })
    .await;
    let waited = start.elapsed();
    let seen = server.seen();
    let second = seen
        .iter()
        .filter(|s| s.method == http::Method::GET)
        .nth(1)
        .unwrap();
    assert_eq!(second.header("last-event-id"), Some("e-7"));
    assert!(
        waited >= Duration::from_millis(650),
        "reopened after {waited:?}, before retry: 700"
    );
    transport.close().await;
}

/// A server whose `tools/call` stream names an event, says `retry: 500`
/// and breaks without the answer; a GET with `Last-Event-ID` then gets the
/// answer when `answer_on_resume`, or ends at once with nothing.
async fn breaking_server(answer_on_resume: bool) -> TestServer {
    TestServer::start(move |seen| async move {
        let body = seen.json();
        if seen.method == http::Method::GET {
            let (tx, response) = sse();
            let resumed = seen.header("last-event-id") == Some("event-1");
            tokio::spawn(async move {
                if resumed && answer_on_resume {
                    let _ = tx.send("id: event-2\nretry: 500\ndata:\n\n".into()).await;
                    let answer = json!({"jsonrpc": "2.0", "id": 2,
                        "result": {"content": [], "resumed": true}});
                    let _ = tx.send(event(&answer)).await;
                    until_closed(&tx, Duration::from_secs(5)).await;
                }
                // Otherwise the stream ends with nothing.
            });
            return response;
        }
        if body["method"] == "initialize" {
            let mut response = json(
                200,
                json!({"jsonrpc": "2.0", "id": body["id"],
                "result": {"protocolVersion": "2025-11-25", "capabilities": {},
                    "serverInfo": {"name": "x", "version": "1"}}}),
            );
            response
                .headers_mut()
                .insert("mcp-session-id", "g".parse().unwrap());
            return response;
        }
        if body["method"] == "tools/call" {
            let (tx, response) = sse();
            tokio::spawn(async move {
                let _ = tx.send("id: event-1\nretry: 500\ndata:\n\n".into()).await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                // Dropped: the stream breaks without the answer.
            });
            return response;
        }
        status(202)
    })
    .await
}

async fn call_through_a_broken_stream(
    server: &TestServer,
) -> (Result<Value, TransportError>, Duration) {
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    transport
        .request(initialize(1), RequestOptions::new())
        .await
        .unwrap();
    let start = tokio::time::Instant::now();
    let outcome = transport
        .request(
            Request::new(2, "tools/call", Some(json!({"name": "test_reconnection"}))),
            RequestOptions::new().timeout(Duration::from_secs(10)),
        )
        .await;
    let took = start.elapsed();
    transport.close().await;
    (outcome, took)
}

#[tokio::test]
async fn a_broken_post_stream_is_resumed_by_get_with_last_event_id_after_retry() {
    let server = breaking_server(true).await;
    let (outcome, took) = call_through_a_broken_stream(&server).await;
    assert_eq!(outcome.unwrap()["resumed"], true);
    let gets: Vec<_> = server
        .seen()
        .into_iter()
        .filter(|s| s.method == http::Method::GET)
        .collect();
    assert_eq!(gets.len(), 1);
    assert_eq!(gets[0].header("last-event-id"), Some("event-1"));
    assert_eq!(gets[0].header("mcp-session-id"), Some("g"));
    // 50 ms until the break, then the server's retry: 500.
    assert!(took >= Duration::from_millis(540), "resumed after {took:?}");
}

#[tokio::test]
async fn a_resumed_stream_that_ends_with_nothing_fails_without_looping() {
    let server = breaking_server(false).await;
    let (outcome, _) = call_through_a_broken_stream(&server).await;
    assert!(
        matches!(
            outcome,
            Err(TransportError::StreamBroken {
                may_have_run: true,
                ..
            })
        ),
        "{outcome:?}"
    );
    let gets = server
        .seen()
        .into_iter()
        .filter(|s| s.method == http::Method::GET)
        .count();
    assert_eq!(gets, 1, "one resumption, no loop");
}

#[tokio::test]
async fn a_session_is_resumed_on_a_new_transport_and_ended_on_demand() {
    let server = legacy_server("2025-06-18").await;
    let first = HttpTransportBuilder::new(server.url())
        .legacy_get_stream(false)
        .build(ConnectionHandlers::discard())
        .unwrap();
    first
        .request(initialize(1), RequestOptions::new())
        .await
        .unwrap();
    let (session, version) = (first.session_id().unwrap(), first.legacy_protocol_version());
    drop(first.close()); // no DELETE awaited: the session lives on

    let second = HttpTransportBuilder::new(server.url())
        .resume_session(session, version)
        .build(ConnectionHandlers::discard())
        .unwrap();
    let tools = second
        .request(Request::new(2, "tools/list", None), RequestOptions::new())
        .await
        .unwrap();
    assert_eq!(tools["tools"], json!([]));
    let call = server.seen_method("tools/list").pop().unwrap();
    assert_eq!(call.header("mcp-session-id"), Some("s-1"));
    assert_eq!(call.header("mcp-protocol-version"), Some("2025-06-18"));

    second.terminate_session().await;
    assert_eq!(second.session_id(), None);
    let delete = server.seen().pop().unwrap();
    assert_eq!(delete.method, http::Method::DELETE);
    assert_eq!(delete.header("mcp-session-id"), Some("s-1"));
    second.close().await;
}

#[tokio::test]
async fn a_batch_answer_is_taken_apart() {
    // 2025-03-26 allows batches: a notification and the answer in one body.
    let server = TestServer::start(|seen| async move {
        let id = seen.json()["id"].clone();
        json(200, json!([
            {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "batched"}},
            {"jsonrpc": "2.0", "id": id, "result": {"batched": true}}
        ]))
    })
    .await;
    let (listener, mut notes) = mcp_transport::Listener::channel(4);
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::new(listener))
        .unwrap();
    let value = transport
        .request(Request::new(1, "tools/list", None), RequestOptions::new())
        .await
        .unwrap();
    assert_eq!(value["batched"], true);
    use futures::StreamExt;
    assert_eq!(notes.next().await.unwrap().method, "notifications/message");
    transport.close().await;
}

/// Answers `ping` after a while, noting when it did.
struct SlowPong(Arc<std::sync::atomic::AtomicBool>);

impl ServerRequestHandler for SlowPong {
    fn handle(&self, _: Request) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        let done = self.0.clone();
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(1000)).await;
            done.store(true, std::sync::atomic::Ordering::SeqCst);
            Ok(json!({}))
        })
    }
}

#[tokio::test]
async fn a_server_request_on_a_stream_pauses_only_its_requests_timer() {
    // `tools/call` streams a ping and answers once the client answered it;
    // `tools/list` never answers. Both have a 400 ms timeout; the ping's
    // handler takes 1 s.
    let (answered_tx, answered_rx) = tokio::sync::watch::channel(false);
    let answered_tx = Arc::new(answered_tx);
    let server = TestServer::start(move |seen| {
        let answered_tx = answered_tx.clone();
        let mut answered_rx = answered_rx.clone();
        async move {
            let body = seen.json();
            if body["method"] == "initialize" {
                return initialized(&body["id"]);
            }
            if body.get("result").is_some() {
                answered_tx.send_replace(true);
                return status(202);
            }
            if body.get("id").is_none() {
                return status(202);
            }
            let (tx, response) = sse();
            let calling = body["method"] == "tools/call";
            let id = body["id"].clone();
            tokio::spawn(async move {
                if calling {
                    let ping = json!({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"});
                    let _ = tx.send(event(&ping)).await;
                    let _ = answered_rx.wait_for(|a| *a).await;
                    let done = json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}});
                    let _ = tx.send(event(&done)).await;
                }
                until_closed(&tx, Duration::from_secs(5)).await;
            });
            response
        }
    })
    .await;
    let handled = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let handlers =
        ConnectionHandlers::discard().with_server_requests(Arc::new(SlowPong(handled.clone())));
    let transport = HttpTransportBuilder::new(server.url())
        .legacy_get_stream(false)
        .build(handlers)
        .unwrap();
    transport
        .request(initialize(1), RequestOptions::new())
        .await
        .unwrap();
    let short = || RequestOptions::new().timeout(Duration::from_millis(400));
    let call = Request::new(2, "tools/call", Some(json!({"name": "x"})));
    let call = tokio::spawn(transport.request(call, short()));
    // The call's stream carries the ping before the list leaves.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let list = transport.request(Request::new(3, "tools/list", None), short());
    let listed = tokio::time::timeout(Duration::from_secs(5), list)
        .await
        .unwrap();
    assert!(
        matches!(listed, Err(TransportError::Timeout { .. })),
        "{listed:?}"
    );
    assert!(
        !handled.load(std::sync::atomic::Ordering::SeqCst),
        "the list's timer was held while the call's server request was handled"
    );
    let called = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .unwrap()
        .unwrap();
    assert!(called.is_ok(), "the call's timer was held: {called:?}");
    transport.close().await;
}
