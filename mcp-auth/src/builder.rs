//! Setting up an [`OAuthProvider`].

use std::sync::Arc;
use std::time::Duration;

use mcp_transport_http::HttpService;

use crate::address::AddressPolicy;
use crate::client::{ClientProfile, PreRegistered};
use crate::dpop::{Dpop, DpopMode};
use crate::enterprise::EnterpriseIdp;
use crate::fetch::Fetcher;
use crate::grants::AssertionGrant;
use crate::origin::origin;
use crate::provider::{Inner, OAuthProvider};
use crate::store::{MemoryStore, TokenStore};
use crate::{AuthError, Authorizer};

/// Builds an [`OAuthProvider`].
#[derive(Debug)]
pub struct OAuthProviderBuilder {
    store: Arc<dyn TokenStore>,
    mcp_url: String,
    redirect_uri: String,
    client_name: String,
    metadata_url: Option<String>,
    pre_registered: Option<PreRegistered>,
    authorizer: Option<Arc<dyn Authorizer>>,
    client_credentials: bool,
    /// Enterprise-managed or workload identity: a JWT-bearer grant.
    pub(crate) assertion: Option<AssertionGrant>,
    timeout: Duration,
    insecure_http: bool,
    refuse_internal: bool,
    dpop: DpopMode,
    issuer: Option<String>,
}

impl std::fmt::Debug for dyn TokenStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenStore")
    }
}

impl OAuthProviderBuilder {
    pub(crate) fn new(mcp_url: String) -> Self {
        OAuthProviderBuilder {
            store: Arc::new(MemoryStore::default()),
            mcp_url,
            redirect_uri: "http://127.0.0.1/callback".into(),
            client_name: "mcp-steady".into(),
            metadata_url: None,
            pre_registered: None,
            authorizer: None,
            client_credentials: false,
            assertion: None,
            timeout: crate::DEFAULT_TIMEOUT,
            insecure_http: false,
            refuse_internal: false,
            dpop: DpopMode::default(),
            issuer: None,
        }
    }

    /// Where authorizations are kept (default: in memory). With a
    /// [`FileStore`](crate::FileStore), a later run starts with the tokens
    /// of an earlier one.
    pub fn store(mut self, store: impl TokenStore) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// Where the authorization server sends the person back (default
    /// `http://127.0.0.1/callback`); it goes in the registration too.
    pub fn redirect_uri(mut self, uri: impl Into<String>) -> Self {
        self.redirect_uri = uri.into();
        self
    }

