//! What authorization and resource servers send: the same body read as
//! each document the flow reads (protected resource and authorization
//! server metadata, a registration, a token or error response), each
//! reading checked against what it must give.

use mcp_auth::AuthMethod;
use mcp_auth::fuzzing::{self, Registered};

const MCP_URL: &str = "https://mcp.example/api/mcp";

/// The input is the body of an answer of an authorization or resource
/// server.
pub fn oauth(input: &[u8]) {
    if let Ok(read) = fuzzing::resource_metadata(input, MCP_URL) {
        let resource = &read.metadata.resource;
        if read.allowed {
            assert!(fuzzing::allowed(resource, MCP_URL));
        }
        assert_eq!(
            read.issuer.ok().as_ref(),
            read.metadata.authorization_servers.first()
        );
        for urls in &read.server_metadata_urls {
            assert!(urls.len() <= 3);
            assert!(urls.iter().all(|u| u.contains("/.well-known/")), "{urls:?}");
        }
    }
    let _ = fuzzing::server_metadata(input);
    let supported = [
        None,
        Some(Vec::new()),
        Some(vec!["none".to_owned()]),
        Some(vec![
            "private_key_jwt".to_owned(),
            "client_secret_post".to_owned(),
        ]),
    ];
    for methods in &supported {
        if let Ok(registered) = fuzzing::registration(input, methods.as_deref()) {
            holds(&registered);
        }
    }
    tokens(input);
    let object = serde_json::from_slice::<serde_json::Value>(input).is_ok_and(|v| v.is_object());
    if object && (fuzzing::is_use_nonce_error(input) || fuzzing::token_error(input).is_some()) {
        assert!(fuzzing::is_oauth_error(input));
    }
}

/// The method a registration leaves the client with needs only what the
/// registration gave it: a secret for the secret methods, and never a
/// private key (registration gives none).
fn holds(registered: &Registered) {
    match registered.method {
        AuthMethod::SecretBasic | AuthMethod::SecretPost => {
            assert!(registered.has_secret, "{registered:?} without a secret")
        }
        AuthMethod::PrivateKeyJwt => panic!("{registered:?}: registration gives no key"),
        _ => {}
    }
}

/// A token response: refreshed no later than it expires; the scopes the
/// server granted, or those requested when it names none.
fn tokens(input: &[u8]) {
    let requested = ["a".to_owned(), "b".to_owned()];
    let Ok(tokens) = fuzzing::token_response(input, &requested) else {
        return;
    };
    if let (Some(expires), Some(refresh)) = (tokens.expires_in, tokens.refresh_in) {
        // A little after the response was read, at most.
        let late = std::time::Duration::from_millis(100);
        assert!(refresh <= expires + late, "{tokens:?}");
    }
    assert_eq!(tokens.expires_in.is_some(), tokens.refresh_in.is_some());
    let granted = serde_json::from_slice::<serde_json::Value>(input)
        .ok()
        .and_then(|v| v.get("scope").and_then(|s| s.as_str()).map(str::to_owned));
    if granted.is_none() {
        assert_eq!(tokens.scopes, requested);
    }
}
