//! The 2026-07-28 wire against a real loopback socket: headers, JSON and
//! SSE answers, notifications, cancellation by closing the stream.

mod common;

use std::time::Duration;

use common::{TestServer, event, json, result, sse, status, until_closed};
use http::HeaderValue;
use mcp_protocol::{Notification, Request};
use mcp_transport::{
    CancellationToken, ConnectionHandlers, Listener, RequestOptions, SharedMeta, Transport,
    TransportError,
};
use mcp_transport_http::{HttpTransport, HttpTransportBuilder};
use serde_json::{Value, json};

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"}
    })
}

fn modern(id: i64, method: &str, mut params: Value) -> Request {
    params["_meta"] = modern_meta();
    Request::new(id, method, Some(params))
}

/// A modern `tools/call` of tool `t` as request `id`, which must complete.
async fn call_tool_t(transport: &HttpTransport, id: i64) {
    let request = modern(id, "tools/call", json!({"name": "t", "arguments": {}}));
    let value = transport
        .request(
            request,
            RequestOptions::new().timeout(Duration::from_secs(5)),
        )
        .await
        .unwrap();
    assert_eq!(value["resultType"], "complete");
}

#[tokio::test]
async fn modern_requests_carry_exactly_the_spec_headers() {
    let server =
        TestServer::start(|seen| async move { result(&seen, json!({"content": []})) }).await;
    let transport = HttpTransportBuilder::new(server.url())
        .header(
            http::header::AUTHORIZATION,
            HeaderValue::from_static("Bearer sesame"),
        )
        .build(ConnectionHandlers::discard())
        .unwrap();

    let call = modern(
        1,
        "tools/call",
        json!({"name": " weather 天気", "arguments": {"region": "eu-west1"}}),
    );
    let options = RequestOptions::new().header("Mcp-Param-Region", "eu-west1");
    let value = transport.request(call, options).await.unwrap();
    assert_eq!(value["resultType"], "complete");

    let read = modern(2, "resources/read", json!({"uri": "file:///a%20b.txt"}));
    transport
        .request(read, RequestOptions::new())
        .await
        .unwrap();
    let list = modern(3, "tools/list", json!({}));
    transport
        .request(list, RequestOptions::new())
        .await
        .unwrap();

    let seen = server.seen();
    assert_eq!(seen.len(), 3);
    let first = &seen[0];
    assert_eq!(first.method, http::Method::POST);
    assert_eq!(first.path, "/mcp");
    let mut names: Vec<&str> = first.headers.keys().map(|k| k.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "accept",
            "authorization",
            "content-length",
            "content-type",
            "host",
            "mcp-method",
            "mcp-name",
            "mcp-param-region",
            "mcp-protocol-version",
        ]
    );
    assert_eq!(
        first.header("accept"),
        Some("application/json, text/event-stream")
    );
    assert_eq!(first.header("content-type"), Some("application/json"));
    assert_eq!(first.header("mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(first.header("mcp-method"), Some("tools/call"));
    // Leading space and non-ASCII: base64 of the UTF-8, in the markers.
    assert_eq!(
        first.header("mcp-name"),
        Some("=?base64?IHdlYXRoZXIg5aSp5rCX?=")
    );
    assert_eq!(first.header("mcp-param-region"), Some("eu-west1"));
    assert_eq!(first.header("authorization"), Some("Bearer sesame"));
    assert_eq!(first.json()["params"]["name"], " weather 天気");

    assert_eq!(seen[1].header("mcp-name"), Some("file:///a%20b.txt"));
    assert_eq!(seen[1].header("mcp-method"), Some("resources/read"));
    assert_eq!(
        seen[2].header("mcp-name"),
        None,
        "tools/list has no Mcp-Name"
    );
    assert!(seen.iter().all(|s| s.header("mcp-session-id").is_none()));
    transport.close().await;
}

/// The connection's shared `_meta` is taken by the transport and spliced
/// into each body: the server sees it merged with the request's own
/// members (the shared ones win), and the request goes the modern way.
#[tokio::test]
async fn shared_meta_is_spliced_into_the_body_and_makes_the_request_modern() {
    let server =
        TestServer::start(|seen| async move { result(&seen, json!({"content": []})) }).await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    assert!(transport.profile().takes_shared_meta);
    let shared = SharedMeta::new(modern_meta().as_object().unwrap().clone());

    let call = Request::new(
        1,
        "tools/call",
        Some(json!({
            "name": "echo",
            "arguments": {"text": "hi"},
            "_meta": {
                "progressToken": 7,
                "io.modelcontextprotocol/protocolVersion": "2025-11-25"
            }
        })),
    );
    let options = RequestOptions::new().shared_meta(shared.clone());
    transport.request(call, options).await.unwrap();
    let ping = Request::new(2, "ping", None);
    transport
        .request(ping, RequestOptions::new().shared_meta(shared.clone()))
        .await
        .unwrap();

    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    let mut expected = modern_meta();
    expected["progressToken"] = json!(7);
    assert_eq!(seen[0].json()["params"]["_meta"], expected);
    assert_eq!(seen[0].json()["params"]["arguments"], json!({"text": "hi"}));
    assert_eq!(seen[0].header("mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(seen[0].header("mcp-method"), Some("tools/call"));
    assert_eq!(seen[0].header("mcp-name"), Some("echo"));
    assert_eq!(
        seen[1].json(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"_meta": modern_meta()}})
    );
    assert_eq!(seen[1].header("mcp-protocol-version"), Some("2026-07-28"));
    transport.close().await;
}

#[tokio::test]
async fn an_sse_answer_routes_its_notifications_then_resolves() {
    let server = TestServer::start(|seen| async move {
        let id = seen.json()["id"].clone();
        let (tx, response) = sse();
        tokio::spawn(async move {
            let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": "p1", "progress": 1, "total": 2}});
            let log = json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "data": "hello"}});
            let _ = tx.send(": comment, ignored\n\n".into()).await;
            let _ = tx.send("id: e1\ndata:\n\n".into()).await;
            let _ = tx.send(event(&progress)).await;
            let _ = tx.send(event(&log)).await;
            let answer =
                json!({"jsonrpc": "2.0", "id": id, "result": {"content": [], "isError": false}});
            // The answer split across two writes.
            let text = event(&answer);
            let (a, b) = text.split_at(10);
            let _ = tx.send(a.to_owned()).await;
            let _ = tx.send(b.to_owned()).await;
            until_closed(&tx, Duration::from_secs(2)).await;
        });
        response
    })
    .await;
    let (connection, mut connection_stream) = Listener::channel(16);
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::new(connection))
        .unwrap();
    let (listener, mut progress) = Listener::channel(16);
    let mut params = json!({"name": "slow", "arguments": {}});
    params["_meta"] = modern_meta();
    params["_meta"]["progressToken"] = json!("p1");
    let request = Request::new(7, "tools/call", Some(params));
    let value = transport
        .request(
            request,
            RequestOptions::new()
                .listener(listener)
                .timeout(Duration::from_secs(5)),
        )
        .await
        .unwrap();
    assert_eq!(value["isError"], false);
    use futures::StreamExt;
    let p = progress.next().await.unwrap();
    assert_eq!(p.method, "notifications/progress");
    let log = connection_stream.next().await.unwrap();
    assert_eq!(log.method, "notifications/message");
    transport.close().await;
}

