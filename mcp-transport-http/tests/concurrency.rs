//! Concurrent requests: each is a POST of its own and none waits for
//! another's answer or even its bytes, while a notification sent after
//! requests (a cancel above all) still reaches the server after them. A
//! real loopback socket, and an HTTP client that holds a body unread.

mod common;

use std::time::{Duration, Instant};

use common::{Seen, TestServer, result, status};
use mcp_protocol::{Notification, Request};
use mcp_transport::{CancellationToken, ConnectionHandlers, RequestOptions, Transport};
use mcp_transport_http::{HttpService, HttpTransport, HttpTransportBuilder, RequestBody};
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

/// What the [`holding_service`] saw, in order: `post N` when the POST of
/// the message with id N (`post -` for a notification) reached it, `taken
/// N` when it read that body.
type Log = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

/// An HTTP client whose first POST's body stays unread until `release`
/// is notified: what a request on a connection still being opened looks
/// like to the transport. Every request is answered with an empty result,
/// every notification with 202.
fn holding_service(log: Log, release: std::sync::Arc<tokio::sync::Notify>) -> HttpService {
    use http_body_util::{BodyExt, Full};
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    HttpService::new(tower::service_fn(move |req: http::Request<RequestBody>| {
        let (log, release, calls) = (log.clone(), release.clone(), calls.clone());
        async move {
            let first = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0;
            log.lock().unwrap().push("post".into());
            if first {
                release.notified().await;
            }
            let body = req.into_body().collect().await?.to_bytes();
            let message: serde_json::Value = serde_json::from_slice(&body)?;
            let id = message.get("id").map_or("-".into(), |id| id.to_string());
            {
                let mut log = log.lock().unwrap();
                // Named once the body is read: the POST's line is the last
                // unnamed one.
                if let Some(line) = log.iter_mut().rev().find(|l| *l == "post") {
                    *line = format!("post {id}");
                }
                log.push(format!("taken {id}"));
            }
            let response = match message.get("id") {
                Some(id) => http::Response::builder()
                    .header("content-type", "application/json")
                    .body(
                        Full::new(bytes::Bytes::from(
                            json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string(),
                        ))
                        .map_err(|never| match never {})
                        .boxed(),
                    ),
                None => http::Response::builder().status(202).body(
                    Full::new(bytes::Bytes::new())
                        .map_err(|never| match never {})
                        .boxed(),
                ),
            };
            Ok::<_, mcp_transport_http::BoxError>(response?)
        }
    }))
}

/// A transport over [`holding_service`], with its log and its release.
fn holding_transport() -> (HttpTransport, Log, std::sync::Arc<tokio::sync::Notify>) {
    let log = Log::default();
    let release = std::sync::Arc::new(tokio::sync::Notify::new());
    let transport = HttpTransportBuilder::new("http://127.0.0.1:9/mcp")
        .service(holding_service(log.clone(), release.clone()))
        .build(ConnectionHandlers::discard())
        .unwrap();
    (transport, log, release)
}

