//! A host over real servers: the reference server in both eras over stdio
//! and over HTTP, one that never starts and one that hangs; the working ones are ready in
//! their own time, names that collide come out distinct, calls reach the
//! right server, and a list change shows in the merged stream with its
//! server's name.

use std::time::Duration;

use mcp_client::host::{Host, ServerStatus, ServersFile};
use mcp_client::{Client, ServerEvent};
use mcp_testkit::binaries::server_path;
use serde_json::json;

const BOUND: Duration = Duration::from_secs(20);

fn servers_file() -> ServersFile {
    let server = server_path().display().to_string();
    let text = json!({"mcpServers": {
        "legacy": {"command": server, "args": ["--era", "legacy"]},
        "modern": {"type": "stdio", "command": server, "args": ["--era", "modern"]},
        "missing": {"command": "/nonexistent/mcp-server"},
        // Reads its input and never answers: connecting hangs.
        "hanging": {"command": "sh", "args": ["-c", "cat > /dev/null"]}
    }});
    ServersFile::from_json(&text.to_string()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_connects_what_it_can_names_apart_and_routes() {
    let remote = mcp_testkit::fake::http::HttpFake::start(mcp_testkit::fake::FakeConfig::dual())
        .await
        .unwrap();
    let host = Host::builder()
        .servers_file(&servers_file())
        .server(
            "remote",
            mcp_client::HttpTransportBuilder::new(remote.url()),
        )
        .client_builder(|name| {
            Client::builder()
                .server_name(name)
                .probe_timeout(Duration::from_millis(300))
                .request_timeout(Duration::from_secs(5))
        })
        .connect_timeout(Duration::from_secs(2))
        .start();
    // The working servers are ready long before the hanging one fails.
    let ready = tokio::time::timeout(Duration::from_millis(1500), async {
        loop {
            let status = host.status();
            let up = ["legacy", "modern", "remote"]
                .iter()
                .all(|n| matches!(status[*n], ServerStatus::Ready { .. }));
            if up {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the working servers are not held up by the others");
    assert_eq!(ready["hanging"], ServerStatus::Connecting);
    tokio::time::timeout(BOUND, host.settled()).await.unwrap();

    let status = host.status();
    let ServerStatus::Failed { error } = &status["missing"] else {
        panic!("{status:?}")
    };
    assert!(!error.is_empty());
    let ServerStatus::Failed { error } = &status["hanging"] else {
        panic!("{status:?}")
    };
    assert!(error.contains("did not connect within"), "{error}");
    for (name, version) in [
        ("legacy", "2025-11-25"),
        ("modern", "2026-07-28"),
        ("remote", "2026-07-28"),
    ] {
        let ServerStatus::Ready {
            version: v, took, ..
        } = &status[name]
        else {
            panic!("{status:?}")
        };
        assert_eq!(v.as_str(), version);
        assert!(*took < Duration::from_secs(2), "{name}: {took:?}");
    }

    // Both have `echo`: distinct names, each call on its own server.
    let tools = host.list_tools().await;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert!(
        names.contains(&"legacy__echo") && names.contains(&"modern__echo"),
        "{names:?}"
    );
    let distinct: std::collections::HashSet<&&str> = names.iter().collect();
    assert_eq!(distinct.len(), names.len());
    assert!(names.iter().all(|n| n.len() <= mcp_client::host::MAX_NAME));
    assert!(names.contains(&"remote__echo"), "{names:?}");
    for server in ["legacy", "modern", "remote"] {
        let result = host
            .call_tool(&format!("{server}__echo"), json!({"text": server}))
            .await
            .unwrap();
        assert!(!result.is_error());
        assert!(
            serde_json::to_string(&result.content)
                .unwrap()
                .contains(server)
        );
    }
    let unknown = host.call_tool("nobody__echo", json!({})).await;
    assert!(unknown.is_err());

    // A change on one server, tagged with its name in the merged stream,
    // and the merged list refreshed.
    let mut events = host.events();
    host.call_tool("legacy__add_tool", json!({"name": "fresh"}))
        .await
        .unwrap();
    let event = tokio::time::timeout(BOUND, async {
        loop {
            let e = events.recv().await.expect("the host's events go on");
            if e.event == ServerEvent::ToolsListChanged {
                return e;
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(event.server, "legacy");
    let tools = host.list_tools().await;
    assert!(
        tools.iter().any(|t| t.name == "legacy__fresh"),
        "the merged list is fresh"
    );
    assert!(!tools.iter().any(|t| t.name == "modern__fresh"));

    // Prompts and resources too.
    let prompts = host.list_prompts().await;
    assert!(prompts.iter().any(|p| p.name == "modern__greeting"));
    let greeting = host
        .get_prompt("modern__greeting", [("name".to_owned(), "Ada".to_owned())])
        .await
        .unwrap();
    assert!(!greeting.messages.is_empty());
    let resources = host.list_resources().await;
    let hello = resources
        .iter()
        .find(|r| r.server == "legacy" && r.resource.uri == "fake://text/hello")
        .expect("listed with its server");
    let read = host
        .read_resource(&hello.server, &hello.resource.uri)
        .await
        .unwrap();
    assert_eq!(read.contents.len(), 1);

    tokio::time::timeout(Duration::from_secs(10), host.close())
        .await
        .expect("closing is bounded");
}