/// A modern SSE answer's stream is read to its end, so its connection goes
/// back to the pool: requests one after another share one connection
/// rather than each opening (and, over TLS, shaking hands on) its own.
#[tokio::test]
async fn sse_answers_leave_their_connection_for_the_next_request() {
    let server = TestServer::start(|seen| async move {
        let id = seen.json()["id"].clone();
        let (tx, response) = sse();
        tokio::spawn(async move {
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}});
            let _ = tx.send(event(&answer)).await;
            // The stream ends a moment after the answer.
            tokio::time::sleep(Duration::from_millis(20)).await;
        });
        response
    })
    .await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    for id in 1..=3 {
        call_tool_t(&transport, id).await;
        // Time for the stream's end to reach the client.
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    let connections = server
        .connections
        .load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(connections, 1, "each answer's connection is used again");
    transport.close().await;
}

/// A stream the server keeps open, silent, after the answer does not hold
/// the answer back, and is closed by the client soon after (it is waited
/// for a moment, for its end, then dropped).
#[tokio::test]
async fn a_stream_kept_open_after_its_answer_is_closed_soon_after() {
    let (closed_tx, closed_rx) = tokio::sync::oneshot::channel();
    let closed_tx = std::sync::Mutex::new(Some(closed_tx));
    let server = TestServer::start(move |seen| {
        let closed_tx = closed_tx.lock().unwrap().take();
        async move {
            let id = seen.json()["id"].clone();
            let (tx, response) = sse();
            tokio::spawn(async move {
                let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}});
                let _ = tx.send(event(&answer)).await;
                let start = tokio::time::Instant::now();
                // Silent: no keep-alive wakes the client's reading.
                let closed = tokio::time::timeout(Duration::from_secs(30), tx.closed()).await;
                if let (Ok(()), Some(closed_tx)) = (closed, closed_tx) {
                    let _ = closed_tx.send(start.elapsed());
                }
            });
            response
        }
    })
    .await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    let start = std::time::Instant::now();
    call_tool_t(&transport, 1).await;
    let answered = start.elapsed();
    assert!(
        answered < Duration::from_millis(200),
        "answered after {answered:?}"
    );
    let open_for = tokio::time::timeout(Duration::from_secs(10), closed_rx)
        .await
        .expect("the client closes the stream")
        .unwrap();
    assert!(
        open_for >= Duration::from_millis(200) && open_for < Duration::from_secs(3),
        "the stream was closed {open_for:?} after the answer"
    );
    transport.close().await;
}

