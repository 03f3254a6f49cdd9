//! One token file used by several `FileStore`s of one process (an app
//! with two OAuth servers on the default token file) while one of them
//! holds it, and a refresh that could not hold it.

mod common;

use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{AuthServer, modern, transport};
use mcp_auth::{FileStore, HeadlessAuthorizer, OAuthProvider, StoredAuthorization, TokenStore};
use mcp_transport::{RequestOptions, Transport};
use mcp_transport_http::HttpTransportBuilder;

const A: &str = "https://a.example/mcp";
const B: &str = "https://b.example/mcp";

fn record(token: &str) -> StoredAuthorization {
    serde_json::from_value(serde_json::json!({
        "issuer": "https://as.example",
        "client_id": "c",
        "auth_method": "none",
        "token_endpoint": "https://as.example/token",
        "access_token": token,
    }))
    .unwrap()
}

/// A fresh directory for one test, removed at the end.
struct Dir(std::path::PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir =
            std::env::temp_dir().join(format!("mcp-auth-shared-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn token_of(path: &std::path::Path, server: &str) -> Option<String> {
    FileStore::new(path)
        .try_load(server)
        .unwrap()
        .map(|r| r.access_token)
}

/// Provider A holds the store while its refresh waits on the network;
/// provider B (a `FileStore` of its own on the same file) saves its new
/// login meanwhile, on the same single-threaded runtime: B's save must
/// not wait for A, which only this thread can run.
#[test]
fn a_save_while_another_store_of_the_process_holds_the_file_does_not_deadlock() {
    let dir = Dir::new("deadlock");
    let path = dir.0.join("tokens.json");
    let (done, finished) = mpsc::channel();
    let on_thread = path.clone();
    // On a thread of its own: a deadlock is reported, not hung on.
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let a = Arc::new(FileStore::new(&on_thread));
            let b = FileStore::new(&on_thread);
            let (held, is_held) = tokio::sync::oneshot::channel();
            let (answer, answered) = tokio::sync::oneshot::channel::<()>();
            let refresh = tokio::spawn(async move {
                let hold = a.try_hold().unwrap().expect("the store is free");
                held.send(()).unwrap();
                // The token endpoint's answer.
                let _ = answered.await;
                a.save(A, &record("a-refreshed"));
                drop(hold);
            });
            is_held.await.unwrap();
            b.save(B, &record("b-logged-in"));
            answer.send(()).unwrap();
            refresh.await.unwrap();
        });
        let _ = done.send(());
    });
    finished
        .recv_timeout(Duration::from_secs(60))
        .expect("deadlock: B's save waited for A's hold, which only its own thread could end");
    assert_eq!(token_of(&path, A).as_deref(), Some("a-refreshed"));
    assert_eq!(token_of(&path, B).as_deref(), Some("b-logged-in"));
}

/// A write made under a hold that ends while the write is under way
/// stays covered to its end: another writer (here another `FileStore`,
/// as another process would) never reads the file between that write's
/// read and its rename, so no update is lost.
#[test]
fn a_write_under_a_hold_that_ends_meanwhile_loses_no_update() {
    let dir = Dir::new("race");
    let path = dir.0.join("tokens.json");
    // A large file: each read-modify-write takes a while.
    let filler: std::collections::HashMap<String, StoredAuthorization> = (0..3000)
        .map(|i| {
            (
                format!("https://s{i}.example/mcp"),
                record(&"x".repeat(200)),
            )
        })
        .collect();
    std::fs::write(&path, serde_json::to_vec(&filler).unwrap()).unwrap();
    let a = Arc::new(FileStore::new(&path));
    let b = FileStore::new(&path);
    for i in 0..30 {
        let hold = a.try_hold().unwrap().expect("the store is free");
        let (started, starts) = mpsc::channel();
        let writer = std::thread::spawn({
            let a = a.clone();
            move || {
                started.send(()).unwrap();
                a.save(A, &record(&format!("a-{i}")));
            }
        });
        starts.recv().unwrap();
        drop(hold);
        b.save(B, &record(&format!("b-{i}")));
        writer.join().unwrap();
        let (got_a, got_b) = (token_of(&path, A), token_of(&path, B));
        assert!(
            got_a == Some(format!("a-{i}")) && got_b == Some(format!("b-{i}")),
            "round {i}: an update was lost: A has {got_a:?}, B has {got_b:?}"
        );
    }
}

/// Another process holds the store past this provider's wait, having
/// renewed the login (the refresh token this provider has is spent): the
/// provider's refresh, made without the hold, is refused, and it takes the
/// other process's tokens instead of removing them from the store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_refresh_without_the_hold_keeps_another_process_login() {
    let server = AuthServer::start().await;
    let url = server.mcp_url();
    let dir = Dir::new("unheld");
    let path = dir.0.join("tokens.json");

    let service = HttpTransportBuilder::new(&url).http_service().unwrap();
    let login = OAuthProvider::builder(&url)
        .redirect_uri("http://127.0.0.1:9/callback")
        .authorizer(HeadlessAuthorizer::new(service.clone()))
        .store(FileStore::new(&path))
        .build(service)
        .unwrap();
    login.authorize().await.unwrap();

    // This run: the stored login, and no person to authorize afresh. A
    // short timeout: its wait for the hold is three of them (the refresh
    // it then makes is held by the server for a few milliseconds only).
    let service = HttpTransportBuilder::new(&url).http_service().unwrap();
    let this = OAuthProvider::builder(&url)
        .store(FileStore::new(&path))
        .timeout(Duration::from_secs(3))
        .authorizer(|_url: String| async {
            Err::<String, _>("no person here: run the login again".into())
        })
        .build(service)
        .unwrap();
    assert!(this.is_authorized().await, "the stored login is read");

    // The other process holds the store (its refresh is under way); the
    // access token this run has expired.
    let other = FileStore::new(&path);
    let hold = other.try_hold().unwrap().expect("the store is free");
    server.behave(|b| {
        b.tokens.clear();
        // This run's refresh is answered once the other process is done.
        b.hold_refresh_until_refusals = Some(u32::MAX);
        b.refuse_refresh = true;
    });

    let t = transport(&url, this.clone());
    let request = tokio::spawn(async move {
        let outcome = t
            .request(modern(1, "tools/list"), RequestOptions::new())
            .await;
        t.close().await;
        outcome
    });
    // This run gave up waiting for the hold and refreshes without it.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !server
        .seen_at("/token")
        .iter()
        .any(|s| s.form()["grant_type"] == "refresh_token")
    {
        assert!(Instant::now() < deadline, "no refresh was tried");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Meanwhile the other process renewed the login (spending the
    // refresh token this run presents) and stored it; then this run's
    // refresh is refused, and the other process lets go.
    let mut renewed = other.load(&url).unwrap();
    renewed.access_token = "access-other".into();
    renewed.refresh_token = Some("refresh-other".into());
    other.save(&url, &renewed);
    server.behave(|b| {
        let scopes = b.last_scope.clone();
        b.tokens.insert("access-other".into(), scopes);
        b.hold_refresh_until_refusals = None;
    });
    drop(hold);
    let outcome = tokio::time::timeout(Duration::from_secs(60), request)
        .await
        .expect("the request ended in time")
        .unwrap();

    assert_eq!(
        token_of(&path, &url).as_deref(),
        Some("access-other"),
        "the other process's login is no longer stored"
    );
    if let Err(e) = outcome {
        panic!(
            "the request failed: {e} ({:?}); the other process's tokens were not taken",
            this.last_error()
        );
    }
}
