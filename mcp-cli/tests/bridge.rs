//! `mcp bridge` as real processes: a client (this workspace's, over the
//! bridge's stdio) through the `mcp` binary to the reference server
//! binary, in either era; the bridge's end when its client leaves, when a
//! signal stops it and when its server dies, with no process left behind.

mod common;
mod process;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_client::prelude::*;
use mcp_client::protocol::types::CallToolRequestParams;
use serde_json::json;

use process::{MCP, Running, children, gone_within, server};

/// The bridge in front of the reference server of `era`, as a command.
fn bridge(era: &str) -> StdioCommand {
    StdioCommand::new(MCP).args(["bridge", "--", &server(), "--era", era])
}

/// The bridge in front of a server at `url`, as a command.
fn bridge_to(url: &str) -> StdioCommand {
    StdioCommand::new(MCP).args(["bridge", "--url", url])
}

fn slow(steps: u64, delay_ms: u64) -> CallToolRequestParams {
    let arguments = json!({"steps": steps, "delayMs": delay_ms});
    CallToolRequestParams::new("slow").with_arguments(arguments.as_object().cloned().unwrap())
}

async fn a_session_through_the_bridge(era: &str, bridge: StdioCommand) {
    let client = Client::builder()
        .request_timeout(Duration::from_secs(20))
        .on_elicitation(|_request, _ctx| async move {
            let mut form = JsonObject::new();
            form.insert("name".into(), json!("Ada"));
            Ok(ElicitResult::accept(form))
        })
        .connect(bridge)
        .await
        .expect("the client connects through the bridge");
    assert_eq!(client.era().to_string(), era, "the era is the server's");
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
    client.call_tool_with(slow(3, 20), &options).await.unwrap();
    assert_eq!(
        seen.load(Ordering::SeqCst),
        3,
        "progress crossed the bridge"
    );
    let cancel = CancellationToken::new();
    let options = CallOptions::new().cancellation(cancel.clone());
    let call = client.call_tool_with(slow(100, 20), &options);
    let later = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    };
    let (cancelled, ()) = tokio::join!(call, later);
    assert!(cancelled.is_err());
    let after = client
        .call_tool("echo", json!({"text": "after"}))
        .await
        .unwrap();
    assert_eq!(after.content[0].as_text(), Some("after"));
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_legacy_server_through_the_bridge() {
    a_session_through_the_bridge("legacy", bridge("legacy")).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_modern_server_through_the_bridge() {
    a_session_through_the_bridge("modern", bridge("modern")).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_at_a_url_through_the_bridge_in_each_era() {
    for era in ["legacy", "modern"] {
        let server = common::HttpServer::start(era);
        a_session_through_the_bridge(era, bridge_to(&server.url)).await;
    }
}

#[test]
fn when_the_client_leaves_the_bridge_and_its_server_exit() {
    let mut bridge = Running::start(&[&server(), "--era", "legacy"]);
    let server = bridge.initialize();
    drop(bridge.child.stdin.take());
    assert_eq!(
        bridge.exit_within(Duration::from_secs(5)),
        0,
        "{}",
        bridge.stderr()
    );
    assert!(
        gone_within(server, Duration::from_secs(5)),
        "the server outlived the bridge"
    );
}

#[test]
fn a_server_slow_to_stop_is_stopped_before_the_client_would_signal_the_bridge() {
    // A server that goes on at its stdin's end (as one still busy with a
    // call it was told to cancel) and stops only at SIGTERM, leaving a mark.
    let mark = std::env::temp_dir().join(format!("mcp-bridge-sigterm-{}", std::process::id()));
    let _ = std::fs::remove_file(&mark);
    let script = format!(
        "trap 'echo > \"{}\"; exit 0' TERM; while :; do sleep 0.05; done",
        mark.display()
    );
    let mut bridge = Running::start_args(&["-v", "bridge", "--", "sh", "-c", &script], &[]);
    let start = Instant::now();
    let server = loop {
        if let Some(&pid) = children(bridge.child.id()).first() {
            break pid;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "no server started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(100));
    let left = Instant::now();
    drop(bridge.child.stdin.take());
    let code = bridge.exit_within(Duration::from_secs(10));
    let took = left.elapsed();
    // The official TypeScript and Python SDKs send a stdio server SIGTERM
    // 2 s after closing its stdin: by then the bridge has stopped its
    // server the way the spec says (stdin, then SIGTERM) and left.
    assert_eq!(code, 0, "{}", bridge.stderr());
    assert!(
        took < Duration::from_millis(1900),
        "the bridge took {took:?} to leave"
    );
    assert!(mark.exists(), "the server was not given SIGTERM");
    let _ = std::fs::remove_file(&mark);
    assert!(
        gone_within(server, Duration::from_secs(5)),
        "the server outlived the bridge"
    );
}

#[test]
fn a_signal_stops_the_bridge_and_its_server() {
    // SIGINT, as a terminal's Ctrl-C sends; SIGTERM, as a desktop client
    // stopping the server it started does.
    for signal in ["-INT", "-TERM"] {
        let mut bridge = Running::start(&[&server(), "--era", "legacy"]);
        let server = bridge.initialize();
        let sent = Command::new("kill")
            .args([signal, &bridge.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        assert_eq!(bridge.exit_within(Duration::from_secs(5)), 130, "{signal}");
        assert!(
            gone_within(server, Duration::from_secs(5)),
            "the server outlived the bridge ({signal})"
        );
    }
}

#[test]
fn when_the_server_dies_mid_call_the_call_is_answered_and_the_bridge_exits() {
    let server = server();
    let mut bridge = Running::start_args(
        &[
            "bridge",
            "--restarts",
            "0",
            "--",
            &server,
            "--era",
            "legacy",
        ],
        &[],
    );
    let server = bridge.initialize();
    bridge.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "slow", "arguments": {"steps": 100, "delayMs": 50}}}));
    std::thread::sleep(Duration::from_millis(200));
    Command::new("kill")
        .args(["-KILL", &server.to_string()])
        .status()
        .unwrap();
    let answer = bridge.read();
    assert_eq!(answer["id"], 2, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("may have run"), "{answer}");
    assert_eq!(bridge.exit_within(Duration::from_secs(5)), 3);
    let stderr = bridge.stderr();
    assert!(stderr.contains("server is gone"), "{stderr}");
}

#[test]
fn a_server_that_cannot_start_is_an_error_on_stderr_and_nothing_on_stdout() {
    let mut bridge = Running::start(&["/nonexistent/mcp-server"]);
    assert_eq!(bridge.exit_within(Duration::from_secs(5)), 3);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut bridge.lines, &mut rest).unwrap();
    assert_eq!(rest, "", "stdout carries only JSON-RPC");
    let stderr = bridge.stderr();
    assert!(stderr.contains("could not connect"), "{stderr}");
}

#[test]
fn a_server_that_needs_authorization_is_answered_with_the_login_to_run() {
    let dir = std::env::temp_dir().join(format!("mcp-bridge-auth-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = dir.join("tokens.json");
    let mut server = Command::new(server())
        .args(["--http", "0", "--oauth"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let url = first
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .to_owned();
    let mut bridge = Running::start_args(
        &["bridge", "--url", &url],
        &[("MCP_TOKEN_STORE", store.to_str().unwrap())],
    );
    bridge.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}}),
    );
    let answer = bridge.read();
    let _ = server.kill();
    let _ = server.wait();
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("login"), "{answer}");
    assert!(message.contains(&url), "{answer}");
    drop(bridge.child.stdin.take());
    assert_eq!(bridge.exit_within(Duration::from_secs(5)), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_server_that_dies_is_restarted_within_the_budget_and_the_session_goes_on() {
    let server = server();
    let mut bridge = Running::start_args(
        &[
            "bridge",
            "--restarts",
            "1",
            "--",
            &server,
            "--era",
            "legacy",
        ],
        &[],
    );
    let first = bridge.initialize();
    Command::new("kill")
        .args(["-KILL", &first.to_string()])
        .status()
        .unwrap();
    // The client hears that the lists may have changed...
    let told = bridge.read();
    assert_eq!(told["method"], "notifications/tools/list_changed", "{told}");
    bridge.read();
    bridge.read();
    // ...and its session goes on, with a new server that was told the
    // client's handshake.
    bridge.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "again"}}}));
    let answer = bridge.read();
    assert_eq!(answer["result"]["content"][0]["text"], "again", "{answer}");
    let second = children(bridge.child.id())
        .first()
        .copied()
        .expect("a new server");
    assert_ne!(second, first);
    // The budget spent, the next death ends the bridge.
    Command::new("kill")
        .args(["-KILL", &second.to_string()])
        .status()
        .unwrap();
    assert_eq!(bridge.exit_within(Duration::from_secs(5)), 3);
    let stderr = bridge.stderr();
    assert!(stderr.contains("after 1 restarts"), "{stderr}");
}

