//! What HTTP says, typed, against real loopback sockets: every bad answer
//! gets its own error and nothing hangs.

mod common;

use std::time::{Duration, Instant};

use common::{TestServer, full, json, result, sse};
use http::Response;
use mcp_protocol::Request;
use mcp_transport::{
    ConnectionHandlers, Listener, RequestOptions, Transport, TransportError, TransportEvent,
};
use mcp_transport_http::HttpTransportBuilder;
use serde_json::json;

fn ping(id: i64) -> Request {
    Request::new(id, "ping", None)
}

async fn outcome_of(server: &TestServer) -> Result<serde_json::Value, TransportError> {
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    let outcome = transport
        .request(
            ping(1),
            RequestOptions::new().timeout(Duration::from_secs(5)),
        )
        .await;
    transport.close().await;
    outcome
}

#[tokio::test]
async fn a_502_with_an_html_body_is_http_with_its_start() {
    let server = TestServer::start(|_| async {
        Response::builder()
            .status(502)
            .header("content-type", "text/html")
            .body(full("<html><body><h1>502 Bad Gateway</h1></body></html>"))
            .unwrap()
    })
    .await;
    let outcome = outcome_of(&server).await;
    let Err(TransportError::Http { status, body }) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(status, 502);
    assert!(body.contains("502 Bad Gateway"), "{body}");
}

#[tokio::test]
async fn a_5xx_with_a_json_rpc_body_is_still_http() {
    let server = TestServer::start(|_| async {
        json(
            500,
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "boom"}}),
        )
    })
    .await;
    let outcome = outcome_of(&server).await;
    assert!(
        matches!(outcome, Err(TransportError::Http { status: 500, .. })),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_refused_port_is_unreachable_quickly() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let transport = HttpTransportBuilder::new(format!("http://127.0.0.1:{port}/mcp"))
        .build(ConnectionHandlers::discard())
        .unwrap();
    let start = Instant::now();
    let outcome = transport.request(ping(1), RequestOptions::new()).await;
    let took = start.elapsed();
    let Err(TransportError::Unreachable { cause }) = outcome else {
        panic!("{outcome:?}")
    };
    assert!(cause.to_lowercase().contains("refused"), "{cause}");
    assert!(took < Duration::from_secs(2), "{took:?}");
    transport.close().await;
}

#[tokio::test]
async fn a_server_that_never_sends_headers_times_out() {
    let server = TestServer::start(|_| std::future::pending::<Response<common::Body>>()).await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    let start = Instant::now();
    let outcome = transport
        .request(
            ping(1),
            RequestOptions::new().timeout(Duration::from_millis(300)),
        )
        .await;
    let took = start.elapsed();
    assert!(
        matches!(outcome, Err(TransportError::Timeout { .. })),
        "{outcome:?}"
    );
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(2),
        "{took:?}"
    );
    transport.close().await;
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_refused_and_nothing_is_sent_there() {
    let elsewhere = TestServer::start(|seen| async move { result(&seen, json!({})) }).await;
    let target = elsewhere.url();
    let server = TestServer::start(move |_| {
        let target = target.clone();
        async move {
            Response::builder()
                .status(307)
                .header("location", target)
                .body(full(""))
                .unwrap()
        }
    })
    .await;
    let transport = HttpTransportBuilder::new(server.url())
        .header(
            http::header::AUTHORIZATION,
            "Bearer secret".parse().unwrap(),
        )
        .build(ConnectionHandlers::discard())
        .unwrap();
    let outcome = transport.request(ping(1), RequestOptions::new()).await;
    let Err(TransportError::RedirectRefused {
        status, location, ..
    }) = outcome
    else {
        panic!("{outcome:?}")
    };
    assert_eq!(status, 307);
    assert_eq!(location, elsewhere.url());
    assert!(
        elsewhere.seen().is_empty(),
        "nothing reached the other origin"
    );
    assert_eq!(server.seen().len(), 1);
    transport.close().await;
}

