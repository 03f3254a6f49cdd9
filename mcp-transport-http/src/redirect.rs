//! Same-origin redirects as a `tower` layer: 307 and 308 only (the two
//! that keep the method and body), to the request's own origin, a bounded
//! number of hops. A hop to another origin is refused, so nothing the
//! request carries (a token, a session id) is ever sent there.

use std::task::{Context, Poll};

use futures::future::BoxFuture;
use http::header::LOCATION;
use http::{HeaderValue, Request, Response, StatusCode, Uri};
use tower::{Layer, Service, ServiceExt};

use crate::error::BoxError;
use crate::service::RequestBody;
use crate::url::{Origin, resolve};

/// The default number of same-origin 307/308 redirects followed.
pub const DEFAULT_MAX_REDIRECTS: usize = 3;

/// A redirect that was not followed: to another origin, not 307/308,
/// without a usable `Location`, or one too many. Nothing was sent to its
/// `Location`. The transport reports it as
/// [`TransportError::RedirectRefused`](mcp_transport::TransportError::RedirectRefused).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RedirectRefused {
    /// The redirect's status.
    pub status: u16,
    /// Its `Location` header, as given.
    pub location: String,
    /// Why it was not followed.
    pub reason: String,
}

impl std::fmt::Display for RedirectRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "refused to follow a {} redirect to {}: {}",
            self.status,
            mcp_transport::record::redact_url(&self.location),
            self.reason
        )
    }
}

impl std::error::Error for RedirectRefused {}

/// Follows same-origin 307/308 redirects, at most `max_redirects` of them
/// (see [`SameOriginRedirects`]).
///
/// ```
/// use tower::Layer;
/// use mcp_transport_http::{HttpService, SameOriginRedirectsLayer};
///
/// # fn wrap(client: HttpService) -> HttpService {
/// HttpService::new(SameOriginRedirectsLayer::new(3).layer(client))
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct SameOriginRedirectsLayer {
    max_redirects: usize,
}

impl SameOriginRedirectsLayer {
    /// Follows at most `max_redirects` hops (0: none).
    pub fn new(max_redirects: usize) -> Self {
        SameOriginRedirectsLayer { max_redirects }
    }
}

impl Default for SameOriginRedirectsLayer {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_REDIRECTS)
    }
}

impl<S> Layer<S> for SameOriginRedirectsLayer {
    type Service = SameOriginRedirects<S>;

    fn layer(&self, inner: S) -> SameOriginRedirects<S> {
        SameOriginRedirects {
            inner,
            max_redirects: self.max_redirects,
        }
    }
}

/// A service that follows the redirects of the one it wraps, as far as
/// the request's own origin goes: a 307 or 308 whose `Location` is on the
/// same origin is sent again there (the same method, headers, extensions
/// and body); any other redirect fails the request with
/// [`RedirectRefused`], having sent nothing to its `Location`. The service
/// it wraps should not follow redirects itself.
#[derive(Clone, Debug)]
pub struct SameOriginRedirects<S> {
    inner: S,
    max_redirects: usize,
}

impl<S, B> Service<Request<RequestBody>> for SameOriginRedirects<S>
where
    S: Service<Request<RequestBody>, Response = Response<B>> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = Response<B>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Response<B>, BoxError>>;

    // Each hop readies its own clone of the inner service.
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<RequestBody>) -> Self::Future {
        Box::pin(follow(self.inner.clone(), request, self.max_redirects))
    }
}

