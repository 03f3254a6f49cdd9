//! Many servers served as one ([`mcp_bridge::Servers`]): two reference
//! servers upstream, this workspace's client downstream through the
//! bridge, their tools and prompts named `server__name`.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_bridge::{Bridge, Ended, Servers};
use mcp_client::host::Naming;
use mcp_client::prelude::*;
use mcp_client::protocol::types::CallToolRequestParams;
use mcp_client::transport::{ConnectionHandlers, Transport, TransportError};
use mcp_protocol::Message;
use mcp_reference_server::{FakeConfig, FakeServer};
use serde_json::json;

use support::{asking, serving};

fn servers() -> Servers {
    Servers::new(|pairs| Naming::default().names(pairs))
}

/// Whether `server`'s first session got a `tools/call` of `tool`.
fn called(server: &FakeServer, tool: &str) -> bool {
    server.received(0).iter().any(|m| {
        matches!(m, Message::Request(r) if r.method == "tools/call"
            && r.params.as_ref().and_then(|p| p.get("name")) == Some(&json!(tool)))
    })
}

fn text(result: &CallToolResult) -> &str {
    result.content[0].as_text().unwrap_or_default()
}

#[tokio::test]
async fn every_servers_tools_are_listed_under_its_name_and_called_on_it() {
    let a = FakeServer::new(FakeConfig::legacy());
    // b's list comes in pages of two: the bridge reads them all.
    let b = FakeServer::new(FakeConfig::legacy().page_size(2));
    let bridge = Bridge::new(
        servers()
            .server("a", a.connector())
            .server("b", b.connector()),
    );
    let (serving, end) = serving(bridge);
    let client = end.client(asking().era(EraMode::Legacy)).await;
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    for name in ["a__echo", "b__echo", "a__elicit", "b__slow"] {
        assert!(names.contains(&name.to_owned()), "{name} in {names:?}");
    }
    let per_server = names.iter().filter(|n| n.starts_with("a__")).count();
    assert_eq!(names.len(), 2 * per_server, "{names:?}");
    let echo = client
        .call_tool("b__echo", json!({"text": "to b"}))
        .await
        .unwrap();
    assert_eq!(text(&echo), "to b");
    assert!(called(&b, "echo"), "b got the call under its own name");
    assert!(!called(&a, "echo"), "a did not");
    // Progress reaches the call, its token the client's.
    let steps = Arc::new(Mutex::new(0));
    let count = steps.clone();
    let options = CallOptions::new().on_progress(move |_| *count.lock().unwrap() += 1);
    let arguments = json!({"steps": 3, "delayMs": 5});
    let slow = CallToolRequestParams::new("a__slow")
        .with_arguments(arguments.as_object().cloned().unwrap());
    client.call_tool_with(slow, &options).await.unwrap();
    assert_eq!(*steps.lock().unwrap(), 3);
    // Prompts are named the same way; resources pass as they are.
    let prompt = client
        .get_prompt("a__greeting", [("name", "Ada")])
        .await
        .unwrap();
    assert!(format!("{prompt:?}").contains("Ada"), "{prompt:?}");
    let read = client.read_resource("fake://text/hello").await.unwrap();
    assert!(format!("{read:?}").contains("Hello"), "{read:?}");
    client.close().await;
    let ended = tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .expect("the bridge stops when the client leaves")
        .unwrap()
        .unwrap();
    assert_eq!(ended, Ended::ClientLeft);
}

#[tokio::test]
async fn a_name_no_server_has_is_refused_naming_it() {
    let a = FakeServer::new(FakeConfig::legacy());
    let b = FakeServer::new(FakeConfig::legacy());
    let bridge = Bridge::new(
        servers()
            .server("a", a.connector())
            .server("b", b.connector()),
    );
    let (_serving, end) = serving(bridge);
    let client = end.client(asking().era(EraMode::Legacy)).await;
    for name in ["c__echo", "echo"] {
        let error = client.call_tool(name, json!({})).await.unwrap_err();
        let said = error.to_string();
        assert!(said.contains("-32602") && said.contains(name), "{said}");
    }
    let error = client
        .request_raw("tasks/list", json!({}), &CallOptions::new())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("-32601"), "{error}");
    client.close().await;
}

