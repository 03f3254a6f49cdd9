//! The two metadata documents: the MCP endpoint's protected resource
//! metadata (RFC 9728) and the authorization server's (RFC 8414, also
//! served as OpenID Connect discovery).

use serde_json::{Value, json};

use super::OAuthOptions;

/// The protected resource metadata: the resource is `{base}/mcp`, its
/// authorization server `base` itself.
pub(super) fn resource(base: &str, options: &OAuthOptions) -> Value {
    json!({
        "resource": format!("{base}/mcp"),
        "authorization_servers": [base],
        "scopes_supported": options.scopes,
        "bearer_methods_supported": ["header"],
    })
}

/// The authorization server metadata, issuer `base`.
pub(super) fn server(base: &str, options: &OAuthOptions) -> Value {
    json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
        "scopes_supported": options.scopes,
        "authorization_response_iss_parameter_supported": true,
    })
}
