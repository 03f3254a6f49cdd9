//! A session recorded with `mcp_transport::record` replays through the
//! testkit's cassette transport with no server, with the same results, in
//! each era: tool calls, progress, a sampling request of the server's (or
//! a modern multi round-trip round), list changes. A changed request fails
//! with a diff; a changed answer to a server request is reported.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_client::{CallOptions, Client, ClientBuilder, EraMode};
use mcp_protocol::types::{CallToolRequestParams, ContentBlock, CreateMessageResult, TextContent};
use mcp_reference_server::{FakeConfig, FakeServer};
use mcp_testkit::cassette::{Cassette, CassetteConnector, MatchRules};
use mcp_transport::record::Recorder;
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(20);

async fn bounded<T>(what: &str, f: impl Future<Output = T>) -> T {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("{what} took more than {LIMIT:?}"),
    }
}

fn builder(answer: &'static str) -> ClientBuilder {
    Client::builder()
        .era(EraMode::Auto)
        .request_timeout(Duration::from_secs(10))
        .on_sampling(move |_, _| async move {
            Ok(CreateMessageResult::new(
                ContentBlock::Text(TextContent::new(answer)),
                "test-model",
            ))
        })
}

/// What the session returns: every result as JSON, and how many progress
/// notifications arrived.
async fn session(client: &Client) -> (Vec<Value>, usize) {
    let mut results = Vec::new();
    let tools = bounded("tools/list", client.list_all_tools())
        .await
        .unwrap();
    results.push(json!(
        tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>()
    ));
    let echo = bounded("echo", client.call_tool("echo", json!({"text": "hi"})))
        .await
        .unwrap();
    results.push(serde_json::to_value(&echo).unwrap());
    let progress = Arc::new(AtomicUsize::new(0));
    let seen = progress.clone();
    let options = CallOptions::new().on_progress(move |_| {
        seen.fetch_add(1, Ordering::Relaxed);
    });
    let slow = bounded("slow", client.call_tool_with(slow_params(), &options))
        .await
        .unwrap();
    results.push(serde_json::to_value(&slow).unwrap());
    let sample = bounded("sample", client.call_tool("sample", json!({})))
        .await
        .unwrap();
    results.push(serde_json::to_value(&sample).unwrap());
    let text = bounded("read", client.read_resource("fake://text/hello"))
        .await
        .unwrap();
    results.push(serde_json::to_value(&text).unwrap());
    (results, progress.load(Ordering::Relaxed))
}

async fn record(config: FakeConfig) -> (String, Vec<Value>, usize) {
    let recorder = Recorder::in_memory();
    let server = FakeServer::new(config);
    let client = bounded(
        "connect",
        builder("Paris").connect(recorder.connector(server.connector())),
    )
    .await
    .unwrap();
    recorder.set_header("era", serde_json::to_value(client.era()).unwrap());
    let (results, progress) = session(&client).await;
    bounded("close", client.close()).await;
    (recorder.text(), results, progress)
}

async fn replay(
    text: &str,
    rules: MatchRules,
    answer: &'static str,
) -> (Client, Arc<CassetteConnector>) {
    let connector = Arc::new(Cassette::parse(text).unwrap().connector(rules));
    let client = bounded(
        "connect to the cassette",
        builder(answer).connect(connector.clone()),
    )
    .await
    .unwrap();
    (client, connector)
}

fn slow_params() -> CallToolRequestParams {
    let arguments = json!({"steps": 3, "delayMs": 5});
    CallToolRequestParams::new("slow").with_arguments(arguments.as_object().unwrap().clone())
}

#[tokio::test]
async fn a_recorded_session_replays_with_the_same_results_in_each_era() {
    for (name, config) in [
        ("legacy", FakeConfig::legacy()),
        ("modern", FakeConfig::modern()),
    ] {
        let (text, recorded, recorded_progress) = record(config).await;
        assert!(
            recorded_progress > 0,
            "{name}: the slow tool reported progress"
        );
        let header = Cassette::parse(&text).unwrap().header().clone();
        let (client, connector) = replay(&text, MatchRules::default(), "Paris").await;
        assert_eq!(
            serde_json::to_value(client.era()).unwrap(),
            header["era"],
            "{name}: the same era"
        );
        let (replayed, replayed_progress) = session(&client).await;
        assert_eq!(replayed, recorded, "{name}: the same results");
        assert_eq!(
            replayed_progress, recorded_progress,
            "{name}: the same progress"
        );
        bounded("close", client.close()).await;
        if let Err(e) = bounded("finish", connector.finish()).await {
            panic!("{name}: {e}\n{text}");
        }
    }
}

#[tokio::test]
async fn a_changed_request_fails_with_a_diff_against_the_closest_recorded_one() {
    let (text, _, _) = record(FakeConfig::legacy()).await;
    let (client, _connector) = replay(&text, MatchRules::default(), "Paris").await;
    let error = bounded("echo", client.call_tool("echo", json!({"text": "bye"})))
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains(r#"/arguments/text: recorded "hi", sent "bye""#),
        "{message}"
    );
    assert!(message.contains("closest recorded: line"), "{message}");
}

#[tokio::test]
async fn a_changed_answer_to_a_server_request_is_reported() {
    let (text, _, _) = record(FakeConfig::legacy()).await;
    let (client, connector) = replay(&text, MatchRules::default().allow_unused(true), "Lyon").await;
    bounded("tools", client.list_all_tools()).await.unwrap();
    bounded("echo", client.call_tool("echo", json!({"text": "hi"})))
        .await
        .unwrap();
    bounded(
        "slow",
        client.call_tool_with(slow_params(), &CallOptions::new()),
    )
    .await
    .unwrap();
    let _ = bounded("sample", client.call_tool("sample", json!({}))).await;
    let error = bounded("finish", connector.finish()).await.unwrap_err();
    let text = error.to_string();
    assert!(text.contains("sampling/createMessage"), "{text}");
    assert!(text.contains(r#"recorded "Paris", sent "Lyon""#), "{text}");
}
