//! The bridge in process: the reference server of either era upstream, and
//! this workspace's client downstream over an in-memory byte stream,
//! driving what a client does (lists, calls, answers the server's
//! questions, watches progress, cancels) through the bridge.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

mod support;

use mcp_bridge::{Bridge, Ended};
use mcp_client::prelude::*;
use mcp_client::protocol::types::CallToolRequestParams;
use mcp_protocol::Message;
use mcp_reference_server::{FakeConfig, FakeServer};
use serde_json::json;
use tokio::task::JoinHandle;

use support::{ClientEnd, asking, serving};

/// The bridge serving `server`, and the client's end of it.
fn bridged(
    server: &FakeServer,
) -> (
    JoinHandle<Result<Ended, mcp_bridge::BridgeError>>,
    ClientEnd,
) {
    serving(Bridge::new(server.connector()))
}

fn slow(steps: u64, delay_ms: u64) -> CallToolRequestParams {
    let arguments = json!({"steps": steps, "delayMs": delay_ms});
    CallToolRequestParams::new("slow").with_arguments(arguments.as_object().cloned().unwrap())
}

async fn drives_a_session(config: FakeConfig, era: EraMode) {
    let server = FakeServer::new(config);
    let (serving, end) = bridged(&server);
    let client = end.client(asking().era(era)).await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    let echo = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(echo.content[0].as_text(), Some("hi"));
    // The server's question reaches this client's handler and back.
    let asked = client.call_tool("elicit", json!({})).await.unwrap();
    assert!(
        asked.content[0].as_text().unwrap().contains("Ada"),
        "{asked:?}"
    );
    // Progress crosses the bridge.
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    let options = CallOptions::new().on_progress(move |_| {
        count.fetch_add(1, Ordering::SeqCst);
    });
    client.call_tool_with(slow(3, 10), &options).await.unwrap();
    assert_eq!(seen.load(Ordering::SeqCst), 3);
    // An error of the server's comes back as the server wrote it.
    let error = client
        .request_raw("no/such/method", json!({}), &CallOptions::new())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("-32601"), "{error}");
    client.close().await;
    let ended = tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .expect("the bridge stops when the client leaves")
        .unwrap()
        .unwrap();
    assert_eq!(ended, Ended::ClientLeft);
}

#[tokio::test]
async fn a_legacy_session_is_relayed() {
    drives_a_session(FakeConfig::legacy(), EraMode::Legacy).await;
}

#[tokio::test]
async fn a_modern_session_is_relayed() {
    drives_a_session(FakeConfig::modern(), EraMode::Modern).await;
}

#[tokio::test]
async fn a_cancel_crosses_the_bridge() {
    let server = FakeServer::new(FakeConfig::legacy());
    let (_serving, end) = bridged(&server);
    let client = end.client(asking().era(EraMode::Legacy)).await;
    let cancel = CancellationToken::new();
    let options = CallOptions::new().cancellation(cancel.clone());
    let call = client.call_tool_with(slow(100, 20), &options);
    let later = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(call, later);
    assert!(result.is_err());
    // The server heard of it: a cancel naming the call's id.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let cancelled = server.received(0).iter().any(
            |m| matches!(m, Message::Notification(n) if n.method == "notifications/cancelled"),
        );
        if cancelled {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no cancel reached the server"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let echo = client
        .call_tool("echo", json!({"text": "after"}))
        .await
        .unwrap();
    assert_eq!(echo.content[0].as_text(), Some("after"));
    client.close().await;
}

#[tokio::test]
async fn a_modern_call_to_a_server_over_http_gets_its_param_headers() {
    use mcp_reference_server::http::HttpFake;
    // The server checks that a call mirrors its annotated arguments in
    // `Mcp-Param-*` headers; the client's connection to the bridge (a
    // byte stream) has no headers to carry them, so the bridge writes
    // them from the tool's schema.
    let upstream = HttpFake::start(FakeConfig::modern().conformance())
        .await
        .unwrap();
    let bridge = Bridge::new(mcp_client::HttpTransportBuilder::new(upstream.url()));
    let (_serving, end) = serving(bridge);
    let client = end.client(asking().era(EraMode::Modern)).await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "test_header_param"));
    let called = client
        .call_tool("test_header_param", json!({"region": "us-west1"}))
        .await
        .unwrap();
    let posts = upstream.posts_of("tools/call");
    let sent = posts.last().expect("the call reached the server");
    assert_eq!(sent.header("mcp-param-region"), Some("us-west1"));
    assert!(called.is_error != Some(true), "{called:?}");
}
