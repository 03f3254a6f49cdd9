//! The bridge over Streamable HTTP, in process: the reference server of
//! either era upstream, and this workspace's HTTP client downstream (or
//! raw HTTP requests, for what a client of ours never sends).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_bridge::{Bridge, Ended, HttpOptions};
use mcp_client::prelude::*;
use mcp_client::protocol::types::CallToolRequestParams;
use mcp_protocol::Message;
use mcp_reference_server::{FakeConfig, FakeServer};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

mod support;

use support::http::{INITIALIZE, Served, post, raw};

fn slow(steps: u64, delay_ms: u64) -> CallToolRequestParams {
    let arguments = json!({"steps": steps, "delayMs": delay_ms});
    CallToolRequestParams::new("slow").with_arguments(arguments.as_object().cloned().unwrap())
}

fn answering(name: &'static str) -> ClientBuilder {
    Client::builder()
        .request_timeout(Duration::from_secs(10))
        .on_elicitation(move |_request, _ctx| async move {
            let mut form = JsonObject::new();
            form.insert("name".into(), json!(name));
            Ok(ElicitResult::accept(form))
        })
}

async fn drives(config: FakeConfig, era: EraMode) {
    let server = FakeServer::new(config);
    let served = Served::start(Bridge::new(server.connector()), HttpOptions::new()).await;
    let client = served.client(answering("Ada").era(era)).await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    let echo = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(echo.content[0].as_text(), Some("hi"));
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
    client.call_tool_with(slow(3, 10), &options).await.unwrap();
    assert_eq!(seen.load(Ordering::SeqCst), 3);
    let error = client
        .request_raw("no/such/method", json!({}), &CallOptions::new())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("-32601"), "{error}");
    client.close().await;
    assert_eq!(served.stop().await, Ended::Stopped);
}

#[tokio::test]
async fn a_legacy_client_is_served_over_http() {
    drives(FakeConfig::legacy(), EraMode::Legacy).await;
}

#[tokio::test]
async fn a_modern_client_is_served_over_http() {
    drives(FakeConfig::modern(), EraMode::Modern).await;
}

/// Tool search over HTTP: the two tools listed, a search answered from
/// the server's tools, a call relayed.
async fn searches(config: FakeConfig, era: EraMode) {
    let server = FakeServer::new(config);
    let bridge = Bridge::new(server.connector()).tool_search(true);
    let served = Served::start(bridge, HttpOptions::new()).await;
    let client = served.client(answering("Ada").era(era)).await;
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["search_tools", "call_tool"]);
    let found = client
        .call_tool("search_tools", json!({"query": "echo", "limit": 1}))
        .await
        .unwrap();
    let found = found.structured_content.unwrap();
    assert_eq!(found["tools"][0]["name"], "echo", "{found}");
    let echo = client
        .call_tool(
            "call_tool",
            json!({"name": "echo", "arguments": {"text": "over http"}}),
        )
        .await
        .unwrap();
    assert_eq!(echo.content[0].as_text(), Some("over http"));
    client.close().await;
    assert_eq!(served.stop().await, Ended::Stopped);
}

#[tokio::test]
async fn a_client_of_either_era_searches_the_tools_over_http() {
    searches(FakeConfig::legacy(), EraMode::Legacy).await;
    searches(FakeConfig::modern(), EraMode::Modern).await;
}

#[tokio::test]
async fn two_clients_each_answer_their_own_elicitation() {
    let server = FakeServer::new(FakeConfig::legacy());
    let served = Served::start(Bridge::new(server.connector()), HttpOptions::new()).await;
    let ada = served.client(answering("Ada").era(EraMode::Legacy)).await;
    let bob = served.client(answering("Bob").era(EraMode::Legacy)).await;
    let (a, b) = tokio::join!(
        ada.call_tool("elicit", json!({})),
        bob.call_tool("elicit", json!({}))
    );
    assert!(a.unwrap().content[0].as_text().unwrap().contains("Ada"));
    assert!(b.unwrap().content[0].as_text().unwrap().contains("Bob"));
    // Each client has its own upstream session.
    assert_eq!(server.connection_count(), 2);
    ada.close().await;
    bob.close().await;
    served.stop().await;
}

#[tokio::test]
async fn a_cancel_reaches_the_server_from_either_era() {
    for (config, era) in [
        (FakeConfig::legacy(), EraMode::Legacy),
        (FakeConfig::modern(), EraMode::Modern),
    ] {
        let server = FakeServer::new(config);
        let served = Served::start(Bridge::new(server.connector()), HttpOptions::new()).await;
        let client = served.client(answering("Ada").era(era)).await;
        let cancel = CancellationToken::new();
        let options = CallOptions::new().cancellation(cancel.clone());
        let call = client.call_tool_with(slow(100, 20), &options);
        let later = async {
            tokio::time::sleep(Duration::from_millis(150)).await;
            cancel.cancel();
        };
        let (result, ()) = tokio::join!(call, later);
        assert!(result.is_err());
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            let cancelled = (0..server.connection_count()).any(|i| {
                server.received(i).iter().any(|m| {
                    matches!(m, Message::Notification(n) if n.method == "notifications/cancelled")
                })
            });
            if cancelled {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{era:?}: the server never heard of the cancel"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        client.close().await;
        served.stop().await;
    }
}

#[tokio::test]
async fn sessions_end_on_delete_and_unknown_ones_get_404() {
    let server = FakeServer::new(FakeConfig::legacy());
    let served = Served::start(Bridge::new(server.connector()), HttpOptions::new()).await;
    let (_, text) = raw(served.addr, &post("localhost", "", INITIALIZE)).await;
    let id = text
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .unwrap()
        .to_owned();
    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: {id}\r\nConnection: close\r\n\r\n"
    );
    assert_eq!(raw(served.addr, &delete).await.0, 200);
    assert_eq!(raw(served.addr, &delete).await.0, 404);
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let session = format!("Mcp-Session-Id: {id}\r\n");
    assert_eq!(
        raw(served.addr, &post("localhost", &session, ping)).await.0,
        404
    );
    // A GET without a session: no stream (2026-07-28 has none).
    let get = "GET /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    assert_eq!(raw(served.addr, get).await.0, 405);
    served.stop().await;
}

