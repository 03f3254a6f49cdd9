//! The `mcp bridge` process of these tests: started with its stdio in
//! the test's hands, spoken to in plain JSON-RPC lines, and its children
//! watched (Linux `/proc`).

#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The `mcp` binary under test.
pub const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// The reference server's binary.
pub fn server() -> String {
    mcp_reference_server::binaries::server_path()
        .to_string_lossy()
        .into_owned()
}

/// The bridge as a process of its own, with its stdio in our hands.
pub struct Running {
    pub child: Child,
    pub lines: BufReader<std::process::ChildStdout>,
}

impl Running {
    pub fn start(upstream: &[&str]) -> Running {
        let mut args = vec!["bridge", "--"];
        args.extend_from_slice(upstream);
        Running::start_args(&args, &[])
    }

    pub fn start_args(args: &[&str], env: &[(&str, &str)]) -> Running {
        let mut child = Command::new(MCP)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("mcp starts");
        let lines = BufReader::new(child.stdout.take().unwrap());
        Running { child, lines }
    }

    pub fn send(&mut self, message: Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    pub fn read(&mut self) -> Value {
        let mut line = String::new();
        self.lines.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
    }

    /// Initializes, and returns the server's pid (the bridge's child).
    pub fn initialize(&mut self) -> u32 {
        self.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}}),
        );
        let answer = self.read();
        assert_eq!(answer["id"], 1, "{answer}");
        assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        children(self.child.id())
            .first()
            .copied()
            .expect("the bridge runs the server as its child")
    }

    /// Waits at most `limit` for the bridge to exit; its exit code.
    pub fn exit_within(&mut self, limit: Duration) -> i32 {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            if start.elapsed() > limit {
                let _ = self.child.kill();
                panic!("the bridge did not exit within {limit:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn stderr(&mut self) -> String {
        let mut text = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut text);
        }
        text
    }
}

/// The pids of `pid`'s children (Linux).
pub fn children(pid: u32) -> Vec<u32> {
    let path = format!("/proc/{pid}/task/{pid}/children");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// Whether a process with this pid still runs (a zombie does not count).
pub fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| !stat.contains(") Z "))
        .unwrap_or(false)
}

pub fn gone_within(pid: u32, limit: Duration) -> bool {
    let start = Instant::now();
    while running(pid) {
        if start.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}