/// Sends `request`, then each same-origin hop it is redirected to.
async fn follow<S, B>(
    inner: S,
    request: Request<RequestBody>,
    max_redirects: usize,
) -> Result<Response<B>, BoxError>
where
    S: Service<Request<RequestBody>, Response = Response<B>> + Clone,
    S::Error: Into<BoxError>,
{
    let (parts, body) = request.into_parts();
    let again = body.replay();
    let mut first = Some(body);
    let mut uri = parts.uri.clone();
    let mut hops = 0;
    loop {
        let body = first.take().unwrap_or_else(|| again.replay());
        let request = hop(&parts, uri.clone(), body);
        let response = inner.clone().oneshot(request).await.map_err(Into::into)?;
        // Nearly every answer is not a redirect: nothing more to work out.
        if !response.status().is_redirection() {
            return Ok(response);
        }
        let location = response.headers().get(LOCATION);
        let origin = Origin::of(&parts.uri);
        match next_hop(
            response.status(),
            location,
            &uri,
            origin.as_ref(),
            hops,
            max_redirects,
        )? {
            None => return Ok(response),
            Some(next) => {
                tracing::debug!(%next, "following a same-origin redirect");
                hops += 1;
                uri = next;
            }
        }
    }
}

/// The request of one hop: the original's method, version, headers and
/// extensions, sent to `uri` with `body`.
pub(crate) fn hop(
    parts: &http::request::Parts,
    uri: Uri,
    body: RequestBody,
) -> Request<RequestBody> {
    let mut request = Request::new(body);
    *request.method_mut() = parts.method.clone();
    *request.uri_mut() = uri;
    *request.version_mut() = parts.version;
    *request.headers_mut() = parts.headers.clone();
    *request.extensions_mut() = parts.extensions.clone();
    request
}

/// Where an answer with `status` and `location` sends a request that went
/// to `from` after `hops` redirects: nowhere (`None`, not a redirect),
/// the next hop, or a refusal.
fn next_hop(
    status: StatusCode,
    location: Option<&HeaderValue>,
    from: &Uri,
    origin: Option<&Origin>,
    hops: usize,
    max_redirects: usize,
) -> Result<Option<Uri>, RedirectRefused> {
    if !status.is_redirection() {
        return Ok(None);
    }
    let location = location
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let refuse = |reason: String| RedirectRefused {
        status: status.as_u16(),
        location: location.clone(),
        reason,
    };
    if status != StatusCode::TEMPORARY_REDIRECT && status != StatusCode::PERMANENT_REDIRECT {
        return Err(refuse(
            "only 307 and 308 keep the method and body, and only they are followed".into(),
        ));
    }
    let Some(next) = resolve(from, &location) else {
        return Err(refuse("its Location is not a valid URL".into()));
    };
    if origin.is_none() || Origin::of(&next).as_ref() != origin {
        tracing::warn!(
            location = %mcp_transport::record::redact_url(&location),
            "refused a redirect to another origin"
        );
        return Err(refuse(
            "it leads to another origin, where nothing was sent".into(),
        ));
    }
    if hops + 1 > max_redirects {
        return Err(refuse(format!("more than {max_redirects} redirects")));
    }
    Ok(Some(next))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Uri {
        s.parse().unwrap()
    }

    fn at(status: u16, location: &str, hops: usize) -> Result<Option<Uri>, RedirectRefused> {
        let from = u("https://h.example/mcp");
        let origin = Origin::of(&from);
        let location = HeaderValue::from_str(location).unwrap();
        let status = StatusCode::from_u16(status).unwrap();
        next_hop(status, Some(&location), &from, origin.as_ref(), hops, 3)
    }

    #[test]
    fn each_redirect_is_read_by_its_row() {
        assert_eq!(at(200, "/x", 0).unwrap(), None);
        assert_eq!(at(401, "/x", 0).unwrap(), None);
        assert_eq!(at(307, "/v2", 0).unwrap(), Some(u("https://h.example/v2")));
        assert_eq!(
            at(308, "https://H.example:443/v2", 2).unwrap(),
            Some(u("https://H.example:443/v2"))
        );
        assert!(at(302, "/v2", 0).unwrap_err().reason.contains("only 307"));
        assert!(
            at(307, "https://other.example/v2", 0)
                .unwrap_err()
                .reason
                .contains("another origin")
        );
        assert!(
            at(307, "http://h.example/v2", 0)
                .unwrap_err()
                .reason
                .contains("another origin")
        );
        assert!(
            at(307, "/v2", 3)
                .unwrap_err()
                .reason
                .contains("more than 3")
        );
    }
}