#[tokio::test]
async fn notifications_are_posted_in_order_and_answered_202() {
    let server = TestServer::start(|seen| async move {
        if seen.json().get("id").is_none() {
            status(202)
        } else {
            result(&seen, json!({}))
        }
    })
    .await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    let mut params = json!({"notifications": {"toolsListChanged": true}});
    params["_meta"] = modern_meta();
    transport
        .notify(Notification::new(
            "notifications/roots/list_changed",
            Some(json!({"_meta": modern_meta()})),
        ))
        .unwrap();
    transport
        .request(modern(1, "tools/list", json!({})), RequestOptions::new())
        .await
        .unwrap();
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(
        seen[0].rpc_method().as_deref(),
        Some("notifications/roots/list_changed")
    );
    assert_eq!(
        seen[0].header("mcp-method"),
        Some("notifications/roots/list_changed")
    );
    assert_eq!(seen[0].header("mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(seen[1].rpc_method().as_deref(), Some("tools/list"));
    transport.close().await;
}

#[tokio::test]
async fn cancelling_closes_the_request_stream_and_posts_nothing() {
    let (closed_tx, closed_rx) = tokio::sync::oneshot::channel::<Option<Duration>>();
    let closed_tx = std::sync::Mutex::new(Some(closed_tx));
    let closed_tx = std::sync::Arc::new(closed_tx);
    let server = TestServer::start(move |_seen| {
        let closed_tx = closed_tx.clone();
        async move {
            let (tx, response) = sse();
            tokio::spawn(async move {
                let took = until_closed(&tx, Duration::from_secs(5)).await;
                if let Some(t) = closed_tx.lock().unwrap().take() {
                    let _ = t.send(took);
                }
            });
            response
        }
    })
    .await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    let token = CancellationToken::new();
    let call = modern(1, "tools/call", json!({"name": "forever", "arguments": {}}));
    let answer = transport.request(call, RequestOptions::new().cancellation(token.clone()));
    let waiting = tokio::spawn(answer);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let cancelled_at = tokio::time::Instant::now();
    token.cancel();
    let outcome = waiting.await.unwrap();
    assert_eq!(outcome, Err(TransportError::Cancelled));
    assert!(
        cancelled_at.elapsed() < Duration::from_millis(100),
        "the future ends at once"
    );
    let took = closed_rx.await.unwrap();
    let took = took.expect("the server saw the stream close");
    println!("the server saw the stream close {took:?} after the cancel's request began streaming");
    // The stream was open 200 ms before the cancel; it closes within a
    // second after it (generous for a loaded machine).
    assert!(took < Duration::from_millis(1200), "closed after {took:?}");
    // Modern HTTP has no notifications/cancelled: only the one POST.
    assert_eq!(server.seen().len(), 1);
    transport.close().await;
}

#[tokio::test]
async fn a_stream_that_ends_before_its_answer_is_stream_broken() {
    let server = TestServer::start(|_seen| async move {
        let (tx, response) = sse();
        tokio::spawn(async move {
            let note = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}});
            let _ = tx.send(event(&note)).await;
            // Dropping the sender ends the body.
        });
        response
    })
    .await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    let outcome = transport
        .request(
            modern(1, "tools/call", json!({"name": "x"})),
            RequestOptions::new(),
        )
        .await;
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
    transport.close().await;
}

