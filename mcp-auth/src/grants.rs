//! The assertion grants: the JWT-bearer grant (RFC 7523 §2.1) that turns
//! an assertion into an access token, and the token exchange (RFC 8693)
//! that turns an ID token into an ID-JAG for it. Neither is a grant
//! `oauth2` knows, so they are form requests of their own, authenticated
//! as the client's registration says.

use std::sync::Mutex;

use base64::Engine;
use bytes::Bytes;
use http::{Method, header};
use oauth2::basic::BasicTokenResponse;
use serde::Deserialize;

use crate::client::{
    AuthMethod, ClientProfile, Registration, identify, pre_registered_for, same_issuer,
};
use crate::enterprise::EnterpriseIdp;
use crate::fetch::Fetcher;
use crate::flow::{TokenSet, token_set};
use crate::metadata::ServerMetadata;
use crate::{AuthError, JwtSource, Secret};

/// `grant_type` of the JWT-bearer grant.
pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// `grant_type` of the token exchange.
pub(crate) const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The token type of an Identity Assertion JWT Authorization Grant.
pub(crate) const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// The token type of an OpenID Connect ID token.
pub(crate) const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";

/// How the provider gets its tokens when it presents an assertion instead
/// of running the authorization code flow.
#[derive(Debug)]
pub(crate) struct AssertionGrant {
    kind: Kind,
    /// The authorization server a workload's JWT may go to, if the
    /// application named it; else the JWT's own `aud` must name it.
    pub(crate) issuer: Option<String>,
    /// The last subject token (with the scopes asked) a server refused:
    /// it is never presented again, so a refusal is not retried at every
    /// request. A source that hands over a new token is tried again.
    refused: Mutex<Option<(Secret, Vec<String>)>>,
}

#[derive(Debug)]
enum Kind {
    /// Enterprise-managed authorization: the IdP's ID token exchanged for
    /// an ID-JAG, the ID-JAG presented to the MCP server's AS.
    Enterprise(EnterpriseIdp),
    /// Workload identity: the workload's own JWT presented to the AS.
    Workload(JwtSource),
}

impl AssertionGrant {
    pub(crate) fn enterprise(idp: EnterpriseIdp) -> Self {
        AssertionGrant {
            kind: Kind::Enterprise(idp),
            issuer: None,
            refused: Mutex::new(None),
        }
    }

    pub(crate) fn workload(source: JwtSource) -> Self {
        AssertionGrant {
            kind: Kind::Workload(source),
            issuer: None,
            refused: Mutex::new(None),
        }
    }

    /// The client's identity at the AS: the pre-registered credentials
    /// when there are some; else, for a workload, none at all (the JWT is
    /// the credential, RFC 7523 §3.1 makes client authentication optional).
    pub(crate) async fn identify(
        &self,
        fetcher: &Fetcher,
        profile: &ClientProfile,
        metadata: &ServerMetadata,
    ) -> Result<Registration, AuthError> {
        let pre = pre_registered_for(profile, metadata)?;
        match (&self.kind, pre) {
            (_, Some(_)) => identify(fetcher, profile, metadata).await,
            (Kind::Workload(_), None) => Ok(Registration {
                issuer: metadata.issuer.clone(),
                client_id: String::new(),
                client_secret: None,
                private_key: None,
                method: AuthMethod::None,
            }),
            (Kind::Enterprise(_), None) => Err(AuthError::Config(format!(
                "enterprise-managed authorization needs the client's credentials at {}",
                metadata.issuer
            ))),
        }
    }