#[tokio::test]
async fn an_idle_session_ends() {
    let server = FakeServer::new(FakeConfig::legacy());
    let options = HttpOptions::new().idle_timeout(Duration::from_millis(200));
    let served = Served::start(Bridge::new(server.connector()), options).await;
    let (_, text) = raw(served.addr, &post("localhost", "", INITIALIZE)).await;
    let id = text
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .unwrap()
        .to_owned();
    tokio::time::sleep(Duration::from_millis(600)).await;
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let session = format!("Mcp-Session-Id: {id}\r\n");
    assert_eq!(
        raw(served.addr, &post("localhost", &session, ping)).await.0,
        404
    );
    served.stop().await;
}

#[tokio::test]
async fn a_modern_initialize_is_refused_and_changes_nothing() {
    let server = FakeServer::new(FakeConfig::modern());
    let served = Served::start(Bridge::new(server.connector()), HttpOptions::new()).await;
    let body = r#"{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"raw","version":"1"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let headers = "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: initialize\r\n";
    let (status, text) = raw(served.addr, &post("localhost", headers, body)).await;
    assert_eq!(status, 404, "{text}");
    assert!(text.contains("-32601"), "{text}");
    // 2026-07-28 clients are served as before, not taken for a legacy
    // client to translate: results keep their resultType.
    let list = r#"{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let headers = "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n";
    let (status, text) = raw(served.addr, &post("localhost", headers, list)).await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains(r#""resultType":"complete""#), "{text}");
    let client = served.client(answering("Ada").era(EraMode::Modern)).await;
    let echo = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(echo.content[0].as_text(), Some("hi"));
    client.close().await;
    served.stop().await;
}

/// Reads from `socket` until `needle` has been seen (or 5 s pass); what
/// was read.
async fn read_until(socket: &mut tokio::net::TcpStream, needle: &str) -> String {
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let mut chunk = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains(needle) {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match tokio::time::timeout(left, socket.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => seen.extend_from_slice(&chunk[..n]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&seen).into_owned()
}

#[tokio::test]
async fn a_broken_request_stream_is_resumed_with_last_event_id() {
    let server = FakeServer::new(FakeConfig::legacy());
    let served = Served::start(Bridge::new(server.connector()), HttpOptions::new()).await;
    let (_, text) = raw(served.addr, &post("localhost", "", INITIALIZE)).await;
    let id = text
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .unwrap()
        .to_owned();
    let session = format!("Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-11-25\r\n");
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(
        raw(served.addr, &post("localhost", &session, initialized))
            .await
            .0,
        202
    );
    // A slow call with progress; its stream breaks after the first event.
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"steps":4,"delayMs":100},"_meta":{"progressToken":"p"}}}"#;
    let mut socket = tokio::net::TcpStream::connect(served.addr).await.unwrap();
    socket
        .write_all(post("localhost", &session, call).as_bytes())
        .await
        .unwrap();
    let first = read_until(&mut socket, "\n\n").await;
    let last = first
        .lines()
        .find_map(|l| l.strip_prefix("id: "))
        .unwrap_or_else(|| panic!("no event id in {first:?}"))
        .to_owned();
    drop(socket);
    // The client resumes on a GET from the last event it read: the rest
    // of the progress, then the answer, on the resumed stream.
    let mut socket = tokio::net::TcpStream::connect(served.addr).await.unwrap();
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n{session}Last-Event-ID: {last}\r\n\r\n"
    );
    socket.write_all(get.as_bytes()).await.unwrap();
    let rest = read_until(&mut socket, r#""id":2,"result""#).await;
    assert!(rest.starts_with("HTTP/1.1 200"), "{rest}");
    assert!(
        rest.contains(r#""id":2,"result""#),
        "no answer after resuming: {rest}"
    );
    assert!(rest.contains("notifications/progress"), "{rest}");
    assert!(
        !rest.contains(&format!("id: {last}\n")),
        "the event already read came again: {rest}"
    );
    served.stop().await;
}

#[tokio::test]
async fn a_modern_client_cannot_name_a_call_in_a_notification() {
    let server = FakeServer::new(FakeConfig::modern());
    let served = Served::start(Bridge::new(server.connector()), HttpOptions::new()).await;
    for method in ["notifications/cancelled", "notifications/progress"] {
        let body = format!(
            r#"{{"jsonrpc":"2.0","method":"{method}","params":{{"requestId":1,"progressToken":1,"progress":1}}}}"#
        );
        let headers = format!("MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n");
        let (status, text) = raw(served.addr, &post("localhost", &headers, &body)).await;
        assert_eq!(status, 400, "{text}");
        assert!(text.contains("closing the call's stream"), "{text}");
    }
    served.stop().await;
}
