//! The `mcp` binary under a pseudo-terminal, as a person uses it: the
//! progress bar, an elicitation prompt, and Ctrl-C during a slow call.
#![cfg(unix)]

use std::process::Command;
use std::time::{Duration, Instant};

use rexpect::process::wait::WaitStatus;
use rexpect::session::PtySession;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

fn spawn(args: &[&str]) -> PtySession {
    let mut command = Command::new(MCP);
    command
        .args(args)
        .env("TERM", "xterm")
        .env_remove("NO_COLOR");
    rexpect::session::spawn_command(command, Some(20_000)).expect("mcp starts under a pty")
}

fn exit_code(session: &PtySession) -> i32 {
    match session.process.wait().expect("mcp exits") {
        WaitStatus::Exited(_, code) => code,
        other => panic!("mcp did not exit normally: {other:?}"),
    }
}

#[test]
fn a_progress_bar_follows_the_server_s_progress() {
    let mut p = spawn(&["tools", "call", "slow", "steps=4", "delayMs=500"]);
    // The bar shows the percentage of the server's progress/total as it
    // moves: the steps come 500 ms apart and the bar redraws every 120 ms,
    // so each is on screen for several frames; at least two of the three
    // intermediate ones must show, in order (a busy machine may cost one).
    let screen = p.exp_eof().expect("the call ends");
    let mut shown: Vec<&str> = Vec::new();
    for (i, _) in screen.match_indices('%') {
        let digits = screen[..i].trim_end_matches(|c: char| c.is_ascii_digit());
        let percent = &screen[digits.len()..i];
        if ["25", "50", "75"].contains(&percent) && shown.last() != Some(&percent) {
            shown.push(percent);
        }
    }
    let tail: String = screen
        .chars()
        .rev()
        .take(300)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    assert!(
        shown.len() >= 2 && shown.is_sorted(),
        "the bar showed {shown:?} of 25/50/75%: ...{tail}"
    );
    assert_eq!(exit_code(&p), 0);
}

#[test]
fn an_elicitation_is_asked_on_the_terminal() {
    let mut p = spawn(&["tools", "call", "elicit"]);
    p.exp_string("The server asks: What is your name?").unwrap();
    p.exp_string("Answer? [Y]es").unwrap();
    p.send_line("y").unwrap();
    p.exp_string("name (string, required)").unwrap();
    p.send_line("Alice").unwrap();
    p.exp_string(r#""name":"Alice""#)
        .expect("the tool got the answer");
    p.exp_eof().unwrap();
    assert_eq!(exit_code(&p), 0);
}

#[test]
fn watch_runs_until_ctrl_c() {
    let mut p = spawn(&["watch"]);
    p.exp_string("watching for changes").unwrap();
    p.send_control('c').unwrap();
    p.exp_eof().unwrap();
    assert_eq!(exit_code(&p), 130);
}

/// The reference servers alive whose command line contains `marker`
/// (zombies count as gone).
fn servers_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'));
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let program = cmdline.split(' ').next().unwrap_or_default();
        if !zombie
            && program.ends_with(mcp_reference_server::binaries::SERVER_BIN)
            && cmdline.contains(marker)
        {
            found.push(pid);
        }
    }
    found
}

/// The JSON messages of a newline-delimited wire log.
fn wire_log(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[test]
fn ctrl_c_cancels_the_call_and_stops_the_server() {
    let server = mcp_reference_server::binaries::server_path();
    // A flag value no other process has, to find this test's server.
    let marker = format!("{}", 7_000_000 + std::process::id());
    // The server's stdin passes through `tee`, which keeps a copy of
    // everything the client wrote.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let log = dir.join(format!("pty-ctrl-c-{marker}.jsonl"));
    let _ = std::fs::remove_file(&log);
    let line = format!(
        "sh -c \"tee -a '{}' | '{}' --ttl-ms {marker}\"",
        log.display(),
        server.display()
    );
    let mut p = spawn(&[
        "--stdio",
        &line,
        "tools",
        "call",
        "slow",
        "steps=100",
        "delayMs=200",
    ]);
    p.exp_regex(r"\d+%").expect("the slow call is under way");
    assert_eq!(servers_with(&marker).len(), 1, "the server runs");

    let interrupted = Instant::now();
    p.send_control('c').unwrap();
    let rest = p.exp_eof().expect("mcp ends");
    assert!(rest.contains("interrupted"), "{rest}");
    assert_eq!(exit_code(&p), 130);
    // Uncancelled, the call would run 20 s (100 steps of 200 ms); ending
    // takes well under a second idle, so 10 s tells the two apart on a busy
    // machine.
    let took = interrupted.elapsed();
    assert!(took < Duration::from_secs(10), "took {took:?}");
    let left = servers_with(&marker);
    assert!(left.is_empty(), "server processes left: {left:?}");

    let wire = wire_log(&log);
    let call = wire
        .iter()
        .find(|m| m["method"] == "tools/call")
        .unwrap_or_else(|| panic!("the call is on the wire: {wire:?}"));
    let cancels: Vec<&serde_json::Value> = wire
        .iter()
        .filter(|m| m["method"] == "notifications/cancelled")
        .collect();
    assert_eq!(cancels.len(), 1, "one cancel on the wire: {wire:?}");
    assert_eq!(
        cancels[0]["params"]["requestId"], call["id"],
        "the cancel names the call"
    );
}

/// `mcp-reference-server --http 0 --oauth`, killed when dropped.
struct OAuthServer {
    child: std::process::Child,
    url: String,
}

impl OAuthServer {
    fn start() -> OAuthServer {
        use std::io::{BufRead, BufReader};
        let mut child = Command::new(mcp_reference_server::binaries::server_path())
            .args(["--http", "0", "--oauth"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("the reference server starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("no URL on the server's first line: {line:?}"))
            .to_owned();
        OAuthServer { child, url }
    }
}

impl Drop for OAuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn ctrl_c_ends_a_login_waiting_for_the_browser() {
    let server = OAuthServer::start();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pty-login-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // A login from before: an interrupted new one must not lose it.
    std::fs::create_dir_all(&dir).unwrap();
    let before = serde_json::json!({ &server.url: {
        "issuer": "http://127.0.0.1:9",
        "client_id": "earlier",
        "auth_method": "none",
        "token_endpoint": "http://127.0.0.1:9/token",
        "access_token": "earlier-access",
    }});
    std::fs::write(dir.join("tokens.json"), before.to_string()).unwrap();
    let mut command = Command::new(MCP);
    command
        .args(["--url", &server.url, "login"])
        .env("MCP_TOKEN_STORE", dir.join("tokens.json"))
        .env("TERM", "xterm");
    // The session's bound (20 s) is far below the login's wait for the
    // browser (300 s): a Ctrl-C that is ignored fails `exp_eof`.
    let mut p = rexpect::session::spawn_command(command, Some(20_000)).expect("mcp starts");
    p.exp_string("Open this URL in a browser")
        .expect("the login waits for the browser");
    let interrupted = Instant::now();
    p.send_control('c').unwrap();
    let rest = p.exp_eof().expect("the login ends at Ctrl-C");
    assert!(rest.contains("interrupted"), "{rest}");
    assert_eq!(exit_code(&p), 130);
    let took = interrupted.elapsed();
    assert!(took < Duration::from_secs(10), "took {took:?}");
    let kept = std::fs::read_to_string(dir.join("tokens.json")).unwrap_or_default();
    assert!(
        kept.contains("earlier-access"),
        "the earlier login is kept: {kept:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
