//! What a failure says was sent, and what bounds each wait: a failure
//! after the request left is never "unreachable", a connect covers TLS,
//! a GET that is never answered and a stream left open after its answer
//! are let go, a 400 that does not name the session keeps it, and a
//! caller on another runtime (or none) drives its request all the same.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use common::{Seen, TestServer, event, full, json, result, sse, status};
use http::Response;
use http_body_util::{BodyExt, Full};
use mcp_protocol::{Notification, Request};
use mcp_transport::{ConnectionHandlers, RequestOptions, Transport, TransportError};
use mcp_transport_http::{
    BoxError, HttpService, HttpTransportBuilder, ProxyConfig, RequestBody, ResponseBody,
};
use serde_json::{Value, json};

/// Every wait in these tests is bounded: a hang fails the test.
const LIMIT: Duration = Duration::from_secs(30);

fn ping(id: i64) -> Request {
    Request::new(id, "ping", None)
}

fn initialize(id: i64) -> Request {
    Request::new(
        id,
        "initialize",
        Some(json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}})),
    )
}

fn initialize_result(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id,
        "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "x", "version": "1"}}})
}

/// A boxed response body of these bytes.
fn body(bytes: impl Into<Bytes>) -> ResponseBody {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed()
}

fn json_response(value: &Value) -> http::Response<ResponseBody> {
    http::Response::builder()
        .header("content-type", "application/json")
        .body(body(value.to_string()))
        .unwrap()
}

// ---------------------------------------------------------------------
// A failure after the request left is not `Unreachable`.

/// A user's own HTTP client whose connect is refused: nothing was sent,
/// so the request is `Unreachable` (a supervised client restarts).
#[tokio::test]
async fn a_custom_service_whose_connection_is_refused_is_unreachable() {
    let service = HttpService::new(tower::service_fn(
        |_request: http::Request<RequestBody>| async {
            let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
            Err::<http::Response<ResponseBody>, BoxError>(Box::new(refused))
        },
    ));
    let transport = HttpTransportBuilder::new("http://127.0.0.1:9/mcp")
        .service(service)
        .build(ConnectionHandlers::discard())
        .unwrap();
    let outcome = transport
        .request(ping(1), RequestOptions::new().timeout(LIMIT))
        .await;
    assert!(
        matches!(outcome, Err(TransportError::Unreachable { .. })),
        "{outcome:?}"
    );
    transport.close().await;
}

/// A legacy server on a real socket: `server/discover` is no method of
/// its, `initialize` opens session "s", notifications get 202, the GET
/// stream 405, and any other request an empty result.
async fn legacy_server() -> TestServer {
    TestServer::start(|seen: Seen| async move {
        if seen.method == http::Method::GET {
            return status(405);
        }
        let body = seen.json();
        match body["method"].as_str() {
            Some("server/discover") => json(
                200,
                json!({"jsonrpc": "2.0", "id": body["id"],
                    "error": {"code": -32601, "message": "Method not found"}}),
            ),
            Some("initialize") => {
                let mut response = json(200, initialize_result(&body["id"]));
                response
                    .headers_mut()
                    .insert("mcp-session-id", "s".parse().unwrap());
                response
            }
            _ if body.get("id").is_none() => status(202),
            _ => result(&seen, json!({"content": []})),
        }
    })
    .await
}

/// An HTTP client over the default one whose `tools/call` POSTs reach the
/// server (which reads them whole and answers) and then fail with a timed
/// out socket: what an established connection reports when it dies
/// after a long call was written.
fn dying_after_the_call(inner: HttpService) -> HttpService {
    HttpService::new(tower::service_fn(
        move |request: http::Request<RequestBody>| {
            let inner = inner.clone();
            async move {
                let (parts, body) = request.into_parts();
                let bytes = body.collect().await?.to_bytes();
                let call = serde_json::from_slice::<Value>(&bytes)
                    .is_ok_and(|m| m["method"] == "tools/call");
                let request = http::Request::from_parts(parts, RequestBody::new(bytes));
                let response = inner.call(request).await?;
                if call {
                    let dead = std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "connection timed out (os error 110)",
                    );
                    return Err::<_, BoxError>(Box::new(dead));
                }
                Ok(response)
            }
        },
    ))
}

