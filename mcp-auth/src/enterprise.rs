//! Enterprise-managed authorization (SEP-990, the MCP profile of the
//! Identity Assertion JWT Authorization Grant): the person signed in to
//! the enterprise IdP once; the client exchanges that ID token at the IdP
//! for an ID-JAG (RFC 8693), then presents the ID-JAG to the MCP server's
//! authorization server with the JWT-bearer grant (RFC 7523). No browser,
//! no consent screen: the IdP's policy decides.

use crate::client::{AuthMethod, Registration};
use crate::{JwtSource, Secret};

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
