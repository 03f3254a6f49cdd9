//! Many servers from an `mcpServers` file (the form desktop and editor
//! clients use): connected at once, one tool list with names that never
//! collide, each call routed to its server. A server that fails to start
//! holds none of the others up.
//!
//! ```sh
//! # Three servers written to a temporary file: two reference servers of
//! # different eras, and one whose command does not exist:
//! cargo run -p mcp-steady-client --example host
//! # Your own file (Claude Desktop's, VS Code's `servers` form, …):
//! cargo run -p mcp-steady-client --example host -- ~/.config/claude/claude_desktop_config.json
//! ```

use mcp_client::host::{Host, ServerStatus, ServersFile};
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let text = match std::env::args().nth(1) {
        Some(path) => std::fs::read_to_string(path)?,
        // Only so that the example runs with no argument.
        None => json!({"mcpServers": {
            "old": {"command": mcp_reference_server::binaries::server_path(), "args": ["--era", "legacy"]},
            "new": {"command": mcp_reference_server::binaries::server_path(), "args": ["--era", "modern"]},
            "broken": {"command": "/nonexistent/mcp-server"},
        }})
        .to_string(),
    };
    // `${VAR}` and `${VAR:-default}` are expanded from the environment.
    let file = ServersFile::from_json(&text)?;

    let host = Host::builder().servers_file(&file).connect().await;
    for (name, status) in host.status() {
        match status {
            ServerStatus::Ready {
                era, version, took, ..
            } => {
                println!("{name}: ready, {era} era ({version}) in {took:?}")
            }
            ServerStatus::Failed { error } => println!("{name}: failed: {error}"),
            other => println!("{name}: {other:?}"),
        }
    }

    let tools = host.list_tools().await;
    println!("{} tools across the servers", tools.len());
    if std::env::args().nth(1).is_none() {
        // Both reference servers have an `echo`: the names tell them apart.
        assert!(tools.iter().any(|t| t.name == "old__echo"));
        assert!(tools.iter().any(|t| t.name == "new__echo"));
        let result = host.call_tool("new__echo", json!({"text": "hi"})).await?;
        assert_eq!(result.content[0].as_text(), Some("hi"));
        assert!(matches!(
            host.status()["broken"],
            ServerStatus::Failed { .. }
        ));
    }
    host.close().await;
    Ok(())
}
