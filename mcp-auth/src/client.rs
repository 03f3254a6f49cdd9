//! Client identity: pre-registered credentials, a client ID metadata
//! document, or dynamic client registration (RFC 7591), in that order.

use serde::Deserialize;
use serde_json::json;

use crate::fetch::{Fetcher, read_json};
use crate::metadata::ServerMetadata;
use crate::secret::Secret;
use crate::{AuthError, PrivateKey};

/// How the client authenticates at the token endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthMethod {
    /// `client_secret_basic`: the id and secret in an `Authorization: Basic` header.
    SecretBasic,
    /// `client_secret_post`: the id and secret in the form body.
    SecretPost,
    /// `private_key_jwt` (RFC 7523): a signed assertion in the form body.
    PrivateKeyJwt,
    /// `none`: a public client; only its id in the body.
    None,
}

impl AuthMethod {
    /// The RFC 7591 name.
    pub fn as_str(&self) -> &'static str {
        match self {
            AuthMethod::SecretBasic => "client_secret_basic",
            AuthMethod::SecretPost => "client_secret_post",
            AuthMethod::PrivateKeyJwt => "private_key_jwt",
            AuthMethod::None => "none",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<AuthMethod> {
        Some(match name {
            "client_secret_basic" => AuthMethod::SecretBasic,
            "client_secret_post" => AuthMethod::SecretPost,
            "private_key_jwt" => AuthMethod::PrivateKeyJwt,
            "none" => AuthMethod::None,
            _ => return None,
        })
    }
}

/// Credentials registered with an authorization server beforehand.
///
/// A secret or a private key goes only to the authorization server it was
/// registered with. Name it: [`PreRegistered::at`], [`for_issuer`], or
/// [`OAuthProviderBuilder::issuer`](crate::OAuthProviderBuilder::issuer).
/// Without a name, they go only to an authorization server on the MCP
/// server's own host (the host the application was given, with any port):
/// one that the MCP server's metadata names elsewhere is refused with an
/// error that says so, never sent the credentials. A client id without a
/// secret or key is no secret and is offered to any authorization server.
///
/// ```
/// use mcp_auth::PreRegistered;
///
/// let credentials = PreRegistered::at(
///     "https://auth.example.com",
///     "my-client",
///     Some("s3cret".to_owned()),
/// );
/// assert_eq!(credentials.issuer.as_deref(), Some("https://auth.example.com"));
/// // The secret never shows.
/// assert!(!format!("{credentials:?}").contains("s3cret"));
/// ```
///
/// [`for_issuer`]: PreRegistered::for_issuer
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct PreRegistered {
    /// The client id.
    pub client_id: String,
    /// The secret, for a confidential client.
    pub client_secret: Option<Secret>,
    /// The private key, for `private_key_jwt`.
    pub private_key: Option<PrivateKey>,
    /// The issuer they belong to; `None`: the authorization server on the
    /// MCP server's own host, or the builder's
    /// [`issuer`](crate::OAuthProviderBuilder::issuer).
    pub issuer: Option<String>,
}

impl PreRegistered {
    /// Credentials registered at the authorization server `issuer` (its
    /// issuer identifier, as its metadata gives it): the way to use them
    /// with an authorization server on another host than the MCP server's.
    pub fn at(
        issuer: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: Option<String>,
    ) -> Self {
        PreRegistered::new(client_id, client_secret).for_issuer(issuer)
    }

    /// A client id with an optional secret, with no issuer named: a secret
    /// goes only to an authorization server on the MCP server's own host
    /// (see [`PreRegistered`]); prefer [`at`](Self::at).
    pub fn new(client_id: impl Into<String>, client_secret: Option<String>) -> Self {
        PreRegistered {
            client_id: client_id.into(),
            client_secret: client_secret.map(Secret::new),
            private_key: None,
            issuer: None,
        }
    }

    /// Binds the credentials to one issuer.
    pub fn for_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Authenticates with `key` (`private_key_jwt`) instead of a secret.
    pub fn with_private_key(mut self, key: PrivateKey) -> Self {
        self.private_key = Some(key);
        self
    }

    /// Whether anything secret comes with the id.
    fn is_confidential(&self) -> bool {
        self.client_secret.is_some() || self.private_key.is_some()
    }
}

/// Whether two issuer identifiers name the same server (a trailing slash
/// aside, which servers and configurations add or drop).
pub(crate) fn same_issuer(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// Whether `url` is on the host of `configured` (any port): the host the
/// application chose, not one a server named.
pub(crate) fn same_host(configured: &str, url: &str) -> bool {
    let host = |u: &str| {
        url::Url::parse(u)
            .ok()
            .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
    };
    host(configured).is_some_and(|h| Some(h) == host(url))
}

/// The authorization server to use among those the resource metadata
/// names: the configured issuer if there is one (an error if the metadata
/// does not name it), else the first.
pub(crate) fn choose_issuer<'a>(
    named: &'a [String],
    configured: Option<&str>,
) -> Result<&'a String, AuthError> {
    match configured {
        Some(want) => named.iter().find(|i| same_issuer(i, want)).ok_or_else(|| {
            AuthError::Refused(format!(
                "the resource metadata names the authorization servers {named:?}, not {want}, the \
                 one this client is configured for: its credentials go nowhere else (change the \
                 configured issuer if the server moved)"
            ))
        }),
        None => named.first().ok_or_else(|| {
            AuthError::Protocol("the resource metadata names no authorization server".into())
        }),
    }
}