#[tokio::test]
async fn same_origin_307_and_308_are_followed_with_method_body_and_headers() {
    let server = TestServer::start(|seen| async move {
        match seen.path.as_str() {
            "/mcp" => Response::builder()
                .status(307)
                .header("location", "/moved")
                .body(full(""))
                .unwrap(),
            "/moved" => Response::builder()
                .status(308)
                .header("location", "final")
                .body(full(""))
                .unwrap(),
            _ => result(&seen, json!({"ok": true})),
        }
    })
    .await;
    let transport = HttpTransportBuilder::new(server.url())
        .header(
            http::header::AUTHORIZATION,
            "Bearer secret".parse().unwrap(),
        )
        .build(ConnectionHandlers::discard())
        .unwrap();
    let value = transport
        .request(ping(1), RequestOptions::new())
        .await
        .unwrap();
    assert_eq!(value["ok"], true);
    let seen = server.seen();
    let paths: Vec<&str> = seen.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(paths, ["/mcp", "/moved", "/final"]);
    for s in &seen {
        assert_eq!(s.method, http::Method::POST);
        assert_eq!(s.json()["method"], "ping");
        assert_eq!(s.header("authorization"), Some("Bearer secret"));
    }
    transport.close().await;
}

#[tokio::test]
async fn a_redirect_loop_stops_after_the_limit() {
    let server = TestServer::start(|_| async {
        Response::builder()
            .status(307)
            .header("location", "/mcp")
            .body(full(""))
            .unwrap()
    })
    .await;
    let outcome = outcome_of(&server).await;
    assert!(
        matches!(outcome, Err(TransportError::RedirectRefused { .. })),
        "{outcome:?}"
    );
    assert_eq!(server.seen().len(), 4, "the first try and three hops");
}

#[tokio::test]
async fn an_oversized_json_body_is_message_too_large() {
    let server =
        TestServer::start(|seen| async move { result(&seen, json!({"blob": "x".repeat(10_000)})) })
            .await;
    let transport = HttpTransportBuilder::new(server.url())
        .max_message_size(4096)
        .build(ConnectionHandlers::discard())
        .unwrap();
    let outcome = transport.request(ping(1), RequestOptions::new()).await;
    assert!(
        matches!(
            outcome,
            Err(TransportError::MessageTooLarge { limit: 4096, .. })
        ),
        "{outcome:?}"
    );
    transport.close().await;
}

#[tokio::test]
async fn an_oversized_sse_event_is_message_too_large_and_reported() {
    let server = TestServer::start(|seen| async move {
        let id = seen.json()["id"].clone();
        let (tx, response) = sse();
        tokio::spawn(async move {
            let big = json!({"jsonrpc": "2.0", "id": id, "result": {"blob": "y".repeat(10_000)}});
            let _ = tx.send(format!("data: {big}\n\n")).await;
            tokio::time::sleep(Duration::from_secs(2)).await;
        });
        response
    })
    .await;
    let (events, mut events_stream) = Listener::<TransportEvent>::bounded("events", 8);
    let transport = HttpTransportBuilder::new(server.url())
        .max_message_size(4096)
        .build(ConnectionHandlers::discard().with_events(events))
        .unwrap();
    let outcome = transport.request(ping(5), RequestOptions::new()).await;
    assert!(
        matches!(
            outcome,
            Err(TransportError::MessageTooLarge { limit: 4096, .. })
        ),
        "{outcome:?}"
    );
    use futures::StreamExt;
    let event = events_stream.next().await.unwrap();
    assert!(
        matches!(event, TransportEvent::TooLarge { id: Some(ref id), request: false, .. } if *id == 5.into()),
        "{event:?}"
    );
    transport.close().await;
}

#[tokio::test]
async fn authorization_and_rate_limits_are_typed() {
    let server = TestServer::start(|seen| async move {
        if seen.json()["id"] == 1 {
            Response::builder()
                .status(401)
                .header(
                    "www-authenticate",
                    r#"Bearer resource_metadata="http://x/.well-known/oauth-protected-resource""#,
                )
                .body(full(""))
                .unwrap()
        } else {
            Response::builder()
                .status(429)
                .header("retry-after", "7")
                .body(full("slow down"))
                .unwrap()
        }
    })
    .await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    let auth = transport.request(ping(1), RequestOptions::new()).await;
    let Err(TransportError::AuthorizationRequired {
        status: 401,
        challenge: Some(challenge),
    }) = auth
    else {
        panic!("{auth:?}")
    };
    assert!(challenge.contains("resource_metadata"));
    let limited = transport.request(ping(2), RequestOptions::new()).await;
    assert_eq!(
        limited,
        Err(TransportError::RetryLater {
            status: 429,
            retry_after: Some(Duration::from_secs(7)),
            body: "slow down".into()
        })
    );
    transport.close().await;
}

