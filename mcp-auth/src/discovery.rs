//! Discovery: protected resource metadata (RFC 9728) and authorization
//! server metadata (RFC 8414, OpenID Connect Discovery), with the spec's
//! URL orders and checks.

use crate::AuthError;
use crate::challenge::BearerChallenge;
use crate::client::{choose_issuer, same_issuer};
use crate::fetch::Fetcher;
use crate::metadata::{ResourceMetadata, ServerMetadata};
use crate::origin::origin;

/// What discovery found for one authorization.
pub(crate) struct Discovered {
    /// The protected resource metadata; `None` for a server from before
    /// RFC 9728 (2025-03-26), whose origin is its authorization server.
    pub(crate) resource_metadata: Option<ResourceMetadata>,
    /// The authorization server's metadata, its issuer checked.
    pub(crate) server: ServerMetadata,
    /// The `resource` (RFC 8707) to name, as the metadata says it.
    pub(crate) resource: Option<String>,
    /// Whether the server must list PKCE S256 (all but the 2025-03-26
    /// fallback, which has no metadata rule).
    pub(crate) strict: bool,
}

/// Discovery for the MCP server at `mcp_url`: its resource metadata (from
/// the challenge's `resource_metadata`, else the well-known URLs), then
/// its authorization server's metadata (or the 2025-03-26 defaults).
/// `issuer`: the one this client is configured for, if any; another is
/// refused before anything is sent to it.
pub(crate) async fn discover(
    fetcher: &Fetcher,
    mcp_url: &str,
    issuer: Option<&str>,
    challenge: &BearerChallenge,
) -> Result<Discovered, AuthError> {
    let prm =
        fetch_resource_metadata(fetcher, mcp_url, challenge.resource_metadata.as_deref()).await?;
    let (server, resource, strict) = match &prm {
        Some(prm) => {
            let chosen = choose_issuer(&prm.authorization_servers, issuer)?;
            fetcher.check_url(chosen)?;
            let metadata = fetch_server_metadata(fetcher, chosen)
                .await?
                .ok_or_else(|| {
                    AuthError::Protocol(format!("{chosen} serves no authorization server metadata"))
                })?;
            (metadata, Some(prm.resource.clone()), true)
        }
        None => (legacy_server_metadata(fetcher, mcp_url).await?, None, false),
    };
    if let Some(want) = issuer
        && !same_issuer(want, &server.issuer)
    {
        return Err(AuthError::Refused(format!(
            "the MCP server's authorization server is {}, not {want}, the one this client is \
             configured for: nothing is sent to it",
            server.issuer
        )));
    }
    Ok(Discovered {
        resource_metadata: prm,
        server,
        resource,
        strict,
    })
}

impl Discovered {
    /// The scopes to ask for: `asked` (a step-up's union), else the
    /// challenge's, else those the resource metadata lists; with
    /// `offline_access` added for a grant with a person when the
    /// authorization server lists it.
    pub(crate) fn scopes(
        &self,
        challenge: &BearerChallenge,
        asked: Option<Vec<String>>,
        with_person: bool,
    ) -> Vec<String> {
        let mut scopes = asked.unwrap_or_else(|| {
            if !challenge.scope.is_empty() {
                challenge.scope.clone()
            } else {
                self.resource_metadata
                    .as_ref()
                    .and_then(|p| p.scopes_supported.clone())
                    .unwrap_or_default()
            }
        });
        let offline = "offline_access";
        if with_person
            && self
                .server
                .scopes_supported
                .as_ref()
                .is_some_and(|s| s.iter().any(|x| x == offline))
            && !scopes.iter().any(|s| s == offline)
        {
            scopes.push(offline.to_owned());
        }
        scopes
    }
}

/// The PRM URLs in the spec's order: the challenge's, then the path-based
/// well-known URL, then the root one.
pub(crate) fn resource_metadata_urls(mcp_url: &str, from_challenge: Option<&str>) -> Vec<String> {
    if let Some(url) = from_challenge {
        return vec![url.to_owned()];
    }
    let Ok(parsed) = url::Url::parse(mcp_url) else {
        return Vec::new();
    };
    let base = parsed.origin().ascii_serialization();
    let path = parsed.path().trim_end_matches('/');
    let mut urls = Vec::new();
    if !path.is_empty() {
        urls.push(format!("{base}/.well-known/oauth-protected-resource{path}"));
    }
    urls.push(format!("{base}/.well-known/oauth-protected-resource"));
    urls
}

