//! The file store under two processes at once: two runs of a client
//! refresh the same stored login against an authorization server that
//! rotates refresh tokens (and revokes the grant when one is presented
//! twice); both must end with a working login.
//!
//! The processes are this test binary run again with `CHILD_URL` set, so
//! that only `child_refreshes_the_stored_login` does anything in them.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{AuthServer, send, transport};
use mcp_auth::{FileStore, HeadlessAuthorizer, OAuthProvider};
use mcp_transport::Transport;
use mcp_transport_http::HttpTransportBuilder;

const CHILD_URL: &str = "MCP_AUTH_TEST_CHILD_URL";
const CHILD_STORE: &str = "MCP_AUTH_TEST_CHILD_STORE";

/// A provider on the stored login that cannot authorize afresh (as the
/// CLI's, which asks for `mcp login` instead): only a refresh helps.
fn stored_only(url: &str, store: &str) -> OAuthProvider {
    let service = HttpTransportBuilder::new(url).http_service().unwrap();
    OAuthProvider::builder(url)
        .store(FileStore::new(store))
        .authorizer(|_url: String| async {
            Err::<String, _>("no person here: run the login again".into())
        })
        .build(service)
        .unwrap()
}

/// In a child process: one request with the stored login.
#[test]
fn child_refreshes_the_stored_login() {
    let (Ok(url), Ok(store)) = (std::env::var(CHILD_URL), std::env::var(CHILD_STORE)) else {
        return; // not a child
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let oauth = stored_only(&url, &store);
        let t = transport(&url, oauth.clone());
        let outcome = send(&t, 1, "tools/list").await;
        t.close().await;
        if let Err(e) = outcome {
            panic!("the child's request failed: {e} ({:?})", oauth.last_error());
        }
    });
}

#[tokio::test]
async fn two_processes_refreshing_one_login_both_stay_logged_in() {
    let server = AuthServer::start().await;
    let url = server.mcp_url();
    let dir = std::env::temp_dir().join(format!("mcp-auth-processes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = dir.join("tokens.json");
    let store_text = store.to_string_lossy().into_owned();

    // The login, stored.
    let service = HttpTransportBuilder::new(&url).http_service().unwrap();
    let login = OAuthProvider::builder(&url)
        .redirect_uri("http://127.0.0.1:9/callback")
        .authorizer(HeadlessAuthorizer::new(service.clone()))
        .store(FileStore::new(&store))
        .build(service)
        .unwrap();
    login.authorize().await.unwrap();

    // The access token expires; each refresh waits until both processes
    // have been refused, so that both are about to refresh at once.
    server.behave(|b| {
        b.tokens.clear();
        b.rotate_refresh = true;
        b.hold_refresh_until_refusals = Some(2);
    });
    let exe = std::env::current_exe().unwrap();
    let spawn = || {
        Command::new(&exe)
            .args(["--exact", "child_refreshes_the_stored_login", "--nocapture"])
            .env(CHILD_URL, &url)
            .env(CHILD_STORE, &store_text)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let children = [spawn(), spawn()];
    let waited = tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let outputs: Vec<_> = children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap())
            .collect();
        (outputs, started.elapsed())
    });
    let (outputs, took) = tokio::time::timeout(Duration::from_secs(90), waited)
        .await
        .expect("the children ended in time")
        .unwrap();
    for (i, o) in outputs.iter().enumerate() {
        assert!(
            o.status.success(),
            "child {i} failed ({:?}):\n{}\n{}",
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // One refresh in all: the second process took the first one's tokens
    // instead of presenting the spent refresh token.
    let refreshes = server
        .seen_at("/token")
        .iter()
        .filter(|s| s.form()["grant_type"] == "refresh_token")
        .count();
    assert_eq!(refreshes, 1, "refreshes (took {took:?})");

    // And the stored login still works for a third run.
    let t = transport(&url, stored_only(&url, &store_text));
    send(&t, 2, "tools/list").await.unwrap();
    t.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}
