//! `mcp-reference-server --http 0`: the chosen URL on the first line, then
//! the same server over HTTP.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::http_common::{initialize, post, request, session};
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-reference-server");

/// Kills the child however the test ends.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(args: &[&str]) -> (Child, std::net::SocketAddr, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let child = Child(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the first line in time");
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("{line:?}"))
        .to_owned();
    let addr = url
        .strip_prefix("http://")
        .and_then(|u| u.strip_suffix("/mcp"))
        .unwrap()
        .parse()
        .unwrap();
    (child, addr, url)
}

#[tokio::test]
async fn http_0_prints_the_url_and_serves_legacy_sessions() {
    let (_child, addr, url) = start(&["--http", "0", "--era", "legacy"]);
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let id = session(addr, "2025-11-25").await;
    let list = request(1, "tools/list", json!({}));
    let mut reply = post(addr, &[("mcp-session-id", &id)], &list).await;
    reply.until("echo").await;
}

#[tokio::test]
async fn http_flags_reach_the_server() {
    let (_child, addr, _) = start(&[
        "--http",
        "0",
        "--era",
        "legacy",
        "--stateless",
        "--json",
        "--http-knob",
        "bad-gateway@tools/list",
    ]);
    let reply = initialize(addr, "2025-11-25").await;
    assert_eq!(reply.header("mcp-session-id"), None);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let list = request(1, "tools/list", json!({}));
    assert_eq!(post(addr, &[], &list).await.status, 502);
}

#[test]
fn help_describes_http() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--http PORT",
        "--stateless",
        "--json",
        "--http-knob",
        "drop-stream",
        "--oauth",
        "--token-lifetime",
    ] {
        assert!(help.contains(flag), "{flag}");
    }
}

#[cfg(feature = "oauth")]
#[tokio::test]
async fn oauth_protects_mcp_and_serves_the_metadata() {
    let (_child, addr, url) = start(&["--http", "0", "--oauth"]);
    let list = request(1, "tools/list", json!({}));
    let reply = post(addr, &[], &list).await;
    assert_eq!(reply.status, 401);
    let challenge = reply.header("www-authenticate").unwrap();
    let metadata = format!("http://{addr}/.well-known/oauth-protected-resource/mcp");
    assert!(
        challenge.contains(&format!("resource_metadata=\"{metadata}\"")),
        "{challenge}"
    );
    let path = "/.well-known/oauth-protected-resource/mcp";
    let mut prm = super::http_common::send(addr, "GET", path, &[], "").await;
    prm.read_to_end().await;
    assert_eq!(prm.json()["resource"], url);
}

#[test]
fn oauth_needs_http() {
    let out = Command::new(BIN).arg("--oauth").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--oauth needs --http PORT"));
}
