//! The seam between the authorization layer and what authorizes: headers
//! added to every HTTP request, and the challenges (401, 403) a provider
//! may answer.

use futures::future::BoxFuture;
use http::{HeaderMap, Method, StatusCode, Uri};

use crate::error::BoxError;

/// Adds headers to every HTTP request the transport sends, each time it
/// sends one (redirect hops and `DELETE` included): the seam for
/// authorization, which may refresh a token before answering.
///
/// The [`AuthorizationLayer`](crate::AuthorizationLayer) asks it, and the
/// transport puts that layer over its [`HttpService`](crate::HttpService)
/// when given a provider with
/// [`header_provider`](crate::HttpTransportBuilder::header_provider).
///
/// Headers it returns replace configured ones of the same name. An error
/// fails the request with [`TransportError::Credentials`](mcp_transport::TransportError::Credentials) (nothing was
/// sent; the connection is kept).
///
/// ```
/// use futures::future::BoxFuture;
/// use http::{HeaderMap, HeaderValue, header::AUTHORIZATION};
/// use mcp_transport_http::{BoxError, HeaderProvider};
///
/// struct Token(String);
///
/// impl HeaderProvider for Token {
///     fn headers(&self, _request: &http::request::Parts) -> BoxFuture<'static, Result<HeaderMap, BoxError>> {
///         let mut headers = HeaderMap::new();
///         let value = format!("Bearer {}", self.0);
///         Box::pin(async move {
///             let mut value = HeaderValue::from_str(&value)?;
///             value.set_sensitive(true);
///             headers.insert(AUTHORIZATION, value);
///             Ok(headers)
///         })
///     }
/// }
/// # let _ = Token("t".into());
/// ```
pub trait HeaderProvider: Send + Sync + 'static {
    /// The headers to add to `request` (its method, URI and the headers
    /// it already has).
    fn headers(
        &self,
        request: &http::request::Parts,
    ) -> BoxFuture<'static, Result<HeaderMap, BoxError>>;

    /// Called when the server answers a request with 401 or 403, before
    /// the transport gives up with [`TransportError::AuthorizationRequired`](mcp_transport::TransportError::AuthorizationRequired).
    /// Answering `true` (after refreshing a token, say) sends the same
    /// request once more, with fresh [`headers`](Self::headers); a second
    /// 401 or 403 to that is the request's outcome. One kind of 401 has a
    /// try of its own besides: `WWW-Authenticate: DPoP
    /// error="use_dpop_nonce"` (RFC 9449 §9), which asks for nothing but a
    /// new proof with the nonce it gives, so that a token obtained for the
    /// first 401 can still meet the server's nonce. The default answers
    /// `false`: the challenge goes to the caller.
    ///
    /// While it runs, the timers of the connection's requests stand still
    /// (their hard maximums excepted): an authorization that needs a
    /// person has the time its own authorizer allows, not a request's
    /// timeout, nor the client's era probe's.
    fn on_challenge(&self, challenge: &AuthChallenge) -> BoxFuture<'static, bool> {
        let _ = challenge;
        Box::pin(async { false })
    }

    /// Sees the head of every answer to a request it gave headers for,
    /// before anything else is done with it (a DPoP provider keeps the
    /// `DPoP-Nonce` a server may send on any answer, RFC 9449 §9). The
    /// default does nothing.
    ///
    /// ```
    /// use futures::future::BoxFuture;
    /// use http::{HeaderMap, StatusCode, Uri};
    /// use mcp_transport_http::{BoxError, HeaderProvider};
    ///
    /// struct Watch;
    ///
    /// impl HeaderProvider for Watch {
    ///     fn headers(&self, _: &http::request::Parts) -> BoxFuture<'static, Result<HeaderMap, BoxError>> {
    ///         Box::pin(async { Ok(HeaderMap::new()) })
    ///     }
    ///     fn on_response(&self, uri: &Uri, status: StatusCode, headers: &HeaderMap) {
    ///         if let Some(nonce) = headers.get("dpop-nonce") {
    ///             println!("{uri} answered {status} with a new nonce {nonce:?}");
    ///         }
    ///     }
    /// }
    /// # let _ = Watch;
    /// ```
    fn on_response(&self, uri: &Uri, status: StatusCode, headers: &HeaderMap) {
        let _ = (uri, status, headers);
    }
}

/// Whether a `WWW-Authenticate` value is a DPoP challenge for a nonce
/// (RFC 9449 §9): the scheme `DPoP` and `error="use_dpop_nonce"`.
pub(crate) fn is_dpop_nonce_challenge(value: &str) -> bool {
    let value = value.trim_start();
    value
        .get(..5)
        .is_some_and(|s| s.eq_ignore_ascii_case("dpop "))
        && value.contains("use_dpop_nonce")
}

/// A 401 or 403 answer, as [`HeaderProvider::on_challenge`] sees it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AuthChallenge {
    /// 401 or 403.
    pub status: u16,
    /// The `WWW-Authenticate` header, if any (the first one).
    pub www_authenticate: Option<String>,
    /// The request's method.
    pub method: Method,
    /// The URL the request went to (the server's own origin: redirects to
    /// another are never followed).
    pub uri: Uri,
    /// All the answer's headers (`DPoP-Nonce` among them, RFC 9449 §9).
    pub headers: HeaderMap,
}

#[cfg(test)]
mod nonce_challenge_tests {
    use super::is_dpop_nonce_challenge;

    #[test]
    fn only_a_dpop_nonce_challenge_has_a_try_of_its_own() {
        assert!(is_dpop_nonce_challenge(
            r#"DPoP error="use_dpop_nonce", resource_metadata="https://h/p""#
        ));
        assert!(is_dpop_nonce_challenge(r#"dpop error="use_dpop_nonce""#));
        assert!(!is_dpop_nonce_challenge(
            r#"DPoP resource_metadata="https://h/p""#
        ));
        assert!(!is_dpop_nonce_challenge(r#"Bearer error="invalid_token""#));
        assert!(!is_dpop_nonce_challenge(r#"Bearer error="use_dpop_nonce""#));
    }
}
