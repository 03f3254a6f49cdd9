//! Authorization as a `tower` layer: a [`HeaderProvider`]'s headers on
//! every hop of a request, its answer to the server's 401 and 403
//! challenges, and same-origin redirects followed inside, so that each hop
//! is authorized for where it goes and no hop leaves the origin.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use http::header::WWW_AUTHENTICATE;
use http::{Request, Response, StatusCode};
use tower::{Layer, Service, ServiceExt};

use crate::error::{BoxError, chain};
use crate::provider::{AuthChallenge, HeaderProvider, is_dpop_nonce_challenge};
use crate::redirect::{DEFAULT_MAX_REDIRECTS, SameOriginRedirects, SameOriginRedirectsLayer, hop};
use crate::service::RequestBody;

/// A [`HeaderProvider`] failed (an OAuth refresh could not reach its
/// token endpoint, say): nothing was sent. The transport reports it as
/// [`TransportError::Credentials`](mcp_transport::TransportError::Credentials).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CredentialsFailed {
    /// What the provider said, with its sources.
    pub cause: String,
}

impl std::fmt::Display for CredentialsFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the header provider failed: {}", self.cause)
    }
}

impl std::error::Error for CredentialsFailed {}

/// Puts a [`HeaderProvider`] over any `tower` HTTP client: [`Authorized`].
///
/// ```
/// use std::sync::Arc;
/// use futures::future::BoxFuture;
/// use http::HeaderMap;
/// use tower::Layer;
/// use mcp_transport_http::{AuthorizationLayer, BoxError, HeaderProvider, HttpService};
///
/// struct Nothing;
/// impl HeaderProvider for Nothing {
///     fn headers(&self, _: &http::request::Parts) -> BoxFuture<'static, Result<HeaderMap, BoxError>> {
///         Box::pin(async { Ok(HeaderMap::new()) })
///     }
/// }
///
/// # fn wrap(client: HttpService) -> HttpService {
/// HttpService::new(AuthorizationLayer::new(Arc::new(Nothing)).layer(client))
/// # }
/// ```
#[derive(Clone)]
pub struct AuthorizationLayer {
    provider: Arc<dyn HeaderProvider>,
    max_redirects: usize,
}

impl AuthorizationLayer {
    /// Authorizes with `provider`, following at most
    /// [`DEFAULT_MAX_REDIRECTS`] same-origin redirects.
    pub fn new(provider: Arc<dyn HeaderProvider>) -> Self {
        AuthorizationLayer {
            provider,
            max_redirects: DEFAULT_MAX_REDIRECTS,
        }
    }

    /// How many same-origin 307/308 redirects are followed (0: none).
    pub fn max_redirects(mut self, hops: usize) -> Self {
        self.max_redirects = hops;
        self
    }
}

impl std::fmt::Debug for AuthorizationLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthorizationLayer")
            .field("max_redirects", &self.max_redirects)
            .finish_non_exhaustive()
    }
}

impl<S> Layer<S> for AuthorizationLayer {
    type Service = Authorized<S>;

    fn layer(&self, inner: S) -> Authorized<S> {
        let hop = AuthorizeHop {
            inner,
            provider: self.provider.clone(),
        };
        Authorized {
            inner: SameOriginRedirectsLayer::new(self.max_redirects).layer(hop),
        }
    }
}

/// A service whose requests carry a [`HeaderProvider`]'s headers:
///
/// * at each hop, the provider's headers (replacing the request's own of
///   the same name); a provider that fails fails the request with
///   [`CredentialsFailed`], having sent nothing;
/// * the head of every answer shown to the provider
///   ([`HeaderProvider::on_response`]);
/// * a 401 or 403 handed to [`HeaderProvider::on_challenge`] once per
///   request (and a DPoP `use_dpop_nonce` 401 once more): `true` sends the
///   same hop again with fresh headers;
/// * same-origin 307/308 redirects followed as [`SameOriginRedirects`]
///   does, each hop authorized for its own URL; a hop to another origin
///   is refused, so a token never goes there.
#[derive(Clone, Debug)]
pub struct Authorized<S> {
    inner: SameOriginRedirects<AuthorizeHop<S>>,
}

impl<S, B> Service<Request<RequestBody>> for Authorized<S>
where
    S: Service<Request<RequestBody>, Response = Response<B>> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = Response<B>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Response<B>, BoxError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: Request<RequestBody>) -> Self::Future {
        // One budget for the request, whichever hop is challenged.
        request.extensions_mut().insert(ChallengeBudget::default());
        self.inner.call(request)
    }
}

/// Holds the transport's request timers still while a provider answers a
/// challenge (an authorization may need a person); put on a request's
/// extensions by the transport.
#[derive(Clone)]
pub(crate) struct PauseTimers(pub(crate) mcp_transport::Engine);

