//! Tool definitions and results: `x-mcp-header` checks, structured output
//! validation, and schemas whose `$ref`s are never fetched.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{FnConnector, FnServer, Reply, discover_result};
use mcp_client::{Client, ErrorKind};
use serde_json::{Value, json};

fn server(tools: Value, call: fn(&str) -> Value) -> Arc<FnServer> {
    FnServer::new(move |_, r| match r.method.as_str() {
        "server/discover" => Reply::Ok(discover_result(&["2026-07-28"])),
        "tools/list" => Reply::Ok(json!({"tools": tools.clone(), "ttlMs": 0})),
        "tools/call" => {
            let name = r.params.as_ref().unwrap()["name"]
                .as_str()
                .unwrap()
                .to_owned();
            Reply::Ok(call(&name))
        }
        _ => Reply::Err(-32601, "Method not found", None),
    })
}

fn counting_tool() -> Value {
    json!({"name": "count", "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}})
}

#[tokio::test]
async fn structured_content_is_checked_against_the_output_schema() {
    let tools = json!([counting_tool()]);
    let good = server(
        tools.clone(),
        |_| json!({"content": [], "structuredContent": {"n": 3}}),
    );
    let client = Client::builder().connect(FnConnector(good)).await.unwrap();
    client.list_tools(None).await.unwrap();
    client.call_tool("count", Value::Null).await.unwrap();

    let bad = server(
        tools.clone(),
        |_| json!({"content": [], "structuredContent": {"n": "three"}}),
    );
    let client = Client::builder()
        .connect(FnConnector(bad.clone()))
        .await
        .unwrap();
    client.list_tools(None).await.unwrap();
    let e = client.call_tool("count", Value::Null).await.unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidResponse { .. }), "{e}");
    assert!(e.to_string().contains("output schema"), "{e}");

    // Switched off, the result comes through.
    let client = Client::builder()
        .validate_structured_output(false)
        .connect(FnConnector(bad))
        .await
        .unwrap();
    client.list_tools(None).await.unwrap();
    client.call_tool("count", Value::Null).await.unwrap();

    // An isError result is never checked.
    let failing = server(
        tools,
        |_| json!({"content": [], "isError": true, "structuredContent": {"n": "nope"}}),
    );
    let client = Client::builder()
        .connect(FnConnector(failing))
        .await
        .unwrap();
    client.list_tools(None).await.unwrap();
    assert!(
        client
            .call_tool("count", Value::Null)
            .await
            .unwrap()
            .is_error()
    );
}

#[tokio::test]
async fn schema_refs_are_never_fetched() {
    // A listener that would see any attempt to fetch the remote schema.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let remote = format!("http://127.0.0.1:{port}/schema.json");
    let tools = json!([
        {"name": "remote", "inputSchema": {"type": "object", "properties": {"a": {"$ref": remote}}},
         "outputSchema": {"$ref": remote}},
        {"name": "local_file", "inputSchema": {"type": "object"},
         "outputSchema": {"$ref": "file:///etc/passwd"}},
    ]);
    let s = server(
        tools,
        |_| json!({"content": [], "structuredContent": {"any": 1}}),
    );
    let client = Client::builder().connect(FnConnector(s)).await.unwrap();
    let listed = client.list_all_tools().await.unwrap();
    assert_eq!(listed.len(), 2, "tools with refs are listed, untouched");
    // The results cannot be validated (the refs are not resolved), so the
    // calls succeed rather than fail on an uncompilable schema.
    client.call_tool("remote", Value::Null).await.unwrap();
    client.call_tool("local_file", Value::Null).await.unwrap();
    let accepted = tokio::time::timeout(Duration::from_millis(200), listener.accept()).await;
    assert!(accepted.is_err(), "nothing tried to fetch the schema");
}

#[tokio::test]
async fn tools_with_invalid_header_annotations_are_dropped() {
    let tools = json!([
        {"name": "good", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}}},
        {"name": "number_header", "inputSchema": {"type": "object", "properties": {
            "n": {"type": "number", "x-mcp-header": "N"}}}},
        {"name": "in_array", "inputSchema": {"type": "object", "properties": {
            "xs": {"type": "array", "items": {"type": "string", "x-mcp-header": "X"}}}}},
    ]);
    let s = server(tools, |_| json!({"content": []}));
    let client = Client::builder().connect(FnConnector(s)).await.unwrap();
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["good"]);
}
