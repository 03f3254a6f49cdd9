//! The metadata documents discovery reads: protected resource metadata
//! (RFC 9728) and authorization server metadata (RFC 8414, OpenID Connect
//! Discovery). Plain types; [`discovery`](crate::discovery) fetches them.

use serde::Deserialize;

/// Protected resource metadata: which authorization servers protect the
/// MCP server, and for what resource.
#[derive(Clone, Debug, Deserialize)]
#[non_exhaustive]
pub struct ResourceMetadata {
    /// The resource identifier, sent as RFC 8707 `resource` byte for byte.
    pub resource: String,
    /// The authorization servers' issuers.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// The scopes the resource knows.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// Whether the resource takes DPoP-bound tokens only (RFC 9728 §2).
    #[serde(default)]
    pub dpop_bound_access_tokens_required: bool,
    /// The JWS algorithms the resource takes in DPoP proofs (RFC 9728 §2):
    /// listed, the resource takes DPoP-bound tokens.
    #[serde(default)]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

/// Authorization server metadata, the fields the flow uses.
#[derive(Clone, Debug, Deserialize)]
#[non_exhaustive]
pub struct ServerMetadata {
    /// The issuer, checked against the one the URL was built from.
    pub issuer: String,
    /// Where the person authorizes.
    #[serde(default)]
    pub authorization_endpoint: Option<String>,
    /// Where codes and refresh tokens become access tokens.
    pub token_endpoint: String,
    /// Dynamic client registration (RFC 7591).
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    /// The scopes it can grant (`offline_access` among them or not).
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// PKCE methods; the flow needs `S256`.
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// How clients authenticate at the token endpoint.
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Whether the authorization response carries `iss` (RFC 9207).
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
    /// Whether a client ID metadata document URL may be the `client_id`.
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    /// The JWS algorithms it takes in DPoP proofs (RFC 9449 §5.1).
    #[serde(default)]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}
