//! The real client recovering over this transport, against small servers
//! on loopback: an expired legacy session is renewed once for every
//! request that met it; a lost answer is re-sent only when that is
//! harmless; a `-32020` header refusal re-reads the tool list and retries
//! once.

mod common;

use std::future::IntoFuture;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use common::{Seen, TestServer, json, result, sse, status};
use mcp_client::{Client, EraMode, ErrorKind};
use mcp_protocol::types::LoggingLevel;
use mcp_transport::TransportError;
use mcp_transport_http::HttpTransportBuilder;
use serde_json::{Value, json};

const BOUND: Duration = Duration::from_secs(10);

fn session_of(seen: &Seen) -> Option<String> {
    seen.header("mcp-session-id").map(str::to_owned)
}

/// A legacy (2025-11-25) server whose sessions can be ended under the
/// client: after `expire`, every request naming an old session gets 404.
#[derive(Default)]
struct Sessions {
    opened: AtomicUsize,
    expired_below: AtomicUsize,
}

impl Sessions {
    fn expire(&self) {
        self.expired_below
            .store(self.opened.load(Ordering::SeqCst), Ordering::SeqCst);
    }

    fn answer(&self, seen: Seen) -> http::Response<common::Body> {
        let body = seen.json();
        if seen.method != http::Method::POST {
            return status(405);
        }
        if body["method"] == "initialize" {
            let n = self.opened.fetch_add(1, Ordering::SeqCst) + 1;
            let mut response = result(
                &seen,
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}, "logging": {}, "resources": {"subscribe": true}},
                    "serverInfo": {"name": "sessions", "version": "1"}
                }),
            );
            response
                .headers_mut()
                .insert("mcp-session-id", format!("s{n}").parse().unwrap());
            return response;
        }
        let live = session_of(&seen)
            .and_then(|s| s.strip_prefix('s')?.parse::<usize>().ok())
            .is_some_and(|n| n > self.expired_below.load(Ordering::SeqCst));
        if !live {
            return status(404);
        }
        if body.get("id").is_none() || body.get("method").is_none() {
            return status(202);
        }
        match body["method"].as_str() {
            Some("tools/call") => result(
                &seen,
                json!({"content": [{"type": "text", "text": body["params"]["arguments"]["text"]}]}),
            ),
            _ => result(&seen, json!({})),
        }
    }
}

/// A server answering as `sessions` does, each answer held back for as
/// long as `delay` says of its request.
async fn serve(
    sessions: &Arc<Sessions>,
    delay: impl Fn(&Seen) -> Option<Duration> + Send + Sync + 'static,
) -> TestServer {
    let sessions = sessions.clone();
    TestServer::start(move |seen| {
        let wait = delay(&seen);
        let answer = sessions.answer(seen);
        async move {
            if let Some(wait) = wait {
                tokio::time::sleep(wait).await;
            }
            answer
        }
    })
    .await
}

async fn legacy_client(url: String) -> Client {
    Client::builder()
        .era(EraMode::Legacy)
        .log_level(LoggingLevel::Warning)
        .connect(HttpTransportBuilder::new(url).legacy_get_stream(false))
        .await
        .expect("connect")
}

