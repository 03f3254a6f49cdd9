//! What legacy servers ask the client, and what the client declares.

use std::time::Duration;

use mcp_client::handlers::elicitation_fn;
use mcp_client::{Client, ServerEvent};
use mcp_protocol::types::{ElicitAction, ElicitResult, Root};
use mcp_protocol::{Message, Request};
use mcp_testkit::scripted::{Script, ScriptedConnector};
use serde_json::{Value, json};

fn init_result(caps: Value) -> Value {
    json!({"protocolVersion": "2025-11-25", "capabilities": caps,
        "serverInfo": {"name": "scripted", "version": "1"}})
}

/// A legacy handshake, then the steps `more` adds.
fn legacy_script(more: impl FnOnce(Script) -> Script) -> Script {
    let s = Script::new()
        .expect_request("server/discover")
        .respond_error(-32601, "Method not found", None)
        .expect_request("initialize")
        .respond(init_result(json!({"tools": {}})))
        .expect_notification("notifications/initialized");
    more(s)
}

fn server_request(id: i64, method: &str, params: Value) -> Request {
    Request::new(id, method, Some(params))
}

#[test]
fn the_client_is_clone_send_sync() {
    fn assert<T: Clone + Send + Sync + 'static>() {}
    assert::<Client>();
}

#[tokio::test(start_paused = true)]
async fn ping_roots_and_undeclared_requests() {
    let script = legacy_script(|s| {
        s.send_request(server_request(1, "ping", json!({})))
            .expect_result(json!({}))
            .send_request(server_request(2, "roots/list", json!({})))
            .expect_answer(|m| match m {
                Message::Response(r) if r.result["roots"][0]["uri"] == "file:///work" => Ok(()),
                other => Err(format!("{other:?}")),
            })
            .send_request(server_request(
                3,
                "sampling/createMessage",
                json!({"messages": [], "maxTokens": 5}),
            ))
            .expect_error(-32601)
            .send_request(server_request(
                4,
                "elicitation/create",
                json!({"message": "m",
                "requestedSchema": {"type": "object", "properties": {}}}),
            ))
            .expect_error(-32601)
            .expect_notification("notifications/roots/list_changed")
    });
    let connector = std::sync::Arc::new(ScriptedConnector::new(vec![script]));
    let client = Client::builder()
        .roots(vec![Root::new("file:///work")])
        .connect(connector.clone())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    client.set_roots(vec![Root::new("file:///other")]).unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    connector.finish().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn unassociated_elicitation_can_be_refused_with_invalid_params() {
    let script = legacy_script(|s| {
        s.send_request(server_request(
            7,
            "elicitation/create",
            json!({"message": "m",
                "requestedSchema": {"type": "object", "properties": {}}}),
        ))
        .expect_error(-32602)
    });
    let connector = std::sync::Arc::new(ScriptedConnector::new(vec![script]));
    let _client = Client::builder()
        .reject_unassociated_server_requests(true)
        .elicitation_handler(elicitation_fn(|_| async {
            Ok(ElicitResult::new(ElicitAction::Decline))
        }))
        .connect(connector.clone())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    connector.finish().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn url_elicitation_extras_reach_the_user_typed() {
    let script = legacy_script(|s| {
        s.expect_request("tools/call")
            .notify_first(
                "notifications/elicitation/complete",
                Some(json!({"elicitationId": "e-1"})),
            )
            .respond_error(
                -32042,
                "URL elicitation required",
                Some(
                    json!({"elicitations": [{"mode": "url", "elicitationId": "e-1",
                    "url": "https://example.com/auth", "message": "Sign in"}]}),
                ),
            )
    });
    let connector = std::sync::Arc::new(ScriptedConnector::new(vec![script]));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let client = Client::builder()
        .on_event(move |e| {
            let _ = tx.send(e.clone());
        })
        .connect(connector.clone())
        .await
        .unwrap();
    let e = client.call_tool("login", Value::Null).await.unwrap_err();
    assert_eq!(e.code(), Some(-32042));
    let mcp_client::ErrorKind::Server {
        code,
        message,
        data,
    } = e.kind().clone()
    else {
        panic!()
    };
    let error = mcp_protocol::ErrorObject {
        code,
        message,
        data,
    };
    let typed = mcp_protocol::error_codes::UrlElicitationRequiredData::from_error(&error).unwrap();
    assert_eq!(typed.elicitations[0].url, "https://example.com/auth");
    let event = rx.recv().await.unwrap();
    let ServerEvent::ElicitationComplete(done) = event else {
        panic!("{event:?}")
    };
    assert_eq!(done.elicitation_id, "e-1");
    connector.finish().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn log_messages_and_unknown_notifications_reach_the_user() {
    let script = legacy_script(|s| {
        s.send_notification(
            "notifications/message",
            Some(json!({"level": "warning", "logger": "db", "data": "slow query"})),
        )
        .send_notification("vendor/custom", Some(json!({"x": 1})))
    });
    let connector = std::sync::Arc::new(ScriptedConnector::new(vec![script]));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let _client = Client::builder()
        .on_event(move |e| {
            let _ = tx.send(e.clone());
        })
        .connect(connector.clone())
        .await
        .unwrap();
    let first = rx.recv().await.unwrap();
    assert!(
        matches!(&first, ServerEvent::Log(l) if l.logger.as_deref() == Some("db")),
        "{first:?}"
    );
    let second = rx.recv().await.unwrap();
    assert!(
        matches!(&second, ServerEvent::Other(n) if n.method == "vendor/custom"),
        "{second:?}"
    );
    connector.finish().await.unwrap();
}

/// Elicitation in a revision that has none (2025-03-26), and URL mode from
/// a server when the handler declared form mode only: each is refused on
/// the wire and the handler never runs.
#[tokio::test(start_paused = true)]
async fn requests_never_declared_never_reach_the_handler() {
    let form = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {}}});
    let old = Script::new()
        .expect_request("initialize")
        .respond(json!({"protocolVersion": "2025-03-26", "capabilities": {},
            "serverInfo": {"name": "old", "version": "1"}}))
        .expect_notification("notifications/initialized")
        .send_request(server_request(1, "elicitation/create", form.clone()))
        .expect_error(-32601);
    let url = legacy_script(|s| {
        s.send_request(server_request(
            2,
            "elicitation/create",
            json!({"mode": "url", "message": "sign in", "url": "https://example.com/a",
                "elicitationId": "e1"}),
        ))
        .expect_error(-32602)
        .send_request(server_request(3, "elicitation/create", form))
        .expect_result(json!({"action": "decline"}))
    });
    for (script, versions, expected) in [
        (old, vec![mcp_protocol::ProtocolVersion::V2025_03_26], 0),
        (url, mcp_protocol::ProtocolVersion::KNOWN.to_vec(), 1),
    ] {
        let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = calls.clone();
        let connector = std::sync::Arc::new(ScriptedConnector::new(vec![script]));
        let _client = Client::builder()
            .protocol_versions(versions)
            .elicitation_handler(elicitation_fn(move |_| {
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async { Ok(ElicitResult::new(ElicitAction::Decline)) }
            }))
            .connect(connector.clone())
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        connector.finish().await.unwrap();
        let handled = calls.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(
            handled, expected,
            "only the declared form reaches the handler"
        );
    }
}
