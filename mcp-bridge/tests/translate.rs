//! A legacy client in front of a server that speaks 2026-07-28 only: the
//! bridge answers `initialize` from `server/discover`, gives each request
//! the `_meta` that revision needs, turns `input_required` into the
//! client's own elicitation, and brings list changes as notifications;
//! and a 2026-07-28 client in front of a legacy server, whose requests
//! during a call become `input_required` results, the call held for the
//! client's retry.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use mcp_bridge::Bridge;
use mcp_client::mrtr::{Outcome, retry_params};
use mcp_client::prelude::*;
use mcp_client::protocol::types::{
    CallToolRequestParams, ContentBlock, CreateMessageResult, ElicitResult, InputRequiredResult,
    InputResponse, InputResponses, TextContent,
};
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

/// A modern client that answers elicitation with `Ada` and sampling with
/// `Paris`.
fn answering() -> mcp_client::ClientBuilder {
    asking().era(EraMode::Modern).on_sampling(|_, _| async {
        Ok(CreateMessageResult::new(
            ContentBlock::Text(TextContent::new("Paris")),
            "m",
        ))
    })
}

fn legacy_bridge(server: &FakeServer) -> Bridge {
    Bridge::new(server.connector()).upstream_era(mcp_bridge::UpstreamEra::Legacy)
}

#[tokio::test]
async fn a_legacy_servers_requests_reach_a_modern_client_as_input_required() {
    let server = FakeServer::new(FakeConfig::legacy());
    let (_serving, end) = serving(legacy_bridge(&server));
    let client = end.client(answering()).await;
    let asked = client.call_tool("elicit", json!({})).await.unwrap();
    assert!(
        asked.content[0].as_text().unwrap().contains("Ada"),
        "{asked:?}"
    );
    // Two rounds: each server request its own input_required.
    let multi = client.call_tool("mrtr_multi", json!({})).await.unwrap();
    let text = multi.content[0].as_text().unwrap().to_owned();
    assert!(text.contains("Ada") && text.contains("Paris"), "{text}");
    // The server's requests came during its calls, never to the client.
    assert!(!multi.is_error.unwrap_or(false), "{multi:?}");
    client.close().await;
}

/// The first round of a call by hand: the bridge's `input_required`.
async fn first_round(client: &Client, params: &serde_json::Value) -> InputRequiredResult {
    match client
        .request_once("tools/call", params.clone(), &CallOptions::new())
        .await
        .unwrap()
    {
        Outcome::InputRequired(asked) => asked,
        other => panic!("the tool asks first: {other:?}"),
    }
}

fn named(name: &str) -> InputResponses {
    let content = serde_json::Map::from_iter([("name".into(), json!(name))]);
    let mut responses = InputResponses::new();
    responses.insert(
        "r1".into(),
        InputResponse::Elicitation(ElicitResult::accept(content)),
    );
    responses
}

#[tokio::test]
async fn a_held_call_resumes_only_with_its_own_untampered_state() {
    let server = FakeServer::new(FakeConfig::legacy());
    let (_serving, end) = serving(legacy_bridge(&server));
    let client = end.client(answering()).await;
    let params = json!({"name": "elicit", "arguments": {}});
    let asked = first_round(&client, &params).await;
    let requests = asked.input_requests.clone().unwrap();
    let (key, _) = requests.iter().next().unwrap();
    assert_eq!(key, "r1");
    let state = asked.request_state.clone().unwrap();
    assert!(state.len() >= 32, "{state}");
    let options = CallOptions::new();
    let retry = |params: &serde_json::Value, responses: &InputResponses, state: &str| {
        retry_params(params, responses, Some(state))
    };
    // Tampered, or of another tool: refused, the call still held.
    let tampered = format!("{state}-TAMPERED");
    let error = client
        .request_once(
            "tools/call",
            retry(&params, &named("Eve"), &tampered),
            &options,
        )
        .await
        .unwrap_err();
    assert!(error.to_string().contains("-32602"), "{error}");
    let other = json!({"name": "sample", "arguments": {}});
    let error = client
        .request_once("tools/call", retry(&other, &named("Eve"), &state), &options)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("belongs to"), "{error}");
    // No answer: asked again, under a new state.
    let again = client
        .request_once(
            "tools/call",
            retry(&params, &InputResponses::new(), &state),
            &options,
        )
        .await
        .unwrap();
    let Outcome::InputRequired(again) = again else {
        panic!("a missing answer is asked again");
    };
    let fresh = again.request_state.clone().unwrap();
    assert_ne!(fresh, state);
    // The old state is spent.
    let error = client
        .request_once(
            "tools/call",
            retry(&params, &named("Ada"), &state),
            &options,
        )
        .await
        .unwrap_err();
    assert!(error.to_string().contains("unknown, expired"), "{error}");
    let done = client
        .request_once(
            "tools/call",
            retry(&params, &named("Ada"), &fresh),
            &options,
        )
        .await
        .unwrap();
    let Outcome::Complete(done) = done else {
        panic!("one answer is enough");
    };
    assert!(done.to_string().contains("Ada"), "{done}");
    client.close().await;
}