/// The pre-registered credentials to present to the server `metadata`
/// describes: `None` if there are none for it. Credentials with a secret
/// or key and no issuer, and an authorization server off the MCP server's
/// host, are an error: presenting them would hand them to whatever server
/// the resource named.
pub(crate) fn pre_registered_for<'p>(
    profile: &'p ClientProfile,
    metadata: &ServerMetadata,
) -> Result<Option<&'p PreRegistered>, AuthError> {
    let Some(pre) = &profile.pre_registered else {
        return Ok(None);
    };
    let usable = match pre.issuer.as_deref().or(profile.issuer.as_deref()) {
        Some(issuer) => same_issuer(issuer, &metadata.issuer),
        None if !pre.is_confidential() => true,
        None if same_host(&profile.mcp_url, &metadata.issuer) => true,
        None => {
            return Err(AuthError::Refused(format!(
                "the MCP server's metadata names the authorization server {}, which is not on \
                 its host; the pre-registered credentials name no issuer, so they are not sent \
                 there: if they were registered at {}, say so (PreRegistered::at or \
                 OAuthProviderBuilder::issuer)",
                metadata.issuer, metadata.issuer
            )));
        }
    };
    if !usable && profile.client_credentials {
        // A machine has no other identity to fall back on.
        return Err(AuthError::Refused(format!(
            "the client credentials are for {}, but the MCP server's metadata names the \
             authorization server {}: they are not sent there",
            pre.issuer
                .as_deref()
                .or(profile.issuer.as_deref())
                .unwrap_or_default(),
            metadata.issuer
        )));
    }
    Ok(usable.then_some(pre))
}

/// A client as one authorization server knows it: what every token
/// request of that issuer, refresh included, authenticates with.
#[derive(Clone, Debug)]
pub(crate) struct Registration {
    pub(crate) issuer: String,
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<Secret>,
    pub(crate) private_key: Option<PrivateKey>,
    pub(crate) method: AuthMethod,
}

/// What the client says about itself when it registers.
#[derive(Clone)]
pub(crate) struct ClientProfile {
    pub(crate) client_name: String,
    pub(crate) redirect_uri: String,
    pub(crate) metadata_url: Option<String>,
    pub(crate) pre_registered: Option<PreRegistered>,
    /// The configured MCP server URL: its host may receive credentials
    /// that name no issuer.
    pub(crate) mcp_url: String,
    /// The builder's issuer: the only authorization server used.
    pub(crate) issuer: Option<String>,
    /// The client credentials grant: no registration to fall back on.
    pub(crate) client_credentials: bool,
}

impl std::fmt::Debug for ClientProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The MCP URL's query may hold a key.
        f.debug_struct("ClientProfile")
            .field("client_name", &self.client_name)
            .field("redirect_uri", &self.redirect_uri)
            .field("metadata_url", &self.metadata_url)
            .field("pre_registered", &self.pre_registered)
            .field("mcp_url", &mcp_transport::record::redact_url(&self.mcp_url))
            .field("issuer", &self.issuer)
            .field("client_credentials", &self.client_credentials)
            .finish()
    }
}

/// The method to use: the registered one if the server allows it and the
/// client holds what it needs (a secret, a key), else the best the server
/// lists for what the client holds.
pub(crate) fn choose_method(
    registered: Option<&str>,
    supported: Option<&[String]>,
    has_secret: bool,
    has_key: bool,
) -> AuthMethod {
    let allowed = |m: &str| supported.is_none_or(|s| s.iter().any(|x| x == m));
    if let Some(m) = registered
        .filter(|m| allowed(m))
        .and_then(AuthMethod::from_name)
        .filter(|m| holds(m, has_secret, has_key))
    {
        return m;
    }
    // RFC 8414 §2: absent, the server takes client_secret_basic.
    let supported: Vec<String> = supported.map_or_else(
        || vec!["client_secret_basic".to_owned()],
        <[String]>::to_vec,
    );
    let has = |m: &str| supported.iter().any(|x| x == m);
    if has_key && has("private_key_jwt") {
        AuthMethod::PrivateKeyJwt
    } else if has_secret && has("client_secret_basic") {
        AuthMethod::SecretBasic
    } else if has_secret && has("client_secret_post") {
        AuthMethod::SecretPost
    } else if has_secret && !has("none") {
        AuthMethod::SecretBasic
    } else {
        AuthMethod::None
    }
}