    /// The `client_name` of a dynamic registration (default `mcp-steady`).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// The https URL of this client's ID metadata document, used as its
    /// `client_id` where the server supports them.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.metadata_url = Some(url.into());
        self
    }

    /// Credentials registered beforehand, used before anything else.
    pub fn pre_registered(mut self, credentials: PreRegistered) -> Self {
        self.pre_registered = Some(credentials);
        self
    }

    /// The authorization server this client belongs to (its issuer
    /// identifier): the only one it uses. Pre-registered credentials that
    /// name no issuer of their own, and a workload's token, go to it; a
    /// server whose resource metadata names only other authorization
    /// servers gets an error that says so, and nothing is sent to them.
    ///
    /// Without it, the first authorization server the metadata names is
    /// used, but secrets, keys and workload tokens go only where it is
    /// safe: see [`PreRegistered`] and
    /// [`workload_identity`](Self::workload_identity).
    ///
    /// ```
    /// use mcp_auth::{OAuthProvider, PreRegistered};
    /// use mcp_transport_http::HttpTransportBuilder;
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let url = "https://mcp.example.com/mcp";
    /// let oauth = OAuthProvider::builder(url)
    ///     .issuer("https://auth.example.com")
    ///     .client_credentials(PreRegistered::new("machine", Some("s3cret".into())))
    ///     .build(HttpTransportBuilder::new(url).http_service()?)?;
    /// # let _ = oauth;
    /// # Ok(())
    /// # }
    /// ```
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// The person's part of the authorization code flow.
    pub fn authorizer(mut self, authorizer: impl Authorizer) -> Self {
        self.authorizer = Some(Arc::new(authorizer));
        self
    }

    /// Uses the client credentials grant with `credentials` (a secret or a
    /// private key) instead of the authorization code flow.
    pub fn client_credentials(mut self, credentials: PreRegistered) -> Self {
        self.pre_registered = Some(credentials);
        self.client_credentials = true;
        self
    }

    /// Uses enterprise-managed authorization (SEP-990) instead of the
    /// authorization code flow: at each authorization the provider asks
    /// `idp` for the person's ID token, exchanges it at the IdP's token
    /// endpoint for an ID-JAG (RFC 8693: `requested_token_type` the
    /// ID-JAG type, `audience` the MCP server's authorization server,
    /// `resource` the MCP server), then presents the ID-JAG with the
    /// JWT-bearer grant (RFC 7523) at that authorization server,
    /// authenticated with `credentials` (the client's registration there).
    ///
    /// A token a server refused (the ID token, for the scopes asked) is
    /// not presented again: the next authorization fails at once until the
    /// source hands over a new one. The provider never falls back to
    /// another grant.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use mcp_auth::{EnterpriseIdp, JwtSource, OAuthProvider, PreRegistered};
    /// use mcp_transport_http::HttpTransportBuilder;
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let url = "https://mcp.example.com/mcp";
    /// let transport = HttpTransportBuilder::new(url);
    /// let idp = EnterpriseIdp::new(
    ///     "https://idp.example.com/oauth2/v1/token",
    ///     "client-at-the-idp",
    ///     JwtSource::file("/run/user/1000/sso/id_token"),
    /// )
    /// .client_secret("secret-at-the-idp");
    /// let oauth = OAuthProvider::builder(url)
    ///     .enterprise_managed(idp, PreRegistered::new("client-at-the-mcp-as", Some("secret".into())))
    ///     .build(transport.http_service()?)?;
    /// let transport = transport.header_provider(Arc::new(oauth));
    /// # let _ = transport;
    /// # Ok(())
    /// # }
    /// ```
    pub fn enterprise_managed(mut self, idp: EnterpriseIdp, credentials: PreRegistered) -> Self {
        self.pre_registered = Some(credentials);
        self.assertion = Some(AssertionGrant::enterprise(idp));
        self
    }

    /// The bound on each request of the flow (default
    /// [`DEFAULT_TIMEOUT`](crate::DEFAULT_TIMEOUT)).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Allows `http` URLs from servers on any host, not only on loopback.
    /// For test setups only: tokens and codes then travel in clear.
    pub fn allow_insecure_http(mut self, allow: bool) -> Self {
        self.insecure_http = allow;
        self
    }

    /// For clients that run server-side (off by default): refuses URLs a
    /// server hands out (resource metadata, authorization servers, their
    /// endpoints) whose host is, or resolves to, a private, loopback or
    /// link-local address (RFC 1918, `127/8`, `169.254/16`, `100.64/10`,
    /// `fc00::/7`, `fe80::/10`, `::1`, …), so that a server cannot point
    /// the client at the machines around it. The MCP server's own origin
    /// (scheme, host and port), the one configured here, is always
    /// allowed; another port of its host is not. The authorization
    /// endpoint is checked too, before any [`Authorizer`] is given it.
    /// The host is resolved before each request and again by the HTTP
    /// client, so a name whose answers change in between (DNS rebinding)
    /// is not caught: filter outbound connections too where that matters.
    ///
    /// ```
    /// use mcp_auth::OAuthProvider;
    ///
    /// let builder = OAuthProvider::builder("https://mcp.example.com/mcp")
    ///     .refuse_internal_addresses(true);
    /// # let _ = builder;
    /// ```
    pub fn refuse_internal_addresses(mut self, refuse: bool) -> Self {
        self.refuse_internal = refuse;
        self
    }

    /// Whether to ask for DPoP-bound tokens (RFC 9449): default
    /// [`DpopMode::Auto`], when the protected resource says it takes them
    /// (its metadata, or a `DPoP` challenge). The key is made by [`build`](Self::build), never shown, and
    /// kept in the token store beside the tokens bound to it (a later run
    /// needs it to present them).
    ///
    /// ```
    /// use mcp_auth::{DpopMode, HeadlessAuthorizer, OAuthProvider};
    /// use mcp_transport_http::HttpTransportBuilder;
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let url = "https://mcp.example.com/mcp";
    /// let service = HttpTransportBuilder::new(url).http_service()?;
    /// // Bearer tokens only, whatever the servers offer.
    /// let oauth = OAuthProvider::builder(url)
    ///     .authorizer(HeadlessAuthorizer::new(service.clone()))
    ///     .dpop(DpopMode::Off)
    ///     .build(service)?;
    /// # let _ = oauth;
    /// # Ok(())
    /// # }
    /// ```
    pub fn dpop(mut self, mode: DpopMode) -> Self {
        self.dpop = mode;
        self
    }

    /// Builds the provider, sending the flow's requests through `service`
    /// (the transport's:
    /// [`HttpTransportBuilder::http_service`](mcp_transport_http::HttpTransportBuilder::http_service)).
    ///
    /// Fails with [`AuthError::Config`] without an authorizer for the
    /// authorization code flow, and for an MCP URL that is plain `http` to
    /// a host that is not loopback (its tokens would travel in clear),
    /// unless [`allow_insecure_http`](Self::allow_insecure_http).
    ///
    /// ```
    /// use mcp_auth::{AuthError, HeadlessAuthorizer, OAuthProvider};
    /// use mcp_transport_http::HttpTransportBuilder;
    ///
    /// let url = "http://mcp.example.com/mcp";
    /// let service = HttpTransportBuilder::new(url).http_service().unwrap();
    /// let built = OAuthProvider::builder(url)
    ///     .authorizer(HeadlessAuthorizer::new(service.clone()))
    ///     .build(service);
    /// assert!(matches!(built, Err(AuthError::Config(_))));
    /// ```
    pub fn build(self, service: HttpService) -> Result<OAuthProvider, AuthError> {
        let origin = origin(&self.mcp_url)
            .ok_or_else(|| AuthError::Config(format!("{:?} is not a URL", self.mcp_url)))?;
        // Grants without a person need no authorizer (and ignore one).
        let machine = self.client_credentials || self.assertion.is_some();
        if !machine && self.authorizer.is_none() {
            return Err(AuthError::Config(
                "the authorization code flow needs an authorizer".into(),
            ));
        }
        let addresses = if self.refuse_internal {
            AddressPolicy::refuse_internal(&self.mcp_url)
        } else {
            AddressPolicy::default()
        };
        let fetcher = Fetcher {
            service,
            timeout: self.timeout,
            insecure_http: self.insecure_http,
            addresses,
            dpop: None,
        };
        // The token goes to the MCP server on every request: the rule of
        // the authorization servers' URLs holds for it too. The message
        // names the origin only (a query may hold a credential).
        fetcher.check_url(&self.mcp_url).map_err(|_| {
            AuthError::Config(format!(
                "the MCP server {origin} is neither https nor http on a loopback host: \
                 its access tokens would travel in clear; use https (or, for a test \
                 setup only, allow_insecure_http(true))"
            ))
        })?;
        let mut assertion = self.assertion;
        if let Some(grant) = assertion.as_mut() {
            grant.issuer = self
                .issuer
                .clone()
                .or_else(|| self.pre_registered.as_ref().and_then(|p| p.issuer.clone()));
        }
        Ok(OAuthProvider {
            inner: Arc::new(Inner {
                mcp_url: self.mcp_url.clone(),
                origin,
                fetcher,
                profile: ClientProfile {
                    client_name: self.client_name,
                    redirect_uri: self.redirect_uri,
                    metadata_url: self.metadata_url,
                    pre_registered: self.pre_registered,
                    mcp_url: self.mcp_url,
                    issuer: self.issuer,
                    client_credentials: self.client_credentials && assertion.is_none(),
                },
                authorizer: if machine { None } else { self.authorizer },
                assertion,
                store: self.store,
                dpop: match self.dpop {
                    DpopMode::Off => None,
                    mode => Some(Arc::new(Dpop::generate(mode)?)),
                },
                state: tokio::sync::Mutex::new(Default::default()),
                last_error: std::sync::Mutex::new(None),
            }),
        })
    }
}

