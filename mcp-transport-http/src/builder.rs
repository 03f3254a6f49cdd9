//! The builder, which is also the connector.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use http::{HeaderMap, HeaderName, HeaderValue, Uri};
use mcp_transport::{ConnectionHandlers, Connector, Transport, TransportError};

use tower::Layer;

use crate::authorization::AuthorizationLayer;
use crate::provider::HeaderProvider;
use crate::proxy::ProxyConfig;
use crate::redirect::{DEFAULT_MAX_REDIRECTS, SameOriginRedirectsLayer};
use crate::service::{ClientSettings, HttpService, TlsSettings, default_service};
use crate::transport::{Config, HttpTransport};
use crate::url::Origin;

/// The default connect timeout: 5 s, shorter than the client's 10 s era
/// probe so that an unreachable server fails the connect as unreachable,
/// not as silence.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The default TCP keepalive: 30 s, so a half-open connection under a
/// long-lived stream is found without a timer per request.
pub const DEFAULT_TCP_KEEPALIVE: Duration = Duration::from_secs(30);
/// The default maximum message size: 128 MiB, as on stdio.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 128 * 1024 * 1024;
/// How long `close` waits for the legacy session's `DELETE`.
pub const DEFAULT_CLOSE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a notification's POST may take before the next message leaves.
pub const DEFAULT_NOTIFICATION_TIMEOUT: Duration = Duration::from_secs(10);

/// Settings for an [`HttpTransport`], in the manner of reqwest's
/// `ClientBuilder`; every default is the safe one:
///
/// | setting | default |
/// |---|---|
/// | [`connect_timeout`](Self::connect_timeout) | [`DEFAULT_CONNECT_TIMEOUT`] (5 s) |
/// | [`tcp_keepalive`](Self::tcp_keepalive) | [`DEFAULT_TCP_KEEPALIVE`] (30 s) |
/// | total timeout | none: per-request deadlines are the client's, and a `subscriptions/listen` stream lives long |
/// | [`stream_idle_timeout`](Self::stream_idle_timeout) | none |
/// | [`sse_fallback`](Self::sse_fallback) | on: a refused legacy `initialize` tries the 2024-11-05 HTTP+SSE transport |
/// | [`proxy`](Self::proxy) | from `HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY` (either case) |
/// | TLS roots | the Mozilla set of `webpki-roots` (and the platform's, with the `platform-roots` feature), plus any [`add_root_certificate`](Self::add_root_certificate) |
/// | [`client_certificate`](Self::client_certificate) | none (no mutual TLS) |
/// | redirects | same origin, 307/308 only, at most [`DEFAULT_MAX_REDIRECTS`]; enforced above any [`service`](Self::service) |
/// | [`max_message_size`](Self::max_message_size) | [`DEFAULT_MAX_MESSAGE_SIZE`] (128 MiB, per JSON body or SSE event) |
/// | [`close_timeout`](Self::close_timeout) | [`DEFAULT_CLOSE_TIMEOUT`] (2 s for the session's `DELETE`) |
/// | [`notification_timeout`](Self::notification_timeout) | [`DEFAULT_NOTIFICATION_TIMEOUT`] (10 s) |
/// | [`legacy_get_stream`](Self::legacy_get_stream) | on: opened after `notifications/initialized`, reopened with `Last-Event-ID` and a capped, doubling delay, given up after 5 fruitless tries or at once on a 405 |
///
/// It is also a [`Connector`]: each `connect` builds a fresh transport
/// (a new session, for a legacy server) with the same settings.
///
/// ```
/// use std::time::Duration;
/// use http::{HeaderValue, header::AUTHORIZATION};
/// use mcp_transport::ConnectionHandlers;
/// use mcp_transport_http::HttpTransportBuilder;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mcp_transport::TransportError> {
/// let transport = HttpTransportBuilder::new("http://127.0.0.1:8000/mcp")
///     .header(AUTHORIZATION, HeaderValue::from_static("Bearer secret"))
///     .connect_timeout(Duration::from_secs(3))
///     .max_message_size(16 << 20)
///     .build(ConnectionHandlers::discard())?;
/// # drop(transport);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct HttpTransportBuilder {
    url: String,
    headers: HeaderMap,
    provider: Option<Arc<dyn HeaderProvider>>,
    service: Option<HttpService>,
    connect_timeout: Option<Duration>,
    tcp_keepalive: Option<Duration>,
    tls: TlsSettings,
    max_message_size: usize,
    max_redirects: usize,
    close_timeout: Duration,
    notification_timeout: Duration,
    get_stream: bool,
    idle_timeout: Option<Duration>,
    proxy: ProxyConfig,
    sse_fallback: bool,
    resume: Option<(String, Option<mcp_protocol::ProtocolVersion>)>,
}