fn echoed(result: &mcp_protocol::types::CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_session_is_renewed_once_for_every_request_that_met_it() {
    let sessions = Arc::new(Sessions::default());
    let server = serve(&sessions, |_| None).await;
    let client = legacy_client(server.url()).await;
    client.subscribe_resource("file:///watched").await.unwrap();
    sessions.expire();

    let calls = (0..8).map(|i| {
        let client = client.clone();
        async move {
            client
                .call_tool("echo", json!({"text": format!("call {i}")}))
                .await
        }
    });
    let results = tokio::time::timeout(BOUND, futures::future::join_all(calls))
        .await
        .expect("the calls end");
    for (i, r) in results.iter().enumerate() {
        assert_eq!(
            echoed(r.as_ref().expect("retried on the new session")),
            format!("call {i}")
        );
    }

    let seen = server.seen();
    let inits = server.seen_method("initialize");
    assert_eq!(inits.len(), 2, "one initialize to connect, one to renew");
    // From the second initialize on, what belongs to the new session: a
    // call that left under the old one may reach the server after the
    // renewal began (each POST has a connection of its own).
    let after: Vec<&Seen> = seen
        .iter()
        .skip_while(|s| s.rpc_method().as_deref() != Some("initialize") || session_of(s).is_some())
        .skip(1)
        .skip_while(|s| s.rpc_method().as_deref() != Some("initialize"))
        .filter(|s| session_of(s).as_deref() != Some("s1"))
        .collect();
    let methods: Vec<String> = after
        .iter()
        .filter_map(|s| s.rpc_method())
        .take(4)
        .collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "logging/setLevel",
            "resources/subscribe"
        ],
        "the new session is set up as the old one was, before any retry"
    );
    assert_eq!(after[2].json()["params"]["level"], "warning");
    assert_eq!(after[3].json()["params"]["uri"], "file:///watched");
    // Each call reached the new session once, with an id of its own; on
    // the old one only those that left before the first 404 came back
    // (the transport sends nothing on a session it knows has expired).
    let calls = server.seen_method("tools/call");
    let (old, new): (Vec<&Seen>, Vec<&Seen>) = calls
        .iter()
        .partition(|c| session_of(c).as_deref() == Some("s1"));
    assert_eq!(new.len(), 8, "each call retried once");
    assert!(new.iter().all(|c| session_of(c).as_deref() == Some("s2")));
    assert!((1..=8).contains(&old.len()), "{}", old.len());
    let ids: std::collections::HashSet<String> =
        calls.iter().map(|c| c.json()["id"].to_string()).collect();
    assert_eq!(ids.len(), calls.len(), "a retry has an id of its own");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_expiry_answer_does_not_undo_the_renewal() {
    // One call's 404 from the old session comes only after the other
    // call's expiry has opened a new session: it must not forget the new
    // one, or its own retry (and every later request) would be refused.
    let sessions = Arc::new(Sessions::default());
    let server = serve(&sessions, |seen| {
        let late = seen.json()["params"]["arguments"]["text"] == "late"
            && session_of(seen).as_deref() == Some("s1");
        late.then_some(Duration::from_millis(300))
    })
    .await;
    let client = legacy_client(server.url()).await;
    sessions.expire();
    let late = client.call_tool("echo", json!({"text": "late"}));
    let early = async {
        // Leaves after the late call is on the wire.
        tokio::time::sleep(Duration::from_millis(50)).await;
        client.call_tool("echo", json!({"text": "early"})).await
    };
    let (late, early) = tokio::time::timeout(BOUND, futures::future::join(late, early))
        .await
        .expect("the calls end");
    assert_eq!(echoed(&early.expect("early retried")), "early");
    assert_eq!(
        echoed(&late.expect("late retried on the new session")),
        "late"
    );
    assert_eq!(server.seen_method("initialize").len(), 2, "renewed once");
    let after = client.call_tool("echo", json!({"text": "after"})).await;
    assert_eq!(
        echoed(&after.expect("the new session still stands")),
        "after"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_expiry_during_the_retry_fails_with_session_expired() {
    let sessions = Arc::new(Sessions::default());
    let server = {
        let sessions = sessions.clone();
        TestServer::start(move |seen| {
            // Every session expires as soon as it is used for a call.
            let calling = seen.rpc_method().as_deref() == Some("tools/call");
            let answer = if calling {
                sessions.expire();
                status(404)
            } else {
                sessions.answer(seen)
            };
            async move { answer }
        })
        .await
    };
    let client = legacy_client(server.url()).await;
    let error = tokio::time::timeout(BOUND, client.call_tool("echo", json!({"text": "x"})))
        .await
        .expect("ends")
        .expect_err("expired twice");
    assert!(
        matches!(
            error.transport_error(),
            Some(TransportError::SessionExpired { status: 404 })
        ),
        "{error:?}"
    );
    assert_eq!(
        server.seen_method("initialize").len(),
        2,
        "renewed once only"
    );
    assert_eq!(server.seen_method("tools/call").len(), 2);
}

/// A modern server whose first answer to each tool call and read is lost:
/// the stream opens and ends before the response.
fn modern_breaking(seen: Seen, broke: &AtomicBool) -> http::Response<common::Body> {
    let body = seen.json();
    let method = body["method"].as_str().unwrap_or_default().to_owned();
    match method.as_str() {
        "server/discover" => result(
            &seen,
            json!({
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}, "resources": {}},
                "serverInfo": {"name": "breaking", "version": "1"}
            }),
        ),
        "tools/list" => result(
            &seen,
            json!({"tools": [
                {"name": "lookup", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
                {"name": "launch", "inputSchema": {"type": "object"}}
            ]}),
        ),
        "tools/call" | "resources/read" if !broke.swap(true, Ordering::SeqCst) => {
            let (tx, response) = sse();
            tokio::spawn(async move {
                let _ = tx.send(": working\n\n".to_owned()).await;
                // Dropped: the stream ends with no response.
            });
            response
        }
        "tools/call" => result(
            &seen,
            json!({"content": [{"type": "text", "text": "done"}]}),
        ),
        "resources/read" => result(
            &seen,
            json!({"contents": [{"uri": body["params"]["uri"], "text": "bytes"}]}),
        ),
        _ => json(
            400,
            json!({"jsonrpc": "2.0", "id": body["id"], "error": {"code": -32601, "message": "no"}}),
        ),
    }
}

async fn breaking_server() -> (TestServer, Arc<AtomicBool>) {
    let broke = Arc::new(AtomicBool::new(false));
    let flag = broke.clone();
    let server = TestServer::start(move |seen| {
        let answer = modern_breaking(seen, &flag);
        async move { answer }
    })
    .await;
    (server, broke)
}

async fn modern_client(url: String) -> Client {
    let client = Client::builder()
        .connect(HttpTransportBuilder::new(url))
        .await
        .expect("connect");
    assert_eq!(client.verdict().version.as_str(), "2026-07-28");
    client.list_all_tools().await.expect("tools/list");
    client
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_answer_to_a_read_only_tool_or_a_read_is_sent_again() {
    let (server, broke) = breaking_server().await;
    let client = modern_client(server.url()).await;
    let called = tokio::time::timeout(BOUND, client.call_tool("lookup", json!({})))
        .await
        .unwrap()
        .expect("re-sent");
    assert_eq!(echoed(&called), "done");
    let calls = server.seen_method("tools/call");
    assert_eq!(calls.len(), 2);
    assert_ne!(calls[0].json()["id"], calls[1].json()["id"]);

    broke.store(false, Ordering::SeqCst);
    let read = tokio::time::timeout(BOUND, client.read_resource("file:///a"))
        .await
        .unwrap()
        .expect("re-sent");
    assert_eq!(read.contents.len(), 1);
    assert_eq!(server.seen_method("resources/read").len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_answer_to_a_tool_that_may_act_fails_saying_it_may_have_run() {
    let (server, _) = breaking_server().await;
    let client = modern_client(server.url()).await;
    let error = tokio::time::timeout(BOUND, client.call_tool("launch", json!({})))
        .await
        .unwrap()
        .expect_err("not re-sent");
    assert!(error.may_have_run(), "{error:?}");
    assert!(matches!(error.kind(), ErrorKind::MayHaveRun { .. }));
    assert!(error.to_string().contains("may have run"), "{error}");
    assert_eq!(server.seen_method("tools/call").len(), 1, "sent once only");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_header_refusal_rereads_the_tools_and_retries_once() {
    // The first list has no annotation; the server's tool has one, and it
    // refuses a call without its header, as a 2026-07-28 server must.
    let listed = Arc::new(AtomicUsize::new(0));
    let server = {
        let listed = listed.clone();
        TestServer::start(move |seen| {
            let body = seen.json();
            let answer = match body["method"].as_str() {
                Some("server/discover") => result(
                    &seen,
                    json!({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                           "serverInfo": {"name": "headers", "version": "1"}}),
                ),
                Some("tools/list") => {
                    let n = listed.fetch_add(1, Ordering::SeqCst);
                    let region = if n == 0 {
                        json!({"type": "string"})
                    } else {
                        json!({"type": "string", "x-mcp-header": "Region"})
                    };
                    result(
                        &seen,
                        json!({"tools": [{"name": "deploy", "inputSchema":
                            {"type": "object", "properties": {"region": region}}}]}),
                    )
                }
                Some("tools/call") if seen.header("mcp-param-region") == Some("eu") => result(
                    &seen,
                    json!({"content": [{"type": "text", "text": "deployed"}]}),
                ),
                Some("tools/call") => json(
                    400,
                    json!({"jsonrpc": "2.0", "id": body["id"], "error":
                        {"code": -32020, "message": "missing Mcp-Param-Region"}}),
                ),
                _ => status(202),
            };
            async move { answer }
        })
        .await
    };
    let client = Client::builder()
        .connect(HttpTransportBuilder::new(server.url()))
        .await
        .unwrap();
    let called = tokio::time::timeout(BOUND, client.call_tool("deploy", json!({"region": "eu"})))
        .await
        .unwrap()
        .expect("retried with the header");
    assert_eq!(echoed(&called), "deployed");
    assert_eq!(listed.load(Ordering::SeqCst), 2, "the list was read again");
    let calls = server.seen_method("tools/call");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].header("mcp-param-region"), None);
    assert_eq!(calls[1].header("mcp-param-region"), Some("eu"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_harmless_request_lost_twice_fails_with_the_broken_stream() {
    let server = TestServer::start(|seen| async move {
        let body: Value = seen.json();
        match (seen.method.as_str(), body["method"].as_str()) {
            ("POST", Some("server/discover")) => result(
                &seen,
                json!({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                       "serverInfo": {"name": "quiet", "version": "1"}}),
            ),
            ("POST", Some("tools/list")) => {
                let (tx, response) = sse();
                tokio::spawn(async move {
                    let _ = tx.send(": first\n\n".to_owned()).await;
                });
                response
            }
            _ => status(405),
        }
    })
    .await;
    let client = Client::builder()
        .connect(HttpTransportBuilder::new(server.url()))
        .await
        .unwrap();
    // A list is harmless: sent again once, then the second loss stands.
    let error = tokio::time::timeout(BOUND, client.list_tools().into_future())
        .await
        .unwrap()
        .expect_err("lost twice");
    assert!(
        matches!(
            error.transport_error(),
            Some(TransportError::StreamBroken { .. })
        ),
        "{error:?}"
    );
    assert!(
        !error.may_have_run(),
        "a harmless request is never reported as maybe run"
    );
    assert_eq!(server.seen_method("tools/list").len(), 2);
}
