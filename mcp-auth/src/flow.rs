//! The grants, on `oauth2`: authorization code with PKCE S256, refresh,
//! client credentials; each token request authenticated as the
//! registration says.

use std::time::{Duration, Instant};

use oauth2::basic::{BasicClient, BasicErrorResponse, BasicTokenResponse};
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, PkceCodeChallenge,
    RedirectUrl, RefreshToken, RequestTokenError, Scope, TokenResponse, TokenUrl,
};

use crate::client::{AuthMethod, Registration};
use crate::fetch::{FetchError, Fetcher};
use crate::metadata::ServerMetadata;
use crate::secret::Secret;
use crate::{AuthError, Authorizer};

/// Tokens for one resource from one issuer.
#[derive(Clone, Debug)]
pub(crate) struct TokenSet {
    pub(crate) access: Secret,
    pub(crate) refresh: Option<Secret>,
    /// When to refresh it: a little before it expires.
    pub(crate) refresh_at: Option<Instant>,
    /// Granted (or, when the server does not say, requested) scopes.
    pub(crate) scopes: Vec<String>,
    /// `token_type: DPoP`: sent with the DPoP scheme and a proof (RFC 9449 §7.1).
    pub(crate) bound: bool,
}

/// What one authorization needs besides the registration.
pub(crate) struct CodeRequest<'a> {
    pub(crate) metadata: &'a ServerMetadata,
    pub(crate) resource: Option<&'a str>,
    pub(crate) scopes: &'a [String],
    pub(crate) redirect_uri: &'a str,
    /// Refuse a server whose metadata does not list S256 (2025-11-25 on);
    /// off only for the 2025-03-26 fallback, which has no metadata rule.
    pub(crate) require_listed_pkce: bool,
}

fn url_error(what: &str) -> impl Fn(url::ParseError) -> AuthError + '_ {
    move |e| AuthError::Protocol(format!("{what} is not a URL: {e}"))
}

fn client(reg: &Registration) -> BasicClient {
    let mut client = BasicClient::new(ClientId::new(reg.client_id.clone()));
    match (&reg.method, &reg.client_secret) {
        (AuthMethod::SecretBasic, Some(secret)) => {
            client = client
                .set_client_secret(ClientSecret::new(secret.expose().to_owned()))
                .set_auth_type(AuthType::BasicAuth);
        }
        (AuthMethod::SecretPost, Some(secret)) => {
            client = client
                .set_client_secret(ClientSecret::new(secret.expose().to_owned()))
                .set_auth_type(AuthType::RequestBody);
        }
        // `none` and `private_key_jwt`: the id in the body and no secret
        // field at all.
        _ => client = client.set_auth_type(AuthType::RequestBody),
    }
    client
}

/// The extra form fields of every token request: `resource`, and the
/// client assertion for `private_key_jwt`.
fn extra_params(
    reg: &Registration,
    resource: Option<&str>,
) -> Result<Vec<(&'static str, String)>, AuthError> {
    let mut params = Vec::new();
    if let Some(r) = resource {
        params.push(("resource", r.to_owned()));
    }
    if reg.method == AuthMethod::PrivateKeyJwt {
        let key = reg
            .private_key
            .as_ref()
            .ok_or_else(|| AuthError::Config("private_key_jwt without a private key".into()))?;
        params.push((
            "client_assertion_type",
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
        ));
        params.push((
            "client_assertion",
            key.assertion(&reg.client_id, &reg.issuer)?,
        ));
    }
    Ok(params)
}

fn grant_error(e: RequestTokenError<FetchError, BasicErrorResponse>) -> AuthError {
    match e {
        RequestTokenError::ServerResponse(r) => AuthError::Grant {
            error: r.error().as_ref().to_owned(),
            description: r.error_description().cloned(),
        },
        RequestTokenError::Request(e) if e.refused => AuthError::Refused(e.message),
        RequestTokenError::Request(e) => AuthError::Http(e.message),
        RequestTokenError::Parse(e, _) => {
            AuthError::Protocol(format!("the token response is not what OAuth says: {e}"))
        }
        RequestTokenError::Other(e) => AuthError::Protocol(format!("the token endpoint: {e}")),
    }
}

