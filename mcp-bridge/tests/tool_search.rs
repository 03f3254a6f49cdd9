//! `Bridge::tool_search`: the client is served `search_tools` and
//! `call_tool` in place of the server's tools; searches rank the server's
//! tools (a fixture of realistic tools of many servers, each query's tool
//! in the top three), calls go up as the client's own, in either era, and
//! the tool policy still holds.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_bridge::{Bridge, ToolPolicy, UpstreamEra};
use mcp_client::prelude::*;
use mcp_client::protocol::types::CallToolRequestParams;
use mcp_reference_server::{Content, FakeConfig, FakeServer, FakeTool, ToolBehavior};
use serde_json::{Value, json};

use support::{asking, serving};

/// The client of a bridge with tool search in front of `server`.
async fn searching(server: &FakeServer, policy: ToolPolicy, era: EraMode) -> Client {
    let bridge = Bridge::new(server.connector())
        .tools(policy)
        .tool_search(true);
    let (_serving, end) = serving(bridge);
    end.client(asking().era(era)).await
}

/// The names `search_tools` answers for `query`, best first.
async fn search(client: &Client, query: &str, limit: u64) -> Vec<String> {
    let found = client
        .call_tool("search_tools", json!({"query": query, "limit": limit}))
        .await
        .unwrap();
    let structured = found.structured_content.expect("structuredContent");
    let text: Value = serde_json::from_str(found.content[0].as_text().unwrap()).unwrap();
    assert_eq!(text, structured, "the text is the same JSON");
    structured["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert!(t["inputSchema"].is_object(), "{t}");
            t["name"].as_str().unwrap().to_owned()
        })
        .collect()
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

/// The fixture's tools, on a server that lists them in pages of seven.
fn fixture() -> (FakeServer, Vec<(String, String)>) {
    let fixture: Value = serde_json::from_str(include_str!("fixtures/tool_search.json")).unwrap();
    let mut content = Content::empty();
    for tool in fixture["tools"].as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        let description = tool["description"].as_str().unwrap();
        let done = ToolBehavior::Fixed(json!({"content": [{"type": "text", "text": name}]}));
        let mut fake =
            FakeTool::new(name, description, done).input_schema(tool["inputSchema"].clone());
        if let Some(annotations) = tool.get("annotations") {
            fake.definition["annotations"] = annotations.clone();
        }
        content = content.with_tool(fake);
    }
    let queries = fixture["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            let field = |k: &str| q[k].as_str().unwrap().to_owned();
            (field("query"), field("expect"))
        })
        .collect();
    let config = FakeConfig::legacy().content(content).page_size(7);
    (FakeServer::new(config), queries)
}

#[tokio::test]
async fn each_fixture_query_ranks_its_tool_in_the_top_three() {
    let (server, queries) = fixture();
    let client = searching(&server, ToolPolicy::new(), EraMode::Legacy).await;
    let mut missed = Vec::new();
    for (query, expect) in &queries {
        let found = search(&client, query, 3).await;
        match found.iter().position(|n| n == expect) {
            Some(rank) => println!("{query:?}: {expect} at {}", rank + 1),
            None => missed.push(format!("{query:?}: {expect} not in {found:?}")),
        }
    }
    assert!(missed.is_empty(), "{missed:#?}");
    // Every page was read: a tool of the last page is found.
    assert_eq!(
        search(&client, "kubernetes pods", 1).await,
        ["kubernetes__get_pods"]
    );
    let called = client
        .call_tool(
            "call_tool",
            call("postgres__query", json!({"sql": "select 1"})),
        )
        .await
        .unwrap();
    assert_eq!(called.content[0].as_text(), Some("postgres__query"));
    client.close().await;
}

async fn serves_the_two_tools_and_calls_through_them(config: FakeConfig, era: EraMode) {
    let server = FakeServer::new(config);
    let client = searching(&server, ToolPolicy::new(), era).await;
    let listed: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(listed, ["search_tools", "call_tool"]);
    assert_eq!(search(&client, "echo text", 5).await[0], "echo");
    let echo = client
        .call_tool("call_tool", call("echo", json!({"text": "hi"})))
        .await
        .unwrap();
    assert_eq!(echo.content[0].as_text(), Some("hi"));
    // A tool called by its own name is relayed too.
    let direct = client
        .call_tool("echo", json!({"text": "direct"}))
        .await
        .unwrap();
    assert_eq!(direct.content[0].as_text(), Some("direct"));
    // The server's question and the call's progress cross as for the
    // client's own call.
    let asked = client
        .call_tool("call_tool", call("elicit", json!({})))
        .await
        .unwrap();
    assert!(
        asked.content[0].as_text().unwrap().contains("Ada"),
        "{asked:?}"
    );
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    let options = CallOptions::new().on_progress(move |_| {
        count.fetch_add(1, Ordering::SeqCst);
    });
    let slow = call("slow", json!({"steps": 3, "delayMs": 5}));
    let params =
        CallToolRequestParams::new("call_tool").with_arguments(slow.as_object().cloned().unwrap());
    client.call_tool_with(params, &options).await.unwrap();
    assert_eq!(seen.load(Ordering::SeqCst), 3);
    let unknown = client
        .call_tool("call_tool", call("no_such_tool", json!({})))
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Some(-32602), "{unknown}");
    let said = unknown.to_string();
    assert!(
        said.contains("no_such_tool") && said.contains("search_tools"),
        "{said}"
    );
    client.close().await;
}

