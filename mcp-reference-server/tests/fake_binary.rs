//! The `mcp-reference-server` binary, run as a process and spoken to by
//! hand-written lines on its stdin.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-reference-server");

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let mut child = Command::new(BIN)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout: ChildStdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let _ = tx.send(serde_json::from_str(&line).expect("stdout carries only JSON"));
            }
        });
        Server {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message. A line answered in milliseconds is given 10 s:
    /// room for a process on a busy machine.
    fn next(&self) -> Value {
        self.lines
            .recv_timeout(Duration::from_secs(10))
            .expect("an answer within 10 s")
    }

    fn call(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.next();
            if m["id"] == id && m.get("method").is_none() {
                return m;
            }
        }
    }

    /// Closes stdin and waits: the exit code and stderr.
    fn finish(mut self) -> (Option<i32>, String) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        let mut stderr = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        (status.code(), stderr)
    }
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
    })
}

fn legacy_exchange(server: &mut Server, version: &str) {
    let init = server.call(
        1,
        "initialize",
        json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    assert_eq!(init["result"]["protocolVersion"], version);
    assert!(init["result"].get("resultType").is_none());
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let echo = server.call(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    assert_eq!(echo["result"]["content"][0]["text"], "hi");
}

#[test]
fn legacy_flag_speaks_the_handshake() {
    let mut server = Server::start(&["--era", "legacy", "--versions", "2025-11-25,2025-06-18"]);
    let discover = server.call(0, "server/discover", json!({"_meta": meta()}));
    assert_eq!(discover["error"]["code"], -32601);
    legacy_exchange(&mut server, "2025-06-18");
    assert_eq!(
        server.finish().0,
        Some(0),
        "exits cleanly when stdin closes"
    );
}

#[test]
fn modern_flag_speaks_discover_and_meta() {
    let mut server = Server::start(&["--era", "modern", "--page-size", "4"]);
    let discover = server.call(1, "server/discover", json!({"_meta": meta()}));
    assert_eq!(
        discover["result"]["supportedVersions"],
        json!(["2026-07-28"])
    );
    assert_eq!(discover["result"]["resultType"], "complete");
    let echo = server.call(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}, "_meta": meta()}),
    );
    assert_eq!(echo["result"]["content"][0]["text"], "hi");
    assert_eq!(echo["result"]["resultType"], "complete");
    let list = server.call(3, "tools/list", json!({"_meta": meta()}));
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 4);
    assert!(list["result"]["nextCursor"].is_string());
    let bare = server.call(
        4,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    assert_eq!(bare["error"]["code"], -32602);
    let init = server.call(
        5,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
    );
    assert_eq!(init["error"]["code"], -32022);
    assert_eq!(server.finish().0, Some(0));
}

#[test]
fn dual_flag_serves_either() {
    let mut server = Server::start(&["--era", "dual"]);
    let discover = server.call(1, "server/discover", json!({"_meta": meta()}));
    assert_eq!(
        discover["result"]["supportedVersions"],
        json!(["2026-07-28"])
    );
    let mut server = Server::start(&["--era=dual", "--knob", "fix-era-at-first-message"]);
    server.call(1, "server/discover", json!({"_meta": meta()}));
    let init = server.call(
        2,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
    );
    assert_eq!(init["error"]["code"], -32022);
    let mut server = Server::start(&[]);
    legacy_exchange(&mut server, "2025-11-25");
}

#[test]
fn exits_on_a_request_before_initialize() {
    let mut server = Server::start(&["--era", "legacy", "--knob", "exit-on-unknown-before-init"]);
    server.send(json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta()}}));
    let status = server.child.wait().unwrap();
    assert_eq!(status.code(), Some(1));
    let (_, stderr) = server.finish();
    assert!(
        stderr.contains("expected an initialize request"),
        "{stderr}"
    );
}

#[test]
fn discover_answer_flag() {
    let mut server = Server::start(&["--era", "legacy", "--discover-answer", "-32602"]);
    let discover = server.call(1, "server/discover", json!({"_meta": meta()}));
    assert_eq!(discover["error"]["code"], -32602);
    let mut server = Server::start(&["--era", "legacy", "--discover-answer", "silent"]);
    server.send(json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta()}}));
    assert!(
        server
            .lines
            .recv_timeout(Duration::from_millis(300))
            .is_err()
    );
    legacy_exchange(&mut server, "2025-11-25");
}

#[test]
fn never_reads_stdin() {
    let mut server = Server::start(&["--never-read-stdin"]);
    let mut stdin = server.stdin.take().unwrap();
    let (done_tx, done) = mpsc::channel();
    std::thread::spawn(move || {
        // Far more than a pipe buffer: the write blocks while nobody reads.
        let chunk = vec![b' '; 1 << 20];
        let _ = stdin.write_all(&chunk);
        let _ = done_tx.send(());
    });
    assert!(
        done.recv_timeout(Duration::from_millis(500)).is_err(),
        "the write should block"
    );
    assert!(
        server.child.try_wait().unwrap().is_none(),
        "and the server stays up"
    );
    server.child.kill().unwrap();
    server.child.wait().unwrap();
}

#[test]
fn knob_flags_on_answers() {
    let mut server = Server::start(&[
        "--knob",
        "answer-twice=ping",
        "--knob",
        "answer-late=200:ping",
    ]);
    let started = std::time::Instant::now();
    server.send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    assert_eq!(server.next()["id"], 3);
    assert_eq!(server.next()["id"], 3);
    assert!(started.elapsed() >= Duration::from_millis(200));
    let mut server = Server::start(&["--knob", "wrong-id"]);
    server.send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    assert_eq!(server.next()["id"], 1_000_003);

    // Only the method named goes unanswered.
    let mut server = Server::start(&["--era", "legacy", "--knob", "never-answer=tools/list"]);
    legacy_exchange(&mut server, "2025-11-25");
    server.send(json!({"jsonrpc": "2.0", "id": 10, "method": "tools/list"}));
    server.send(json!({"jsonrpc": "2.0", "id": 11, "method": "ping"}));
    let first = server.next();
    assert_eq!(
        first["id"], 11,
        "the ping is answered, tools/list is not: {first}"
    );
    // Requests are answered in order, so a tools/list answer would have
    // come first; the wait only gives a late one a chance to show.
    let late = server.lines.recv_timeout(Duration::from_millis(300));
    assert!(late.is_err(), "tools/list was answered: {late:?}");
}

#[test]
fn help_and_bad_flags() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("--era") && help.contains("--discover-answer"));
    let out = Command::new(BIN).arg("--bogus").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
