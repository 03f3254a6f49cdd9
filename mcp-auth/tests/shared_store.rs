//! One token file used by several `FileStore`s of one process (an app
//! with two OAuth servers on the default token file) while one of them
//! holds it.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use mcp_auth::{FileStore, StoredAuthorization, TokenStore};

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
