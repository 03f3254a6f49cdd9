//! End to end: the client over the stdio transport against the reference
//! server binary, a real process, in each era.

mod common;

use std::time::Duration;

use common::user_code;
use mcp_client::{Client, Reached};
use mcp_protocol::Era;
use mcp_reference_server::binaries::server_path;
use mcp_transport_stdio::StdioCommand;

fn server(args: &[&str]) -> StdioCommand {
    StdioCommand::new(server_path())
        .args(args)
        .name("reference")
        .close_grace(Duration::from_millis(500))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_code_over_stdio_in_every_era() {
    for (args, era, version) in [
        (
            &["--era", "legacy", "--versions", "2024-11-05"][..],
            Era::Legacy,
            "2024-11-05",
        ),
        (
            &["--era", "legacy", "--versions", "2025-11-25"][..],
            Era::Legacy,
            "2025-11-25",
        ),
        (&["--era", "modern"][..], Era::Modern, "2026-07-28"),
        (&["--era", "dual"][..], Era::Modern, "2026-07-28"),
    ] {
        let client = Client::builder()
            .connect(server(args))
            .await
            .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        assert_eq!(client.era(), era, "{args:?}");
        assert_eq!(client.protocol_version().as_str(), version, "{args:?}");
        user_code(&client).await;
        client.close().await;
    }
}

/// A legacy server that exits on any request before `initialize`, as
/// servers on older SDKs do: the probe kills it, the client starts it
/// again and speaks legacy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_on_the_probe_is_started_again() {
    let client = Client::builder()
        .connect(server(&[
            "--era",
            "legacy",
            "--knob",
            "exit-on-unknown-before-init",
        ]))
        .await
        .unwrap();
    let verdict = client.verdict();
    assert_eq!(verdict.era, Era::Legacy);
    assert_eq!(verdict.reached, Reached::LegacyAfterServerDied);
    assert!(verdict.probe_stderr_tail.is_some(), "{verdict:?}");
    user_code(&client).await;
    client.close().await;
}
