//! How the authorization server of a [`ProtectedHttpFake`] behaves.
//!
//! [`ProtectedHttpFake`]: crate::http::ProtectedHttpFake

use std::time::Duration;

/// The authorization server's settings: token lifetime, refresh tokens,
/// scopes, pre-registered clients.
///
/// ```
/// use std::time::Duration;
/// use mcp_reference_server::http::OAuthOptions;
///
/// let options = OAuthOptions::new()
///     .token_lifetime(Duration::from_secs(60))
///     .call_scope("mcp:call")
///     .client("machine", "machine-s3cret");
/// // The secret never shows.
/// assert!(!format!("{options:?}").contains("s3cret"));
/// ```
#[derive(Clone)]
pub struct OAuthOptions {
    pub(super) token_lifetime: Duration,
    pub(super) refresh_tokens: bool,
    pub(super) scopes: Vec<String>,
    pub(super) call_scope: Option<String>,
    pub(super) clients: Vec<(String, String)>,
}

impl Default for OAuthOptions {
    fn default() -> Self {
        OAuthOptions {
            token_lifetime: Duration::from_secs(3600),
            refresh_tokens: true,
            scopes: vec!["mcp".to_owned()],
            call_scope: None,
            clients: Vec::new(),
        }
    }
}

impl OAuthOptions {
    /// The defaults: access tokens that live an hour, refresh tokens with
    /// the authorization code, one scope (`mcp`) listed in the metadata and
    /// enough for everything, no pre-registered client.
    pub fn new() -> OAuthOptions {
        OAuthOptions::default()
    }

    /// How long an access token is accepted (its `expires_in`).
    pub fn token_lifetime(mut self, lifetime: Duration) -> OAuthOptions {
        self.token_lifetime = lifetime;
        self
    }

    /// No refresh tokens: an expired access token means a new
    /// authorization.
    pub fn no_refresh_tokens(mut self) -> OAuthOptions {
        self.refresh_tokens = false;
        self
    }

    /// The scopes the metadata lists (`scopes_supported`); a client asking
    /// for none gets these.
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> OAuthOptions {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The scope `tools/call` needs: a token without it gets `403` with
    /// `insufficient_scope` naming it (a step-up). It is granted when asked
    /// for, but not listed in the metadata, so a first authorization does
    /// not ask for it.
    pub fn call_scope(mut self, scope: impl Into<String>) -> OAuthOptions {
        self.call_scope = Some(scope.into());
        self
    }

    /// A pre-registered confidential client (`client_secret_basic` or
    /// `client_secret_post`), for client credentials and for clients
    /// configured with an id and secret. Any redirect URI on loopback is
    /// accepted for it.
    pub fn client(mut self, id: impl Into<String>, secret: impl Into<String>) -> OAuthOptions {
        self.clients.push((id.into(), secret.into()));
        self
    }
}

impl std::fmt::Debug for OAuthOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Client secrets stay out of Debug output.
        let clients: Vec<&str> = self.clients.iter().map(|(id, _)| id.as_str()).collect();
        f.debug_struct("OAuthOptions")
            .field("token_lifetime", &self.token_lifetime)
            .field("refresh_tokens", &self.refresh_tokens)
            .field("scopes", &self.scopes)
            .field("call_scope", &self.call_scope)
            .field("clients", &clients)
            .finish()
    }
}