#[tokio::test]
async fn a_wrong_content_type_is_http() {
    let server = TestServer::start(|_| async {
        Response::builder()
            .status(200)
            .header("content-type", "text/plain")
            .body(full("pong"))
            .unwrap()
    })
    .await;
    let outcome = outcome_of(&server).await;
    assert!(
        matches!(outcome, Err(TransportError::Http { status: 200, .. })),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_202_to_a_request_is_no_answer() {
    let server = TestServer::start(|_| async { common::status(202) }).await;
    let outcome = outcome_of(&server).await;
    assert!(
        matches!(outcome, Err(TransportError::StreamBroken { .. })),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn an_invalid_url_fails_the_build() {
    let built =
        HttpTransportBuilder::new("ftp://example.com/mcp").build(ConnectionHandlers::discard());
    assert!(matches!(built, Err(TransportError::Unreachable { .. })));
}

#[tokio::test]
async fn http_goes_to_a_forward_proxy_in_absolute_form() {
    use mcp_transport_http::ProxyConfig;
    // The "proxy" answers itself; the target port is closed, so only the
    // proxy can have answered.
    let proxy =
        TestServer::start(|seen| async move { result(&seen, json!({"via": "proxy"})) }).await;
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let target = format!("http://127.0.0.1:{port}/mcp");
    let transport = HttpTransportBuilder::new(target.clone())
        .proxy(ProxyConfig::Explicit {
            http: Some(format!("http://{}", proxy.addr)),
            https: None,
            no_proxy: None,
        })
        .build(ConnectionHandlers::discard())
        .unwrap();
    let value = transport
        .request(ping(1), RequestOptions::new())
        .await
        .unwrap();
    assert_eq!(value["via"], "proxy");
    assert_eq!(proxy.seen()[0].uri, target);
    transport.close().await;
}

#[tokio::test]
async fn a_missing_content_type_is_read_as_json_and_junk_is_malformed() {
    // Lenient where nothing is lost: a JSON answer without its header is
    // still the answer; anything else is a typed error, at once.
    let server = TestServer::start(|seen| async move {
        let body = match seen.json()["id"].as_i64() {
            Some(1) => json!({"jsonrpc": "2.0", "id": 1, "result": {"ok": true}}).to_string(),
            _ => "<html>not json</html>".to_owned(),
        };
        Response::builder().status(200).body(full(body)).unwrap()
    })
    .await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    let options = || RequestOptions::new().timeout(Duration::from_secs(5));
    let answered = transport.request(ping(1), options()).await;
    assert_eq!(answered.unwrap()["ok"], true);
    let junk = transport.request(ping(2), options()).await;
    assert!(
        matches!(junk, Err(TransportError::Malformed { .. })),
        "{junk:?}"
    );
    transport.close().await;
}

/// A streamed body that sends `byte` every `every`, forever.
fn endless(
    content_type: &'static str,
    chunk: &'static [u8],
    every: Duration,
) -> Response<common::Body> {
    use http_body_util::BodyExt;
    let stream = futures::stream::unfold((), move |()| async move {
        tokio::time::sleep(every).await;
        Some((
            Ok::<_, std::convert::Infallible>(hyper::body::Frame::data(bytes::Bytes::from_static(
                chunk,
            ))),
            (),
        ))
    });
    Response::builder()
        .status(200)
        .header("content-type", content_type)
        .body(http_body_util::StreamBody::new(stream).boxed())
        .unwrap()
}

#[tokio::test]
async fn an_sse_stream_that_drips_ends_with_the_request_timeout() {
    // One byte at a time, never a whole event: the stream is alive but
    // says nothing, and the request's own timer ends it.
    let server = TestServer::start(|_| async {
        endless("text/event-stream", b"d", Duration::from_millis(50))
    })
    .await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    let started = Instant::now();
    let outcome = transport
        .request(
            ping(1),
            RequestOptions::new().timeout(Duration::from_millis(500)),
        )
        .await;
    assert!(
        matches!(outcome, Err(TransportError::Timeout { .. })),
        "{outcome:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    transport.close().await;
}

#[tokio::test]
async fn a_json_body_that_never_ends_is_message_too_large() {
    static CHUNK: [u8; 16 * 1024] = [b' '; 16 * 1024];
    let server = TestServer::start(|_| async {
        endless("application/json", &CHUNK, Duration::from_millis(1))
    })
    .await;
    let transport = HttpTransportBuilder::new(server.url())
        .max_message_size(256 * 1024)
        .build(ConnectionHandlers::discard())
        .unwrap();
    let started = Instant::now();
    let outcome = transport
        .request(
            ping(1),
            RequestOptions::new().timeout(Duration::from_secs(10)),
        )
        .await;
    assert!(
        matches!(
            outcome,
            Err(TransportError::MessageTooLarge { limit: 262_144, .. })
        ),
        "{outcome:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    transport.close().await;
}

/// An HTTP client that answers each request with a JSON body in frames of
/// `frame` bytes, under a `Content-Type` in capitals with a charset.
fn framed_service(frame: usize) -> mcp_transport_http::HttpService {
    use bytes::Bytes;
    use http_body_util::{BodyExt, StreamBody};
    use mcp_transport_http::{BoxError, RequestBody};
    mcp_transport_http::HttpService::new(tower::service_fn(
        move |req: http::Request<RequestBody>| async move {
            let body = req.into_body().collect().await?.to_bytes();
            let id = serde_json::from_slice::<serde_json::Value>(&body)?["id"].clone();
            let text = json!({"jsonrpc": "2.0", "id": id, "result": {"text": "x".repeat(100)}})
                .to_string();
            let frames: Vec<Result<http_body::Frame<Bytes>, BoxError>> = text
                .as_bytes()
                .chunks(frame)
                .map(|c| Ok(http_body::Frame::data(Bytes::copy_from_slice(c))))
                .collect();
            let body = StreamBody::new(futures::stream::iter(frames)).boxed();
            Ok::<_, BoxError>(
                Response::builder()
                    .header("content-type", "Application/JSON; charset=utf-8")
                    .body(body)?,
            )
        },
    ))
}

#[tokio::test]
async fn a_json_answer_in_many_frames_is_read_whole_and_bounded_as_a_whole() {
    let transport = HttpTransportBuilder::new("http://127.0.0.1:9/mcp")
        .service(framed_service(7))
        .build(ConnectionHandlers::discard())
        .unwrap();
    let result = transport
        .request(ping(1), RequestOptions::new())
        .await
        .unwrap();
    assert_eq!(result["text"], "x".repeat(100));
    // Each frame fits the limit; the body does not.
    let transport = HttpTransportBuilder::new("http://127.0.0.1:9/mcp")
        .service(framed_service(7))
        .max_message_size(50)
        .build(ConnectionHandlers::discard())
        .unwrap();
    let outcome = transport.request(ping(2), RequestOptions::new()).await;
    assert!(
        matches!(
            outcome,
            Err(TransportError::MessageTooLarge { limit: 50, .. })
        ),
        "{outcome:?}"
    );
}

/// An answer event holding a number JSON cannot hold (`1e600`) fails its
/// request at once, small or large, while the stream stays open.
#[tokio::test]
async fn an_sse_answer_with_a_number_out_of_range_fails_its_request_at_once() {
    let server = TestServer::start(|seen| async move {
        let id = seen.json()["id"].as_i64().unwrap();
        let (tx, response) = sse();
        tokio::spawn(async move {
            let pad = "y".repeat(if id == 1 { 0 } else { 16 * 1024 });
            let line =
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"pad":"{pad}","n":1.52e600}}}}"#);
            let _ = tx.send(format!("data: {line}\n\n")).await;
            tokio::time::sleep(Duration::from_secs(30)).await;
        });
        response
    })
    .await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    for id in [1, 2] {
        let start = Instant::now();
        let outcome = transport
            .request(
                ping(id),
                RequestOptions::new().timeout(Duration::from_secs(20)),
            )
            .await;
        assert!(
            matches!(outcome, Err(TransportError::Malformed { .. })),
            "{outcome:?}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "waited {:?}",
            start.elapsed()
        );
    }
    transport.close().await;
}
