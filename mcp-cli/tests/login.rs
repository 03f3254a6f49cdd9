//! `mcp --url URL login`, the browser's part played by the test; the
//! stored tokens used by later `--url` commands; then `logout`. Against
//! mcp-auth's in-process authorization server, and against the protected
//! reference server (in process and as `mcp-reference-server
//! --http 0 --oauth`).

#[path = "../../mcp-auth/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use common::AuthServer;
use mcp_auth::{Authorizer, HeadlessAuthorizer};
use mcp_reference_server::FakeConfig;
use mcp_reference_server::http::ProtectedHttpFake;
use mcp_transport_http::{HttpTransportBuilder, RequestBody};
use tokio::io::{AsyncBufReadExt, BufReader};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");
const WAIT: Duration = Duration::from_secs(20);

/// A token store of its own, removed when dropped.
struct Store(PathBuf);

impl Store {
    fn new(name: &str) -> Store {
        let dir = std::env::temp_dir().join(format!("mcp-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Store(dir.join("tokens.json"))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// `mcp --url URL login`, with the browser played here: the URL printed
/// on stderr is followed to the authorization server, whose redirect is
/// followed to the CLI's loopback port.
async fn login(url: &str, store: &Store) {
    let mut child = tokio::process::Command::new(MCP)
        .args(["--url", url, "login"])
        .env("MCP_TOKEN_STORE", store.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    browse(&mut lines).await;
    let status = tokio::time::timeout(WAIT, child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "login ended with {status}");
}

/// The browser's part: the authorization URL the CLI printed on stderr is
/// followed to the authorization server, whose redirect is followed to the
/// CLI's loopback port.
async fn browse(lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStderr>>) {
    let authorization = tokio::time::timeout(WAIT, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.starts_with("http://") {
                return line;
            }
        }
        panic!("no authorization URL on stderr");
    })
    .await
    .unwrap();
    let browser = HttpTransportBuilder::new(&authorization)
        .http_service()
        .unwrap();
    let redirect = HeadlessAuthorizer::new(browser.clone())
        .authorize(authorization)
        .await
        .unwrap();
    let request = http::Request::get(redirect)
        .body(RequestBody::new(bytes::Bytes::new()))
        .unwrap();
    assert_eq!(browser.call(request).await.unwrap().status(), 200);
}

/// `mcp --url URL bridge --login`: the login first (the browser played
/// here), then the server served on stdio; a second bridge uses the
/// stored tokens and logs in no more.
#[tokio::test]
async fn bridge_login_logs_in_before_serving() {
    use tokio::io::AsyncWriteExt;
    let server = ProtectedHttpFake::start(FakeConfig::legacy())
        .await
        .unwrap();
    let url = server.url();
    let store = Store::new("bridge-login");
    for first in [true, false] {
        let mut child = tokio::process::Command::new(MCP)
            .args(["--url", &url, "bridge", "--login"])
            .env("MCP_TOKEN_STORE", store.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        if first {
            browse(&mut lines).await;
        }
        // The rest of stderr, read so that the bridge can write it.
        let stderr = tokio::spawn(async move {
            let mut rest = Vec::new();
            while let Ok(Some(line)) = lines.next_line().await {
                rest.push(line);
            }
            rest
        });
        let mut stdin = child.stdin.take().unwrap();
        let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}});
        stdin
            .write_all(format!("{initialize}\n").as_bytes())
            .await
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
        let line = tokio::time::timeout(WAIT, out.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap_or_default();
        let answer: serde_json::Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("not an answer ({e}): {line:?}"));
        assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
        drop(stdin);
        let status = tokio::time::timeout(WAIT, child.wait())
            .await
            .unwrap()
            .unwrap();
        let stderr = stderr.await.unwrap();
        assert!(
            status.success(),
            "the bridge ended with {status}: {stderr:?}"
        );
    }
    let authorizations = server
        .requests()
        .iter()
        .filter(|r| r.path() == "/authorize")
        .count();
    assert_eq!(authorizations, 1, "the second bridge logged in again");
}

/// `mcp --url URL ARGS…` with the store, to its end.
async fn mcp(url: &str, store: &Store, args: &[&str]) -> Output {
    tokio::time::timeout(
        WAIT,
        tokio::process::Command::new(MCP)
            .args(["--url", url])
            .args(args)
            .env("MCP_TOKEN_STORE", store.path())
            .stdin(Stdio::null())
            .output(),
    )
    .await
    .expect("mcp ended in time")
    .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Exit 0, or a panic with what it printed.
fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        text(&o.stdout),
        text(&o.stderr)
    );
    text(&o.stdout)
}

