//! The HTTP client the transport talks to: any `tower::Service` over `http`
//! types, and the default one (hyper-util's pooled client with rustls).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use mcp_transport::TransportError;
use tower::util::BoxCloneSyncService;

use crate::error::BoxError;

/// The body of every request the transport sends: one whole JSON message
/// (or nothing, for `DELETE`), in one data frame.
///
/// It tells the transport when the service has taken its bytes, or
/// dropped it without taking them, which is how a notification leaves
/// after the requests before it without the transport waiting for their
/// answers (and how a cancel for a request that never left stays home).
///
/// ```
/// use http_body_util::BodyExt;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let body = mcp_transport_http::RequestBody::from_static(b"{}");
/// assert_eq!(body.collect().await.unwrap().to_bytes(), "{}");
/// # }
/// ```
pub struct RequestBody {
    data: Option<Bytes>,
    taken: Option<tokio::sync::oneshot::Sender<bool>>,
}

impl RequestBody {
    /// A body of these bytes.
    pub fn new(data: Bytes) -> Self {
        RequestBody {
            data: (!data.is_empty()).then_some(data),
            taken: None,
        }
    }

    /// A body of static bytes.
    pub fn from_static(data: &'static [u8]) -> Self {
        Self::new(Bytes::from_static(data))
    }

    /// A body that says on `taken` when its bytes were taken (`true`) or
    /// it was dropped first (`false`).
    pub(crate) fn signalling(data: Bytes, taken: tokio::sync::oneshot::Sender<bool>) -> Self {
        let mut body = Self::new(data);
        body.taken = Some(taken);
        body
    }

    /// Another body of the same bytes, to send again (a redirect's next
    /// hop, a request sent again after a challenge); it signals nothing.
    pub(crate) fn replay(&self) -> Self {
        Self::new(self.data.clone().unwrap_or_default())
    }

    fn signal(&mut self, taken: bool) {
        if let Some(t) = self.taken.take() {
            let _ = t.send(taken);
        }
    }
}

impl Drop for RequestBody {
    fn drop(&mut self) {
        let taken = self.data.is_none();
        self.signal(taken);
    }
}

impl http_body::Body for RequestBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        let data = self.data.take();
        self.signal(true);
        std::task::Poll::Ready(data.map(|d| Ok(http_body::Frame::data(d))))
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.data.as_ref().map_or(0, |d| d.len() as u64))
    }
}

impl std::fmt::Debug for RequestBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestBody")
            .field("len", &self.data.as_ref().map_or(0, |d| d.len()))
            .finish()
    }
}

/// The body of a response, boxed so that any client's body fits.
pub type ResponseBody = BoxBody<Bytes, BoxError>;

/// The HTTP client seam: a cloneable `tower::Service` from
/// `http::Request<RequestBody>` to `http::Response<ResponseBody>`.
///
/// Hand in your own (another TLS setup, a Unix socket, tower layers) with
/// [`HttpTransportBuilder::service`](crate::HttpTransportBuilder::service)
/// and [`HttpService::new`]; the transport still puts its own redirect
/// policy ([`SameOriginRedirects`](crate::SameOriginRedirects), or the
/// [`AuthorizationLayer`](crate::AuthorizationLayer) that follows
/// redirects the same way) above it, so no service can take a request, a
/// credential or a session id to another origin. A service should not
/// follow redirects itself. It is a `tower::Service` itself, so layers go
/// on it too.
///
/// How its errors are read: an error whose source chain holds a
/// `hyper_util` connect error, or an I/O error of kind
/// [`ConnectionRefused`](std::io::ErrorKind::ConnectionRefused), becomes
/// [`TransportError::Unreachable`] (nothing was sent, so a supervised
/// client may send it again); any other error, a timed-out or unreachable
/// host included (an established socket says the same after the request
/// was written), becomes [`TransportError::StreamBroken`] with
/// `may_have_run` set.
///
/// ```
/// use bytes::Bytes;
/// use http_body_util::{BodyExt, Full};
/// use mcp_transport_http::{HttpService, RequestBody, ResponseBody};
///
/// // A service that answers every POST with an empty JSON-RPC result.
/// let service = HttpService::new(tower::service_fn(|req: http::Request<RequestBody>| async move {
///     let _ = req;
///     let body = Full::new(Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#))
///         .map_err(|never| match never {})
///         .boxed();
///     Ok::<_, mcp_transport_http::BoxError>(
///         http::Response::builder()
///             .header("content-type", "application/json")
///             .body::<ResponseBody>(body)
///             .unwrap(),
///     )
/// }));
/// # let _ = service;
/// ```
#[derive(Clone)]
pub struct HttpService {
    inner: BoxCloneSyncService<http::Request<RequestBody>, http::Response<ResponseBody>, BoxError>,
}

impl HttpService {
    /// Wraps any cloneable service whose errors convert into [`BoxError`].
    pub fn new<S>(service: S) -> Self
    where
        S: tower::Service<
                http::Request<RequestBody>,
                Response = http::Response<ResponseBody>,
                Error: Into<BoxError>,
                Future: Send + 'static,
            > + Clone
            + Send
            + Sync
            + 'static,
    {
        use tower::ServiceExt;
        HttpService {
            inner: BoxCloneSyncService::new(service.map_err(Into::into)),
        }
    }

    /// Sends one request as it is: no redirect is followed and no header
    /// is added, so a caller that sends credentials decides where they go.
    pub fn call(
        &self,
        request: http::Request<RequestBody>,
    ) -> futures::future::BoxFuture<'static, Result<http::Response<ResponseBody>, BoxError>> {
        use tower::ServiceExt;
        Box::pin(self.inner.clone().oneshot(request))
    }
}

