//! Enterprise-managed authorization (SEP-990, the MCP profile of the
//! Identity Assertion JWT Authorization Grant): the person signed in to
//! the enterprise IdP once; the client exchanges that ID token at the IdP
//! for an ID-JAG (RFC 8693), then presents the ID-JAG to the MCP server's
//! authorization server with the JWT-bearer grant (RFC 7523). No browser,
//! no consent screen: the IdP's policy decides.

use crate::builder::OAuthProviderBuilder;
use crate::client::{AuthMethod, Registration};
use crate::grants::AssertionGrant;
use crate::{JwtSource, PreRegistered, Secret};

/// The enterprise identity provider, as the client knows it: its token
/// endpoint, the client's credentials there, and where the person's ID
/// token comes from.
///
/// ```
/// use mcp_auth::{EnterpriseIdp, JwtSource};
/// use mcp_transport_http::BoxError;
///
/// let idp = EnterpriseIdp::new(
///     "https://idp.example.com/oauth2/v1/token",
///     "my-client-at-the-idp",
///     // The ID token of the person's SSO session, refreshed by the
///     // application's own login code whenever it expires.
///     JwtSource::from_fn(|| async { Ok::<_, BoxError>(String::from("eyJ...")) }),
/// )
/// .client_secret("the-idp-secret");
/// assert!(!format!("{idp:?}").contains("the-idp-secret"));
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct EnterpriseIdp {
    /// The IdP's token endpoint, where the token exchange goes.
    pub token_endpoint: String,
    /// The client's id at the IdP.
    pub client_id: String,
    /// The client's secret at the IdP, if it is a confidential client there.
    pub client_secret: Option<Secret>,
    /// How the exchange authenticates the client: `client_secret_basic`
    /// (the default with a secret, RFC 6749 §2.3.1's MUST) or
    /// `client_secret_post`; without a secret, the id in the body.
    pub auth_method: AuthMethod,
    /// The person's ID token from the IdP, the exchange's subject token.
    pub id_token: JwtSource,
}

impl EnterpriseIdp {
    /// An IdP reached at `token_endpoint`, where this client is `client_id`
    /// (a public client until [`client_secret`](Self::client_secret)),
    /// with the person's ID token from `id_token`.
    pub fn new(
        token_endpoint: impl Into<String>,
        client_id: impl Into<String>,
        id_token: JwtSource,
    ) -> Self {
        EnterpriseIdp {
            token_endpoint: token_endpoint.into(),
            client_id: client_id.into(),
            client_secret: None,
            auth_method: AuthMethod::None,
            id_token,
        }
    }

    /// The client's secret at the IdP, sent with `client_secret_basic`
    /// unless [`auth_method`](Self::auth_method) says otherwise.
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(Secret::new(secret));
        if self.auth_method == AuthMethod::None {
            self.auth_method = AuthMethod::SecretBasic;
        }
        self
    }

    /// How the exchange authenticates the client at the IdP
    /// (`SecretBasic` or `SecretPost` with a secret, `None` without).
    pub fn auth_method(mut self, method: AuthMethod) -> Self {
        self.auth_method = method;
        self
    }

    /// The client as the IdP's token endpoint authenticates it.
    pub(crate) fn registration(&self) -> Registration {
        Registration {
            issuer: self.token_endpoint.clone(),
            client_id: self.client_id.clone(),
            client_secret: self.client_secret.clone(),
            private_key: None,
            method: self.auth_method.clone(),
        }
    }
}

impl OAuthProviderBuilder {
    /// Uses enterprise-managed authorization (SEP-990) instead of the
    /// authorization code flow: at each authorization the provider asks
    /// `idp` for the person's ID token, exchanges it at the IdP's token
    /// endpoint for an ID-JAG (RFC 8693: `requested_token_type` the
    /// ID-JAG type, `audience` the MCP server's authorization server,
    /// `resource` the MCP server), then presents the ID-JAG with the
    /// JWT-bearer grant (RFC 7523) at that authorization server,
    /// authenticated with `credentials` (the client's registration there).
    ///
    /// A token a server refused (the ID token, for the scopes asked) is
    /// not presented again: the next authorization fails at once until the
    /// source hands over a new one. The provider never falls back to
    /// another grant.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use mcp_auth::{EnterpriseIdp, JwtSource, OAuthProvider, PreRegistered};
    /// use mcp_transport_http::HttpTransportBuilder;
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let url = "https://mcp.example.com/mcp";
    /// let transport = HttpTransportBuilder::new(url);
    /// let idp = EnterpriseIdp::new(
    ///     "https://idp.example.com/oauth2/v1/token",
    ///     "client-at-the-idp",
    ///     JwtSource::file("/run/user/1000/sso/id_token"),
    /// )
    /// .client_secret("secret-at-the-idp");
    /// let oauth = OAuthProvider::builder(url)
    ///     .enterprise_managed(idp, PreRegistered::new("client-at-the-mcp-as", Some("secret".into())))
    ///     .build(transport.http_service()?)?;
    /// let transport = transport.header_provider(Arc::new(oauth));
    /// # let _ = transport;
    /// # Ok(())
    /// # }
    /// ```
    pub fn enterprise_managed(mut self, idp: EnterpriseIdp, credentials: PreRegistered) -> Self {
        self.pre_registered = Some(credentials);
        self.assertion = Some(AssertionGrant::enterprise(idp));
        self
    }
}
