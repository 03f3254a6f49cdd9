//! Hands a server's tools to a model and routes the model's calls back:
//! each tool as the function definition the common model APIs take (a
//! name, a description, JSON Schema parameters), and a call the model
//! makes turned into a `tools/call`, its result into what the model reads.
//!
//! ```sh
//! cargo run -p mcp-steady-client --example tools_for_a_model
//! ```

use mcp_client::prelude::*;
use serde_json::{Value, json};

/// A tool as a function for a model: the shape of OpenAI's `tools`
/// (Anthropic's takes the same three as `name`, `description`,
/// `input_schema`).
fn function(tool: &Tool) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description.clone().unwrap_or_default(),
            "parameters": tool.input_schema,
        }
    })
}

/// What the model reads back: the structured result if there is one, else
/// the text of the content; an error says so, so the model can recover.
fn for_the_model(result: &CallToolResult) -> String {
    let text = match &result.structured_content {
        Some(structured) => structured.to_string(),
        None => {
            let texts: Vec<&str> = result.content.iter().filter_map(|c| c.as_text()).collect();
            texts.join("\n")
        }
    };
    let prefix = if result.is_error() { "error: " } else { "" };
    format!("{prefix}{text}")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = StdioCommand::new(mcp_reference_server::binaries::server_path());
    let client = Client::builder().connect(server).await?;

    let tools = client.list_all_tools().await?;
    let functions: Vec<Value> = tools.iter().map(function).collect();
    println!(
        "{} functions for the model, e.g.\n{:#}",
        functions.len(),
        functions[0]
    );
    assert!(
        functions
            .iter()
            .any(|f| f["function"]["name"] == "structured")
    );

    // What a model answers when it wants a function called (the arguments
    // come as a JSON string in OpenAI's API).
    let model_call = json!({"name": "structured", "arguments": "{\"a\": 6, \"b\": 7}"});
    let name = model_call["name"].as_str().ok_or("no function name")?;
    let arguments: Value = serde_json::from_str(model_call["arguments"].as_str().unwrap_or("{}"))?;
    let result = client.call_tool(name, arguments).await?;
    let reply = for_the_model(&result);
    println!("{name} -> {reply}");
    let reply: Value = serde_json::from_str(&reply)?;
    assert_eq!(
        (reply["sum"].as_f64(), reply["product"].as_f64()),
        (Some(13.0), Some(42.0))
    );

    // A call the server refuses comes back as text the model can act on.
    let failed = client.call_tool("fail", json!({})).await?;
    assert!(for_the_model(&failed).starts_with("error: "));
    client.close().await;
    Ok(())
}
