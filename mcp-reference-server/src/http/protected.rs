//! [`ProtectedHttpFake`]: the HTTP fake behind an OAuth authorization
//! server of its own, both on one loopback socket.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;

use super::oauth::{Authority, OAuthOptions};
use super::{HttpFake, HttpOptions, RecordedRequest, front};
use crate::config::FakeConfig;

/// The reference MCP server over HTTP, protected by OAuth as the MCP
/// authorization spec has servers do it: `/mcp` answers `401` with
/// `WWW-Authenticate: Bearer resource_metadata="…"` until a request
/// carries a token its authorization server issued, then serves MCP as
/// [`HttpFake`] does. The authorization server, on the same origin (its
/// issuer), serves the protected resource metadata (RFC 9728), its own
/// metadata (RFC 8414), dynamic client registration (RFC 7591), an
/// `/authorize` that approves at once with a `302` carrying `code`,
/// `state` and `iss`, and a `/token` for the authorization code (PKCE
/// S256 verified), refresh tokens and client credentials. A real client
/// (such as `mcp-steady-auth`'s) finds everything from the first `401`.
///
/// `mcp-reference-server --http PORT --oauth` serves the same from the
/// binary. Dropping the handle stops the server.
///
/// ```
/// use mcp_reference_server::FakeConfig;
/// use mcp_reference_server::http::ProtectedHttpFake;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let server = ProtectedHttpFake::start(FakeConfig::default()).await?;
/// assert!(server.url().ends_with("/mcp"));
/// assert_eq!(format!("{}/mcp", server.issuer()), server.url());
/// assert!(server.resource_metadata_url().contains("/.well-known/oauth-protected-resource"));
/// # Ok(())
/// # }
/// ```
pub struct ProtectedHttpFake {
    fake: HttpFake,
    authority: Arc<Authority>,
}

impl ProtectedHttpFake {
    /// Serves `config` with the default [`HttpOptions`] and
    /// [`OAuthOptions`] on `127.0.0.1`, on a port of the system's choosing.
    pub async fn start(config: FakeConfig) -> io::Result<ProtectedHttpFake> {
        ProtectedHttpFake::start_with(config, HttpOptions::new(), OAuthOptions::new()).await
    }

    /// Serves `config` with these options on `127.0.0.1`, on a port of the
    /// system's choosing.
    pub async fn start_with(
        config: FakeConfig,
        options: HttpOptions,
        oauth: OAuthOptions,
    ) -> io::Result<ProtectedHttpFake> {
        let any = SocketAddr::from(([127, 0, 0, 1], 0));
        ProtectedHttpFake::start_on(config, options, oauth, any).await
    }

    /// Serves `config` with these options on `addr` (port 0: any).
    pub async fn start_on(
        config: FakeConfig,
        options: HttpOptions,
        oauth: OAuthOptions,
        addr: SocketAddr,
    ) -> io::Result<ProtectedHttpFake> {
        let listener = TcpListener::bind(addr).await?;
        let bound = listener.local_addr()?;
        let authority = Arc::new(Authority::new(format!("http://{bound}"), oauth));
        let mut front = front::Front::new(config, options);
        front.oauth = Some(authority.clone());
        let fake = HttpFake::serve(listener, front)?;
        Ok(ProtectedHttpFake { fake, authority })
    }

    /// The protected MCP endpoint: `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        self.fake.url()
    }

    /// The authorization server's issuer: `http://127.0.0.1:PORT`.
    pub fn issuer(&self) -> &str {
        self.authority.issuer()
    }

    /// The protected resource metadata the `401` names.
    pub fn resource_metadata_url(&self) -> String {
        self.authority.resource_metadata_url()
    }

    /// The socket's address.
    pub fn addr(&self) -> SocketAddr {
        self.fake.addr()
    }

    /// The MCP server behind the gate, for what [`HttpFake`] tells
    /// (requests, sessions, cancellations).
    pub fn http(&self) -> &HttpFake {
        &self.fake
    }

    /// Every HTTP request received so far, the authorization server's
    /// included, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.fake.requests()
    }

    /// Makes every access token issued so far expire now, as time would;
    /// refresh tokens stay good.
    pub fn expire_tokens(&self) {
        self.authority.expire_tokens();
    }

    /// Forgets every access and refresh token issued so far, as a server
    /// that revoked them: the client has to authorize again.
    pub fn revoke_tokens(&self) {
        self.authority.revoke_tokens();
    }

    /// How many clients are registered, pre-registered ones included.
    pub fn registered_clients(&self) -> usize {
        self.authority.clients()
    }
}

impl std::fmt::Debug for ProtectedHttpFake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProtectedHttpFake")
            .field("url", &self.url())
            .field("clients", &self.registered_clients())
            .finish()
    }
}
