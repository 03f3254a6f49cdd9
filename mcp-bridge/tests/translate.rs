//! A legacy client in front of a server that speaks 2026-07-28 only: the
//! bridge answers `initialize` from `server/discover`, gives each request
//! the `_meta` that revision needs, turns `input_required` into the
//! client's own elicitation, and brings list changes as notifications.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use mcp_bridge::Bridge;
use mcp_client::prelude::*;
use mcp_client::protocol::types::CallToolRequestParams;
use mcp_protocol::Message;
use mcp_reference_server::{FakeConfig, FakeServer};
use serde_json::json;
use support::{asking, serving};

#[tokio::test]
async fn a_legacy_client_is_served_by_a_modern_only_server() {
    let server = FakeServer::new(FakeConfig::modern());
    let (_serving, end) = serving(Bridge::new(server.connector()));
    let client = end.client(asking().era(EraMode::Legacy)).await;
    assert!(
        client.protocol_version().as_str() <= "2025-11-25",
        "{}",
        client.protocol_version()
    );
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    let echo = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(echo.content[0].as_text(), Some("hi"));
    // The server asks for input in its result; the client is asked as a
    // legacy client is, and the call is retried with its answer.
    let asked = client.call_tool("elicit", json!({})).await.unwrap();
    assert!(
        asked.content[0].as_text().unwrap().contains("Ada"),
        "{asked:?}"
    );
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    let options = CallOptions::new().on_progress(move |_| {
        count.fetch_add(1, Ordering::SeqCst);
    });
    let arguments = json!({"steps": 3, "delayMs": 10});
    let slow =
        CallToolRequestParams::new("slow").with_arguments(arguments.as_object().cloned().unwrap());
    client.call_tool_with(slow, &options).await.unwrap();
    assert_eq!(seen.load(Ordering::SeqCst), 3);
    // What 2026-07-28 removed is answered by the bridge.
    client.ping().await.unwrap();
    let error = client
        .request_raw("no/such/method", json!({}), &CallOptions::new())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("-32601"), "{error}");
    // The server never saw a legacy request: each carried the revision.
    for message in server.received(0) {
        if let Message::Request(r) = message {
            assert!(
                r.method == "initialize"
                    || r.meta()
                        .is_some_and(|m| m.contains_key("io.modelcontextprotocol/protocolVersion")),
                "{r:?}"
            );
        }
    }
    client.close().await;
}

#[tokio::test]
async fn list_changes_reach_a_legacy_client_from_the_subscription() {
    let server = FakeServer::new(FakeConfig::modern().conformance());
    let (_serving, end) = serving(Bridge::new(server.connector()));
    let client = end.client(asking().era(EraMode::Legacy)).await;
    let mut events = client.events();
    client
        .call_tool("test_trigger_tool_change", json!({}))
        .await
        .unwrap();
    let changed = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(event) = events.next().await {
            if matches!(event, ServerEvent::ToolsListChanged) {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(changed, Ok(true));
    client.close().await;
}

#[tokio::test]
async fn a_modern_client_is_served_by_a_legacy_server() {
    let server = FakeServer::new(FakeConfig::legacy());
    let bridge = Bridge::new(server.connector()).upstream_era(mcp_bridge::UpstreamEra::Legacy);
    let (_serving, end) = serving(bridge);
    let client = end.client(asking().era(EraMode::Modern)).await;
    assert_eq!(client.protocol_version().as_str(), "2026-07-28");
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    let echo = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(echo.content[0].as_text(), Some("hi"));
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    let options = CallOptions::new().on_progress(move |_| {
        count.fetch_add(1, Ordering::SeqCst);
    });
    let arguments = json!({"steps": 3, "delayMs": 10});
    let slow =
        CallToolRequestParams::new("slow").with_arguments(arguments.as_object().cloned().unwrap());
    client.call_tool_with(slow, &options).await.unwrap();
    assert_eq!(seen.load(Ordering::SeqCst), 3);
    // The server had a legacy session: one initialize, and no request
    // carrying the 2026-07-28 revision (nor a server/discover).
    let received = server.received(0);
    let initializes = received
        .iter()
        .filter(|m| matches!(m, Message::Request(r) if r.method == "initialize"))
        .count();
    assert_eq!(initializes, 1);
    for message in &received {
        if let Message::Request(r) = message {
            assert!(
                !r.meta()
                    .is_some_and(|m| m.contains_key("io.modelcontextprotocol/protocolVersion"))
                    && r.method != "server/discover",
                "{r:?}"
            );
        }
    }
    client.close().await;
}