impl HttpTransportBuilder {
    /// A builder for `url` (an `http` or `https` URL: the MCP endpoint).
    pub fn new(url: impl Into<String>) -> Self {
        HttpTransportBuilder {
            url: url.into(),
            headers: HeaderMap::new(),
            provider: None,
            service: None,
            connect_timeout: Some(DEFAULT_CONNECT_TIMEOUT),
            tcp_keepalive: Some(DEFAULT_TCP_KEEPALIVE),
            tls: TlsSettings {
                webpki_roots: true,
                platform_roots: cfg!(feature = "platform-roots"),
                extra_roots: Vec::new(),
                identity: None,
            },
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            max_redirects: DEFAULT_MAX_REDIRECTS,
            close_timeout: DEFAULT_CLOSE_TIMEOUT,
            notification_timeout: DEFAULT_NOTIFICATION_TIMEOUT,
            get_stream: true,
            idle_timeout: None,
            proxy: ProxyConfig::FromEnv,
            sse_fallback: true,
            resume: None,
        }
    }

    /// Adds a header to every request (an `Authorization` header, say;
    /// mark secrets with [`HeaderValue::set_sensitive`] to keep them out of
    /// logs). The transport's own headers (`Accept`, `Content-Type`, the
    /// `Mcp-*` ones) win over a configured header of the same name.
    ///
    /// ```
    /// use http::HeaderValue;
    /// let b = mcp_transport_http::HttpTransportBuilder::new("http://127.0.0.1:1/mcp")
    ///     .header(http::header::AUTHORIZATION, HeaderValue::from_static("Bearer t"));
    /// # let _ = b;
    /// ```
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.append(name, value);
        self
    }

    /// The MCP endpoint's URL, as given to [`new`](Self::new).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Adds every header of `headers` (see [`header`](Self::header)).
    pub fn headers(mut self, headers: HeaderMap) -> Self {
        self.headers.extend(headers);
        self
    }

    /// Asks `provider` for headers at each request (see [`HeaderProvider`]):
    /// the transport sends through an [`AuthorizationLayer`] of it.
    pub fn header_provider(mut self, provider: Arc<dyn HeaderProvider>) -> Self {
        self.provider = Some(provider);
        self
    }

    /// Protects the connection with `authorization`: with `mcp-steady-auth`,
    /// an `OAuthProvider` builder, built on this transport's HTTP client
    /// (so set the client's options first) and put on as its header
    /// provider. One call in place of `http_service`, `build` and
    /// [`header_provider`](Self::header_provider).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_transport_http::{HeaderProvider, HttpTransportBuilder};
    ///
    /// # fn provider() -> Arc<dyn HeaderProvider> { unimplemented!() }
    /// # fn f() {
    /// let transport = HttpTransportBuilder::new("https://mcp.example.com/mcp")
    ///     .authorization(provider())
    ///     .unwrap_or_else(|never| match never {});
    /// # let _ = transport;
    /// # }
    /// ```
    pub fn authorization<A: Authorization>(self, authorization: A) -> Result<Self, A::Error> {
        authorization.authorize(self)
    }

    /// Sends through `service` instead of the default client; the connect,
    /// keepalive and TLS settings then belong to that service.
    pub fn service(mut self, service: HttpService) -> Self {
        self.service = Some(service);
        self
    }

    /// The default client's connect timeout: the whole connect (TCP, a
    /// proxy's tunnel and the TLS handshake, together); `None` waits as
    /// long as the system does.
    pub fn connect_timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.connect_timeout = timeout.into();
        self
    }

    /// The default client's TCP keepalive; `None` turns it off.
    pub fn tcp_keepalive(mut self, interval: impl Into<Option<Duration>>) -> Self {
        self.tcp_keepalive = interval.into();
        self
    }

    /// Trusts a root certificate (DER) besides the default roots: for a
    /// server with a self-signed or private certificate.
    pub fn add_root_certificate(mut self, der: impl Into<Vec<u8>>) -> Self {
        self.tls.extra_roots.push(der.into());
        self
    }

    /// Presents a client certificate for mutual TLS: its chain (DER, leaf
    /// first) and private key (DER: PKCS#8, PKCS#1 or SEC1). A key that is
    /// not one fails [`build`](Self::build) with
    /// [`TransportError::Unreachable`].
    pub fn client_certificate(mut self, chain: Vec<Vec<u8>>, key_der: Vec<u8>) -> Self {
        self.tls.identity = Some((chain, key_der));
        self
    }

    /// Whether to trust the Mozilla roots of `webpki-roots` (on by default);
    /// off, only the added roots are trusted.
    pub fn webpki_roots(mut self, trust: bool) -> Self {
        self.tls.webpki_roots = trust;
        self
    }

    /// Whether to trust the operating system's root certificates too (on
    /// by default with the `platform-roots` feature, which this needs).
    ///
    /// ```
    /// let builder = mcp_transport_http::HttpTransportBuilder::new("https://example.com/mcp")
    ///     .platform_roots(cfg!(feature = "platform-roots"));
    /// # drop(builder);
    /// ```
    #[cfg(feature = "platform-roots")]
    #[cfg_attr(docsrs, doc(cfg(feature = "platform-roots")))]
    pub fn platform_roots(mut self, trust: bool) -> Self {
        self.tls.platform_roots = trust;
        self
    }

    /// The largest JSON body or SSE event read, in bytes; a larger answer
    /// fails its request with [`TransportError::MessageTooLarge`].
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes;
        self
    }

    /// How many same-origin 307/308 redirects are followed (0: none).
    pub fn max_redirects(mut self, hops: usize) -> Self {
        self.max_redirects = hops;
        self
    }

    /// How long `close` waits for the legacy session's `DELETE`.
    pub fn close_timeout(mut self, timeout: Duration) -> Self {
        self.close_timeout = timeout;
        self
    }

    /// How long a notification's POST may take before the next message
    /// leaves anyway.
    pub fn notification_timeout(mut self, timeout: Duration) -> Self {
        self.notification_timeout = timeout;
        self
    }

    /// Whether a legacy connection opens the GET stream for server
    /// messages right after `notifications/initialized` (on by default; a
    /// server that answers 405 is never asked again).
    pub fn legacy_get_stream(mut self, open: bool) -> Self {
        self.get_stream = open;
        self
    }

    /// An idle-read timeout for SSE streams (off by default): a stream
    /// that brings no bytes at all, not even a keep-alive comment, for this
    /// long is taken as broken ([`TransportError::StreamBroken`] for a
    /// request, a reconnect for the GET stream). Set it longer than the
    /// server's keep-alive interval; it suits `subscriptions/listen` and
    /// the GET stream, which have no request timeout.
    pub fn stream_idle_timeout(mut self, idle: impl Into<Option<Duration>>) -> Self {
        self.idle_timeout = idle.into();
        self
    }

    /// Where the default client finds proxies: by default from
    /// `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and `NO_PROXY` (either
    /// case). `https` goes through a `CONNECT` tunnel (with the proxy URL's
    /// credentials as `Proxy-Authorization`), `http` to the proxy in
    /// absolute form.
    ///
    /// ```
    /// use mcp_transport_http::{HttpTransportBuilder, ProxyConfig};
    /// let b = HttpTransportBuilder::new("https://mcp.example.com/mcp").proxy(ProxyConfig::None);
    /// # let _ = b;
    /// ```
    pub fn proxy(mut self, proxy: ProxyConfig) -> Self {
        self.proxy = proxy;
        self
    }

    /// Whether an `initialize` POST refused with 400, 404 or 405 and no
    /// JSON-RPC body falls back to the 2024-11-05 HTTP+SSE transport (on by
    /// default): a GET that must bring an `endpoint` event naming a URL on
    /// the same origin within 10 s; every message is then POSTed there and
    /// every answer read from that stream, whose end is the server's end
    /// ([`TransportError::ServerGone`]).
    pub fn sse_fallback(mut self, fall_back: bool) -> Self {
        self.sse_fallback = fall_back;
        self
    }

    /// Resumes a legacy session another transport opened: its id (from
    /// [`HttpTransport::session_id`]) and, from 2025-06-18, the protocol
    /// version its `initialize` named (from
    /// [`HttpTransport::legacy_protocol_version`]). No `initialize` is sent
    /// on the new transport; the server says [`TransportError::SessionExpired`]
    /// if it no longer knows the session.
    pub fn resume_session(
        mut self,
        session_id: impl Into<String>,
        version: Option<mcp_protocol::ProtocolVersion>,
    ) -> Self {
        self.resume = Some((session_id.into(), version));
        self
    }

    /// The HTTP client the transport sends through: the one given to
    /// [`service`](Self::service), else the default client with this
    /// builder's connect, keepalive, TLS and proxy settings. Other requests
    /// to the same servers (an authorization flow's) can go through it, so
    /// that there is one HTTP stack. Fails like [`build`](Self::build) for
    /// a root certificate rustls refuses.
    pub fn http_service(&self) -> Result<HttpService, TransportError> {
        match &self.service {
            Some(s) => Ok(s.clone()),
            None => default_service(&ClientSettings {
                connect_timeout: self.connect_timeout,
                tcp_keepalive: self.tcp_keepalive,
                tls: self.tls.clone(),
                proxy: self.proxy.clone(),
            }),
        }
    }

    /// The HTTP client under its layers: the header provider's
    /// authorization (which follows redirects itself), else the redirect
    /// policy alone; either way above any handed-in service.
    fn layered_service(&self) -> Result<HttpService, TransportError> {
        let service = self.http_service()?;
        Ok(match &self.provider {
            Some(provider) => HttpService::new(
                AuthorizationLayer::new(provider.clone())
                    .max_redirects(self.max_redirects)
                    .layer(service),
            ),
            None => {
                HttpService::new(SameOriginRedirectsLayer::new(self.max_redirects).layer(service))
            }
        })
    }

    /// Builds the transport. Must be called inside a tokio runtime. Fails
    /// with [`TransportError::Unreachable`] for a URL that is not `http` or
    /// `https` with a host, or a root certificate rustls refuses.
    pub fn build(&self, handlers: ConnectionHandlers) -> Result<HttpTransport, TransportError> {
        let url: Uri = self.url.parse().map_err(|e| TransportError::Unreachable {
            cause: format!("{:?} is not a URL: {e}", self.url),
        })?;
        let origin = match url.scheme_str() {
            Some("http" | "https") => Origin::of(&url),
            _ => None,
        }
        .ok_or_else(|| TransportError::Unreachable {
            cause: format!("{:?} is not an http or https URL with a host", self.url),
        })?;
        let transport = HttpTransport::start(
            Config {
                url,
                origin,
                service: self.layered_service()?,
                headers: self.headers.clone(),
                authorized: self.provider.is_some(),
                max_message_size: self.max_message_size,
                close_timeout: self.close_timeout,
                notification_timeout: self.notification_timeout,
                get_stream: self.get_stream,
                idle_timeout: self.idle_timeout,
                sse_fallback: self.sse_fallback,
            },
            handlers,
        );
        if let Some((session, version)) = &self.resume {
            transport.resume(session.clone(), version.clone());
        }
        Ok(transport)
    }
}

