//! Timeouts and cancellation, under tokio's paused clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_client::handlers::elicitation_fn;
use mcp_client::{CallOptions, Client, ErrorKind};
use mcp_protocol::types::{CallToolRequestParams, ElicitResult};
use mcp_protocol::{Message, RequestId};
use mcp_reference_server::{FakeConfig, FakeServer, Knob, Methods};
use mcp_transport::{CancellationToken, TransportError};
use serde_json::{Map, Value, json};
use tokio::time::Instant;

fn args(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

fn cancelled_ids(server: &FakeServer) -> Vec<RequestId> {
    server
        .received(0)
        .into_iter()
        .filter_map(|m| match m {
            Message::Notification(n) if n.method == "notifications/cancelled" => {
                RequestId::from_value(&n.params?["requestId"])
            }
            _ => None,
        })
        .collect()
}

fn call_ids(server: &FakeServer) -> Vec<RequestId> {
    server
        .received(0)
        .into_iter()
        .filter_map(|m| match m {
            Message::Request(r) if r.method == "tools/call" => Some(r.id),
            _ => None,
        })
        .collect()
}

/// Exactly `n` calls went out, and each was cancelled on the wire, once.
#[track_caller]
fn each_call_cancelled(server: &FakeServer, n: usize) {
    let calls = call_ids(server);
    assert_eq!(calls.len(), n, "calls on the wire: {calls:?}");
    assert_eq!(cancelled_ids(server), calls, "cancels on the wire");
}

async fn settle() {
    tokio::time::sleep(Duration::from_millis(1)).await;
}

#[tokio::test(start_paused = true)]
async fn a_call_never_answered_times_out_and_is_cancelled_on_the_wire() {
    for config in [FakeConfig::legacy(), FakeConfig::modern()] {
        let server =
            FakeServer::new(config.knob(Knob::NeverAnswer(Methods::Named("tools/call".into()))));
        let client = Client::builder()
            .request_timeout(Duration::from_secs(7))
            .connect(server.connector())
            .await
            .unwrap();
        let start = Instant::now();
        let e = client
            .call_tool("echo", json!({"text": "x"}))
            .await
            .unwrap_err();
        assert_eq!(start.elapsed(), Duration::from_secs(7));
        assert!(e.is_timeout(), "{e}");
        assert!(
            matches!(e.transport_error(), Some(TransportError::Timeout { method, after }) if method == "tools/call" && *after == Duration::from_secs(7))
        );
        settle().await;
        each_call_cancelled(&server, 1);
    }
}

#[tokio::test(start_paused = true)]
async fn progress_resets_the_timeout_but_not_the_hard_maximum() {
    let server = FakeServer::new(FakeConfig::modern());
    let client = Client::builder()
        .request_timeout(Duration::from_secs(1))
        .connect(server.connector())
        .await
        .unwrap();
    let slow = || {
        CallToolRequestParams::new("slow")
            .with_arguments(args(json!({"steps": 10, "delayMs": 500})))
    };
    // 5 s of work, progress every 0.5 s, a 1 s base timeout: it completes,
    // with no progress callback (asking for the reset alone sends a token).
    let start = Instant::now();
    let result = client
        .call_tool_with(slow(), &CallOptions::new().reset_timeout_on_progress())
        .await
        .unwrap();
    assert!(!result.is_error());
    assert!(start.elapsed() >= Duration::from_secs(5));
    let token_sent = server.received(0).into_iter().any(|m| match m {
        Message::Request(r) if r.method == "tools/call" => {
            r.params.unwrap()["_meta"].get("progressToken").is_some()
        }
        _ => false,
    });
    assert!(token_sent);

    // The same with a 3 s hard maximum: it times out at 3 s.
    let start = Instant::now();
    let e = client
        .call_tool_with(
            slow(),
            &CallOptions::new()
                .reset_timeout_on_progress()
                .max_total(Duration::from_secs(3)),
        )
        .await
        .unwrap_err();
    assert!(e.is_timeout(), "{e}");
    assert_eq!(start.elapsed(), Duration::from_secs(3));

    // Without the reset, the base timeout ends it at 1 s.
    let start = Instant::now();
    let e = client
        .call_tool_with(slow(), &CallOptions::new())
        .await
        .unwrap_err();
    assert!(e.is_timeout());
    assert_eq!(start.elapsed(), Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn progress_reaches_the_callback() {
    let server = FakeServer::new(FakeConfig::legacy());
    let client = Client::builder().connect(server.connector()).await.unwrap();
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    client
        .call_tool_with(
            CallToolRequestParams::new("slow").with_arguments(args(json!({"steps": 4}))),
            &CallOptions::new().on_progress(move |_| {
                counter.fetch_add(1, Ordering::SeqCst);
            }),
        )
        .await
        .unwrap();
    // Every progress sent before the answer was delivered before the call
    // returned, without waiting.
    assert_eq!(seen.load(Ordering::SeqCst), 4);
}

#[tokio::test(start_paused = true)]
async fn a_slow_human_does_not_time_out_a_legacy_call() {
    let server = FakeServer::new(FakeConfig::legacy());
    let client = Client::builder()
        .request_timeout(Duration::from_secs(2))
        .elicitation_handler(elicitation_fn(|_| async {
            // A person takes their time to type.
            tokio::time::sleep(Duration::from_secs(30)).await;
            let mut content = Map::new();
            content.insert("name".into(), json!("octocat"));
            Ok(ElicitResult::accept(content))
        }))
        .connect(server.connector())
        .await
        .unwrap();
    let start = Instant::now();
    let result = client.call_tool("elicit", Value::Null).await.unwrap();
    assert!(start.elapsed() >= Duration::from_secs(30));
    let text = serde_json::to_string(&result.content).unwrap();
    assert!(text.contains("octocat"), "{text}");
}

#[tokio::test(start_paused = true)]
async fn cancel_by_token_and_by_drop_go_on_the_wire() {
    let server = FakeServer::new(FakeConfig::legacy());
    let client = Client::builder().connect(server.connector()).await.unwrap();
    let slow = CallToolRequestParams::new("slow").with_arguments(args(json!({"steps": 100})));

    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(250)).await;
        cancel.cancel();
    });
    let start = Instant::now();
    let e = client
        .call_tool_with(slow.clone(), &CallOptions::new().cancellation(token))
        .await
        .unwrap_err();
    assert_eq!(start.elapsed(), Duration::from_millis(250));
    assert!(matches!(
        e.kind(),
        ErrorKind::Transport(TransportError::Cancelled)
    ));

    let dropped = tokio::time::timeout(
        Duration::from_millis(150),
        client.call_tool_with(slow, &CallOptions::new()),
    )
    .await;
    assert!(dropped.is_err(), "the outer timeout dropped the call");
    settle().await;
    // The call cancelled by its token, then the one dropped.
    each_call_cancelled(&server, 2);
    // The connection is fine afterwards.
    client
        .call_tool("echo", json!({"text": "still here"}))
        .await
        .unwrap();
}

#[tokio::test(start_paused = true)]
async fn answers_twice_or_to_ids_never_sent_disturb_nothing() {
    let server = FakeServer::new(
        FakeConfig::modern().knob(Knob::AnswerTwice(Methods::Named("tools/call".into()))),
    );
    let client = Client::builder().connect(server.connector()).await.unwrap();
    for text in ["one", "two"] {
        let r = client
            .call_tool("echo", json!({ "text": text }))
            .await
            .unwrap();
        assert!(serde_json::to_string(&r.content).unwrap().contains(text));
    }

    let server = FakeServer::new(
        FakeConfig::modern().knob(Knob::AnswerWithWrongId(Methods::Named("tools/call".into()))),
    );
    let client = Client::builder()
        .request_timeout(Duration::from_secs(2))
        .connect(server.connector())
        .await
        .unwrap();
    let e = client
        .call_tool("echo", json!({"text": "x"}))
        .await
        .unwrap_err();
    assert!(
        e.is_timeout(),
        "an answer to an id never sent is dropped: {e}"
    );
    client.list_tools().await.unwrap();
}
