//! OAuth for the `auth/...` scenarios: the library's provider, set up as
//! an application would from what the suite gives (credentials in
//! `MCP_CONFORMANCE_CONTEXT`), with an authorizer that takes the mock
//! authorization server's redirect without a person.

use mcp_auth::{
    EnterpriseIdp, HeadlessAuthorizer, JwtSource, OAuthProvider, PreRegistered, PrivateKey,
};
use mcp_client::http::HttpService;

use crate::context::Run;

/// This client's ID metadata document URL. The suite's authorization
/// server accepts it without fetching it (nothing is served there).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// Where the authorization server sends the person back: nothing listens,
/// since the headless authorizer reads the redirect without following it.
const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// The provider for `run`, or `None` for a scenario without authorization.
pub(crate) fn provider(run: &Run, service: &HttpService) -> Result<Option<OAuthProvider>, String> {
    if !run.scenario.starts_with("auth/") {
        return Ok(None);
    }
    let builder = OAuthProvider::builder(run.url.clone())
        .client_name("mcp-steady-conformance")
        .redirect_uri(REDIRECT_URI)
        .client_metadata_url(CLIENT_METADATA_URL)
        .authorizer(HeadlessAuthorizer::new(service.clone()));
    let id = run.context_str("client_id").map(str::to_owned);
    let secret = run.context_str("client_secret").map(str::to_owned);
    let builder = match (run.scenario.as_str(), id) {
        ("auth/client-credentials-jwt", Some(id)) => {
            let pem = run
                .context_str("private_key_pem")
                .ok_or("the context has no private_key_pem")?;
            let alg = run.context_str("signing_algorithm").unwrap_or("ES256");
            let key = PrivateKey::from_pem(pem, alg).map_err(|e| e.to_string())?;
            builder.client_credentials(PreRegistered::new(id, None).with_private_key(key))
        }
        ("auth/client-credentials-basic", Some(id)) => {
            builder.client_credentials(PreRegistered::new(id, secret))
        }
        ("auth/enterprise-managed-authorization", Some(id)) => {
            let field = |name: &str| {
                run.context_str(name)
                    .ok_or(format!("the context has no {name}"))
            };
            let idp = EnterpriseIdp::new(
                field("idp_token_endpoint")?,
                field("idp_client_id")?,
                JwtSource::fixed(field("idp_id_token")?),
            );
            builder.enterprise_managed(idp, PreRegistered::new(id, secret))
        }
        // The context also has tokens with a wrong audience and an expired
        // one, for clients that test refusals; a workload presents its
        // valid token.
        ("auth/wif-jwt-bearer", Some(id)) => {
            let jwt = run
                .context_str("valid_jwt")
                .ok_or("the context has no valid_jwt")?;
            builder
                .pre_registered(PreRegistered::new(id, None))
                .workload_identity(JwtSource::fixed(jwt))
        }
        (_, Some(id)) => {
            let mut credentials = PreRegistered::new(id, secret);
            if let Some(issuer) = run.context_str("issuer") {
                credentials = credentials.for_issuer(issuer);
            }
            builder.pre_registered(credentials)
        }
        (_, None) => builder,
    };
    builder
        .build(service.clone())
        .map(Some)
        .map_err(|e| e.to_string())
}