#[test]
fn a_legacy_server_restarted_under_a_2026_07_28_client_is_initialized_again() {
    let server = server();
    let mut bridge = Running::start_args(
        &[
            "--era",
            "legacy",
            "bridge",
            "--restarts",
            "1",
            "--",
            &server,
            "--era",
            "legacy",
        ],
        &[],
    );
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
    });
    let answer_to = |bridge: &mut Running, id: u64| loop {
        let message = bridge.read();
        if message["id"] == id {
            return message;
        }
    };
    bridge.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": {"_meta": meta}}),
    );
    let discovered = answer_to(&mut bridge, 1);
    assert_eq!(
        discovered["result"]["supportedVersions"][0], "2026-07-28",
        "{discovered}"
    );
    let first = children(bridge.child.id())
        .first()
        .copied()
        .expect("the bridge runs the server as its child");
    Command::new("kill")
        .args(["-KILL", &first.to_string()])
        .status()
        .unwrap();
    // Once the bridge has seen the server go (a call then says it was
    // lost), the new server is initialized as the first was, before the
    // call: a legacy server refuses requests before its handshake.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut id = 2;
    let answer = loop {
        bridge.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "again"}, "_meta": meta}}));
        let answer = answer_to(&mut bridge, id);
        let lost = answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("lost the server"));
        if !lost || Instant::now() > deadline {
            break answer;
        }
        id += 1;
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(answer["result"]["content"][0]["text"], "again", "{answer}");
    assert_ne!(children(bridge.child.id()).first(), Some(&first));
    drop(bridge.child.stdin.take());
    assert_eq!(bridge.exit_within(Duration::from_secs(5)), 0);
}