/// The request left and the server read it; the socket then reports a
/// timeout. The transport says it may have run, and a supervised client
/// does not send the call again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_that_times_out_after_the_call_was_written_is_no_unreachable() {
    let server = legacy_server().await;
    let inner = HttpTransportBuilder::new(server.url())
        .proxy(ProxyConfig::None)
        .http_service()
        .unwrap();
    let service = dying_after_the_call(inner);

    let transport = HttpTransportBuilder::new(server.url())
        .service(service.clone())
        .legacy_get_stream(false)
        .build(ConnectionHandlers::discard())
        .unwrap();
    let outcome = transport
        .request(
            Request::new(1, "tools/call", Some(json!({"name": "work"}))),
            RequestOptions::new().timeout(LIMIT),
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

    let client = tokio::time::timeout(
        LIMIT,
        mcp_client::Client::builder()
            .supervise(mcp_client::RestartPolicy::new())
            .connect(HttpTransportBuilder::new(server.url()).service(service)),
    )
    .await
    .expect("connect in time")
    .expect("connect");
    let before = server.seen_method("tools/call").len();
    let called = tokio::time::timeout(LIMIT, client.call_tool("work", json!({})))
        .await
        .expect("the call ends in time");
    let error = called.expect_err("the call's answer was lost");
    assert!(
        matches!(error.kind(), mcp_client::ErrorKind::MayHaveRun { .. }),
        "{error:?}"
    );
    let calls = server.seen_method("tools/call").len() - before;
    assert_eq!(calls, 1, "the call that may have run was sent again");
    client.close().await;
}

// ---------------------------------------------------------------------
// A 400 that does not name the session.

/// A legacy server whose `initialize` opens session "s" and whose every
/// other POST is answered by `answer`.
async fn session_server(answer: fn() -> Response<common::Body>) -> TestServer {
    TestServer::start(move |seen: Seen| async move {
        let body = seen.json();
        if body["method"] == "initialize" {
            let mut response = json(200, initialize_result(&body["id"]));
            response
                .headers_mut()
                .insert("mcp-session-id", "s".parse().unwrap());
            return response;
        }
        answer()
    })
    .await
}

async fn ping_in_a_session(server: &TestServer) -> (Result<Value, TransportError>, Option<String>) {
    let transport = HttpTransportBuilder::new(server.url())
        .legacy_get_stream(false)
        .build(ConnectionHandlers::discard())
        .unwrap();
    transport
        .request(initialize(1), RequestOptions::new().timeout(LIMIT))
        .await
        .unwrap();
    let outcome = transport
        .request(ping(2), RequestOptions::new().timeout(LIMIT))
        .await;
    let session = transport.session_id();
    transport.close().await;
    (outcome, session)
}

/// A proxy's error page that mentions `sessionStorage` in its script is
/// the proxy's HTTP error, and the session stays.
#[tokio::test]
async fn a_400_html_page_mentioning_session_storage_keeps_the_session() {
    let server = session_server(|| {
        Response::builder()
            .status(400)
            .header("content-type", "text/html")
            .body(full(
                "<html><body><h1>400 Bad Request</h1>\
                 <script>sessionStorage.setItem('seen', '1')</script></body></html>",
            ))
            .unwrap()
    })
    .await;
    let (outcome, session) = ping_in_a_session(&server).await;
    assert!(
        matches!(&outcome, Err(TransportError::Http { status: 400, body }) if body.contains("400 Bad Request")),
        "{outcome:?}"
    );
    assert_eq!(session.as_deref(), Some("s"), "the session was forgotten");
}

/// The TypeScript SDK's servers (its examples' session routing) answer an
/// unknown session with this body.
const TYPESCRIPT_SDK_NO_SESSION: &str = r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}"#;
/// The Python SDK's `StreamableHTTPSessionManager` answers an unknown
/// session with this text, no JSON-RPC, no `Content-Type`.
const PYTHON_SDK_NO_SESSION: &str = "Bad Request: No valid session ID provided";

#[tokio::test]
async fn the_sdks_400_for_an_unknown_session_is_still_session_expired() {
    let typescript = session_server(|| {
        Response::builder()
            .status(400)
            .header("content-type", "application/json")
            .body(full(TYPESCRIPT_SDK_NO_SESSION))
            .unwrap()
    })
    .await;
    let python = session_server(|| {
        Response::builder()
            .status(400)
            .body(full(PYTHON_SDK_NO_SESSION))
            .unwrap()
    })
    .await;
    for server in [typescript, python] {
        let (outcome, session) = ping_in_a_session(&server).await;
        assert_eq!(outcome, Err(TransportError::SessionExpired { status: 400 }));
        assert_eq!(session, None);
    }
}

// ---------------------------------------------------------------------
// Legacy streams left open after their answer.

/// A legacy server that answers each POST on an SSE stream and leaves it
/// open, silent, after the answer: each stream the client closes is
/// reported on `closed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_streams_left_open_after_their_answer_are_closed_soon_after() {
    let (closed_tx, mut closed_rx) = tokio::sync::mpsc::unbounded_channel();
    let server = TestServer::start(move |seen: Seen| {
        let closed_tx = closed_tx.clone();
        async move {
            let id = seen.json()["id"].clone();
            let (tx, response) = sse();
            tokio::spawn(async move {
                let answer = json!({"jsonrpc": "2.0", "id": id, "result": {}});
                let _ = tx.send(event(&answer)).await;
                if tokio::time::timeout(LIMIT, tx.closed()).await.is_ok() {
                    let _ = closed_tx.send(id);
                }
            });
            response
        }
    })
    .await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    for id in 1..=3 {
        transport
            .request(ping(id), RequestOptions::new().timeout(LIMIT))
            .await
            .unwrap();
    }
    let mut closed = Vec::new();
    while closed.len() < 3 {
        let id = tokio::time::timeout(Duration::from_secs(10), closed_rx.recv())
            .await
            .unwrap_or_else(|_| {
                panic!("streams still open 10 s after their answers; closed: {closed:?}")
            })
            .unwrap();
        closed.push(id);
    }
    transport.close().await;
}