#[tokio::test]
async fn a_listen_stream_carries_notifications_to_the_listen_request() {
    let server = TestServer::start(|seen| async move {
        let id = seen.json()["id"].clone();
        let (tx, response) = sse();
        tokio::spawn(async move {
            let meta = json!({"io.modelcontextprotocol/subscriptionId": id});
            let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                "params": {"notifications": {"toolsListChanged": true}, "_meta": meta}});
            let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                "params": {"_meta": meta}});
            let _ = tx.send(event(&ack)).await;
            let _ = tx.send(event(&changed)).await;
            until_closed(&tx, Duration::from_secs(5)).await;
        });
        response
    })
    .await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    let (listener, mut notes) = Listener::channel(16);
    let listen = modern(
        9,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let open = transport.request(listen, RequestOptions::new().listener(listener));
    let open = tokio::spawn(open);
    use futures::StreamExt;
    let ack = tokio::time::timeout(Duration::from_secs(5), notes.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ack.method, "notifications/subscriptions/acknowledged");
    let changed = tokio::time::timeout(Duration::from_secs(5), notes.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(changed.method, "notifications/tools/list_changed");
    open.abort();
    transport.close().await;
}

#[tokio::test]
async fn a_version_error_with_400_is_rpc_verbatim() {
    let server = TestServer::start(|seen| async move {
        json(
            400,
            json!({"jsonrpc": "2.0", "id": seen.json()["id"], "error": {"code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28"], "requested": "1900-01-01"}}}),
        )
    })
    .await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    let outcome = transport
        .request(
            modern(1, "server/discover", json!({})),
            RequestOptions::new(),
        )
        .await;
    let Err(TransportError::Rpc { code, data, .. }) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(code, -32022);
    assert_eq!(data.unwrap()["supported"], json!(["2026-07-28"]));
    transport.close().await;
}

