//! Who may reach the bridge over HTTP, and how much of it: `Host` and
//! `Origin` (DNS rebinding), its bearer token, the session cap, body
//! sizes, and clients too slow to send a request.

mod support;

use std::time::Duration;

use mcp_bridge::{Bridge, BridgeError, HttpOptions};
use mcp_reference_server::{FakeConfig, FakeServer};
use support::http::{INITIALIZE, Served, post, raw};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test]
async fn dns_rebinding_and_foreign_origins_are_refused() {
    let server = FakeServer::new(FakeConfig::legacy());
    let served = Served::start(Bridge::new(server.connector()), HttpOptions::new()).await;
    let (status, _) = raw(served.addr, &post("evil.example:80", "", INITIALIZE)).await;
    assert_eq!(status, 403);
    let origin = "Origin: http://evil.example\r\n";
    let (status, _) = raw(served.addr, &post("127.0.0.1", origin, INITIALIZE)).await;
    assert_eq!(status, 403);
    let (status, text) = raw(served.addr, &post("localhost:1", "", INITIALIZE)).await;
    assert_eq!(status, 200, "{text}");
    let id = text
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .expect("a session id");
    assert_eq!(id.len(), 32);
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
    assert_eq!(
        server.connection_count(),
        1,
        "nothing refused reached the server"
    );
    served.stop().await;
}

#[tokio::test]
async fn a_bearer_token_is_required_when_set_and_beyond_loopback() {
    let server = FakeServer::new(FakeConfig::legacy());
    let everywhere = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
    let refused = Bridge::new(server.connector())
        .serve_http(everywhere, HttpOptions::new(), std::future::pending())
        .await;
    assert!(
        matches!(refused, Err(BridgeError::Exposed(_))),
        "{refused:?}"
    );

    let options = HttpOptions::new().bearer_token("s3cret\n");
    let served = Served::start(Bridge::new(server.connector()), options).await;
    let (status, text) = raw(served.addr, &post("localhost", "", INITIALIZE)).await;
    assert_eq!(status, 401);
    assert!(
        text.to_ascii_lowercase()
            .contains("www-authenticate: bearer"),
        "{text}"
    );
    let wrong = "Authorization: Bearer s3cre\r\n";
    assert_eq!(
        raw(served.addr, &post("localhost", wrong, INITIALIZE))
            .await
            .0,
        401
    );
    let right = "Authorization: Bearer s3cret\r\n";
    assert_eq!(
        raw(served.addr, &post("localhost", right, INITIALIZE))
            .await
            .0,
        200
    );
    served.stop().await;
}

#[tokio::test]
async fn limits_sessions_and_body_sizes() {
    let server = FakeServer::new(FakeConfig::legacy());
    let bridge = Bridge::new(server.connector()).max_message_size(4096);
    let served = Served::start(bridge, HttpOptions::new().max_sessions(1)).await;
    assert_eq!(
        raw(served.addr, &post("localhost", "", INITIALIZE)).await.0,
        200
    );
    let (status, text) = raw(served.addr, &post("localhost", "", INITIALIZE)).await;
    assert_eq!(status, 503, "{text}");
    assert!(text.contains("at most 1 sessions"), "{text}");
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(5000)
    );
    let (status, text) = raw(served.addr, &post("localhost", "", &big)).await;
    assert_eq!(status, 413, "{text}");
    let (status, _) = raw(served.addr, &post("localhost", "", "{not json")).await;
    assert_eq!(status, 400);
    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_time_out_and_sessions_opened_at_once_keep_the_cap() {
    let server = FakeServer::new(FakeConfig::legacy());
    let options = HttpOptions::new()
        .max_sessions(2)
        .request_timeout(Duration::from_millis(300));
    let served = Served::start(Bridge::new(server.connector()), options).await;
    // A head that never ends: the connection is closed.
    let mut socket = tokio::net::TcpStream::connect(served.addr).await.unwrap();
    socket.write_all(b"POST /mcp HTTP/1.1\r\nHo").await.unwrap();
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(3), socket.read_to_end(&mut rest))
        .await
        .expect("the bridge closes a connection whose head never ends")
        .ok();
    // A body shorter than it said: `408`.
    let mut socket = tokio::net::TcpStream::connect(served.addr).await.unwrap();
    let head = "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
                Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"";
    socket.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(3), socket.read_to_end(&mut answer))
        .await
        .expect("a body that never ends is answered")
        .ok();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    // Six sessions opened at once, two places: two open.
    let initialize = post("localhost", "", INITIALIZE);
    let opening = (0..6).map(|_| raw(served.addr, &initialize));
    let mut statuses: Vec<u16> = futures::future::join_all(opening)
        .await
        .into_iter()
        .map(|(status, _)| status)
        .collect();
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 200, 503, 503, 503, 503]);
    served.stop().await;
}
