//! OAuth 2.1 authorization for MCP servers over HTTP, as the MCP
//! authorization spec (2025-03-26 to 2026-07-28) has clients do it.
//!
//! [`OAuthProvider`] is a [`HeaderProvider`](mcp_transport_http::HeaderProvider)
//! of the HTTP transport, and a `tower::Layer` for any `tower` HTTP client
//! (see [`Authorized`](mcp_transport_http::Authorized)): it puts
//! `Authorization: Bearer …` on requests to the MCP server's origin (and
//! nowhere else: redirects are followed inside the layer, on the same
//! origin only), and answers the server's 401 and 403 challenges:
//!
//! * **Discovery**: protected resource metadata (RFC 9728) from the
//!   challenge's `resource_metadata`, else the well-known URLs in the
//!   spec's order; its `resource` checked against the server's URL before
//!   any authorization server is contacted; authorization server metadata
//!   by RFC 8414 then OpenID Connect, with the path variants, its `issuer`
//!   checked; for a server without resource metadata (2025-03-26), the
//!   server's origin and its default endpoints.
//! * **Client identity**, per issuer: pre-registered credentials, then a
//!   client ID metadata document, then dynamic registration (RFC 7591,
//!   with `application_type`). A registered secret is used on every later
//!   token request of that issuer, refresh included.
//! * **Authorization code with PKCE S256** (a server that does not list
//!   S256 is refused), `resource` (RFC 8707) sent byte for byte as the
//!   metadata says it, `state` checked, `iss` checked (RFC 9207); the
//!   token endpoint authenticated by `client_secret_basic`,
//!   `client_secret_post`, `private_key_jwt` or `none`.
//! * **Scopes** from the challenge, else the resource metadata;
//!   `offline_access` only when the authorization server lists it;
//!   step-up on 403 `insufficient_scope` with the union of scopes, never
//!   again for scopes already granted.
//! * **Refresh** before expiry and on 401; a refused refresh
//!   (`invalid_grant`, or a refreshed token refused again) leads to a
//!   fresh authorization, once per request. A token endpoint that cannot
//!   be reached, or answers a server error, ends nothing: the request
//!   fails with [`AuthError::RefreshUnavailable`] and the login is kept.
//!   One refresh or authorization at a time: concurrent requests wait for
//!   it.
//! * **Client credentials** (secret or private-key JWT) for machines.
//! * **DPoP** (RFC 9449, SEP-1932), when the protected resource says it
//!   takes bound tokens: in its metadata, or with a `DPoP` challenge
//!   ([`DpopMode`]; what the authorization server lists is not enough,
//!   since a resource that knows only `Bearer` refuses a bound token): an
//!   ES256 key made per provider,
//!   a proof on every token request, a DPoP-bound token sent as
//!   `Authorization: DPoP …` with a fresh proof on each request, and the
//!   servers' nonces (`use_dpop_nonce`) kept per origin and honoured.
//! * **Enterprise-managed authorization** (SEP-990): the person's ID token
//!   from the enterprise IdP exchanged there for an ID-JAG (RFC 8693),
//!   presented to the MCP server's authorization server with the
//!   JWT-bearer grant (RFC 7523):
//!   [`enterprise_managed`](OAuthProviderBuilder::enterprise_managed).
//! * **Workload identity** (SEP-1933): the workload's platform-issued JWT
//!   as the assertion of a JWT-bearer grant:
//!   [`workload_identity`](OAuthProviderBuilder::workload_identity).
//!   Both take their JWT from a [`JwtSource`], asked at every grant; a
//!   token a server refused is not presented again, and no other grant is
//!   tried instead.
//! * **For clients that run server-side**,
//!   [`refuse_internal_addresses`](OAuthProviderBuilder::refuse_internal_addresses)
//!   (off by default) refuses URLs a server hands out whose host is a
//!   private, loopback or link-local address.
//!
//! The person's part is an [`Authorizer`]: given the authorization URL, it
//! returns the redirect. [`LoopbackAuthorizer`] shows the URL and waits for
//! the browser on a loopback port; [`HeadlessAuthorizer`] is one for
//! servers that approve at once. Authorizations are kept in a
//! [`TokenStore`]: in memory by default, or a [`FileStore`].
//!
//! ```no_run
//! use std::sync::Arc;
//! use mcp_auth::{HeadlessAuthorizer, OAuthProvider};
//! use mcp_transport_http::HttpTransportBuilder;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let url = "https://mcp.example.com/mcp";
//! let transport = HttpTransportBuilder::new(url);
//! let service = transport.http_service()?;
//! let oauth = OAuthProvider::builder(url)
//!     .redirect_uri("http://127.0.0.1:8123/callback")
//!     .authorizer(HeadlessAuthorizer::new(service.clone()))
//!     .build(service)?;
//! let transport = transport.header_provider(Arc::new(oauth));
//! # let _ = transport;
//! # Ok(())
//! # }
//! ```
//!
//! Nothing secret shows in `Debug` output or logs: tokens, secrets and
//! keys are [`Secret`]s or [`PrivateKey`]s, and the DPoP key is shown by
//! its algorithm only.
//!
//! # Dependencies, and why
//!
//! * `oauth2` (no default features, so no second HTTP client): PKCE, the
//!   authorization URL, token requests and their client authentication,
//!   driven through the transport's [`HttpService`](mcp_transport_http::HttpService).
//! * `jsonwebtoken` (on `ring`, like the TLS stack): the `private_key_jwt`
//!   client assertion.
//! * `ring` (already under rustls and `jsonwebtoken`) and `base64`: the
//!   DPoP key pair, proofs and `ath`.
//! * `url`: parsing redirects and metadata URLs (never to re-serialise
//!   `resource`, which goes out as given).
//! * `base64`: the `client_secret_basic` header of the JWT-bearer and
//!   token exchange requests, which `oauth2` does not build.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(doctest, doc = include_str!("../README.md"))]