impl Connector for HttpTransportBuilder {
    fn connect(
        &self,
        handlers: ConnectionHandlers,
    ) -> BoxFuture<'static, Result<Arc<dyn Transport>, TransportError>> {
        let built = self
            .build(handlers)
            .map(|t| Arc::new(t) as Arc<dyn Transport>);
        Box::pin(std::future::ready(built))
    }
}

impl std::fmt::Debug for HttpTransportBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpTransportBuilder")
            .field("url", &mcp_transport::record::redact_url(&self.url))
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("custom_service", &self.service.is_some())
            .field("connect_timeout", &self.connect_timeout)
            .field("tcp_keepalive", &self.tcp_keepalive)
            .field("max_message_size", &self.max_message_size)
            .field("max_redirects", &self.max_redirects)
            .finish_non_exhaustive()
    }
}

/// What [`HttpTransportBuilder::authorization`](HttpTransportBuilder::authorization)
/// puts on a connection: something that becomes its [`HeaderProvider`],
/// given the transport it protects (whose HTTP client it may use for its
/// own requests, as an OAuth provider does for discovery and tokens).
///
/// `mcp-steady-auth` implements it for its `OAuthProviderBuilder`, so that
/// a protected server takes one builder call; any `Arc<dyn HeaderProvider>`
/// implements it too.
pub trait Authorization {
    /// Why it could not be put on the transport.
    type Error;

    /// Puts itself on `transport` and hands the builder back.
    fn authorize(
        self,
        transport: HttpTransportBuilder,
    ) -> Result<HttpTransportBuilder, Self::Error>;
}

impl Authorization for Arc<dyn HeaderProvider> {
    type Error = std::convert::Infallible;

    fn authorize(
        self,
        transport: HttpTransportBuilder,
    ) -> Result<HttpTransportBuilder, Self::Error> {
        Ok(transport.header_provider(self))
    }
}
