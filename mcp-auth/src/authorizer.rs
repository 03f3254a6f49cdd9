//! The person's part of the authorization code flow: open the URL, give
//! back the redirect.

use futures::future::BoxFuture;
use http::{StatusCode, header};
use mcp_transport_http::{BoxError, HttpService};

use crate::fetch::Fetcher;

/// What the application does with an authorization URL: show it to the
/// person (open a browser, print it), and return the URL the
/// authorization server redirected to (with `code`, `state`, `iss`).
///
/// Any `Fn(String) -> impl Future<Output = Result<String, BoxError>>` is one:
///
/// ```
/// use mcp_auth::Authorizer;
/// fn takes(_: impl Authorizer) {}
/// takes(|url: String| async move {
///     println!("open {url}");
///     // ... wait for the redirect on a loopback listener ...
///     Ok::<_, mcp_transport_http::BoxError>("http://127.0.0.1:8123/callback?code=c&state=s".to_owned())
/// });
/// ```
pub trait Authorizer: Send + Sync + 'static {
    /// Has the person authorize at `url`; the answer is the redirect URL.
    fn authorize(&self, url: String) -> BoxFuture<'static, Result<String, BoxError>>;
}

impl<F, Fut> Authorizer for F
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, BoxError>> + Send + 'static,
{
    fn authorize(&self, url: String) -> BoxFuture<'static, Result<String, BoxError>> {
        Box::pin(self(url))
    }
}

/// An authorizer with no person: it GETs the authorization URL and takes
/// the server's redirect (`Location` of a 3xx) without following it. For
/// authorization servers that approve at once: test servers, the
/// conformance suite's mocks, a pre-approved machine client.
#[derive(Clone, Debug)]
pub struct HeadlessAuthorizer {
    fetcher: Fetcher,
}

impl HeadlessAuthorizer {
    /// Sends through `service` (the transport's, for one HTTP stack).
    pub fn new(service: HttpService) -> Self {
        HeadlessAuthorizer {
            fetcher: Fetcher {
                service,
                timeout: crate::DEFAULT_TIMEOUT,
                insecure_http: false,
                addresses: Default::default(),
                dpop: None,
            },
        }
    }
}

impl Authorizer for HeadlessAuthorizer {
    fn authorize(&self, url: String) -> BoxFuture<'static, Result<String, BoxError>> {
        let fetcher = self.fetcher.clone();
        Box::pin(async move {
            let answer = fetcher.get(&url).await?;
            if !answer.status.is_redirection() || answer.status == StatusCode::NOT_MODIFIED {
                return Err(format!("the authorization server answered {}", answer.status).into());
            }
            let location = answer
                .headers
                .get(header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or("the authorization server's redirect has no Location")?;
            let base = url::Url::parse(&url)?;
            Ok(base.join(location)?.to_string())
        })
    }
}