#[tokio::test]
async fn a_header_provider_is_asked_at_every_request_and_hop() {
    use futures::future::BoxFuture;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    struct Counting(AtomicU32);
    impl mcp_transport_http::HeaderProvider for Counting {
        fn headers(
            &self,
            request: &http::request::Parts,
        ) -> BoxFuture<'static, Result<http::HeaderMap, mcp_transport_http::BoxError>> {
            let n = self.0.fetch_add(1, Ordering::SeqCst) + 1;
            let mut headers = http::HeaderMap::new();
            headers.insert(
                http::header::AUTHORIZATION,
                format!("Bearer token-{n} for {}", request.uri.path())
                    .parse()
                    .unwrap(),
            );
            Box::pin(async move { Ok(headers) })
        }
    }

    let server = TestServer::start(|seen| async move {
        if seen.path == "/mcp" && seen.json()["id"] == 2 {
            return http::Response::builder()
                .status(308)
                .header("location", "/v2/mcp")
                .body(common::full(""))
                .unwrap();
        }
        result(&seen, json!({}))
    })
    .await;
    let transport = HttpTransportBuilder::new(server.url())
        // A configured header of the same name is replaced by the provider's.
        .header(
            http::header::AUTHORIZATION,
            HeaderValue::from_static("Bearer static"),
        )
        .header_provider(Arc::new(Counting(AtomicU32::new(0))))
        .build(ConnectionHandlers::discard())
        .unwrap();
    transport
        .request(modern(1, "tools/list", json!({})), RequestOptions::new())
        .await
        .unwrap();
    transport
        .request(modern(2, "tools/list", json!({})), RequestOptions::new())
        .await
        .unwrap();
    let auth: Vec<String> = server
        .seen()
        .iter()
        .map(|s| s.header("authorization").unwrap().to_owned())
        .collect();
    assert_eq!(
        auth,
        [
            "Bearer token-1 for /mcp",
            "Bearer token-2 for /mcp",
            "Bearer token-3 for /v2/mcp"
        ]
    );
    transport.close().await;
}

#[tokio::test]
async fn a_task_request_names_its_task() {
    let server = TestServer::start(|seen| async move { result(&seen, json!({})) }).await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    transport
        .request(
            modern(1, "tasks/get", json!({"taskId": "t-42"})),
            RequestOptions::new(),
        )
        .await
        .unwrap();
    assert_eq!(server.seen()[0].header("mcp-name"), Some("t-42"));
    transport.close().await;
}

#[tokio::test]
async fn the_idle_read_timeout_counts_keep_alives_and_breaks_a_silent_stream() {
    let server = TestServer::start(|seen| async move {
        let id = seen.json()["id"].clone();
        let silent = seen.json()["params"]["name"] == "silent";
        let (tx, response) = sse();
        tokio::spawn(async move {
            if silent {
                let _ = tx.send("data:\n\n".into()).await;
                tokio::time::sleep(Duration::from_secs(5)).await;
                return;
            }
            for _ in 0..7 {
                let _ = tx.send(": keep-alive\n\n".into()).await;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"late": true}});
            let _ = tx.send(event(&answer)).await;
        });
        response
    })
    .await;
    let transport = HttpTransportBuilder::new(server.url())
        .stream_idle_timeout(Duration::from_millis(300))
        .build(ConnectionHandlers::discard())
        .unwrap();
    let kept = transport
        .request(
            modern(1, "tools/call", json!({"name": "chatty"})),
            RequestOptions::new(),
        )
        .await
        .unwrap();
    assert_eq!(kept["late"], true);
    let start = std::time::Instant::now();
    let silent = transport
        .request(
            modern(2, "tools/call", json!({"name": "silent"})),
            RequestOptions::new(),
        )
        .await;
    let took = start.elapsed();
    assert!(
        matches!(silent, Err(TransportError::StreamBroken { .. })),
        "{silent:?}"
    );
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(2),
        "{took:?}"
    );
    transport.close().await;
}

/// Round-trip figures over loopback (run with `--ignored --nocapture`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, not a check"]
async fn measure_round_trips() {
    let json_server = TestServer::start(|seen| async move { result(&seen, json!({})) }).await;
    let sse_server = TestServer::start(|seen| async move {
        let id = seen.json()["id"].clone();
        let (tx, response) = sse();
        tokio::spawn(async move {
            let _ = tx
                .send(event(&json!({"jsonrpc": "2.0", "id": id, "result": {}})))
                .await;
        });
        response
    })
    .await;
    for (name, server) in [("JSON", &json_server), ("SSE", &sse_server)] {
        let transport = HttpTransportBuilder::new(server.url())
            .build(ConnectionHandlers::discard())
            .unwrap();
        let n = 2000;
        let start = std::time::Instant::now();
        for id in 0..n {
            transport
                .request(modern(id, "tools/list", json!({})), RequestOptions::new())
                .await
                .unwrap();
        }
        let sequential = start.elapsed() / n as u32;
        let start = std::time::Instant::now();
        let all: Vec<_> = (n..n + 1000)
            .map(|id| transport.request(modern(id, "tools/list", json!({})), RequestOptions::new()))
            .collect();
        for f in all {
            f.await.unwrap();
        }
        let concurrent = start.elapsed();
        println!(
            "{name}: {sequential:?} per sequential round trip; 1000 concurrent in {concurrent:?}"
        );
        transport.close().await;
    }
}