#[test]
fn hidden_tools_are_left_out_of_the_list_and_refused() {
    let server = server();
    let mut bridge = Running::start_args(
        &[
            "bridge",
            "--deny-tools",
            "sl*",
            "--allow-tools",
            "{echo,slow,fail}",
            "--",
            &server,
            "--era",
            "legacy",
        ],
        &[],
    );
    bridge.initialize();
    bridge.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let listed = bridge.read();
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["echo", "fail"], "{listed}");
    bridge.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "slow", "arguments": {}}}));
    let refused = bridge.read();
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--deny-tools sl*"),
        "{refused}"
    );
    bridge.send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "shown"}}}));
    assert_eq!(bridge.read()["result"]["content"][0]["text"], "shown");
    drop(bridge.child.stdin.take());
    assert_eq!(bridge.exit_within(Duration::from_secs(5)), 0);
}

#[test]
fn a_closed_stderr_does_not_bring_the_bridge_down() {
    // A client that does not read the bridge's stderr: its end is closed.
    for (upstream, expected) in [
        (vec![server(), "--era".to_owned(), "legacy".to_owned()], 0),
        (vec!["/nonexistent/mcp-server".to_owned()], 3),
    ] {
        let mut args = vec!["-v", "bridge", "--"];
        args.extend(upstream.iter().map(String::as_str));
        let mut bridge = Running::start_args(&args, &[]);
        drop(bridge.child.stderr.take());
        if expected == 0 {
            bridge.initialize();
            drop(bridge.child.stdin.take());
        }
        assert_eq!(
            bridge.exit_within(Duration::from_secs(5)),
            expected,
            "{upstream:?}"
        );
    }
}
