//! `mcp bridge --config FILE` as real processes: every server of a
//! servers file (two reference server binaries) served as one to a plain
//! JSON-RPC line client, their tools named `server__tool`; the bridge and
//! both servers gone once the client closes stdin; with `--tool-search`,
//! two tools in place of all of theirs (the bytes of each list printed).

mod process;

use std::time::Duration;

use serde_json::json;

use process::{Running, children, gone_within, server};

/// A servers file of two reference servers, `alpha` and `beta` (`beta`
/// with a server that fails to start beside them when `broken`).
fn servers_file(tag: &str, broken: bool) -> std::path::PathBuf {
    let server = server();
    let mut servers = json!({
        "alpha": {"command": server, "args": ["--era", "legacy"]},
        "beta": {"command": server, "args": ["--era", "legacy"]},
    });
    if broken {
        servers["gamma"] = json!({"command": "/nonexistent/mcp-server"});
    }
    let path = std::env::temp_dir().join(format!(
        "mcp-bridge-servers-{tag}-{}.json",
        std::process::id()
    ));
    std::fs::write(&path, json!({ "mcpServers": servers }).to_string()).unwrap();
    path
}

/// The tools the bridge lists.
fn tool_names(bridge: &mut Running) -> Vec<String> {
    bridge.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let listed = bridge.read();
    listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn every_server_of_a_file_is_served_as_one() {
    let file = servers_file("both", false);
    let mut bridge = Running::start_args(&["bridge", "--config", file.to_str().unwrap()], &[]);
    bridge.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}}),
    );
    let answer = bridge.read();
    assert_eq!(
        answer["result"]["protocolVersion"], "2025-06-18",
        "{answer}"
    );
    assert_eq!(
        answer["result"]["serverInfo"]["name"], "mcp-bridge",
        "{answer}"
    );
    bridge.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let servers = children(bridge.child.id());
    assert_eq!(servers.len(), 2, "one child per server: {servers:?}");
    let names = tool_names(&mut bridge);
    for name in ["alpha__echo", "beta__echo", "alpha__slow", "beta__elicit"] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    bridge.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "beta__echo", "arguments": {"text": "through beta"}}}));
    let called = bridge.read();
    assert_eq!(
        called["result"]["content"][0]["text"], "through beta",
        "{called}"
    );
    bridge.send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "delta__echo", "arguments": {}}}));
    let refused = bridge.read();
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    drop(bridge.child.stdin.take());
    let code = bridge.exit_within(Duration::from_secs(5));
    assert_eq!(code, 0, "{}", bridge.stderr());
    for pid in servers {
        assert!(
            gone_within(pid, Duration::from_secs(5)),
            "a server outlived the bridge"
        );
    }
    let _ = std::fs::remove_file(file);
}

#[test]
fn a_server_of_the_file_that_cannot_start_is_named_and_the_others_served_at_once() {
    let file = servers_file("broken", true);
    // -v: the library's warnings are shown.
    let args = ["bridge", "-v", "--config", file.to_str().unwrap()];
    let mut bridge = Running::start_args(&args, &[]);
    // A client that does not wait for the handshake's answer: its list
    // waits for it.
    bridge.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}}),
    );
    bridge.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    bridge.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let (first, second) = (bridge.read(), bridge.read());
    let listed = if first["id"] == 2 { first } else { second };
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"alpha__echo"), "{names:?}");
    assert!(names.contains(&"beta__echo"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("gamma__")), "{names:?}");
    drop(bridge.child.stdin.take());
    assert_eq!(bridge.exit_within(Duration::from_secs(5)), 0);
    let stderr = bridge.stderr();
    assert!(stderr.contains("gamma"), "the warning names it: {stderr}");
    let _ = std::fs::remove_file(file);
}

/// A servers file of the reference server under each of `names`.
fn named_servers_file(tag: &str, names: &[&str]) -> std::path::PathBuf {
    let server = server();
    let servers: serde_json::Map<String, serde_json::Value> = names
        .iter()
        .map(|n| {
            (
                (*n).to_owned(),
                json!({"command": server, "args": ["--era", "legacy"]}),
            )
        })
        .collect();
    let path = std::env::temp_dir().join(format!(
        "mcp-bridge-servers-{tag}-{}.json",
        std::process::id()
    ));
    std::fs::write(&path, json!({ "mcpServers": servers }).to_string()).unwrap();
    path
}

/// `mcp bridge ARGS`, initialized, and the result of its `tools/list`.
fn listed(args: &[&str]) -> (Running, serde_json::Value) {
    let mut bridge = Running::start_args(args, &[]);
    bridge.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}}),
    );
    let answer = bridge.read();
    assert_eq!(answer["id"], 1, "{answer}");
    bridge.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    bridge.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let list = bridge.read();
    assert_eq!(list["id"], 2, "{list}");
    (bridge, list["result"].clone())
}

#[test]
fn tool_search_lists_two_tools_in_place_of_every_servers_and_calls_through_them() {
    let names = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"];
    let file = named_servers_file("search", &names);
    let config = file.to_str().unwrap();
    let (mut plain, every) = listed(&["bridge", "--config", config]);
    drop(plain.child.stdin.take());
    assert_eq!(plain.exit_within(Duration::from_secs(5)), 0);
    let (mut bridge, two) = listed(&["bridge", "--config", config, "--tool-search"]);
    let (without, with) = (every.to_string().len(), two.to_string().len());
    // The measure of what tool search saves an agent: the bytes of the
    // one list it is handed, with and without.
    println!(
        "tools/list of {} servers ({} tools): {without} bytes; with --tool-search: {with} bytes",
        names.len(),
        every["tools"].as_array().unwrap().len()
    );
    let two_names: Vec<&str> = two["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(two_names, ["search_tools", "call_tool"]);
    assert!(with * 5 < without, "{with} bytes against {without}");
    bridge.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "search_tools", "arguments": {"query": "echo", "limit": 20}}}));
    let found = bridge.read();
    let tools = found["result"]["structuredContent"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{found}"))
        .clone();
    for name in names {
        let echo = format!("{name}__echo");
        assert!(
            tools.iter().any(|t| t["name"] == echo.as_str()),
            "{echo} in {found}"
        );
    }
    bridge.send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "call_tool", "arguments": {"name": "gamma__echo",
            "arguments": {"text": "through gamma"}}}}));
    let called = bridge.read();
    assert_eq!(
        called["result"]["content"][0]["text"], "through gamma",
        "{called}"
    );
    drop(bridge.child.stdin.take());
    assert_eq!(bridge.exit_within(Duration::from_secs(5)), 0);
    let _ = std::fs::remove_file(file);
}

#[test]
fn bridge_help_names_tool_search() {
    let help = std::process::Command::new(process::MCP)
        .args(["bridge", "--help"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("--tool-search"), "{text}");
}
