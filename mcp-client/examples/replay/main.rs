//! Record a session against a real server once, then replay it in tests
//! with no server: `echo.jsonl` beside this file is the recording, and the
//! `#[tokio::test]` below replays it.
//!
//! ```sh
//! # Replay the recording (what the test does), then show it:
//! cargo run -p mcp-steady-client --example replay
//! cargo test -p mcp-steady-client --example replay
//! # Record it again, against the reference server:
//! cargo run -p mcp-steady-client --example replay -- --record
//! ```

use std::path::Path;
use std::sync::Arc;

use mcp_client::prelude::*;
use mcp_client::transport::record::Recorder;
use mcp_testkit::cassette::{Cassette, MatchRules};
use serde_json::json;

const RECORDING: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/replay/echo.jsonl");

/// What the application does, against whatever it is connected to.
async fn session(client: &Client) -> Result<String, ClientError> {
    let result = client.call_tool("echo", json!({"text": "hi"})).await?;
    Ok(result.content[0].as_text().unwrap_or_default().to_owned())
}

/// The client as the application builds it. The recording holds what it
/// sent, so keep the client's name and version fixed.
fn client() -> ClientBuilder {
    Client::builder().client_info("replay-example", "1.0.0")
}

/// Every message both ways goes to `path` (JSON Lines; secrets redacted).
async fn record(path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let recorder = Recorder::create(path)?;
    let server = StdioCommand::new(mcp_reference_server::binaries::server_path());
    let client = client().connect(recorder.connector(server)).await?;
    session(&client).await?;
    client.close().await;
    recorder.finish()?;
    Ok(())
}

/// The recording answers each request; any request it lacks fails with a
/// diff against the closest recorded one.
async fn replay(path: &Path) -> Result<String, Box<dyn std::error::Error>> {
    let cassette = Cassette::load(path)?;
    let connector = Arc::new(cassette.connector(MatchRules::default()));
    let client = client().connect(connector.clone()).await?;
    let answer = session(&client).await?;
    client.close().await;
    connector.finish().await?; // every recorded request was made
    Ok(answer)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().nth(1).as_deref() == Some("--record") {
        record(Path::new(RECORDING)).await?;
        println!("recorded {RECORDING}");
    }
    let answer = replay(Path::new(RECORDING)).await?;
    assert_eq!(answer, "hi");
    println!("replayed with no server: echo -> {answer}");
    Ok(())
}

#[tokio::test]
async fn echo_replays_with_no_server() {
    assert_eq!(replay(Path::new(RECORDING)).await.unwrap(), "hi");
}