#[tokio::test]
async fn held_calls_are_bounded_in_number_and_time() {
    let server = FakeServer::new(FakeConfig::legacy());
    let bridge = legacy_bridge(&server).suspended_calls(1, Duration::from_millis(300));
    let (_serving, end) = serving(bridge);
    let client = end.client(answering()).await;
    let params = json!({"name": "elicit", "arguments": {}});
    let held = first_round(&client, &params).await;
    let error = client
        .request_once("tools/call", params.clone(), &CallOptions::new())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("already holds 1"), "{error}");
    tokio::time::sleep(Duration::from_millis(600)).await;
    let state = held.request_state.unwrap();
    let late = retry_params(&params, &named("Ada"), Some(&state));
    let error = client
        .request_once("tools/call", late, &CallOptions::new())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("-32602"), "{error}");
    // The expired call no longer counts.
    first_round(&client, &params).await;
    client.close().await;
}

#[tokio::test]
async fn a_capability_the_call_did_not_declare_is_not_asked() {
    let server = FakeServer::new(FakeConfig::legacy());
    let (_serving, end) = serving(legacy_bridge(&server));
    // Elicitation only: the server's sampling ends the call with -32021,
    // as a 2026-07-28 server needing it would answer.
    let client = end.client(asking().era(EraMode::Modern)).await;
    let error = client.call_tool("sample", json!({})).await.unwrap_err();
    let said = error.to_string();
    assert!(
        said.contains("-32021") && said.contains("sampling"),
        "{said}"
    );
    client.close().await;
}

#[tokio::test]
async fn roots_the_call_did_not_declare_are_refused_to_the_server_and_the_call_goes_on() {
    let server = FakeServer::new(FakeConfig::legacy());
    let (_serving, end) = serving(legacy_bridge(&server));
    // No roots declared: a legacy server may ask for them on its own, so
    // the server hears "no roots" and its call says what it makes of it.
    let client = end.client(asking().era(EraMode::Modern)).await;
    let outcome = client.call_tool("roots", json!({})).await;
    let said = match outcome {
        Ok(result) => format!("{result:?}"),
        Err(error) => error.to_string(),
    };
    assert!(
        !said.contains("-32021") && said.contains("did not declare the roots capability"),
        "{said}"
    );
    client.close().await;
}

#[tokio::test]
async fn a_resource_followed_by_a_closed_subscription_is_unsubscribed_upstream() {
    let server = FakeServer::new(FakeConfig::legacy());
    let (_serving, end) = serving(legacy_bridge(&server));
    let client = end.client(answering()).await;
    let watch = mcp_client::Watch::new().resource("fake://counter");
    let subscription = client.subscribe(watch).await.unwrap();
    let sent = |method: &str| {
        server
            .received(0)
            .iter()
            .filter(|m| matches!(m, Message::Request(r) if r.method == method))
            .count()
    };
    assert_eq!(sent("resources/subscribe"), 1);
    drop(subscription);
    let unsubscribed = tokio::time::timeout(Duration::from_secs(5), async {
        while sent("resources/unsubscribe") == 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(
        unsubscribed.is_ok(),
        "no resources/unsubscribe reached the server"
    );
    client.close().await;
}

#[tokio::test]
async fn a_modern_clients_subscription_hears_a_legacy_servers_list_changes() {
    let server = FakeServer::new(FakeConfig::legacy());
    let (_serving, end) = serving(legacy_bridge(&server));
    let client = end.client(answering()).await;
    let mut prompts = client
        .subscribe(mcp_client::Watch::new().prompts())
        .await
        .unwrap();
    let mut tools = client
        .subscribe(mcp_client::Watch::new().tools())
        .await
        .unwrap();
    client.call_tool("add_tool", json!({})).await.unwrap();
    let heard = tokio::time::timeout(Duration::from_secs(5), tools.recv()).await;
    assert_eq!(heard, Ok(Some(ServerEvent::ToolsListChanged)));
    // The prompts' subscription did not ask for tool changes.
    let quiet = tokio::time::timeout(Duration::from_millis(200), prompts.recv()).await;
    assert!(quiet.is_err(), "{quiet:?}");
    client.close().await;
}