pub(crate) fn token_set(response: &BasicTokenResponse, requested: &[String]) -> TokenSet {
    TokenSet {
        access: Secret::new(response.access_token().secret().clone()),
        refresh: response
            .refresh_token()
            .map(|r| Secret::new(r.secret().clone())),
        refresh_at: response.expires_in().map(|d| {
            let d = d.min(Duration::from_secs(10 * 365 * 86_400));
            // Ahead of expiry by 30 s, or a tenth of a short lifetime, so
            // that a token is not refreshed at every use.
            Instant::now() + d - (d / 10).min(Duration::from_secs(30))
        }),
        scopes: response.scopes().map_or_else(
            || requested.to_vec(),
            |s| s.iter().map(|s| s.to_string()).collect(),
        ),
        bound: response.token_type().as_ref().eq_ignore_ascii_case("dpop"),
    }
}

/// Authorization code with PKCE S256: the URL to the authorizer, the
/// redirect checked (`state`, then `iss` by RFC 9207), then the code to
/// the token endpoint.
pub(crate) async fn authorization_code(
    fetcher: &Fetcher,
    authorizer: &dyn Authorizer,
    reg: &Registration,
    req: CodeRequest<'_>,
) -> Result<TokenSet, AuthError> {
    let metadata = req.metadata;
    match &metadata.code_challenge_methods_supported {
        Some(methods) if methods.iter().any(|m| m == "S256") => {}
        None if !req.require_listed_pkce => {}
        _ => {
            return Err(AuthError::Refused(format!(
                "{} does not say it supports PKCE with S256",
                metadata.issuer
            )));
        }
    }
    let endpoint = metadata.authorization_endpoint.as_deref().ok_or_else(|| {
        AuthError::Protocol(format!("{} has no authorization endpoint", metadata.issuer))
    })?;
    fetcher.check_url(endpoint)?;
    // The authorizer opens this URL (the headless one fetches it itself,
    // with no policy of its own): a server that names an internal address
    // as its authorization endpoint is refused here, as any other URL it
    // hands out is.
    fetcher.addresses.check(endpoint).await?;
    fetcher.check_url(&metadata.token_endpoint)?;
    let client = client(reg)
        .set_auth_uri(
            AuthUrl::new(endpoint.to_owned()).map_err(url_error("the authorization endpoint"))?,
        )
        .set_token_uri(
            TokenUrl::new(metadata.token_endpoint.clone())
                .map_err(url_error("the token endpoint"))?,
        )
        .set_redirect_uri(
            RedirectUrl::new(req.redirect_uri.to_owned()).map_err(url_error("the redirect URI"))?,
        );
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let mut authorize = client
        .authorize_url(CsrfToken::new_random)
        .set_pkce_challenge(challenge)
        .add_scopes(req.scopes.iter().map(|s| Scope::new(s.clone())));
    if let Some(r) = req.resource {
        authorize = authorize.add_extra_param("resource", r);
    }
    let (url, state) = authorize.url();
    tracing::debug!(issuer = %metadata.issuer, scopes = ?req.scopes, "authorization request");
    let redirect = authorizer
        .authorize(url.to_string())
        .await
        .map_err(|e| AuthError::Authorizer(e.to_string()))?;
    let code = read_redirect(&redirect, state.secret(), metadata)?;
    let http = |request| {
        let fetcher = fetcher.clone();
        async move { fetcher.oauth2(request).await }
    };
    let mut exchange = client
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(verifier);
    for (name, value) in extra_params(reg, req.resource)? {
        exchange = exchange.add_extra_param(name, value);
    }
    let response = exchange.request_async(&http).await.map_err(grant_error)?;
    Ok(token_set(&response, req.scopes))
}

