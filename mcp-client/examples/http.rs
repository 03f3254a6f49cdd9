//! Connects to a server at a URL, with headers on every request.
//!
//! ```sh
//! # The workspace's reference server over HTTP on loopback:
//! cargo run -p mcp-steady-client --features http --example http
//! # Any other server, with headers:
//! cargo run -p mcp-steady-client --features http --example http -- https://example.com/mcp 'X-Api-Key: …'
//! ```

use mcp_client::http::http::{HeaderName, HeaderValue};
use mcp_client::prelude::*;
use mcp_reference_server::{FakeConfig, http::HttpFake};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    // Only so that the example runs with no argument: the reference server
    // over HTTP. Your code names its own URL.
    let reference = match args.next() {
        Some(url) => Err(url),
        None => Ok(HttpFake::start(FakeConfig::default()).await?),
    };
    let url = match &reference {
        Ok(server) => server.url(),
        Err(url) => url.clone(),
    };

    let mut transport = HttpTransportBuilder::new(&url).header(
        HeaderName::from_static("x-client-example"),
        HeaderValue::from_static("http"),
    );
    for header in args {
        let (name, value) = header.split_once(':').ok_or("a header is `NAME: VALUE`")?;
        let mut value: HeaderValue = value.trim().parse()?;
        value.set_sensitive(true); // never shown in logs or `Debug` output
        transport = transport.header(name.trim().parse()?, value);
    }

    let client = Client::builder().connect(transport).await?;
    println!(
        "{url}: {} era, protocol {}",
        client.era(),
        client.protocol_version()
    );
    let tools = client.list_all_tools().await?;
    println!("{} tools", tools.len());

    if let Ok(server) = &reference {
        let result = client
            .call_tool("echo", serde_json::json!({"text": "hi"}))
            .await?;
        assert_eq!(result.content[0].as_text(), Some("hi"));
        // Every request the server saw carried the header.
        let requests = server.requests();
        assert!(!requests.is_empty());
        assert!(
            requests
                .iter()
                .all(|r| r.headers["x-client-example"] == "http")
        );
        println!(
            "echo -> hi; the header was on all {} requests",
            requests.len()
        );
    }
    client.close().await;
    Ok(())
}