#[tokio::test]
async fn a_server_that_does_not_start_leaves_the_others_served() {
    let b = FakeServer::new(FakeConfig::legacy());
    let broken = |_handlers: ConnectionHandlers| async {
        Err::<Arc<dyn Transport>, _>(TransportError::Closed)
    };
    let bridge = Bridge::new(servers().server("a", broken).server("b", b.connector()));
    let (_serving, end) = serving(bridge);
    let client = end.client(asking().era(EraMode::Legacy)).await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(!tools.is_empty());
    assert!(tools.iter().all(|t| t.name.starts_with("b__")), "{tools:?}");
    let echo = client
        .call_tool("b__echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(text(&echo), "hi");
    client.close().await;
}

#[tokio::test]
async fn no_server_that_starts_is_an_error_to_connect() {
    let broken = |_handlers: ConnectionHandlers| async {
        Err::<Arc<dyn Transport>, _>(TransportError::Closed)
    };
    let (serving, _end) = serving(Bridge::new(servers().server("a", broken)));
    let error = serving.await.unwrap().unwrap_err();
    assert!(error.to_string().contains("a: "), "{error}");
}

#[tokio::test]
async fn a_servers_questions_and_logs_reach_the_client() {
    let a = FakeServer::new(FakeConfig::legacy());
    let b = FakeServer::new(FakeConfig::legacy());
    let bridge = Bridge::new(
        servers()
            .server("a", a.connector())
            .server("b", b.connector()),
    );
    let (_serving, end) = serving(bridge);
    let loggers = Arc::new(Mutex::new(Vec::new()));
    let seen = loggers.clone();
    let builder = asking().era(EraMode::Legacy).on_event(move |event| {
        if let ServerEvent::Log(log) = event {
            seen.lock().unwrap().push(log.logger.clone());
        }
    });
    let client = end.client(builder).await;
    let asked = client.call_tool("b__elicit", json!({})).await.unwrap();
    assert!(text(&asked).contains("Ada"), "{asked:?}");
    client
        .request_raw(
            "logging/setLevel",
            json!({"level": "debug"}),
            &CallOptions::new(),
        )
        .await
        .unwrap();
    client
        .call_tool("a__log", json!({"level": "info", "message": "from a"}))
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    // The server logs the call, then the tool's message.
    while loggers.lock().unwrap().len() < 2 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let loggers = loggers.lock().unwrap().clone();
    assert_eq!(
        loggers,
        [Some("a/fake".to_owned()), Some("a/fake".to_owned())]
    );
    client.close().await;
}

#[tokio::test]
async fn a_server_that_dies_takes_its_tools_and_the_others_go_on() {
    let a = FakeServer::new(FakeConfig::legacy());
    let b = FakeServer::new(FakeConfig::legacy());
    // Keeps a's session, to end it from here.
    let kept: Arc<Mutex<Option<Arc<dyn Transport>>>> = Arc::default();
    let keep = kept.clone();
    let a_kept = move |handlers: ConnectionHandlers| {
        let transport = a.connect(handlers);
        *keep.lock().unwrap() = Some(transport.clone());
        async move { Ok::<_, TransportError>(transport) }
    };
    let bridge = Bridge::new(servers().server("a", a_kept).server("b", b.connector()));
    let (serving, end) = serving(bridge);
    let changed = Arc::new(Mutex::new(0));
    let count = changed.clone();
    let builder = asking().era(EraMode::Legacy).on_event(move |event| {
        if matches!(event, ServerEvent::ToolsListChanged) {
            *count.lock().unwrap() += 1;
        }
    });
    let client = end.client(builder).await;
    let before = client.list_all_tools().await.unwrap();
    assert!(before.iter().any(|t| t.name == "a__echo"));
    let session = kept.lock().unwrap().clone().unwrap();
    session.close().await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while *changed.lock().unwrap() == 0 {
        assert!(tokio::time::Instant::now() < deadline, "no list_changed");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let after = client.list_all_tools().await.unwrap();
    assert!(!after.is_empty());
    assert!(after.iter().all(|t| t.name.starts_with("b__")), "{after:?}");
    let echo = client
        .call_tool("b__echo", json!({"text": "still"}))
        .await
        .unwrap();
    assert_eq!(text(&echo), "still");
    assert!(!serving.is_finished(), "the bridge serves the others");
    client.close().await;
}

#[tokio::test]
async fn a_client_that_probes_the_era_is_served_the_legacy_one() {
    let a = FakeServer::new(FakeConfig::dual());
    let b = FakeServer::new(FakeConfig::legacy());
    let bridge = Bridge::new(
        servers()
            .server("a", a.connector())
            .server("b", b.connector()),
    );
    let (_serving, end) = serving(bridge);
    let client = end.client(asking()).await;
    assert_eq!(client.era(), Era::Legacy);
    let echo = client
        .call_tool("a__echo", json!({"text": "probed"}))
        .await
        .unwrap();
    assert_eq!(text(&echo), "probed");
    client.close().await;
}

#[tokio::test]
async fn a_modern_client_is_told_only_the_legacy_era_is_served() {
    let a = FakeServer::new(FakeConfig::legacy());
    let (_serving, end) = serving(Bridge::new(servers().server("a", a.connector())));
    let error = end
        .connect(asking().era(EraMode::Modern))
        .await
        .map(|_| ())
        .unwrap_err();
    assert!(error.to_string().contains("legacy era"), "{error}");
}
