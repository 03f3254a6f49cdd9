//! [`OAuthProvider`] on the wire: the [`HeaderProvider`] the transport's
//! authorization layer asks (tokens on requests to the MCP server's
//! origin, the answers to its challenges, its DPoP nonces), and a
//! `tower::Layer` of its own for any `tower` HTTP client.

use std::sync::Arc;
use std::time::Instant;

use futures::future::BoxFuture;
use http::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderValue};
use mcp_transport_http::{AuthChallenge, AuthorizationLayer, Authorized, BoxError, HeaderProvider};
use tower::Layer;

use crate::AuthError;
use crate::challenge::BearerChallenge;
use crate::dpop::USE_DPOP_NONCE;
use crate::origin::origin;
use crate::provider::OAuthProvider;

/// The provider as a `tower` layer over any HTTP client that takes a
/// [`RequestBody`](mcp_transport_http::RequestBody): its tokens on every
/// hop to the MCP server's origin, its answers to the server's
/// challenges, and same-origin redirects followed inside (see
/// [`Authorized`]), at most
/// [`DEFAULT_MAX_REDIRECTS`](mcp_transport_http::DEFAULT_MAX_REDIRECTS).
/// For the MCP transport itself, hand the provider to
/// [`HttpTransportBuilder::header_provider`](mcp_transport_http::HttpTransportBuilder::header_provider),
/// which puts this layer on with the transport's redirect limit.
///
/// ```no_run
/// use tower::Layer;
/// use mcp_auth::{HeadlessAuthorizer, OAuthProvider};
/// use mcp_transport_http::{HttpService, HttpTransportBuilder};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let url = "https://mcp.example.com/mcp";
/// let client = HttpTransportBuilder::new(url).http_service()?;
/// let oauth = OAuthProvider::builder(url)
///     .authorizer(HeadlessAuthorizer::new(client.clone()))
///     .build(client.clone())?;
/// // Any request through `authorized` to the MCP server carries the token.
/// let authorized = HttpService::new(oauth.layer(client));
/// # let _ = authorized;
/// # Ok(())
/// # }
/// ```
impl<S> Layer<S> for OAuthProvider {
    type Service = Authorized<S>;

    fn layer(&self, inner: S) -> Authorized<S> {
        AuthorizationLayer::new(Arc::new(self.clone())).layer(inner)
    }
}

impl HeaderProvider for OAuthProvider {
    fn headers(
        &self,
        request: &http::request::Parts,
    ) -> BoxFuture<'static, Result<HeaderMap, BoxError>> {
        let inner = self.inner.clone();
        let asked = Instant::now();
        let (method, uri) = (request.method.clone(), request.uri.to_string());
        // Only the MCP server's own origin ever sees the token.
        let same_origin = origin(&uri).as_deref() == Some(&inner.origin);
        Box::pin(async move {
            let mut headers = HeaderMap::new();
            if !same_origin {
                return Ok(headers);
            }
            let mut state = inner.lock_state().await;
            let expiring = state.session.as_ref().is_some_and(|s| {
                s.tokens.refresh.is_some()
                    && s.tokens.refresh_at.is_some_and(|at| at <= Instant::now())
            });
            if expiring {
                // A refresh that failed while this request waited is not
                // tried again at once by every waiting request.
                if let Some((at, cause)) = &state.refresh_unavailable
                    && *at > asked
                {
                    let cause = cause.clone();
                    return Err(AuthError::RefreshUnavailable { cause }.into());
                }
                match inner.refresh_shared(&mut state).await {
                    Ok(()) => {}
                    // The login is kept; the request fails with nothing
                    // sent, and may be sent again.
                    Err(e @ AuthError::RefreshUnavailable { .. }) => {
                        inner.remember(&e);
                        return Err(e.into());
                    }
                    // A refused refresh leaves no token; the 401 that
                    // follows runs the flow.
                    Err(_) => {}
                }
            }
            if let Some(session) = &state.session {
                let token = session.tokens.access.expose();
                // A DPoP-bound token goes with the DPoP scheme and a proof
                // of its own for this very request (RFC 9449 §7.1).
                let scheme = match inner.dpop.as_ref().filter(|_| session.tokens.bound) {
                    Some(dpop) => {
                        let proof = dpop.proof(method.as_str(), &uri, Some(token))?;
                        let mut proof = HeaderValue::from_str(&proof)?;
                        // Short-lived, but a replay within its window works.
                        proof.set_sensitive(true);
                        headers.insert("dpop", proof);
                        "DPoP"
                    }
                    None => "Bearer",
                };
                let mut value = HeaderValue::from_str(&format!("{scheme} {token}"))?;
                value.set_sensitive(true);
                headers.insert(AUTHORIZATION, value);
            }
            Ok(headers)
        })
    }

    fn on_response(&self, uri: &http::Uri, _status: http::StatusCode, headers: &HeaderMap) {
        self.keep_nonce(uri, headers);
    }

    fn on_challenge(&self, challenge: &AuthChallenge) -> BoxFuture<'static, bool> {
        let inner = self.inner.clone();
        let status = challenge.status;
        let refused_at = Instant::now();
        let same_origin = origin(&challenge.uri.to_string()).as_deref() == Some(&inner.origin);
        // Every challenge of every `WWW-Authenticate` line: a `DPoP` one
        // need not come first.
        let lines: Vec<&str> = challenge
            .headers
            .get_all(WWW_AUTHENTICATE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        let parsed = if lines.is_empty() {
            challenge
                .www_authenticate
                .as_deref()
                .map(BearerChallenge::parse)
                .unwrap_or_default()
        } else {
            BearerChallenge::parse(&lines.join(", "))
        };
        // RFC 9449 §9: the proof lacked the server's nonce, which came with
        // the refusal: the same token with a new proof is the answer.
        let nonce_given = same_origin
            && inner
                .dpop
                .as_ref()
                .is_some_and(|d| d.observe(&challenge.uri.to_string(), &challenge.headers));
        let wants_nonce = status == 401 && parsed.error.as_deref() == Some(USE_DPOP_NONCE);
        Box::pin(async move {
            if !same_origin {
                return false;
            }
            if wants_nonce {
                let bound = inner
                    .lock_state()
                    .await
                    .session
                    .as_ref()
                    .is_some_and(|s| s.tokens.bound);
                tracing::debug!(nonce_given, bound, "the server wants a DPoP nonce");
                // Without a bound token yet, the flow runs as for any 401
                // (and its proofs then carry the nonce).
                if bound {
                    return nonce_given;
                }
            }
            match inner.answer(status, parsed, refused_at).await {
                Ok(again) => again,
                Err(e) => {
                    tracing::warn!(error = %e, "authorization did not go through");
                    inner.remember(&e);
                    false
                }
            }
        })
    }
}

impl OAuthProvider {
    /// Keeps the `DPoP-Nonce` of any answer of the MCP server (RFC 9449
    /// §9: a server may hand out a new one at any time).
    fn keep_nonce(&self, uri: &http::Uri, headers: &HeaderMap) {
        if let Some(dpop) = &self.inner.dpop {
            let uri = uri.to_string();
            if origin(&uri).as_deref() == Some(&self.inner.origin) {
                dpop.observe(&uri, headers);
            }
        }
    }
}