mod address;
mod authorizer;
mod builder;
mod challenge;
mod client;
mod discovery;
mod dpop;
mod enterprise;
mod fetch;
mod flow;
#[doc(hidden)]
pub mod fuzzing;
mod grant;
mod grants;
mod identity;
mod jwt_source;
mod layer;
mod loopback;
mod metadata;
mod origin;
mod provider;
mod secret;
mod session;
mod store;
mod workload;

use std::time::Duration;

pub use authorizer::{Authorizer, HeadlessAuthorizer};
pub use builder::OAuthProviderBuilder;
pub use challenge::BearerChallenge;
pub use client::{AuthMethod, PreRegistered};
pub use dpop::DpopMode;
pub use enterprise::EnterpriseIdp;
pub use jwt_source::JwtSource;
pub use loopback::{DEFAULT_LOOPBACK_WAIT, LoopbackAuthorizer};
pub use metadata::{ResourceMetadata, ServerMetadata};
pub use provider::OAuthProvider;
pub use secret::{PrivateKey, Secret};
pub use store::{FileStore, MemoryStore, StoreHold, StoredAuthorization, TokenStore};

/// How long each request of the flow (metadata, registration, token) may take.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Why an authorization did not go through.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// The provider was set up wrong (no authorizer, a bad key, ...).
    #[error("authorization is misconfigured: {0}")]
    Config(String),
    /// A server answered something the spec forbids the client to act on
    /// (a resource on another origin, a wrong issuer, no PKCE, ...).
    #[error("authorization refused: {0}")]
    Refused(String),
    /// A server answered something unreadable.
    #[error("authorization failed: {0}")]
    Protocol(String),
    /// A request of the flow could not be made or timed out.
    #[error("authorization request failed: {0}")]
    Http(String),
    /// The authorization server refused the grant (`invalid_grant`, ...).
    #[error("the authorization server answered {error}{}", .description.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    Grant {
        /// The OAuth error code.
        error: String,
        /// Its description, if any.
        description: Option<String>,
    },
    /// The application's [`Authorizer`] failed.
    #[error("the authorizer failed: {0}")]
    Authorizer(String),
    /// The access token was due for refresh, and the token endpoint could
    /// not be reached, or answered a server error or something unreadable.
    /// The login and the stored tokens are kept, and nothing went to the
    /// MCP server: the request may be sent again, and the next one tries
    /// the refresh again. Through the transport, a request fails with
    /// `TransportError::Credentials` (nothing was sent, safe to send again)
    /// whose cause says this.
    #[error(
        "the access token could not be refreshed: {cause}; the login is kept, and the next request refreshes again"
    )]
    RefreshUnavailable {
        /// What failed: the token endpoint could not be reached, or what
        /// it answered.
        cause: String,
    },
}
