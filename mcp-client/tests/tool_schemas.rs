//! Tool definitions and results: `x-mcp-header` checks, structured output
//! validation, and schemas whose `$ref`s are never fetched.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
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
    client.list_tools().await.unwrap();
    client.call_tool("count", Value::Null).await.unwrap();

    let bad = server(
        tools.clone(),
        |_| json!({"content": [], "structuredContent": {"n": "three"}}),
    );
    let client = Client::builder()
        .connect(FnConnector(bad.clone()))
        .await
        .unwrap();
    client.list_tools().await.unwrap();
    let e = client.call_tool("count", Value::Null).await.unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidResponse { .. }), "{e}");
    assert!(e.to_string().contains("output schema"), "{e}");

    // Switched off, the result comes through.
    let client = Client::builder()
        .validate_structured_output(false)
        .connect(FnConnector(bad))
        .await
        .unwrap();
    client.list_tools().await.unwrap();
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
    client.list_tools().await.unwrap();
    assert!(
        client
            .call_tool("count", Value::Null)
            .await
            .unwrap()
            .is_error()
    );
}

/// The schema both `$ref` targets hold: it requires `n`, which the tool's
/// result lacks, so a validator that loaded either target would reject it.
const REF_TARGET: &str = r#"{"type": "object", "required": ["n"]}"#;

/// A loopback HTTP server that counts the connections it accepts and
/// answers each with [`REF_TARGET`].
struct RecordingServer {
    url: String,
    connections: Arc<AtomicUsize>,
}

impl RecordingServer {
    fn start() -> Self {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/schema.json", listener.local_addr().unwrap());
        let connections = Arc::new(AtomicUsize::new(0));
        let count = connections.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                count.fetch_add(1, Ordering::SeqCst);
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{REF_TARGET}",
                    REF_TARGET.len()
                );
            }
        });
        RecordingServer { url, connections }
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

#[tokio::test]
async fn schema_refs_are_never_fetched() {
    // Both targets are reachable and hold a schema the result fails, so a
    // client that fetched either would reject the call; the listener also
    // counts any connection.
    let http = RecordingServer::start();
    let file = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("tool-schema-ref.json");
    std::fs::write(&file, REF_TARGET).unwrap();
    let file_url = format!("file://{}", file.display());
    let tools = json!([
        {"name": "remote", "inputSchema": {"type": "object", "properties": {"a": {"$ref": http.url}}},
         "outputSchema": {"$ref": http.url}},
        {"name": "local_file", "inputSchema": {"type": "object"},
         "outputSchema": {"$ref": file_url}},
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
    client
        .call_tool("remote", Value::Null)
        .await
        .expect("the remote schema was not loaded");
    client
        .call_tool("local_file", Value::Null)
        .await
        .expect("the file schema was not loaded");
    // Schemas compile synchronously in the calls above: any fetch has
    // connected by now.
    assert_eq!(
        http.connections(),
        0,
        "the client connected to {}",
        http.url
    );
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