#[tokio::test]
async fn a_legacy_client_is_served_the_two_tools_and_calls_through_them() {
    serves_the_two_tools_and_calls_through_them(FakeConfig::legacy(), EraMode::Legacy).await;
}

#[tokio::test]
async fn a_modern_client_is_served_the_two_tools_and_calls_through_them() {
    serves_the_two_tools_and_calls_through_them(FakeConfig::modern(), EraMode::Modern).await;
}

#[tokio::test]
async fn a_modern_clients_list_of_the_two_tools_carries_cache_hints() {
    let server = FakeServer::new(FakeConfig::modern());
    let client = searching(&server, ToolPolicy::new(), EraMode::Modern).await;
    let listed = client
        .request_raw("tools/list", json!({}), &CallOptions::new())
        .await
        .unwrap();
    assert_eq!(listed["tools"].as_array().unwrap().len(), 2, "{listed}");
    assert!(listed["ttlMs"].as_u64().is_some(), "{listed}");
    assert!(listed["cacheScope"].is_string(), "{listed}");
    client.close().await;
}

#[tokio::test]
async fn a_hidden_tool_is_never_found_and_its_call_is_refused() {
    let server = FakeServer::new(FakeConfig::legacy());
    let policy = ToolPolicy::new().deny("echo").unwrap();
    let client = searching(&server, policy, EraMode::Legacy).await;
    assert!(
        !search(&client, "echo", 20)
            .await
            .contains(&"echo".to_owned())
    );
    let refused = client
        .call_tool("call_tool", call("echo", json!({"text": "hi"})))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some(-32602), "{refused}");
    assert!(refused.to_string().contains("--deny-tools"), "{refused}");
    client.close().await;
}

#[tokio::test]
async fn a_tool_the_server_adds_is_found_once_it_says_its_list_changed() {
    let server = FakeServer::new(FakeConfig::legacy());
    let client = searching(&server, ToolPolicy::new(), EraMode::Legacy).await;
    assert!(search(&client, "zebra", 5).await.is_empty());
    client
        .call_tool("call_tool", call("add_tool", json!({"name": "zebra"})))
        .await
        .unwrap();
    let mut found = Vec::new();
    for _ in 0..50 {
        found = search(&client, "zebra", 5).await;
        if !found.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(found, ["zebra"]);
    let echoed = client
        .call_tool("call_tool", call("zebra", json!({"text": "new"})))
        .await
        .unwrap();
    assert_eq!(echoed.content[0].as_text(), Some("new"));
    client.close().await;
}

#[tokio::test]
async fn a_read_only_policy_knows_each_tools_hint_without_a_list_of_the_client() {
    let (server, _) = fixture();
    let client = searching(&server, ToolPolicy::new().read_only(true), EraMode::Legacy).await;
    // No search first: the bridge lists the tools itself, hints and all.
    let read = client
        .call_tool(
            "call_tool",
            call("postgres__query", json!({"sql": "select 1"})),
        )
        .await
        .unwrap();
    assert_eq!(read.content[0].as_text(), Some("postgres__query"));
    let refused = client
        .call_tool("call_tool", call("filesystem__write_file", json!({})))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some(-32602), "{refused}");
    assert!(refused.to_string().contains("not read-only"), "{refused}");
    let found = search(&client, "write a file", 20).await;
    assert!(
        !found.is_empty() && !found.iter().any(|n| n == "filesystem__write_file"),
        "{found:?}"
    );
    client.close().await;
}

/// A client of one era in front of a server spoken to in the other: the
/// bridge's own listing and the call go through the translation.
async fn searches_across_eras(config: FakeConfig, upstream: UpstreamEra, era: EraMode) {
    let server = FakeServer::new(config);
    let bridge = Bridge::new(server.connector())
        .upstream_era(upstream)
        .tool_search(true);
    let (_serving, end) = serving(bridge);
    let client = end.client(asking().era(era)).await;
    assert_eq!(search(&client, "echo", 3).await[0], "echo");
    let echo = client
        .call_tool("call_tool", call("echo", json!({"text": "across"})))
        .await
        .unwrap();
    assert_eq!(echo.content[0].as_text(), Some("across"));
    client.close().await;
}

#[tokio::test]
async fn a_legacy_client_of_a_modern_server_searches_and_calls() {
    searches_across_eras(FakeConfig::modern(), UpstreamEra::Modern, EraMode::Legacy).await;
}

#[tokio::test]
async fn a_modern_client_of_a_legacy_server_searches_and_calls() {
    searches_across_eras(FakeConfig::legacy(), UpstreamEra::Legacy, EraMode::Modern).await;
}