    /// Tokens for `resource` from the AS `metadata` describes.
    pub(crate) async fn tokens(
        &self,
        fetcher: &Fetcher,
        reg: &Registration,
        metadata: &ServerMetadata,
        resource: Option<&str>,
        mcp_url: &str,
        scopes: &[String],
    ) -> Result<TokenSet, AuthError> {
        let subject = match &self.kind {
            Kind::Enterprise(idp) => idp.id_token.token("the ID token source").await?,
            Kind::Workload(source) => source.token("the workload token source").await?,
        };
        if let Kind::Workload(_) = &self.kind {
            workload_may_go_to(&subject, self.issuer.as_deref(), metadata)?;
        }
        if let Ok(refused) = self.refused.lock()
            && refused
                .as_ref()
                .is_some_and(|(t, s)| *t == subject && s == scopes)
        {
            return Err(AuthError::Refused(
                "this token was refused already; the grant needs a new one".into(),
            ));
        }
        let outcome = match &self.kind {
            Kind::Enterprise(idp) => {
                // The ID-JAG names the resource; without resource metadata
                // (2025-03-26) that is the MCP server's URL.
                let id_jag = exchange_for_id_jag(
                    fetcher,
                    idp,
                    &subject,
                    &metadata.issuer,
                    resource.unwrap_or(mcp_url),
                    scopes,
                )
                .await;
                match id_jag {
                    Ok(id_jag) => {
                        jwt_bearer(fetcher, reg, metadata, &id_jag, resource, scopes).await
                    }
                    Err(e) => Err(e),
                }
            }
            Kind::Workload(_) => {
                jwt_bearer(fetcher, reg, metadata, &subject, resource, scopes).await
            }
        };
        if let Err(AuthError::Grant { error, .. }) = &outcome {
            tracing::debug!(%error, "the assertion was refused; it is not presented again");
            if let Ok(mut refused) = self.refused.lock() {
                *refused = Some((subject, scopes.to_vec()));
            }
        }
        outcome
    }
}

/// Whether the workload's JWT may go to the server `metadata` describes:
/// the issuer the application named, else one the JWT's `aud` names
/// (its issuer or token endpoint). A platform token is a credential for
/// what its audience says, not for whatever server a resource names.
fn workload_may_go_to(
    jwt: &Secret,
    configured: Option<&str>,
    metadata: &ServerMetadata,
) -> Result<(), AuthError> {
    if let Some(issuer) = configured {
        if same_issuer(issuer, &metadata.issuer) {
            return Ok(());
        }
        return Err(AuthError::Refused(format!(
            "the workload identity is for {issuer}, but the MCP server's metadata names the \
             authorization server {}: its token is not sent there",
            metadata.issuer
        )));
    }
    let audience = audience(jwt.expose());
    if audience
        .iter()
        .any(|a| same_issuer(a, &metadata.issuer) || same_issuer(a, &metadata.token_endpoint))
    {
        return Ok(());
    }
    Err(AuthError::Refused(format!(
        "the workload token's audience ({audience:?}) does not name {}, the authorization server \
         the MCP server's metadata names: the token is not sent there (if that server is the \
         right one, name it with OAuthProviderBuilder::issuer)",
        metadata.issuer
    )))
}

