//! A connection that outlives its server: when the server dies it is
//! started again (within a budget, with backoff), the client's handle
//! stays the same, and the application hears of it as an event.
//!
//! ```sh
//! cargo run -p mcp-steady-client --example supervised
//! ```

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::prelude::*;
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The reference server, started by a shell that first tells its pid on
    // stderr, so that this example can kill it.
    let pid: Arc<Mutex<Option<String>>> = Arc::default();
    let seen = pid.clone();
    let server = StdioCommand::new("sh")
        .args(["-c", r#"echo "pid $$" >&2; exec "$0""#])
        .arg(mcp_reference_server::binaries::server_path())
        .on_stderr(move |line| {
            if let Some(p) = line.strip_prefix("pid ") {
                *seen.lock().unwrap() = Some(p.to_owned());
            }
        });

    let client = Client::builder()
        .supervise(
            RestartPolicy::new()
                // At most 3 restarts a minute, waiting 50 ms, 100 ms, … 2 s.
                .max_restarts(3, Duration::from_secs(60))
                .backoff(Duration::from_millis(50), Duration::from_secs(2)),
        )
        .connect(server)
        .await?;
    let mut events = client.events();
    client.call_tool("echo", json!({"text": "before"})).await?;

    let first = pid
        .lock()
        .unwrap()
        .clone()
        .expect("the server told its pid");
    std::process::Command::new("kill")
        .args(["-9", &first])
        .status()?;
    println!("killed the server (pid {first})");

    // Once the client has seen its server die…
    while client.is_alive() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // …a call waits for the restart (within its own timeout) and goes out
    // on the new process, through the same handle.
    let after = client.call_tool("echo", json!({"text": "after"})).await?;
    assert_eq!(after.content[0].as_text(), Some("after"));
    assert_ne!(pid.lock().unwrap().as_deref(), Some(first.as_str()));

    // The application hears of the restart as an event.
    let restarted = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match events.recv().await {
                Some(ServerEvent::Restarted(attempt)) => return attempt,
                Some(_) => {}
                None => panic!("the client closed"),
            }
        }
    })
    .await?;
    println!(
        "restarted (attempt {}): {}",
        restarted.attempt, restarted.cause
    );
    client.close().await;
    Ok(())
}