/// A provider that answers a challenge gets the request sent once more
/// with fresh headers; a second refusal is the outcome, and a provider
/// without the hook leaves the challenge to the caller.
#[tokio::test]
async fn a_challenge_answered_by_the_provider_is_sent_once_more() {
    use futures::future::BoxFuture;
    use mcp_transport_http::AuthChallenge;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::{Arc, Mutex};

    #[derive(Default)]
    struct Refreshing {
        token: AtomicU32,
        challenges: Mutex<Vec<(u16, Option<String>)>>,
    }
    impl mcp_transport_http::HeaderProvider for Refreshing {
        fn headers(
            &self,
            _request: &http::request::Parts,
        ) -> BoxFuture<'static, Result<http::HeaderMap, mcp_transport_http::BoxError>> {
            let n = self.token.load(Ordering::SeqCst);
            let mut headers = http::HeaderMap::new();
            headers.insert(
                http::header::AUTHORIZATION,
                format!("Bearer t{n}").parse().unwrap(),
            );
            Box::pin(async move { Ok(headers) })
        }
        fn on_challenge(&self, challenge: &AuthChallenge) -> BoxFuture<'static, bool> {
            self.challenges
                .lock()
                .unwrap()
                .push((challenge.status, challenge.www_authenticate.clone()));
            self.token.fetch_add(1, Ordering::SeqCst);
            Box::pin(async { true })
        }
    }

    // Token t1 is good for everything; t0 and t2 are refused.
    let server = TestServer::start(|seen| async move {
        match seen.header("authorization") {
            Some("Bearer t1") => result(&seen, json!({})),
            _ => http::Response::builder()
                .status(401)
                .header("www-authenticate", r#"Bearer error="invalid_token""#)
                .body(common::full(""))
                .unwrap(),
        }
    })
    .await;
    let provider = Arc::new(Refreshing::default());
    let transport = HttpTransportBuilder::new(server.url())
        .header_provider(provider.clone())
        .build(ConnectionHandlers::discard())
        .unwrap();
    let first = tokio::time::timeout(
        Duration::from_secs(5),
        transport.request(modern(1, "tools/list", json!({})), RequestOptions::new()),
    )
    .await
    .unwrap();
    assert!(first.is_ok(), "{first:?}");
    // Now t1 goes, and the server is told to refuse it: one more round
    // with t2, refused too, is the request's outcome.
    provider.token.store(2, Ordering::SeqCst);
    let second = tokio::time::timeout(
        Duration::from_secs(5),
        transport.request(modern(2, "tools/list", json!({})), RequestOptions::new()),
    )
    .await
    .unwrap();
    assert!(
        matches!(
            second,
            Err(TransportError::AuthorizationRequired { status: 401, .. })
        ),
        "{second:?}"
    );
    let challenges = provider.challenges.lock().unwrap().clone();
    assert_eq!(
        challenges.len(),
        2,
        "one challenge per request: {challenges:?}"
    );
    assert_eq!(
        challenges[0],
        (401, Some(r#"Bearer error="invalid_token""#.to_owned()))
    );
    let auth: Vec<String> = server
        .seen()
        .iter()
        .map(|s| s.header("authorization").unwrap().to_owned())
        .collect();
    assert_eq!(auth, ["Bearer t0", "Bearer t1", "Bearer t2", "Bearer t3"]);
    transport.close().await;
}
