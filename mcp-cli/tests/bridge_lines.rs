//! `mcp bridge` between two real processes passes a call and its answer
//! as they were written, once the handshake is done: the answers a client
//! reads through the bridge are byte for byte those the server writes to a
//! client of its own, in either era; and a call the bridge passed is still cancelled at
//! the server when the client leaves.

mod process;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use process::{Running, server};

/// The calls compared, after the handshake of a legacy client: a list,
/// an echo with a string id and a call of a tool that does not exist.
const LEGACY_CALLS: [&str; 3] = [
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    r#"{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"echo","arguments":{"text":"h\u00e9llo"}}}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"no-such-tool","arguments":{}}}"#,
];

/// The same of a 2026-07-28 client, which has no handshake.
const MODERN_CALLS: [&str; 3] = [
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"echo","arguments":{"text":"h\u00e9llo"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"no-such-tool","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
];

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// The answers to `calls` from a process speaking on its stdio, after
/// the handshake when `handshake`.
fn answers(program: &str, args: &[&str], handshake: bool, calls: &[&str]) -> Vec<String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    if handshake {
        writeln!(stdin, "{INITIALIZE}").unwrap();
        lines.next().unwrap().unwrap();
        writeln!(stdin, "{INITIALIZED}").unwrap();
    }
    let mut answers = Vec::new();
    for call in calls {
        writeln!(stdin, "{call}").unwrap();
        answers.push(lines.next().unwrap().unwrap());
    }
    drop(stdin);
    let _ = child.wait();
    answers
}

#[test]
fn answers_through_the_bridge_are_the_servers_bytes() {
    let server = server();
    for (era, handshake, calls) in [
        ("legacy", true, LEGACY_CALLS),
        ("modern", false, MODERN_CALLS),
    ] {
        let direct = answers(&server, &["--era", era], handshake, &calls);
        assert!(direct.iter().any(|a| a.contains("héllo")), "{direct:?}");
        let bridge = ["bridge", "--", &server, "--era", era];
        let bridged = answers(process::MCP, &bridge, handshake, &calls);
        assert_eq!(bridged, direct, "era {era}");
    }
}

#[test]
fn a_call_in_flight_when_the_client_leaves_is_cancelled_at_the_server() {
    // A server that answers `initialize` and writes down every line it
    // reads, answering nothing else.
    let log = std::env::temp_dir().join(format!("mcp-bridge-lines-{}", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"0"}}}"#;
    let script = format!(
        "while IFS= read -r line; do printf '%s\\n' \"$line\" >> '{}'; \
         case \"$line\" in *'\"initialize\"'*) printf '%s\\n' '{answer}';; esac; done",
        log.display()
    );
    let mut bridge = Running::start(&["sh", "-c", &script]);
    bridge.initialize();
    bridge.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "slow", "arguments": {}}}));
    let start = Instant::now();
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("tools/call")
    {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "the call never reached the server"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(bridge.child.stdin.take());
    assert_eq!(
        bridge.exit_within(Duration::from_secs(5)),
        0,
        "{}",
        bridge.stderr()
    );
    let seen = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    let cancel = seen
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|m| m["method"] == "notifications/cancelled");
    let cancel = cancel.unwrap_or_else(|| panic!("no cancel reached the server:\n{seen}"));
    assert_eq!(cancel["params"]["requestId"], 2, "{cancel}");
}

#[test]
fn a_signal_cancels_the_calls_in_flight_and_ends_a_server_that_ignores_eof_and_sigterm() {
    // A server that answers `initialize`, writes down every line it reads,
    // starts a child of its own, and ignores both the end of its stdin and
    // SIGTERM: only the process group's SIGKILL ends it.
    let dir = std::env::temp_dir().join(format!("mcp-bridge-stubborn-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (log, grandchild) = (dir.join("log"), dir.join("grandchild"));
    let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"0"}}}"#;
    let script = format!(
        "trap '' TERM; sleep 300 & echo $! > '{}'; \
         while IFS= read -r line; do printf '%s\\n' \"$line\" >> '{}'; \
         case \"$line\" in *'\"initialize\"'*) printf '%s\\n' '{answer}';; esac; done; \
         while true; do sleep 1; done",
        grandchild.display(),
        log.display()
    );
    let mut bridge = Running::start(&["sh", "-c", &script]);
    let server = bridge.initialize();
    bridge.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "slow", "arguments": {}}}));
    let start = Instant::now();
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("tools/call")
    {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "the call never reached the server"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let sleeper: u32 = std::fs::read_to_string(&grandchild)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let sent = Command::new("kill")
        .args(["-TERM", &bridge.child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    assert_eq!(
        bridge.exit_within(Duration::from_secs(5)),
        130,
        "{}",
        bridge.stderr()
    );
    assert!(
        process::gone_within(server, Duration::from_secs(1)),
        "the server outlived the bridge"
    );
    assert!(
        process::gone_within(sleeper, Duration::from_secs(1)),
        "the server's own child outlived the bridge"
    );
    let seen = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let cancel = seen
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|m| m["method"] == "notifications/cancelled");
    let cancel = cancel.unwrap_or_else(|| panic!("no cancel reached the server:\n{seen}"));
    assert_eq!(cancel["params"]["requestId"], 2, "{cancel}");
}
