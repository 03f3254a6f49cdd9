//! The ready authorizer for desktop and command-line clients: it shows the
//! authorization URL and waits for the browser's redirect on a loopback
//! port.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_transport_http::BoxError;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::Authorizer;

/// How long the person has to authorize.
pub const DEFAULT_LOOPBACK_WAIT: Duration = Duration::from_secs(300);

/// The page the browser shows after the redirect.
const DONE_PAGE: &str =
    "<!doctype html><title>Authorized</title><p>Authorized. You can close this window.</p>";

/// Listens on `127.0.0.1` for the redirect; [`redirect_uri`](Self::redirect_uri)
/// is the URL to register. The URL is shown by a function the application
/// gives (it may open a browser; it must never pass the URL to a shell).
///
/// ```no_run
/// # async fn f() -> std::io::Result<()> {
/// use mcp_auth::LoopbackAuthorizer;
/// let authorizer = LoopbackAuthorizer::bind(0)
///     .await?
///     .on_url(|url| eprintln!("Open this URL to authorize: {url}"));
/// println!("redirect URI: {}", authorizer.redirect_uri());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct LoopbackAuthorizer {
    listener: Arc<TcpListener>,
    port: u16,
    show: Arc<dyn Fn(&str) + Send + Sync>,
    wait: Duration,
}

impl std::fmt::Debug for LoopbackAuthorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackAuthorizer")
            .field("port", &self.port)
            .field("wait", &self.wait)
            .finish_non_exhaustive()
    }
}

impl LoopbackAuthorizer {
    /// Listens on `127.0.0.1:port` (0: any free port). The URL goes to
    /// stderr until [`on_url`](Self::on_url) says otherwise.
    pub async fn bind(port: u16) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        let port = listener.local_addr()?.port();
        Ok(LoopbackAuthorizer {
            listener: Arc::new(listener),
            port,
            show: Arc::new(|url| eprintln!("Open this URL to authorize: {url}")),
            wait: DEFAULT_LOOPBACK_WAIT,
        })
    }

    /// Shows the authorization URL with `show`.
    pub fn on_url(mut self, show: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.show = Arc::new(show);
        self
    }

    /// How long to wait for the redirect (default [`DEFAULT_LOOPBACK_WAIT`]).
    pub fn wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// `http://127.0.0.1:<port>/callback`.
    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }
}

impl Authorizer for LoopbackAuthorizer {
    fn authorize(&self, url: String) -> BoxFuture<'static, Result<String, BoxError>> {
        let this = self.clone();
        Box::pin(async move {
            match url::Url::parse(&url).map(|u| u.scheme().to_owned()) {
                Ok(s) if s == "https" || s == "http" => {}
                _ => return Err("the authorization URL is not http(s)".into()),
            }
            (this.show)(&url);
            tokio::time::timeout(this.wait, this.next_redirect())
                .await
                .map_err(|_| format!("no redirect within {:?}", this.wait))?
        })
    }
}

impl LoopbackAuthorizer {
    /// The first `GET /callback?...` on the port; anything else gets 404.
    async fn next_redirect(&self) -> Result<String, BoxError> {
        loop {
            let (mut stream, _) = self.listener.accept().await?;
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
                let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf))
                    .await
                    .unwrap_or(Ok(0))?;
                if n == 0 {
                    break;
                }
                head.extend_from_slice(&buf[..n]);
            }
            let text = String::from_utf8_lossy(&head);
            let target = text
                .lines()
                .next()
                .and_then(|line| line.strip_prefix("GET "))
                .and_then(|rest| rest.split(' ').next())
                .filter(|t| t.starts_with("/callback"));
            let Some(target) = target else {
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                    )
                    .await;
                continue;
            };
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{DONE_PAGE}",
                DONE_PAGE.len()
            );
            let _ = stream.write_all(answer.as_bytes()).await;
            return Ok(format!("http://127.0.0.1:{}{target}", self.port));
        }
    }
}
