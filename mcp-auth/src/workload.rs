//! Workload identity federation (SEP-1933): a workload with no person and
//! no provisioned secret presents the JWT its platform issued it
//! (a Kubernetes service account token, a SPIFFE JWT-SVID, a cloud
//! identity token) with the JWT-bearer grant (RFC 7523 §2.1). The
//! authorization server trusts the JWT's issuer; no registration happens.

use crate::JwtSource;
use crate::builder::OAuthProviderBuilder;
use crate::grants::AssertionGrant;

impl OAuthProviderBuilder {
    /// Uses the JWT-bearer grant with the workload's own token from
    /// `assertion` instead of the authorization code flow: at each
    /// authorization the provider asks the source for the token (so a
    /// rotated file or a fresh token from a metadata service is used) and
    /// sends it as `assertion`, with `resource` and the scopes, to the
    /// token endpoint of the MCP server's authorization server.
    ///
    /// The client authenticates there only if
    /// [`pre_registered`](Self::pre_registered) credentials are given
    /// (a client id alone goes in the body, as `none`); otherwise the
    /// request carries no client identity at all.
    ///
    /// Errors the server answers (`invalid_grant`, `invalid_scope`,
    /// `unauthorized_client`, ...) are reported
    /// ([`OAuthProvider::last_error`](crate::OAuthProvider::last_error)),
    /// never retried with the same token, and never followed by another
    /// grant type: a refused token is not presented again until the
    /// source hands over a new one.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use mcp_auth::{JwtSource, OAuthProvider};
    /// use mcp_transport_http::HttpTransportBuilder;
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let url = "https://mcp.example.com/mcp";
    /// let transport = HttpTransportBuilder::new(url);
    /// let oauth = OAuthProvider::builder(url)
    ///     .workload_identity(JwtSource::file("/var/run/secrets/tokens/mcp-token"))
    ///     .build(transport.http_service()?)?;
    /// let transport = transport.header_provider(Arc::new(oauth));
    /// # let _ = transport;
    /// # Ok(())
    /// # }
    /// ```
    pub fn workload_identity(mut self, assertion: JwtSource) -> Self {
        self.assertion = Some(AssertionGrant::workload(assertion));
        self
    }
}
