//! The same user code against the fake server in each era, in process; each
//! typed method in each era; methods refused by revision or capability.

mod common;

use common::user_code;
use mcp_client::{Client, EraMode, ErrorKind};
use mcp_protocol::Era;
use mcp_protocol::types::{CompleteRequestParams, Reference};
use mcp_reference_server::{FakeConfig, FakeServer};
use serde_json::{Value, json};

async fn connect(config: FakeConfig) -> Client {
    Client::builder()
        .connect(FakeServer::new(config).connector())
        .await
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn same_code_in_every_era_in_process() {
    for (config, era, version) in [
        (
            FakeConfig::legacy().versions(["2024-11-05"]),
            Era::Legacy,
            "2024-11-05",
        ),
        (
            FakeConfig::legacy().versions(["2025-11-25"]),
            Era::Legacy,
            "2025-11-25",
        ),
        (FakeConfig::modern(), Era::Modern, "2026-07-28"),
        (FakeConfig::dual(), Era::Modern, "2026-07-28"),
    ] {
        let client = connect(config).await;
        assert_eq!(client.era(), era);
        assert_eq!(client.protocol_version().as_str(), version);
        user_code(&client).await;
        client.close().await;
    }
}

#[tokio::test(start_paused = true)]
async fn typed_methods_in_each_era() {
    for config in [FakeConfig::legacy(), FakeConfig::modern()] {
        let client = connect(config).await;
        let era = client.era();
        assert_eq!(client.list_all_resources().await.unwrap().len(), 4);
        let templates = client.list_all_resource_templates().await.unwrap();
        assert_eq!(templates[0].uri_template, "fake://items/{id}");
        assert_eq!(client.list_all_prompts().await.unwrap().len(), 2);
        let completion = client
            .complete(CompleteRequestParams::new(
                Reference::prompt("greeting"),
                "name",
                "A",
            ))
            .await
            .unwrap();
        assert_eq!(completion.completion.values, ["Alice"]);
        let structured = client
            .call_tool("structured", json!({"a": 3, "b": 4}))
            .await
            .unwrap();
        let sc = structured.structured_content.unwrap();
        assert_eq!(
            (sc["sum"].as_f64(), sc["product"].as_f64()),
            (Some(7.0), Some(12.0))
        );
        let failed = client.call_tool("fail", Value::Null).await.unwrap();
        assert!(failed.is_error(), "isError is a result, not an error");
        match era {
            Era::Legacy => {
                client.ping().await.unwrap();
                client
                    .set_log_level(mcp_protocol::types::LoggingLevel::Debug)
                    .await
                    .unwrap();
                client.subscribe_resource("fake://counter").await.unwrap();
                client.unsubscribe_resource("fake://counter").await.unwrap();
                let e = client.discover().await.unwrap_err();
                assert!(matches!(e.kind(), ErrorKind::NotInRevision { .. }), "{e}");
            }
            Era::Modern => {
                let discover = client.discover().await.unwrap();
                assert!(
                    discover
                        .supported_versions
                        .iter()
                        .any(|v| v.as_str() == "2026-07-28")
                );
                client
                    .set_log_level(mcp_protocol::types::LoggingLevel::Debug)
                    .await
                    .unwrap();
                for e in [
                    client.ping().await.unwrap_err(),
                    client
                        .subscribe_resource("fake://counter")
                        .await
                        .unwrap_err(),
                ] {
                    assert!(matches!(e.kind(), ErrorKind::NotInRevision { .. }), "{e}");
                }
            }
        }
    }
}

#[tokio::test(start_paused = true)]
async fn refused_by_capability_before_anything_is_sent() {
    let server = FakeServer::new(FakeConfig::legacy().capabilities(json!({"tools": {}})));
    let client = Client::builder()
        .era(EraMode::Legacy)
        .connect(server.connector())
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    let sent_before = server.received(0).len();
    for e in [
        client.list_resources().await.unwrap_err(),
        client.list_prompts().await.unwrap_err(),
    ] {
        assert!(
            matches!(e.kind(), ErrorKind::CapabilityNotAdvertised { .. }),
            "{e}"
        );
    }
    client.ping().await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    assert_eq!(
        server.received(0).len(),
        sent_before + 1,
        "only the ping went out"
    );

    // A server that under-advertises: the check can be turned off.
    let client = Client::builder()
        .era(EraMode::Legacy)
        .enforce_server_capabilities(false)
        .connect(server.connector())
        .await
        .unwrap();
    // This server really has no resources, so it refuses; what matters is
    // that the request went out.
    let e = client.list_all_resources().await.unwrap_err();
    assert_eq!(e.code(), Some(-32601), "{e}");
}

#[tokio::test(start_paused = true)]
async fn completion_needs_no_capability_in_2024_11_05() {
    let server = FakeServer::new(
        FakeConfig::legacy()
            .versions(["2024-11-05"])
            .capabilities(json!({"prompts": {}})),
    );
    let client = connect_legacy(&server).await;
    // The request goes out (this server then refuses it: the point is that
    // the client did not).
    let e = client
        .complete(CompleteRequestParams::new(
            Reference::prompt("greeting"),
            "name",
            "B",
        ))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(-32601), "{e}");
    let server = FakeServer::new(
        FakeConfig::legacy()
            .versions(["2025-03-26"])
            .capabilities(json!({"prompts": {}})),
    );
    let client = connect_legacy(&server).await;
    let e = client
        .complete(CompleteRequestParams::new(
            Reference::prompt("greeting"),
            "name",
            "B",
        ))
        .await
        .unwrap_err();
    assert!(matches!(
        e.kind(),
        ErrorKind::CapabilityNotAdvertised {
            capability: "completions"
        }
    ));
}