/// The failure of a command that needs a login first: exit 3
/// (connection), with the command to run.
fn needs_login(o: &Output, url: &str) {
    let stderr = text(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(&format!("run `mcp --url {url} login` first")),
        "{stderr}"
    );
}

/// Login, tools list, tools call, a refresh, logout: the whole life of a
/// login against the protected server at `url`.
async fn a_login_serves_until_logout(url: &str, store: &Store, expire: impl FnOnce()) {
    needs_login(&mcp(url, store, &["tools", "list"]).await, url);

    login(url, store).await;
    let listed = ok(&mcp(url, store, &["tools", "list"]).await);
    assert!(listed.contains("echo"), "{listed}");
    let called = ok(&mcp(
        url,
        store,
        &["--json", "tools", "call", "echo", "text=behind OAuth"],
    )
    .await);
    assert!(called.contains("behind OAuth"), "{called}");

    // Expired tokens are refreshed (with the secret registered at login,
    // by another process) without a new login.
    expire();
    let listed = ok(&mcp(url, store, &["tools", "list"]).await);
    assert!(listed.contains("echo"), "{listed}");

    ok(&mcp(url, store, &["logout"]).await);
    needs_login(&mcp(url, store, &["tools", "list"]).await, url);
}

#[tokio::test]
async fn login_then_tools_list_and_call_against_the_protected_reference_server() {
    for (era, config) in [
        ("dual", FakeConfig::default()),
        ("legacy", FakeConfig::legacy()),
    ] {
        a_login_against_the_protected_fake(era, config).await;
    }
}

async fn a_login_against_the_protected_fake(era: &str, config: FakeConfig) {
    let server = ProtectedHttpFake::start(config).await.unwrap();
    let store = Store::new(&format!("protected-{era}"));
    let at = |path: &str| {
        server
            .requests()
            .iter()
            .filter(|r| r.path() == path)
            .count()
    };
    let mut registered = 0;
    let mut tokens = 0;
    a_login_serves_until_logout(&server.url(), &store, || {
        // What the login left: one code exchange, by a registered client.
        registered = at("/register");
        tokens = at("/token");
        assert_eq!(tokens, 1);
        server.expire_tokens();
    })
    .await;
    // One registration, the login's: commands run before it, or after
    // the logout, contact no authorization server.
    assert_eq!(registered, 1, "{era}: registrations before the refresh");
    assert_eq!(at("/register"), 1, "{era}: registrations in all");
    // The refresh: one more token request, with the login's client (a new
    // one could not have been authorized: only `login` authorizes).
    assert_eq!(at("/token"), tokens + 1);
    assert_eq!(at("/authorize"), 1, "{era}: one authorization, the login's");
}

/// `mcp-reference-server --http 0 --oauth` (killed when dropped), and its URL.
async fn oauth_server_child() -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(mcp_reference_server::binaries::server_path())
        .args(["--http", "0", "--oauth", "--token-lifetime", "2"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(WAIT, out.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap_or_default();
    let url = line
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("no URL on the server's first line: {line:?}"))
        .to_owned();
    (child, url)
}

#[tokio::test]
async fn login_against_the_server_binary_in_oauth_mode() {
    let (_server, url) = oauth_server_child().await;
    let store = Store::new("binary");
    // Tokens of two seconds: waiting them out is the expiry.
    a_login_serves_until_logout(&url, &store, || {
        std::thread::sleep(Duration::from_millis(2100))
    })
    .await;
}

#[tokio::test]
async fn login_stores_tokens_that_logout_forgets() {
    let server = AuthServer::start().await;
    let store = Store::new("login");
    login(&server.mcp_url(), &store).await;
    let stored = std::fs::read_to_string(store.path()).unwrap();
    assert!(stored.contains(&server.mcp_url()) && stored.contains("access-1"));

    ok(&mcp(&server.mcp_url(), &store, &["logout"]).await);
    assert!(
        !std::fs::read_to_string(store.path())
            .unwrap()
            .contains("access-1")
    );
}

#[tokio::test]
async fn a_corrupt_token_store_is_reported_and_left_alone() {
    let server = AuthServer::start().await;
    let store = Store::new("corrupt");
    std::fs::create_dir_all(store.path().parent().unwrap()).unwrap();
    let corrupt = "{\"https://other.example/mcp\": {\"access_token\": ";
    std::fs::write(store.path(), corrupt).unwrap();
    for args in [&["tools", "list"][..], &["login"][..], &["logout"][..]] {
        let o = mcp(&server.mcp_url(), &store, args).await;
        let stderr = text(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{args:?}: {stderr}");
        assert!(stderr.contains("move it aside"), "{args:?}: {stderr}");
    }
    assert_eq!(std::fs::read_to_string(store.path()).unwrap(), corrupt);
}