/// Waits (5 s at most, else fails saying `what`) until `log` holds
/// `entries` lines.
async fn wait_for_entries(log: &Log, entries: usize, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while log.lock().unwrap().len() < entries {
        assert!(
            Instant::now() < deadline,
            "{what}: {:?}",
            log.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_does_not_wait_for_the_bytes_of_the_one_before_it() {
    let (transport, log, release) = holding_transport();
    // Whichever POST reaches the client first stays unread; the other is
    // answered meanwhile.
    let both =
        [1, 2].map(|id| tokio::spawn(transport.request(call(id, "a"), RequestOptions::new())));
    wait_for_entries(
        &log,
        3,
        "a request waited for the bytes of the one before it",
    )
    .await;
    release.notify_one();
    for answer in both {
        answer.await.unwrap().unwrap();
    }
    let log = log.lock().unwrap().clone();
    let held = log[0].strip_prefix("post ").unwrap().to_owned();
    let other = if held == "1" { "2" } else { "1" };
    assert_eq!(
        log,
        [
            format!("post {held}"),
            format!("post {other}"),
            format!("taken {other}"),
            format!("taken {held}")
        ]
    );
    transport.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_waits_for_the_bytes_of_the_requests_before_it() {
    let (transport, log, release) = holding_transport();
    let first = tokio::spawn(transport.request(call(1, "held"), RequestOptions::new()));
    transport
        .notify(Notification::new("notifications/roots/list_changed", None))
        .unwrap();
    // Longer than the grace a notification gives response heads.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        *log.lock().unwrap(),
        ["post"],
        "the notification left before the request's body was taken"
    );
    release.notify_one();
    first.await.unwrap().unwrap();
    wait_for_entries(&log, 4, "the notification never left").await;
    assert_eq!(
        *log.lock().unwrap(),
        ["post 1", "taken 1", "post -", "taken -"]
    );
    transport.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_cancelled_before_it_left_gets_no_cancel_on_the_wire() {
    let (transport, log, _release) = holding_transport();
    let token = CancellationToken::new();
    let answer = tokio::spawn(transport.request(
        call(1, "held"),
        RequestOptions::new().cancellation(token.clone()),
    ));
    // The HTTP client has the request, but has not taken its body.
    wait_for_entries(&log, 1, "the request never reached the HTTP client").await;
    token.cancel();
    assert!(answer.await.unwrap().is_err());
    // Queued after the cancel: had the cancel been posted, it came first.
    transport
        .request(call(2, "next"), RequestOptions::new())
        .await
        .unwrap();
    assert_eq!(*log.lock().unwrap(), ["post", "post 2", "taken 2"]);
    transport.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_polled_once_then_set_aside_does_not_hold_back_the_messages_after_it() {
    let (transport, log, release) = holding_transport();
    let mut first = transport.request(call(1, "held"), RequestOptions::new());
    // Polled once, then set aside: its caller is busy elsewhere, and its
    // exchange waits for the HTTP client, which holds its body.
    let waker = futures::task::noop_waker();
    let polled = first
        .as_mut()
        .poll(&mut std::task::Context::from_waker(&waker));
    assert!(polled.is_pending());
    transport
        .notify(Notification::new("notifications/roots/list_changed", None))
        .unwrap();
    release.notify_one();
    // Nobody polls `first`, yet its body leaves, then the notification.
    wait_for_entries(&log, 4, "the request set aside held back the notification").await;
    assert_eq!(
        *log.lock().unwrap(),
        ["post 1", "taken 1", "post -", "taken -"]
    );
    first.await.unwrap();
    transport.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_never_polled_is_sent_and_answered_all_the_same() {
    let (transport, log, release) = holding_transport();
    let first = transport.request(call(1, "held"), RequestOptions::new());
    release.notify_one();
    wait_for_entries(&log, 2, "a request never polled was not sent").await;
    // Its answer was read meanwhile: it is there at the first poll.
    tokio::time::sleep(Duration::from_millis(50)).await;
    use futures::FutureExt;
    assert!(matches!(first.now_or_never(), Some(Ok(_))));
    transport.close().await;
}

/// An HTTP client whose connection takes each POST's body in a task of its
/// own, as hyper's connection task does, whatever becomes of the response
/// future: the first body only once `release` is notified (a connection
/// still being opened). Logged as in [`holding_service`], a notification
/// named by its method.
fn connection_service(log: Log, release: std::sync::Arc<tokio::sync::Notify>) -> HttpService {
    use http_body_util::{BodyExt, Full};
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    HttpService::new(tower::service_fn(move |req: http::Request<RequestBody>| {
        let (log, release, calls) = (log.clone(), release.clone(), calls.clone());
        async move {
            let first = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0;
            log.lock().unwrap().push("post".into());
            let (taken_tx, taken_rx) = tokio::sync::oneshot::channel();
            let connection_log = log.clone();
            tokio::spawn(async move {
                if first {
                    release.notified().await;
                }
                let Ok(body) = req.into_body().collect().await;
                let message: serde_json::Value =
                    serde_json::from_slice(&body.to_bytes()).unwrap_or_default();
                let name = match message.get("id") {
                    Some(id) => id.to_string(),
                    None => message["method"].as_str().unwrap_or("-").to_owned(),
                };
                let mut log = connection_log.lock().unwrap();
                if let Some(line) = log.iter_mut().rev().find(|l| *l == "post") {
                    *line = format!("post {name}");
                }
                log.push(format!("taken {name}"));
                drop(log);
                let _ = taken_tx.send(message);
            });
            let message = taken_rx.await?;
            let response = match message.get("id") {
                Some(id) => http::Response::builder()
                    .header("content-type", "application/json")
                    .body(
                        Full::new(bytes::Bytes::from(
                            json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string(),
                        ))
                        .map_err(|never| match never {})
                        .boxed(),
                    ),
                None => http::Response::builder().status(202).body(
                    Full::new(bytes::Bytes::new())
                        .map_err(|never| match never {})
                        .boxed(),
                ),
            };
            Ok::<_, mcp_transport_http::BoxError>(response?)
        }
    }))
}

/// The request is with the HTTP client, whose connection has not taken
/// its body yet, when it is cancelled: the cancel waits for the body, and
/// reaches the server after the request it names, every time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_reaches_the_server_after_the_request_it_names() {
    let log = Log::default();
    let release = std::sync::Arc::new(tokio::sync::Notify::new());
    let transport = HttpTransportBuilder::new("http://127.0.0.1:9/mcp")
        .service(connection_service(log.clone(), release.clone()))
        .build(ConnectionHandlers::discard())
        .unwrap();
    let token = CancellationToken::new();
    let answer = tokio::spawn(transport.request(
        call(1, "held"),
        RequestOptions::new().cancellation(token.clone()),
    ));
    wait_for_entries(&log, 1, "the request never reached the HTTP client").await;
    token.cancel();
    assert!(answer.await.unwrap().is_err());
    // Time for a cancel that does not wait to leave (and show in the log).
    tokio::time::sleep(Duration::from_millis(200)).await;
    release.notify_one();
    wait_for_entries(&log, 4, "the cancel never left").await;
    assert_eq!(
        *log.lock().unwrap(),
        [
            "post 1",
            "taken 1",
            "post notifications/cancelled",
            "taken notifications/cancelled"
        ],
        "the cancel overtook its request"
    );
    transport.close().await;
}
