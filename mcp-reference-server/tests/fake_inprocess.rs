//! The fake in process, as a `Transport` and a `Connector`.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use mcp_protocol::{ErrorObject, Message, Notification, Request};
use mcp_reference_server::{FakeConfig, FakeServer, Knob, Methods};
use mcp_transport::{
    ConnectionHandlers, Connector, Listener, RequestOptions, Transport, TransportError,
};
use serde_json::{Value, json};

fn modern_meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
    })
}

async fn handshake(transport: &Arc<dyn Transport>, caps: Value) -> Value {
    let params = json!({"protocolVersion": "2025-11-25", "capabilities": caps, "clientInfo": {"name": "t", "version": "0"}});
    let result = transport
        .request(
            Request::new(1, "initialize", Some(params)),
            RequestOptions::new().no_wire_cancel(),
        )
        .await
        .unwrap();
    transport
        .notify(Notification::new("notifications/initialized", None))
        .unwrap();
    result
}

#[tokio::test(start_paused = true)]
async fn dying_on_the_probe_is_server_gone_and_the_connector_starts_afresh() {
    let server = FakeServer::new(FakeConfig::legacy().knob(Knob::ExitOnRequestBeforeInitialize));
    let connector = server.connector();
    let first = connector
        .connect(ConnectionHandlers::discard())
        .await
        .unwrap();
    let probe = Request::new(
        1,
        "server/discover",
        Some(json!({"_meta": modern_meta(json!({}))})),
    );
    let error = first
        .request(probe, RequestOptions::new())
        .await
        .unwrap_err();
    let TransportError::ServerGone(info) = error else {
        panic!("expected ServerGone, got {error:?}")
    };
    assert_eq!(info.exit.and_then(|e| e.code), Some(1));
    assert!(info.stderr_tail.unwrap().contains("server/discover"));
    assert!(!first.is_alive());

    let second = connector
        .connect(ConnectionHandlers::discard())
        .await
        .unwrap();
    let result = handshake(&second, json!({})).await;
    assert_eq!(result["protocolVersion"], "2025-11-25");
    assert_eq!(result["resultType"], "complete", "the engine normalizes");
    assert_eq!(server.connection_count(), 2);
    let ping = second.request(Request::new(2, "ping", None), RequestOptions::new());
    assert_eq!(ping.await.unwrap()["resultType"], "complete");
    let sent = server.received(1);
    assert_eq!(sent[0].method(), Some("initialize"));
    assert_eq!(sent[1].method(), Some("notifications/initialized"));
}

#[tokio::test(start_paused = true)]
async fn legacy_elicitation_goes_through_the_server_request_handler() {
    let server = FakeServer::new(FakeConfig::legacy());
    let handler = Arc::new(
        |request: Request| -> futures::future::BoxFuture<'static, Result<Value, ErrorObject>> {
            Box::pin(async move {
                assert_eq!(request.method, "elicitation/create");
                Ok(json!({"action": "accept", "content": {"name": "ada"}}))
            })
        },
    );
    let handlers = ConnectionHandlers::discard().with_server_requests(handler);
    let transport = server.connect(handlers);
    handshake(&transport, json!({"elicitation": {}})).await;
    let call = Request::new(2, "tools/call", Some(json!({"name": "elicit"})));
    let result = transport
        .request(call, RequestOptions::new())
        .await
        .unwrap();
    let answers: Value =
        serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(answers["answer"]["content"]["name"], "ada");
}

/// The progress notifications for `token` the server sent, and whether it
/// answered request `id`.
fn sent_for(server: &FakeServer, token: i64, id: i64) -> (usize, bool) {
    let sent = server.sent(0);
    let progress = sent
        .iter()
        .filter(|m| {
            matches!(m, Message::Notification(n) if n.method == "notifications/progress"
                && n.params.as_ref().unwrap()["progressToken"] == token)
        })
        .count();
    let answered = sent.iter().any(|m| match m {
        Message::Response(r) => r.id == id.into(),
        Message::Error(e) => e.id == Some(id.into()),
        _ => false,
    });
    (progress, answered)
}