/// The challenges a request has left: one of any kind, one for a DPoP
/// nonce (see [`HeaderProvider::on_challenge`]).
#[derive(Clone, Default)]
struct ChallengeBudget(Arc<[AtomicBool; 2]>);

impl ChallengeBudget {
    /// Spends the try of this kind; `false` when it was spent.
    fn spend(&self, nonce: bool) -> bool {
        !self.0[usize::from(nonce)].swap(true, Ordering::SeqCst)
    }
}

/// One hop: the provider's headers, and its answer to a challenge.
#[derive(Clone)]
struct AuthorizeHop<S> {
    inner: S,
    provider: Arc<dyn HeaderProvider>,
}

impl<S> std::fmt::Debug for AuthorizeHop<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthorizeHop").finish_non_exhaustive()
    }
}

impl<S, B> Service<Request<RequestBody>> for AuthorizeHop<S>
where
    S: Service<Request<RequestBody>, Response = Response<B>> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = Response<B>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Response<B>, BoxError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<RequestBody>) -> Self::Future {
        Box::pin(authorize_hop(
            self.inner.clone(),
            self.provider.clone(),
            request,
        ))
    }
}

/// Sends one hop with the provider's headers, again after a challenge
/// the provider answered.
async fn authorize_hop<S, B>(
    inner: S,
    provider: Arc<dyn HeaderProvider>,
    request: Request<RequestBody>,
) -> Result<Response<B>, BoxError>
where
    S: Service<Request<RequestBody>, Response = Response<B>> + Clone,
    S::Error: Into<BoxError>,
{
    let budget = request.extensions().get::<ChallengeBudget>().cloned();
    let budget = budget.unwrap_or_default();
    let (parts, body) = request.into_parts();
    let again = body.replay();
    let mut first = Some(body);
    loop {
        let body = first.take().unwrap_or_else(|| again.replay());
        let request = with_headers(provider.as_ref(), hop(&parts, parts.uri.clone(), body)).await?;
        let response = inner.clone().oneshot(request).await.map_err(Into::into)?;
        provider.on_response(&parts.uri, response.status(), response.headers());
        let Some(challenge) = challenge_of(&parts, &response, &budget) else {
            return Ok(response);
        };
        // An authorization may need a person (a browser, a consent
        // page): it has the authorizer's own bound, not the requests'.
        // Their timers stand still meanwhile, as while a person answers
        // a server's elicitation.
        let answered = {
            let pause = parts.extensions.get::<PauseTimers>();
            let _pause = pause.map(|p| p.0.pause_timers());
            provider.on_challenge(&challenge).await
        };
        if !answered {
            return Ok(response);
        }
        tracing::debug!(status = challenge.status, "sending again after a challenge");
    }
}

/// `request` with the provider's headers, which replace its own of the
/// same name.
async fn with_headers(
    provider: &dyn HeaderProvider,
    request: Request<RequestBody>,
) -> Result<Request<RequestBody>, BoxError> {
    let (mut parts, body) = request.into_parts();
    let added = provider
        .headers(&parts)
        .await
        .map_err(|e| CredentialsFailed {
            cause: chain(e.as_ref()),
        })?;
    let mut last = None;
    for (name, value) in added {
        let name = match name {
            Some(n) => {
                last = Some(n.clone());
                n
            }
            None => match &last {
                Some(n) => n.clone(),
                None => continue,
            },
        };
        parts.headers.insert(name, value);
    }
    Ok(Request::from_parts(parts, body))
}

/// The challenge an answer makes, if it is a 401 or 403 and the request
/// has a try of that kind left (which this spends).
fn challenge_of<B>(
    parts: &http::request::Parts,
    response: &Response<B>,
    budget: &ChallengeBudget,
) -> Option<AuthChallenge> {
    let status = response.status();
    if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
        return None;
    }
    let www_authenticate = response
        .headers()
        .get(WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    // A nonce challenge has its own try (see `on_challenge`).
    let for_nonce = status == StatusCode::UNAUTHORIZED
        && www_authenticate
            .as_deref()
            .is_some_and(is_dpop_nonce_challenge);
    budget.spend(for_nonce).then(|| AuthChallenge {
        status: status.as_u16(),
        www_authenticate,
        method: parts.method.clone(),
        uri: parts.uri.clone(),
        headers: response.headers().clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::ChallengeBudget;

    #[test]
    fn a_request_has_one_challenge_and_one_nonce_challenge() {
        let budget = ChallengeBudget::default();
        let hop = budget.clone();
        assert!(budget.spend(false));
        assert!(!hop.spend(false));
        assert!(hop.spend(true));
        assert!(!budget.spend(true));
    }
}
