//! `mcp --url URL login` against an in-process authorization server, the
//! browser's part played by the test; then `logout`.

#[path = "../../mcp-auth/tests/common/mod.rs"]
mod common;

use std::process::Stdio;
use std::time::Duration;

use common::AuthServer;
use mcp_auth::{Authorizer, HeadlessAuthorizer};
use mcp_transport_http::{HttpTransportBuilder, RequestBody};
use tokio::io::{AsyncBufReadExt, BufReader};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

#[tokio::test]
async fn login_stores_tokens_that_logout_forgets() {
    let server = AuthServer::start().await;
    let dir = std::env::temp_dir().join(format!("mcp-cli-login-{}", std::process::id()));
    let store = dir.join("tokens.json");
    let mut child = tokio::process::Command::new(MCP)
        .args(["--url", &server.mcp_url(), "login"])
        .env("MCP_TOKEN_STORE", &store)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.starts_with("http://") {
                return line;
            }
        }
        panic!("no authorization URL on stderr");
    })
    .await
    .unwrap();
    // The browser: the authorization server's redirect, followed to the
    // CLI's loopback port.
    let browser = HttpTransportBuilder::new(&url).http_service().unwrap();
    let redirect = HeadlessAuthorizer::new(browser.clone())
        .authorize(url)
        .await
        .unwrap();
    let request = http::Request::get(redirect)
        .body(RequestBody::new(bytes::Bytes::new()))
        .unwrap();
    assert_eq!(browser.call(request).await.unwrap().status(), 200);
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success());
    let stored = std::fs::read_to_string(&store).unwrap();
    assert!(stored.contains(&server.mcp_url()) && stored.contains("access-1"));

    let logout = tokio::time::timeout(
        Duration::from_secs(20),
        tokio::process::Command::new(MCP)
            .args(["--url", &server.mcp_url(), "logout"])
            .env("MCP_TOKEN_STORE", &store)
            .stdin(Stdio::null())
            .output(),
    )
    .await
    .unwrap()
    .unwrap();
    assert!(logout.status.success());
    assert!(
        !std::fs::read_to_string(&store)
            .unwrap()
            .contains("access-1")
    );
    let _ = std::fs::remove_dir_all(&dir);
}
