//! Connects to a stdio MCP server, prints what it offers, and calls a tool.
//!
//! ```sh
//! # The workspace's reference server (built on first use):
//! cargo run -p mcp-steady-client --example quickstart
//! # Any other stdio server:
//! cargo run -p mcp-steady-client --example quickstart -- npx -y @modelcontextprotocol/server-everything
//! ```

use mcp_client::{Client, StdioCommand};
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let command = match args.split_first() {
        Some((program, rest)) => StdioCommand::new(program).args(rest),
        // Only so that the example runs with no argument: the workspace's
        // reference server. Your code names its own server.
        None => StdioCommand::new(mcp_reference_server::binaries::server_path())
            .name("reference server"),
    };

    let client = Client::builder()
        .client_info("quickstart", env!("CARGO_PKG_VERSION"))
        .connect(command)
        .await?;
    let verdict = client.verdict();
    let server = client.server_info().map(|i| i.name).unwrap_or_default();
    println!(
        "connected to {server:?}: {} era, protocol {}, reached by {:?}",
        verdict.era, verdict.version, verdict.reached
    );

    let tools = client.list_all_tools().await?;
    println!("\n{} tools:", tools.len());
    for tool in &tools {
        let about = tool.description.as_deref().unwrap_or("");
        println!("  {:<20} {}", tool.name, about.lines().next().unwrap_or(""));
    }
    if let Ok(resources) = client.list_all_resources().await {
        println!("\n{} resources:", resources.len());
        for r in &resources {
            println!("  {}", r.uri);
        }
    }
    if let Ok(prompts) = client.list_all_prompts().await {
        println!("\n{} prompts:", prompts.len());
        for p in &prompts {
            println!("  {}", p.name);
        }
    }

    if tools.iter().any(|t| t.name == "echo") {
        let key = if server.contains("everything") {
            "message"
        } else {
            "text"
        };
        let mut arguments = serde_json::Map::new();
        arguments.insert(key.to_owned(), json!("hello from Rust"));
        let result = client.call_tool("echo", arguments.into()).await?;
        println!("\necho -> {}", serde_json::to_string(&result.content)?);
    }
    client.close().await;
    Ok(())
}
