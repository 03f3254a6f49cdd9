//! Concurrent requests against a real loopback socket: each is a POST of
//! its own and none waits for another's answer, while a notification sent
//! after requests (a cancel above all) still reaches the server after them.

mod common;

use std::time::{Duration, Instant};

use common::{Seen, TestServer, result, status};
use mcp_protocol::{Notification, Request};
use mcp_transport::{CancellationToken, ConnectionHandlers, RequestOptions, Transport};
use mcp_transport_http::{HttpTransport, HttpTransportBuilder};
use serde_json::json;

/// How long the server holds a slow request's response head.
const SLOW: Duration = Duration::from_millis(300);

/// Answers `tools/call` of the tool `slow` after [`SLOW`], everything else
/// at once; notifications get a 202.
async fn server() -> TestServer {
    TestServer::start(|seen: Seen| async move {
        let body = seen.json();
        if body.get("id").is_none() {
            return status(202);
        }
        if body["params"]["name"] == "slow" {
            tokio::time::sleep(SLOW).await;
        }
        result(&seen, json!({"content": []}))
    })
    .await
}

/// A transport to `server`, without the GET stream (only POSTs reach it).
fn transport(server: &TestServer) -> HttpTransport {
    HttpTransportBuilder::new(server.url())
        .legacy_get_stream(false)
        .build(ConnectionHandlers::discard())
        .unwrap()
}

fn call(id: i64, name: &str) -> Request {
    Request::new(id, "tools/call", Some(json!({"name": name})))
}

/// The position of the first request the server saw for which `is` holds.
fn position(seen: &[Seen], is: impl Fn(&serde_json::Value) -> bool) -> Option<usize> {
    seen.iter().position(|s| is(&s.json()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_does_not_wait_for_the_answers_of_those_before_it() {
    let server = server().await;
    let transport = transport(&server);
    // Warm: the first connection is open before the clock starts.
    transport
        .request(call(0, "fast"), RequestOptions::new())
        .await
        .unwrap();

    // Sixteen requests whose heads come late, then one answered at once.
    // Had each waited even a moment (25 ms) for the one before it, the
    // last would leave after 400 ms, more than a slow answer takes.
    let slow: Vec<_> = (1..=16)
        .map(|id| tokio::spawn(transport.request(call(id, "slow"), RequestOptions::new())))
        .collect();
    let start = Instant::now();
    transport
        .request(call(99, "fast"), RequestOptions::new())
        .await
        .unwrap();
    let fast = start.elapsed();
    assert!(
        fast < SLOW * 2 / 3,
        "the fast request took {fast:?}: it waited for the slow ones' heads"
    );
    for answer in slow {
        answer.await.unwrap().unwrap();
    }
    let all = start.elapsed();
    assert!(
        all < SLOW * 2,
        "sixteen slow requests took {all:?}: they were answered one after another"
    );
    transport.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_reaches_the_server_after_the_requests_before_it() {
    let server = server().await;
    let transport = transport(&server);
    let slow: Vec<_> = (1..=4)
        .map(|id| tokio::spawn(transport.request(call(id, "slow"), RequestOptions::new())))
        .collect();
    let start = Instant::now();
    transport
        .notify(Notification::new("notifications/roots/list_changed", None))
        .unwrap();
    // The next request leaves after the notification was taken.
    transport
        .request(call(99, "fast"), RequestOptions::new())
        .await
        .unwrap();
    let waited = start.elapsed();
    assert!(
        waited < SLOW * 2 / 3,
        "the notification waited {waited:?}, as long as the requests' answers"
    );
    let seen = server.seen();
    let notified = position(&seen, |b| b.get("id").is_none()).expect("the notification");
    for id in 1..=4 {
        let at = position(&seen, |b| b["id"] == id).expect("the request");
        assert!(
            at < notified,
            "request {id} reached the server after the notification"
        );
    }
    for answer in slow {
        answer.await.unwrap().unwrap();
    }
    transport.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_reaches_the_server_after_the_request_it_names() {
    let server = server().await;
    let transport = transport(&server);
    let token = CancellationToken::new();
    let answer = tokio::spawn(transport.request(
        call(1, "slow"),
        RequestOptions::new().cancellation(token.clone()),
    ));
    // Taken off the queue (a cancel before that sends nothing at all), but
    // not necessarily on the wire yet.
    tokio::time::sleep(Duration::from_millis(1)).await;
    token.cancel();
    assert!(answer.await.unwrap().is_err());
    let deadline = Instant::now() + Duration::from_secs(2);
    let seen = loop {
        let seen = server.seen();
        if position(&seen, |b| b["method"] == "notifications/cancelled").is_some() {
            break seen;
        }
        assert!(Instant::now() < deadline, "no cancel reached the server");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let cancelled = position(&seen, |b| b["method"] == "notifications/cancelled").unwrap();
    assert_eq!(seen[cancelled].json()["params"]["requestId"], 1);
    let request = position(&seen, |b| b["id"] == 1).expect("the request");
    assert!(request < cancelled, "the cancel overtook its request");
    transport.close().await;
}