// On the paused clock: the slow tool's steps are timers, so "the work
// would have finished by now" is exact.
#[tokio::test(start_paused = true)]
async fn modern_progress_reaches_the_request_listener_and_a_drop_cancels() {
    let server = FakeServer::new(FakeConfig::modern());
    let transport = server.connect(ConnectionHandlers::discard());
    let (listener, mut progress) = Listener::channel(16);
    let mut meta = modern_meta(json!({}));
    meta["progressToken"] = json!(3);
    let params = json!({"name": "slow", "arguments": {"steps": 2, "delayMs": 5}, "_meta": meta});
    let result = transport
        .request(
            Request::new(3, "tools/call", Some(params)),
            RequestOptions::new().listener(listener),
        )
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "done after 2 steps");
    let first = progress.next().await.unwrap();
    assert_eq!(first.params.unwrap()["progress"], 1);

    // A dropped request is cancelled on the wire, and the fake stops it:
    // no progress after the cancel, and no answer even once all 100 steps
    // (1 s) would have run.
    let mut meta = modern_meta(json!({}));
    meta["progressToken"] = json!(4);
    let params = json!({"name": "slow", "arguments": {"steps": 100, "delayMs": 10}, "_meta": meta});
    let pending = transport.request(
        Request::new(4, "tools/call", Some(params)),
        RequestOptions::new(),
    );
    let _ = tokio::time::timeout(Duration::from_millis(35), pending).await;
    tokio::time::sleep(Duration::from_millis(1)).await;
    let cancels: Vec<Value> = server
        .received(0)
        .into_iter()
        .filter_map(|m| match m {
            Message::Notification(n) if n.method == "notifications/cancelled" => n.params,
            _ => None,
        })
        .collect();
    assert_eq!(cancels.len(), 1, "{cancels:?}");
    assert_eq!(cancels[0]["requestId"], 4);
    let (before, answered) = sent_for(&server, 4, 4);
    assert!(
        before >= 1 && !answered,
        "{before} steps ran before the cancel"
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (after, answered) = sent_for(&server, 4, 4);
    assert_eq!(after, before, "progress after the cancel");
    assert!(!answered, "the cancelled call was answered");
}

#[tokio::test(start_paused = true)]
async fn late_and_never_answers_are_timeouts_for_the_client() {
    let config = FakeConfig::legacy()
        .knob(Knob::AnswerLate(
            Methods::parse("ping"),
            Duration::from_millis(500),
        ))
        .knob(Knob::NeverAnswer(Methods::parse("tools/list")));
    let server = FakeServer::new(config);
    let transport = server.connect(ConnectionHandlers::discard());
    let ping = Request::new(7, "ping", None);
    let error = transport
        .request(
            ping,
            RequestOptions::new().timeout(Duration::from_millis(100)),
        )
        .await
        .unwrap_err();
    assert!(matches!(error, TransportError::Timeout { .. }), "{error:?}");
    handshake(&transport, json!({})).await;
    let list = Request::new(8, "tools/list", None);
    let error = transport
        .request(
            list,
            RequestOptions::new().timeout(Duration::from_millis(100)),
        )
        .await
        .unwrap_err();
    assert!(matches!(error, TransportError::Timeout { .. }), "{error:?}");
}

#[tokio::test(start_paused = true)]
async fn unsolicited_list_changed_reaches_the_connection_listener() {
    let server = FakeServer::new(FakeConfig::legacy().knob(Knob::UnsolicitedAfterInitialized));
    let (listener, mut notes) = Listener::channel(16);
    let transport = server.connect(ConnectionHandlers::new(listener));
    handshake(&transport, json!({})).await;
    let note = tokio::time::timeout(Duration::from_secs(5), notes.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(note.method, "notifications/tools/list_changed");
    // The roots/list request got -32601 from the engine (no handler).
    tokio::time::sleep(Duration::from_millis(20)).await;
    let errors = server
        .received(0)
        .into_iter()
        .filter(|m| matches!(m, Message::Error(_)))
        .count();
    assert_eq!(errors, 1);
}