/// The code from the redirect, once `state` and `iss` are right.
fn read_redirect(
    redirect: &str,
    state: &str,
    metadata: &ServerMetadata,
) -> Result<String, AuthError> {
    let url = url::Url::parse(redirect)
        .map_err(|e| AuthError::Protocol(format!("the redirect is not a URL: {e}")))?;
    let get = |name: &str| {
        url.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    if get("state").as_deref() != Some(state) {
        return Err(AuthError::Refused(
            "the authorization response's state is missing or not ours".into(),
        ));
    }
    match get("iss") {
        Some(iss) if iss != metadata.issuer => {
            // A response from another issuer: nothing in it is acted on.
            return Err(AuthError::Refused(format!(
                "the authorization response comes from {iss}, not {}",
                metadata.issuer
            )));
        }
        None if metadata.authorization_response_iss_parameter_supported => {
            return Err(AuthError::Refused(
                "the authorization response has no iss, which its server promised".into(),
            ));
        }
        _ => {}
    }
    if let Some(error) = get("error") {
        return Err(AuthError::Grant {
            error,
            description: get("error_description"),
        });
    }
    get("code").ok_or_else(|| AuthError::Protocol("the authorization response has no code".into()))
}

/// A refresh, with the same `resource` and client authentication as the
/// grant that issued the token.
pub(crate) async fn refresh(
    fetcher: &Fetcher,
    reg: &Registration,
    token_endpoint: &str,
    resource: Option<&str>,
    refresh_token: &Secret,
    scopes: &[String],
) -> Result<TokenSet, AuthError> {
    fetcher.check_url(token_endpoint)?;
    let client = client(reg).set_token_uri(
        TokenUrl::new(token_endpoint.to_owned()).map_err(url_error("the token endpoint"))?,
    );
    let http = |request| {
        let fetcher = fetcher.clone();
        async move { fetcher.oauth2(request).await }
    };
    let token = RefreshToken::new(refresh_token.expose().to_owned());
    let mut request = client.exchange_refresh_token(&token);
    for (name, value) in extra_params(reg, resource)? {
        request = request.add_extra_param(name, value);
    }
    let response = request.request_async(&http).await.map_err(grant_error)?;
    let mut set = token_set(&response, scopes);
    // A server that does not rotate keeps the old refresh token valid.
    if set.refresh.is_none() {
        set.refresh = Some(refresh_token.clone());
    }
    Ok(set)
}

/// The client credentials grant (machine to machine).
pub(crate) async fn client_credentials(
    fetcher: &Fetcher,
    reg: &Registration,
    token_endpoint: &str,
    resource: Option<&str>,
    scopes: &[String],
) -> Result<TokenSet, AuthError> {
    fetcher.check_url(token_endpoint)?;
    let client = client(reg).set_token_uri(
        TokenUrl::new(token_endpoint.to_owned()).map_err(url_error("the token endpoint"))?,
    );
    let http = |request| {
        let fetcher = fetcher.clone();
        async move { fetcher.oauth2(request).await }
    };
    let mut request = client
        .exchange_client_credentials()
        .add_scopes(scopes.iter().map(|s| Scope::new(s.clone())));
    for (name, value) in extra_params(reg, resource)? {
        request = request.add_extra_param(name, value);
    }
    let response = request.request_async(&http).await.map_err(grant_error)?;
    Ok(token_set(&response, scopes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(iss_supported: bool) -> ServerMetadata {
        serde_json::from_value(serde_json::json!({
            "issuer": "http://127.0.0.1:9",
            "token_endpoint": "http://127.0.0.1:9/token",
            "authorization_response_iss_parameter_supported": iss_supported,
        }))
        .unwrap()
    }

    #[test]
    fn the_redirect_is_checked_by_state_then_iss() {
        let m = metadata(true);
        let ok = "http://127.0.0.1:1/cb?code=c&state=s&iss=http%3A%2F%2F127.0.0.1%3A9";
        assert_eq!(read_redirect(ok, "s", &m).unwrap(), "c");
        assert!(read_redirect(ok, "other", &m).is_err());
        assert!(read_redirect("http://127.0.0.1:1/cb?code=c&state=s", "s", &m).is_err());
        let slash = "http://127.0.0.1:1/cb?code=c&state=s&iss=http%3A%2F%2F127.0.0.1%3A9%2F";
        assert!(read_redirect(slash, "s", &m).is_err());
        let m = metadata(false);
        assert_eq!(
            read_redirect("http://127.0.0.1:1/cb?code=c&state=s", "s", &m).unwrap(),
            "c"
        );
        let evil = "http://127.0.0.1:1/cb?code=c&state=s&iss=https%3A%2F%2Fevil.example.com";
        assert!(read_redirect(evil, "s", &m).is_err());
    }
}
