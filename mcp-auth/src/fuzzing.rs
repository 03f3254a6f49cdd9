//! The readers of what resource and authorization servers send, reached
//! as the flow reaches them, for the workspace's fuzz targets (`fuzz/`)
//! and their replay on stable. Not part of the API: hidden from the docs
//! and free to change.

use std::time::{Duration, Instant};

use oauth2::basic::BasicTokenResponse;

use crate::client::{choose_issuer, registered};
use crate::discovery::{resource_allowed, resource_metadata_urls, server_metadata_urls};
use crate::fetch::read_json;
use crate::{AuthError, AuthMethod, BearerChallenge, ResourceMetadata, ServerMetadata};

/// What discovery takes from a protected resource metadata document.
#[derive(Debug)]
pub struct ResourceRead {
    /// The document.
    pub metadata: ResourceMetadata,
    /// Whether its `resource` may stand for the MCP server's URL.
    pub allowed: bool,
    /// The authorization server chosen, with no issuer configured.
    pub issuer: Result<String, AuthError>,
    /// The metadata URLs of each authorization server it names.
    pub server_metadata_urls: Vec<Vec<String>>,
}

/// Reads a protected resource metadata document served for `mcp_url`.
pub fn resource_metadata(body: &[u8], mcp_url: &str) -> Result<ResourceRead, AuthError> {
    let metadata: ResourceMetadata = read_json(body, "the protected resource metadata")?;
    Ok(ResourceRead {
        allowed: resource_allowed(&metadata.resource, mcp_url),
        issuer: choose_issuer(&metadata.authorization_servers, None).cloned(),
        server_metadata_urls: metadata
            .authorization_servers
            .iter()
            .map(|issuer| server_metadata_urls(issuer))
            .collect(),
        metadata,
    })
}

/// Whether the resource metadata's `resource` may stand for `mcp_url`.
pub fn allowed(resource: &str, mcp_url: &str) -> bool {
    resource_allowed(resource, mcp_url)
}

/// Where the protected resource metadata is looked for: the challenge's
/// `resource_metadata`, else the well-known URLs of `mcp_url`.
pub fn metadata_urls(mcp_url: &str, challenge: &BearerChallenge) -> Vec<String> {
    resource_metadata_urls(mcp_url, challenge.resource_metadata.as_deref())
}

/// Reads an authorization server metadata document.
pub fn server_metadata(body: &[u8]) -> Result<ServerMetadata, AuthError> {
    read_json(body, "the authorization server metadata")
}

/// What a registration response gives the client.
#[derive(Debug)]
pub struct Registered {
    /// Its `client_id`.
    pub client_id: String,
    /// Whether it got a (non-empty) secret.
    pub has_secret: bool,
    /// How it authenticates at the token endpoint.
    pub method: AuthMethod,
}

/// Reads a registration response from a server whose token endpoint takes
/// the `supported` methods.
pub fn registration(body: &[u8], supported: Option<&[String]>) -> Result<Registered, AuthError> {
    let reg = registered(body, "https://as.example", supported)?;
    Ok(Registered {
        client_id: reg.client_id,
        has_secret: reg.client_secret.is_some(),
        method: reg.method,
    })
}

/// What a token response gives the client.
#[derive(Debug)]
pub struct Tokens {
    /// The access token.
    pub access: String,
    /// The refresh token.
    pub refresh: Option<String>,
    /// The `expires_in` the server gave.
    pub expires_in: Option<Duration>,
    /// How long until the token is refreshed, from now.
    pub refresh_in: Option<Duration>,
    /// The scopes granted (or, when the server does not say, requested).
    pub scopes: Vec<String>,
    /// Whether it is bound with DPoP.
    pub bound: bool,
}

/// Reads a token response to a request for the `requested` scopes.
pub fn token_response(body: &[u8], requested: &[String]) -> Result<Tokens, AuthError> {
    let response: BasicTokenResponse = read_json(body, "the token response")?;
    let now = Instant::now();
    let set = crate::flow::token_set(&response, requested);
    Ok(Tokens {
        access: set.access.expose().to_owned(),
        refresh: set.refresh.map(|r| r.expose().to_owned()),
        expires_in: oauth2::TokenResponse::expires_in(&response),
        refresh_in: set.refresh_at.map(|at| at.saturating_duration_since(now)),
        scopes: set.scopes,
        bound: set.bound,
    })
}

/// The error a token endpoint's error response names, if it is one.
pub fn token_error(body: &[u8]) -> Option<AuthError> {
    crate::grants::grant_error(body)
}

/// Whether a body is an OAuth error response.
pub fn is_oauth_error(body: &[u8]) -> bool {
    crate::fetch::is_oauth_error(body)
}

/// Whether a body is the `use_dpop_nonce` error (RFC 9449 §8).
pub fn is_use_nonce_error(body: &[u8]) -> bool {
    crate::dpop::is_use_nonce_error(body)
}
