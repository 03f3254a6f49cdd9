//! Answers what a server asks during a call (elicitation, sampling, roots)
//! with plain async closures: the same code whether a legacy server sends
//! a request or a modern one answers `input_required`.
//!
//! ```sh
//! cargo run -p mcp-steady-client --example handlers
//! ```

use mcp_client::prelude::*;
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let program = mcp_reference_server::binaries::server_path();
    for era in ["legacy", "modern"] {
        let server = StdioCommand::new(&program).args(["--era", era]);
        let client = Client::builder()
            // A form: ask the person (here, always "Ada").
            .on_elicitation(|request, ctx| async move {
                println!("  [{}] the server asks: {:?}", ctx.era, request.message());
                let mut form = JsonObject::new();
                form.insert("name".into(), json!("Ada"));
                Ok(ElicitResult::accept(form))
            })
            // A question for your model (here, a canned answer).
            .on_sampling(|request, _ctx| async move {
                println!("  the server samples {} message(s)", request.messages.len());
                Ok(CreateMessageResult::text("Paris.", "example-model"))
            })
            // The folders the server may work in, computed when asked.
            .on_roots(|_ctx| async { Ok(vec![Root::new("file:///work").with_name("work")]) })
            .connect(server)
            .await?;
        println!("{era} server: {} era", client.era());

        for (tool, expected) in [
            ("elicit", "Ada"),
            ("sample", "Paris."),
            ("roots", "file:///work"),
        ] {
            let result = client.call_tool(tool, json!({})).await?;
            let text = result.content[0].as_text().unwrap_or_default();
            assert!(text.contains(expected), "{tool}: {text}");
            println!("  {tool} -> {text}");
        }
        client.close().await;
    }
    Ok(())
}