/// The AS metadata URLs for `issuer`, in the spec's order. An issuer with
/// a path never gets the root URL (it would name another issuer).
pub(crate) fn server_metadata_urls(issuer: &str) -> Vec<String> {
    let Ok(parsed) = url::Url::parse(issuer) else {
        return Vec::new();
    };
    let base = parsed.origin().ascii_serialization();
    let path = parsed.path().trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{base}/.well-known/oauth-authorization-server"),
            format!("{base}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{base}/.well-known/oauth-authorization-server{path}"),
            format!("{base}/.well-known/openid-configuration{path}"),
            format!("{base}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// Whether the PRM `resource` may stand for `mcp_url`: the same origin,
/// and a path that is a prefix of the MCP URL's.
pub(crate) fn resource_allowed(resource: &str, mcp_url: &str) -> bool {
    let (Ok(r), Ok(m)) = (url::Url::parse(resource), url::Url::parse(mcp_url)) else {
        return false;
    };
    if r.origin() != m.origin() {
        return false;
    }
    let rp = r.path().trim_end_matches('/');
    let mp = m.path().trim_end_matches('/');
    mp == rp || mp.starts_with(&format!("{rp}/"))
}

/// Fetches the PRM, the first candidate that answers 200. `Ok(None)`:
/// none answered (a server from before RFC 9728).
pub(crate) async fn fetch_resource_metadata(
    fetcher: &Fetcher,
    mcp_url: &str,
    from_challenge: Option<&str>,
) -> Result<Option<ResourceMetadata>, AuthError> {
    for url in resource_metadata_urls(mcp_url, from_challenge) {
        let answer = fetcher.get(&url).await?;
        if answer.status.is_success() {
            let prm: ResourceMetadata = answer.json("the protected resource metadata")?;
            if !resource_allowed(&prm.resource, mcp_url) {
                return Err(AuthError::Refused(format!(
                    "the protected resource metadata names the resource {}, not {mcp_url}",
                    prm.resource
                )));
            }
            tracing::debug!(%url, resource = %prm.resource, "protected resource metadata");
            return Ok(Some(prm));
        }
        if from_challenge.is_some() {
            return Err(AuthError::Protocol(format!(
                "the challenge's resource_metadata {url} answered {}",
                answer.status
            )));
        }
        tracing::debug!(%url, status = %answer.status, "no protected resource metadata here");
    }
    Ok(None)
}

/// Fetches the AS metadata for `issuer`: the first candidate that answers
/// 200 with that very issuer. A document naming another issuer is not
/// used (RFC 8414 §3.3). `Ok(None)`: none answered.
pub(crate) async fn fetch_server_metadata(
    fetcher: &Fetcher,
    issuer: &str,
) -> Result<Option<ServerMetadata>, AuthError> {
    let mut mismatch = None;
    for url in server_metadata_urls(issuer) {
        let answer = fetcher.get(&url).await?;
        if answer.status.is_success() {
            let metadata: ServerMetadata = answer.json("the authorization server metadata")?;
            if metadata.issuer != issuer {
                tracing::warn!(%url, claimed = %metadata.issuer, expected = %issuer,
                    "authorization server metadata names another issuer; not used");
                mismatch = Some(metadata.issuer);
                continue;
            }
            tracing::debug!(%url, "authorization server metadata");
            return Ok(Some(metadata));
        }
        if answer.status.is_server_error() {
            return Err(AuthError::Http(format!("{url} answered {}", answer.status)));
        }
    }
    match mismatch {
        Some(claimed) => Err(AuthError::Refused(format!(
            "the authorization server metadata for {issuer} names the issuer {claimed}"
        ))),
        None => Ok(None),
    }
}

/// The 2025-03-26 fallback for a server without PRM: the MCP origin is the
/// authorization server, with `/authorize`, `/token` and `/register` when
/// it serves no metadata either.
pub(crate) async fn legacy_server_metadata(
    fetcher: &Fetcher,
    mcp_url: &str,
) -> Result<ServerMetadata, AuthError> {
    let base =
        origin(mcp_url).ok_or_else(|| AuthError::Protocol(format!("{mcp_url:?} is not a URL")))?;
    let url = format!("{base}/.well-known/oauth-authorization-server");
    let answer = fetcher.get(&url).await?;
    if answer.status.is_success() {
        let metadata: ServerMetadata = answer.json("the authorization server metadata")?;
        if metadata.issuer.trim_end_matches('/') != base {
            return Err(AuthError::Refused(format!(
                "the authorization server metadata at {url} names the issuer {}",
                metadata.issuer
            )));
        }
        return Ok(metadata);
    }
    if answer.status != http::StatusCode::NOT_FOUND {
        return Err(AuthError::Http(format!("{url} answered {}", answer.status)));
    }
    tracing::debug!("no authorization server metadata; the default endpoints");
    Ok(ServerMetadata {
        issuer: base.clone(),
        authorization_endpoint: Some(format!("{base}/authorize")),
        token_endpoint: format!("{base}/token"),
        registration_endpoint: Some(format!("{base}/register")),
        scopes_supported: None,
        code_challenge_methods_supported: None,
        token_endpoint_auth_methods_supported: None,
        authorization_response_iss_parameter_supported: false,
        client_id_metadata_document_supported: false,
        dpop_signing_alg_values_supported: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_metadata_in_the_spec_order() {
        assert_eq!(
            resource_metadata_urls("http://h:1/mcp", None),
            [
                "http://h:1/.well-known/oauth-protected-resource/mcp",
                "http://h:1/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            resource_metadata_urls("http://h:1", None),
            ["http://h:1/.well-known/oauth-protected-resource"]
        );
        assert_eq!(resource_metadata_urls("http://h:1/mcp", Some("x")), ["x"]);
    }

    #[test]
    fn server_metadata_never_at_the_root_for_an_issuer_with_a_path() {
        assert_eq!(
            server_metadata_urls("https://a/t1"),
            [
                "https://a/.well-known/oauth-authorization-server/t1",
                "https://a/.well-known/openid-configuration/t1",
                "https://a/t1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(server_metadata_urls("https://a").len(), 2);
    }

    #[test]
    fn a_resource_on_another_origin_or_path_is_refused() {
        assert!(resource_allowed("http://h:1", "http://h:1/mcp"));
        assert!(resource_allowed("http://h:1/mcp", "http://h:1/mcp"));
        assert!(!resource_allowed(
            "https://evil.example.com/mcp",
            "http://h:1/mcp"
        ));
        assert!(!resource_allowed("http://h:1/other", "http://h:1/mcp"));
        assert!(!resource_allowed("http://h:1/m", "http://h:1/mcp"));
    }
}