impl tower::Service<http::Request<RequestBody>> for HttpService {
    type Response = http::Response<ResponseBody>;
    type Error = BoxError;
    type Future = futures::future::BoxFuture<'static, Result<Self::Response, BoxError>>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), BoxError>> {
        tower::Service::poll_ready(&mut self.inner, cx)
    }

    fn call(&mut self, request: http::Request<RequestBody>) -> Self::Future {
        tower::Service::call(&mut self.inner, request)
    }
}

impl std::fmt::Debug for HttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpService").finish_non_exhaustive()
    }
}

/// How the default client trusts servers.
#[derive(Clone, Debug, Default)]
pub(crate) struct TlsSettings {
    pub(crate) webpki_roots: bool,
    /// The operating system's roots (the `platform-roots` feature).
    pub(crate) platform_roots: bool,
    pub(crate) extra_roots: Vec<Vec<u8>>,
    /// A client certificate chain (DER, leaf first) and its private key
    /// (DER: PKCS#8, PKCS#1 or SEC1), for mutual TLS.
    pub(crate) identity: Option<(Vec<Vec<u8>>, Vec<u8>)>,
}

/// The settings of the default client.
#[derive(Clone, Debug)]
pub(crate) struct ClientSettings {
    pub(crate) connect_timeout: Option<Duration>,
    pub(crate) tcp_keepalive: Option<Duration>,
    pub(crate) tls: TlsSettings,
    pub(crate) proxy: crate::proxy::ProxyConfig,
}

/// Adds the operating system's roots; one that cannot be read or parsed
/// is skipped with a warning (a broken system store must not make every
/// server unreachable while the other roots still hold).
#[cfg(feature = "platform-roots")]
fn add_platform_roots(roots: &mut rustls::RootCertStore) {
    let found = rustls_native_certs::load_native_certs();
    for error in &found.errors {
        tracing::warn!(%error, "could not read part of the platform's root store");
    }
    let (added, ignored) = roots.add_parsable_certificates(found.certs);
    tracing::debug!(added, ignored, "trusted the platform's root certificates");
}

#[cfg(not(feature = "platform-roots"))]
fn add_platform_roots(_: &mut rustls::RootCertStore) {}

/// Builds hyper-util's pooled client: HTTP/1.1, and HTTP/2 when TLS
/// negotiates it by ALPN; rustls with the `ring` provider.
pub(crate) fn default_service(settings: &ClientSettings) -> Result<HttpService, TransportError> {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_connect_timeout(settings.connect_timeout);
    http.set_keepalive(settings.tcp_keepalive);
    http.set_nodelay(true);

    let mut roots = rustls::RootCertStore::empty();
    if settings.tls.webpki_roots {
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    }
    if settings.tls.platform_roots {
        add_platform_roots(&mut roots);
    }
    for der in &settings.tls.extra_roots {
        roots
            .add(rustls::pki_types::CertificateDer::from(der.clone()))
            .map_err(|e| TransportError::Unreachable {
                cause: format!("a configured root certificate is invalid: {e}"),
            })?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TransportError::Unreachable {
            cause: format!("TLS setup failed: {e}"),
        })?
        .with_root_certificates(roots);
    let tls = match &settings.tls.identity {
        None => tls.with_no_client_auth(),
        Some((chain, key)) => {
            let chain = chain
                .iter()
                .map(|c| rustls::pki_types::CertificateDer::from(c.clone()))
                .collect();
            let key = rustls::pki_types::PrivateKeyDer::try_from(key.clone()).map_err(|e| {
                TransportError::Unreachable {
                    cause: format!("the client certificate's key is not a DER private key: {e}"),
                }
            })?;
            tls.with_client_auth_cert(chain, key)
                .map_err(|e| TransportError::Unreachable {
                    cause: format!("the client certificate was refused: {e}"),
                })?
        }
    };
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .wrap_connector(crate::proxy::ProxyConnector::new(
            http,
            settings.proxy.matcher(),
        ));
    let connector = BoundedConnect {
        inner: https,
        timeout: settings.connect_timeout,
    };
    let client: Client<_, RequestBody> = Client::builder(TokioExecutor::new()).build(connector);
    Ok(HttpService::new(tower::service_fn(
        move |request: http::Request<RequestBody>| {
            let client = client.clone();
            async move {
                let response = client.request(request).await?;
                Ok::<_, BoxError>(response.map(|body| body.map_err(BoxError::from).boxed()))
            }
        },
    )))
}

/// A connector whose whole connect (TCP, a proxy's tunnel, the TLS
/// handshake) is bounded by the connect timeout: the TCP connector's own
/// timeout ends at the TCP handshake, and a server that accepts TCP and
/// never completes TLS would otherwise hold the request for as long as
/// the system keeps the socket.
#[derive(Clone)]
struct BoundedConnect<C> {
    inner: C,
    timeout: Option<Duration>,
}

impl<C> tower::Service<http::Uri> for BoundedConnect<C>
where
    C: tower::Service<http::Uri>,
    C::Error: Into<BoxError>,
    C::Future: Send + 'static,
{
    type Response = C::Response;
    type Error = BoxError;
    type Future = futures::future::BoxFuture<'static, Result<C::Response, BoxError>>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, dst: http::Uri) -> Self::Future {
        let connecting = self.inner.call(dst);
        let timeout = self.timeout;
        Box::pin(async move {
            let Some(timeout) = timeout else {
                return connecting.await.map_err(Into::into);
            };
            match tokio::time::timeout(timeout, connecting).await {
                Ok(connected) => connected.map_err(Into::into),
                Err(_) => Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "the connection (TCP, proxy tunnel and TLS) was not set up within the \
                         connect timeout ({timeout:?}); check that the server is up, or raise \
                         `connect_timeout`"
                    ),
                )
                .into()),
            }
        })
    }
}
