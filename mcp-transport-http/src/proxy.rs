//! Proxies for the default client: a CONNECT tunnel for `https`, a
//! forward proxy (absolute-form requests) for `http`, chosen per URL by
//! hyper-util's matcher (`HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`).

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use http::Uri;
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::error::BoxError;

/// Where proxies come from.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub enum ProxyConfig {
    /// `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and `NO_PROXY`, in either
    /// case (the default).
    #[default]
    FromEnv,
    /// None at all, whatever the environment says.
    None,
    /// These, in the same syntax as the variables.
    Explicit {
        /// The proxy for `http` URLs.
        http: Option<String>,
        /// The proxy for `https` URLs.
        https: Option<String>,
        /// Hosts never proxied (`NO_PROXY` syntax).
        no_proxy: Option<String>,
    },
}

impl ProxyConfig {
    pub(crate) fn matcher(&self) -> Option<Matcher> {
        match self {
            ProxyConfig::FromEnv => Some(Matcher::from_env()),
            ProxyConfig::None => None,
            ProxyConfig::Explicit {
                http,
                https,
                no_proxy,
            } => {
                let mut builder = Matcher::builder();
                if let Some(h) = http {
                    builder = builder.http(h.clone());
                }
                if let Some(h) = https {
                    builder = builder.https(h.clone());
                }
                if let Some(n) = no_proxy {
                    builder = builder.no(n.clone());
                }
                Some(builder.build())
            }
        }
    }
}

/// The TCP connector under TLS: direct, tunnelled, or to a forward proxy.
#[derive(Clone)]
pub(crate) struct ProxyConnector {
    direct: HttpConnector,
    matcher: Option<Arc<Matcher>>,
}

impl ProxyConnector {
    pub(crate) fn new(direct: HttpConnector, matcher: Option<Matcher>) -> Self {
        ProxyConnector {
            direct,
            matcher: matcher.map(Arc::new),
        }
    }
}

/// A connection, marked when it goes to a forward proxy (hyper then
/// writes requests in absolute form).
pub(crate) struct ProxyStream {
    io: TokioIo<TcpStream>,
    forward: bool,
}

impl Connection for ProxyStream {
    fn connected(&self) -> Connected {
        self.io.connected().proxy(self.forward)
    }
}

impl Read for ProxyStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl Write for ProxyStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

impl tower::Service<Uri> for ProxyConnector {
    type Response = ProxyStream;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<ProxyStream, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        tower::Service::<Uri>::poll_ready(&mut self.direct, cx).map_err(Into::into)
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        let mut direct = self.direct.clone();
        let intercept = self.matcher.as_ref().and_then(|m| m.intercept(&dst));
        Box::pin(async move {
            let Some(intercept) = intercept else {
                let io = direct.call(dst).await?;
                return Ok(ProxyStream { io, forward: false });
            };
            if dst.scheme_str() == Some("https") {
                tracing::debug!(
                    proxy = %mcp_transport::record::redact_url(&intercept.uri().to_string()),
                    "tunnelling through a proxy"
                );
                let mut tunnel = Tunnel::new(intercept.uri().clone(), direct);
                if let Some(auth) = intercept.basic_auth() {
                    tunnel = tunnel.with_auth(auth.clone());
                }
                let io = tunnel.call(dst).await?;
                Ok(ProxyStream { io, forward: false })
            } else {
                tracing::debug!(
                    proxy = %mcp_transport::record::redact_url(&intercept.uri().to_string()),
                    "sending through a forward proxy"
                );
                let io = direct.call(intercept.uri().clone()).await?;
                Ok(ProxyStream { io, forward: true })
            }
        })
    }
}