async fn connect_legacy(server: &FakeServer) -> Client {
    Client::builder()
        .era(EraMode::Legacy)
        .connect(server.connector())
        .await
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn modern_requests_carry_the_envelope_and_legacy_ones_none() {
    let server = FakeServer::new(FakeConfig::dual());
    let modern = Client::builder()
        .era(EraMode::Modern)
        .connect(server.connector())
        .await
        .unwrap();
    modern
        .request_with::<mcp_protocol::methods::ListTools>(
            Default::default(),
            &mcp_client::CallOptions::new().meta("traceparent", "00-abc-def-01"),
        )
        .await
        .unwrap();
    let legacy = connect_legacy(&server).await;
    legacy.list_tools().await.unwrap();
    let meta_of = |conn: usize, method: &str| -> Value {
        server
            .received(conn)
            .into_iter()
            .filter(|m| m.method() == Some(method))
            .filter_map(|m| match m {
                mcp_protocol::Message::Request(r) => r.params,
                _ => None,
            })
            .map(|p| p.get("_meta").cloned().unwrap_or(Value::Null))
            .next_back()
            .unwrap()
    };
    let m = meta_of(0, "tools/list");
    assert_eq!(m["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    assert!(m["io.modelcontextprotocol/clientCapabilities"].is_object());
    assert_eq!(
        m["io.modelcontextprotocol/clientInfo"]["name"],
        "mcp-client-rs"
    );
    assert_eq!(m["traceparent"], "00-abc-def-01");
    let l = meta_of(1, "tools/list");
    assert!(l.is_null(), "legacy requests carry no modern _meta: {l}");
    // Nothing before the handshake in legacy.
    let first = server.received(1)[0].clone();
    assert_eq!(first.method(), Some("initialize"));
}

/// A call's future carries no room for the rare paths it may take (a
/// reconnect, a re-initialize, the tool listing behind a header mismatch):
/// those are boxed. Unboxed, every `tools/call` future held a whole
/// connect, several KiB moved at each level of every call.
#[tokio::test(start_paused = true)]
async fn a_call_future_holds_no_reconnect() {
    let client = connect(FakeConfig::modern()).await;
    let call = client.call_tool("echo", json!({"text": "hi"}));
    let size = std::mem::size_of_val(&call);
    drop(call);
    // 3,856 bytes with Rust 1.95, 9,168 with a reconnect inside.
    assert!(size < 6 * 1024, "a tools/call future takes {size} bytes");
    client.close().await;
}
