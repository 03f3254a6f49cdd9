//! `mcp bridge --serve http` as a real process: this workspace's client of
//! either era over HTTP through the `mcp` binary to the reference server
//! binary (a child per legacy session, one for 2026-07-28 requests);
//! SIGTERM ends it within 5 s with no process left; the listening rules.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcp_client::HttpTransportBuilder;
use mcp_client::prelude::*;
use serde_json::json;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

fn server() -> String {
    mcp_reference_server::binaries::server_path()
        .to_string_lossy()
        .into_owned()
}

/// `mcp bridge --serve http --listen 127.0.0.1:0 …`, and its URL (read
/// from the line it writes on stderr).
struct Serving {
    child: Child,
    url: String,
    stderr: BufReader<std::process::ChildStderr>,
}

impl Serving {
    fn start(extra: &[&str], env: &[(&str, &str)]) -> Serving {
        let server = server();
        let mut args = vec!["bridge", "--serve", "http", "--listen", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", &server]);
        let mut child = Command::new(MCP)
            .args(&args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("mcp starts");
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .to_owned();
        Serving { child, url, stderr }
    }

    fn addr(&self) -> String {
        self.url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_owned()
    }

    /// Sends SIGTERM; the exit code within `limit`.
    fn terminate_within(&mut self, limit: Duration) -> i32 {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
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

    fn rest_of_stderr(&mut self) -> String {
        let mut text = String::new();
        let _ = self.stderr.read_to_string(&mut text);
        text
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The pids of `pid`'s children (Linux), whichever of its threads
/// started them.
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .flat_map(|task| {
            std::fs::read_to_string(task.path().join("children"))
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Whether a process with this pid still runs (a zombie does not count).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| !stat.contains(") Z "))
        .unwrap_or(false)
}

/// One raw HTTP/1.1 POST; its status.
fn raw_post(addr: &str, headers: &str, body: &str) -> u16 {
    let mut socket = std::net::TcpStream::connect(addr).unwrap();
    write!(
        socket,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut head = [0u8; 12];
    socket.read_exact(&mut head).unwrap();
    String::from_utf8_lossy(&head[9..12]).parse().unwrap()
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_of_both_eras_are_served_and_sigterm_leaves_no_process() {
    let mut serving = Serving::start(&[], &[]);
    let mut clients = Vec::new();
    for era in [EraMode::Legacy, EraMode::Legacy, EraMode::Modern] {
        let client = Client::builder()
            .era(era)
            .request_timeout(Duration::from_secs(10))
            .connect(HttpTransportBuilder::new(serving.url.clone()))
            .await
            .expect("connects through the bridge");
        let echo = client
            .call_tool("echo", json!({"text": "hi"}))
            .await
            .unwrap();
        assert_eq!(echo.content[0].as_text(), Some("hi"));
        clients.push(client);
    }
    // A server of its own for each legacy session, one for 2026-07-28.
    let servers = children(serving.child.id());
    assert_eq!(servers.len(), 3, "{servers:?}");
    let code = serving.terminate_within(Duration::from_secs(5));
    assert_eq!(code, 0, "{}", serving.rest_of_stderr());
    let deadline = Instant::now() + Duration::from_secs(5);
    while servers.iter().any(|&pid| running(pid)) {
        assert!(Instant::now() < deadline, "a server outlived the bridge");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The clients see the bridge gone.
    let after = clients[0].call_tool("echo", json!({"text": "hi"})).await;
    assert!(after.is_err());
}

#[test]
fn beyond_loopback_a_token_is_required() {
    let output = Command::new(MCP)
        .args([
            "bridge",
            "--serve",
            "http",
            "--listen",
            "0.0.0.0:0",
            "--",
            &server(),
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--token-file"), "{stderr}");
    assert!(output.stdout.is_empty());
}

#[test]
fn the_token_of_a_file_or_the_environment_is_required_of_every_request() {
    let dir = std::env::temp_dir().join(format!("mcp-bridge-token-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("token");
    std::fs::write(&file, "s3cret-token\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let from_file = Serving::start(&["--token-file", file.to_str().unwrap()], &[]);
    let from_env = Serving::start(
        &["--token-env", "BRIDGE_TOKEN"],
        &[("BRIDGE_TOKEN", "s3cret-token")],
    );
    for serving in [&from_file, &from_env] {
        let addr = serving.addr();
        assert_eq!(raw_post(&addr, "", INITIALIZE), 401);
        let wrong = "Authorization: Bearer s3cret\r\n";
        assert_eq!(raw_post(&addr, wrong, INITIALIZE), 401);
        let right = "Authorization: Bearer s3cret-token\r\n";
        assert_eq!(raw_post(&addr, right, INITIALIZE), 200);
        // The token never shows in the command line others can read.
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", serving.child.id())).unwrap();
        assert!(!String::from_utf8_lossy(&cmdline).contains("s3cret-token"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_rebinding_host_is_refused() {
    let serving = Serving::start(&[], &[]);
    let addr = serving.addr();
    let mut socket = std::net::TcpStream::connect(&addr).unwrap();
    write!(
        socket,
        "POST /mcp HTTP/1.1\r\nHost: attacker.example\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{INITIALIZE}",
        INITIALIZE.len()
    )
    .unwrap();
    let mut answer = String::new();
    socket.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    assert!(
        children(serving.child.id()).is_empty(),
        "no server was started for it"
    );
}
