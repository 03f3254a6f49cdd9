//! A long call: its progress as it runs, a timeout that progress keeps
//! alive up to a hard maximum, and cancellation (sent to the server, which
//! stops).
//!
//! ```sh
//! cargo run -p mcp-steady-client --example progress
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_client::prelude::*;
use mcp_client::protocol::types::CallToolRequestParams;
use serde_json::json;

/// The reference server's `slow` tool: `steps` sleeps of `delayMs`, with
/// a progress notification after each.
fn slow(steps: u64, delay_ms: u64) -> CallToolRequestParams {
    let arguments = json!({"steps": steps, "delayMs": delay_ms});
    CallToolRequestParams::new("slow")
        .with_arguments(arguments.as_object().cloned().unwrap_or_default())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = StdioCommand::new(mcp_reference_server::binaries::server_path());
    let client = Client::builder()
        .request_timeout(Duration::from_secs(30)) // every call's default
        .connect(server)
        .await?;

    // Progress, as the server reports it.
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    let options = CallOptions::new().on_progress(move |p| {
        count.fetch_add(1, Ordering::SeqCst);
        println!("progress {} of {:?}", p.progress, p.total);
    });
    let result = client.call_tool_with(slow(3, 50), &options).await?;
    assert!(!result.is_error());
    assert!(seen.load(Ordering::SeqCst) > 0, "progress was reported");

    // A timeout of 200 ms that each progress restarts, but never past 1 s.
    let options = CallOptions::new()
        .timeout(Duration::from_millis(200))
        .reset_timeout_on_progress()
        .max_total(Duration::from_secs(1));
    let error = client
        .call_tool_with(slow(100, 50), &options)
        .await
        .unwrap_err();
    assert!(error.is_timeout(), "{error}");
    println!("timed out: {error}");

    // Cancellation: the token cancels the call, and the server hears of it.
    let cancel = CancellationToken::new();
    let options = CallOptions::new().cancellation(cancel.clone());
    let call = client.call_tool_with(slow(100, 50), &options);
    let later = async {
        tokio::time::sleep(Duration::from_millis(120)).await;
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(call, later);
    let error = result.unwrap_err();
    println!("cancelled: {error}");
    assert!(matches!(
        error.transport_error(),
        Some(mcp_client::transport::TransportError::Cancelled)
    ));

    // The connection is still good after both.
    let echo = client
        .call_tool("echo", json!({"text": "still here"}))
        .await?;
    assert!(!echo.is_error());
    client.close().await;
    Ok(())
}