/// Whether a client with a secret or not, a key or not, holds what the
/// method `m` needs.
#[cfg(not(fuzz_planted))]
fn holds(m: &AuthMethod, has_secret: bool, has_key: bool) -> bool {
    match m {
        AuthMethod::SecretBasic | AuthMethod::SecretPost => has_secret,
        AuthMethod::PrivateKeyJwt => has_key,
        AuthMethod::None => true,
    }
}

/// The bug `cargo xtask fuzz --planted` builds in, for the `oauth` target
/// to find: the method a registration names is taken as it is, a secret
/// method without a secret or `private_key_jwt` without a key included.
#[cfg(fuzz_planted)]
fn holds(_m: &AuthMethod, _has_secret: bool, _has_key: bool) -> bool {
    true
}

#[derive(Deserialize)]
struct RegistrationResponse {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

/// The client's identity at the server `metadata` describes.
pub(crate) async fn identify(
    fetcher: &Fetcher,
    profile: &ClientProfile,
    metadata: &ServerMetadata,
) -> Result<Registration, AuthError> {
    let supported = metadata.token_endpoint_auth_methods_supported.as_deref();
    if let Some(pre) = pre_registered_for(profile, metadata)? {
        let method = choose_method(
            None,
            supported,
            pre.client_secret.is_some(),
            pre.private_key.is_some(),
        );
        return Ok(Registration {
            issuer: metadata.issuer.clone(),
            client_id: pre.client_id.clone(),
            client_secret: pre.client_secret.clone(),
            private_key: pre.private_key.clone(),
            method,
        });
    }
    if let Some(url) = &profile.metadata_url
        && metadata.client_id_metadata_document_supported
    {
        tracing::debug!(client_id = %url, "client ID metadata document");
        return Ok(Registration {
            issuer: metadata.issuer.clone(),
            client_id: url.clone(),
            client_secret: None,
            private_key: None,
            method: AuthMethod::None,
        });
    }
    let Some(endpoint) = &metadata.registration_endpoint else {
        return Err(AuthError::Refused(format!(
            "no client identity for {}: no pre-registered credentials, no client ID metadata document, no registration endpoint",
            metadata.issuer
        )));
    };
    let wanted = choose_method(None, supported, true, false);
    let body = json!({
        "client_name": profile.client_name,
        "redirect_uris": [profile.redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": wanted.as_str(),
        "application_type": application_type(&profile.redirect_uri),
    });
    let answer = fetcher.post_json(endpoint, &body).await?;
    if !answer.status.is_success() {
        return Err(AuthError::Protocol(format!(
            "registration at {endpoint} answered {}",
            answer.status
        )));
    }
    let registration = registered(&answer.body, &metadata.issuer, supported)?;
    tracing::debug!(issuer = %metadata.issuer, method = registration.method.as_str(), "registered");
    Ok(registration)
}

/// The identity a registration response (RFC 7591 §3.2.1) gives the
/// client at `issuer`, whose token endpoint takes the `supported` methods.
pub(crate) fn registered(
    body: &[u8],
    issuer: &str,
    supported: Option<&[String]>,
) -> Result<Registration, AuthError> {
    let registered: RegistrationResponse = read_json(body, "the registration response")?;
    let secret = registered
        .client_secret
        .filter(|s| !s.is_empty())
        .map(Secret::new);
    let method = choose_method(
        registered.token_endpoint_auth_method.as_deref(),
        supported,
        secret.is_some(),
        false,
    );
    Ok(Registration {
        issuer: issuer.to_owned(),
        client_id: registered.client_id,
        client_secret: secret,
        private_key: None,
        method,
    })
}

/// `native` for a client whose redirect is on loopback or a custom
/// scheme (desktop, CLI), `web` for one hosted at an https URL.
fn application_type(redirect_uri: &str) -> &'static str {
    match url::Url::parse(redirect_uri) {
        Ok(u) if u.scheme() == "https" && !crate::fetch::is_loopback(&u) => "web",
        _ => "native",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_method_follows_the_registration_then_the_server() {
        let basic_post = list(&["client_secret_basic", "client_secret_post"]);
        assert_eq!(
            choose_method(Some("client_secret_post"), Some(&basic_post), true, false),
            AuthMethod::SecretPost
        );
        assert_eq!(
            choose_method(None, Some(&basic_post), true, false),
            AuthMethod::SecretBasic
        );
        assert_eq!(
            choose_method(None, Some(&list(&["none"])), false, false),
            AuthMethod::None
        );
        assert_eq!(
            choose_method(None, None, true, false),
            AuthMethod::SecretBasic
        );
        assert_eq!(
            choose_method(None, Some(&list(&["private_key_jwt"])), false, true),
            AuthMethod::PrivateKeyJwt
        );
    }

    #[test]
    fn application_type_by_redirect() {
        assert_eq!(application_type("http://127.0.0.1:9/cb"), "native");
        assert_eq!(application_type("https://app.example.com/cb"), "web");
    }
}