// ---------------------------------------------------------------------
// The connect timeout covers TLS; a GET stream's head is bounded.

/// A server that accepts TCP and never says a word: the TLS handshake
/// never completes, and the connect timeout still ends the request.
#[tokio::test]
async fn a_tls_handshake_that_never_completes_ends_with_the_connect_timeout() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let held = tokio::spawn(async move {
        let mut sockets = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            sockets.push(socket);
        }
    });
    let transport = HttpTransportBuilder::new(format!("https://{addr}/mcp"))
        .proxy(ProxyConfig::None)
        .connect_timeout(Duration::from_millis(300))
        .build(ConnectionHandlers::discard())
        .unwrap();
    let start = std::time::Instant::now();
    let outcome = tokio::time::timeout(LIMIT, transport.request(ping(1), RequestOptions::new()))
        .await
        .expect("the connect timeout does not cover the TLS handshake");
    assert!(
        matches!(&outcome, Err(TransportError::Unreachable { cause }) if cause.contains("connect timeout")),
        "{outcome:?}"
    );
    let took = start.elapsed();
    assert!(took < Duration::from_secs(10), "took {took:?}");
    transport.close().await;
    held.abort();
}

/// A legacy server (an HTTP client in the test, on tokio's paused clock)
/// that answers everything but never the GET stream's request: the GET
/// is given up and opened again, not waited for for ever.
#[tokio::test(start_paused = true)]
async fn a_get_stream_the_server_never_answers_is_opened_again() {
    let gets = Arc::new(AtomicUsize::new(0));
    let counted = gets.clone();
    let service = HttpService::new(tower::service_fn(
        move |request: http::Request<RequestBody>| {
            let gets = counted.clone();
            async move {
                if request.method() == http::Method::GET {
                    gets.fetch_add(1, Ordering::SeqCst);
                    return futures::future::pending().await;
                }
                let bytes = request.into_body().collect().await?.to_bytes();
                let message: Value = serde_json::from_slice(&bytes)?;
                if message["method"] == "initialize" {
                    let mut response = json_response(&initialize_result(&message["id"]));
                    response
                        .headers_mut()
                        .insert("mcp-session-id", "g".parse().unwrap());
                    return Ok::<_, BoxError>(response);
                }
                Ok(http::Response::builder()
                    .status(202)
                    .body(body(Bytes::new()))
                    .unwrap())
            }
        },
    ));
    let transport = HttpTransportBuilder::new("http://127.0.0.1:9/mcp")
        .service(service)
        .build(ConnectionHandlers::discard())
        .unwrap();
    transport
        .request(initialize(1), RequestOptions::new().timeout(LIMIT))
        .await
        .unwrap();
    transport
        .notify(Notification::new("notifications/initialized", None))
        .unwrap();
    // Paused: the clock jumps to each timer.
    tokio::time::sleep(Duration::from_secs(120)).await;
    let gets = gets.load(Ordering::SeqCst);
    assert!(
        gets >= 2,
        "the GET the server never answered was waited for 120 s ({gets} GET sent)"
    );
    transport.close().await;
}

// ---------------------------------------------------------------------
// A caller on another runtime.

/// A request's future polled by a thread with no tokio runtime (another
/// executor): the exchange it drives still runs in the transport's
/// runtime, timers included (reading an error body arms one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_awaited_outside_the_transport_s_runtime_is_driven_in_it() {
    let server = TestServer::start(|_seen: Seen| async move {
        // Late enough that the other thread waits for it.
        tokio::time::sleep(Duration::from_millis(500)).await;
        Response::builder()
            .status(500)
            .header("content-type", "text/plain")
            .body(full("down for maintenance"))
            .unwrap()
    })
    .await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    let answer = transport.request(ping(1), RequestOptions::new().timeout(LIMIT));
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| block_on(answer)))
            .map_err(|panic| {
                panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default()
            });
        let _ = tx.send(outcome);
    });
    let outcome = tokio::time::timeout(LIMIT, rx)
        .await
        .expect("the request ends in time")
        .unwrap();
    match outcome {
        Ok(Err(TransportError::Http { status: 500, .. })) => {}
        Ok(other) => panic!("{other:?}"),
        Err(panic) => panic!("polling the request outside the runtime panicked: {panic}"),
    }
    transport.close().await;
}

/// Polls `future` to its end on this thread, parking between wakes: an
/// executor that is no tokio runtime.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::park();
    }
}