/// The `aud` of a JWT, read without checking its signature (it only
/// decides where the token may go, never whether it is trusted).
fn audience(jwt: &str) -> Vec<String> {
    let Some(payload) = jwt.split('.').nth(1) else {
        return Vec::new();
    };
    let Ok(bytes) =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload.trim_end_matches('='))
    else {
        return Vec::new();
    };
    let claims: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
    match &claims["aud"] {
        serde_json::Value::String(a) => vec![a.clone()],
        serde_json::Value::Array(list) => list
            .iter()
            .filter_map(|a| a.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// The JWT-bearer grant: `assertion` for an access token.
async fn jwt_bearer(
    fetcher: &Fetcher,
    reg: &Registration,
    metadata: &ServerMetadata,
    assertion: &Secret,
    resource: Option<&str>,
    scopes: &[String],
) -> Result<TokenSet, AuthError> {
    let mut params = vec![
        ("grant_type", JWT_BEARER.to_owned()),
        ("assertion", assertion.expose().to_owned()),
    ];
    if let Some(r) = resource {
        params.push(("resource", r.to_owned()));
    }
    if !scopes.is_empty() {
        params.push(("scope", scopes.join(" ")));
    }
    tracing::debug!(issuer = %metadata.issuer, scopes = ?scopes, "JWT-bearer grant");
    let answer = token_request(fetcher, &metadata.token_endpoint, reg, params).await?;
    let response: BasicTokenResponse = answer.json("the token response")?;
    Ok(token_set(&response, scopes))
}

#[derive(Deserialize)]
struct ExchangeResponse {
    access_token: String,
    #[serde(default)]
    issued_token_type: Option<String>,
}

/// The token exchange at the IdP: the ID token for an ID-JAG whose
/// audience is the MCP server's AS and whose resource is the MCP server.
async fn exchange_for_id_jag(
    fetcher: &Fetcher,
    idp: &EnterpriseIdp,
    id_token: &Secret,
    audience: &str,
    resource: &str,
    scopes: &[String],
) -> Result<Secret, AuthError> {
    let mut params = vec![
        ("grant_type", TOKEN_EXCHANGE.to_owned()),
        ("requested_token_type", ID_JAG.to_owned()),
        ("audience", audience.to_owned()),
        ("resource", resource.to_owned()),
        ("subject_token", id_token.expose().to_owned()),
        ("subject_token_type", ID_TOKEN.to_owned()),
    ];
    if !scopes.is_empty() {
        params.push(("scope", scopes.join(" ")));
    }
    tracing::debug!(idp = %idp.token_endpoint, %audience, %resource, "token exchange for an ID-JAG");
    // The ID-JAG is not bound to a key: no DPoP proof at the IdP.
    let idp_fetcher = fetcher.with_dpop(None);
    let answer = token_request(
        &idp_fetcher,
        &idp.token_endpoint,
        &idp.registration(),
        params,
    )
    .await?;
    let response: ExchangeResponse = answer.json("the token exchange response")?;
    match response.issued_token_type.as_deref() {
        None | Some(ID_JAG) => {}
        Some(other) => {
            return Err(AuthError::Protocol(format!(
                "the IdP issued a {other}, not an ID-JAG"
            )));
        }
    }
    if response.access_token.is_empty() {
        return Err(AuthError::Protocol("the IdP issued an empty ID-JAG".into()));
    }
    Ok(Secret::new(response.access_token))
}

#[derive(Deserialize)]
struct ErrorResponse {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

/// A form POST to a token endpoint, the client authenticated as `reg`
/// says (RFC 6749 §2.3, RFC 7523 §2.2); the answer if it is a success.
pub(crate) async fn token_request(
    fetcher: &Fetcher,
    endpoint: &str,
    reg: &Registration,
    mut params: Vec<(&'static str, String)>,
) -> Result<crate::fetch::Answer, AuthError> {
    fetcher.check_url(endpoint)?;
    let mut request = http::Request::builder()
        .method(Method::POST)
        .uri(endpoint)
        .header(header::ACCEPT, "application/json")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
    let has_id = !reg.client_id.is_empty();
    match (&reg.method, &reg.client_secret) {
        (AuthMethod::SecretBasic, Some(secret)) => {
            // RFC 6749 §2.3.1: each part form-encoded before base64.
            let encode = |s: &str| -> String {
                url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
            };
            let pair = format!("{}:{}", encode(&reg.client_id), encode(secret.expose()));
            let basic = base64::engine::general_purpose::STANDARD.encode(pair);
            let mut value = http::HeaderValue::from_str(&format!("Basic {basic}"))
                .map_err(|_| AuthError::Config("the client secret is not a header value".into()))?;
            value.set_sensitive(true);
            request = request.header(header::AUTHORIZATION, value);
        }
        (AuthMethod::SecretPost, Some(secret)) => {
            params.push(("client_id", reg.client_id.clone()));
            params.push(("client_secret", secret.expose().to_owned()));
        }
        (AuthMethod::PrivateKeyJwt, _) => {
            let key = reg
                .private_key
                .as_ref()
                .ok_or_else(|| AuthError::Config("private_key_jwt without a private key".into()))?;
            if has_id {
                params.push(("client_id", reg.client_id.clone()));
            }
            params.push((
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
            ));
            params.push((
                "client_assertion",
                key.assertion(&reg.client_id, &reg.issuer)?,
            ));
        }
        // `none` (or a method without its secret): the id alone, if any.
        _ if has_id => params.push(("client_id", reg.client_id.clone())),
        _ => {}
    }
    let body: String = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(params.iter().map(|(k, v)| (*k, v.as_str())))
        .finish();
    let request = request
        .body(Bytes::from(body))
        .map_err(|e| AuthError::Protocol(format!("{endpoint:?} is not a usable URL: {e}")))?;
    let answer = fetcher.token_request(request).await?;
    if answer.status.is_success() {
        return Ok(answer);
    }
    Err(grant_error(&answer.body)
        .unwrap_or_else(|| AuthError::Protocol(format!("{endpoint} answered {}", answer.status))))
}

/// The error a token endpoint's error response (RFC 6749 §5.2) names, if
/// the body is one.
pub(crate) fn grant_error(body: &[u8]) -> Option<AuthError> {
    let e = serde_json::from_slice::<ErrorResponse>(body).ok()?;
    Some(AuthError::Grant {
        error: e.error,
        description: e.error_description,
    })
}