/// The provider on an HTTP connection in one call:
/// [`HttpTransportBuilder::authorization`](mcp_transport_http::HttpTransportBuilder::authorization)
/// builds it on the transport's HTTP client (so set the client's options
/// first) and puts it on as the transport's header provider.
///
/// Fails as [`build`](OAuthProviderBuilder::build) does, with
/// [`AuthError::Config`] when the transport's HTTP client cannot be made,
/// and when the transport goes to another origin than the provider's MCP
/// URL (the provider would never send it a token).
///
/// ```
/// use mcp_auth::{HeadlessAuthorizer, OAuthProvider};
/// use mcp_transport_http::HttpTransportBuilder;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let url = "http://127.0.0.1:8080/mcp";
/// let transport = HttpTransportBuilder::new(url);
/// let authorizer = HeadlessAuthorizer::new(transport.http_service()?);
/// let transport = transport.authorization(OAuthProvider::builder(url).authorizer(authorizer))?;
/// # let _ = transport;
/// # Ok(())
/// # }
/// ```
impl mcp_transport_http::Authorization for OAuthProviderBuilder {
    type Error = AuthError;

    fn authorize(
        self,
        transport: mcp_transport_http::HttpTransportBuilder,
    ) -> Result<mcp_transport_http::HttpTransportBuilder, AuthError> {
        if origin(transport.url()) != origin(&self.mcp_url) {
            return Err(AuthError::Config(format!(
                "the OAuth provider is for {}, the transport goes to {}: give both the same MCP URL",
                origin(&self.mcp_url).unwrap_or_else(|| "an invalid URL".into()),
                origin(transport.url()).unwrap_or_else(|| "an invalid URL".into()),
            )));
        }
        let service = transport.http_service().map_err(|e| {
            AuthError::Config(format!(
                "the transport's HTTP client could not be made: {e}"
            ))
        })?;
        let provider = self.build(service)?;
        Ok(transport.header_provider(Arc::new(provider)))
    }
}
