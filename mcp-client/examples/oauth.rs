//! Connects to a server protected by OAuth: discovery, registration, the
//! person's authorization, tokens kept in a file and refreshed.
//!
//! ```sh
//! # The reference server behind its own authorization server, authorized
//! # with no person (it approves at once):
//! cargo run -p mcp-steady-client --features oauth --example oauth
//! # A real server: the URL to open is printed, the browser comes back to a
//! # loopback port, the tokens go to ./tokens.json (owner-only):
//! cargo run -p mcp-steady-client --features oauth --example oauth -- https://example.com/mcp
//! ```

use mcp_client::prelude::*;
use mcp_reference_server::{FakeConfig, http::ProtectedHttpFake};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let given = std::env::args().nth(1);
    // Only so that the example runs with no argument: the protected
    // reference server. Your code names its own URL.
    let reference = match given {
        Some(_) => None,
        None => Some(ProtectedHttpFake::start(FakeConfig::default()).await?),
    };
    let url = given.unwrap_or_else(|| reference.as_ref().unwrap().url());
    let dir = std::env::temp_dir().join(format!("mcp-oauth-example-{}", std::process::id()));
    let tokens = match &reference {
        Some(_) => dir.join("tokens.json"),
        None => "tokens.json".into(),
    };

    let transport = HttpTransportBuilder::new(&url);
    let oauth = OAuthProvider::builder(&url).store(FileStore::new(&tokens));
    let oauth = if reference.is_some() {
        oauth.authorizer(HeadlessAuthorizer::new(transport.http_service()?))
    } else {
        // A person: the URL is shown, the browser's redirect comes back here.
        let person = LoopbackAuthorizer::bind(0).await?;
        oauth.redirect_uri(person.redirect_uri()).authorizer(person)
    };
    // One call puts OAuth on the connection; the flow runs at the first 401.
    let transport = transport.authorization(oauth)?;

    let client = Client::builder().connect(transport).await?;
    let tools = client.list_all_tools().await?;
    println!("{url}: {} era, {} tools", client.era(), tools.len());
    client.close().await;

    if reference.is_some() {
        assert!(tools.iter().any(|t| t.name == "echo"));
        // The tokens were kept, readable by their owner only.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&tokens)?.permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{mode:o}");
        }
        assert!(tokens.exists());
        println!("tokens kept in {}", tokens.display());
        std::fs::remove_dir_all(&dir)?;
    }
    Ok(())
}
