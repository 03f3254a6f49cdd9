//! The grant that obtains an authorization's tokens: the authorization
//! code with a person, an assertion (enterprise-managed or workload
//! identity, see `grants`), or client credentials.

use crate::client::Registration;
use crate::discovery::Discovered;
use crate::fetch::Fetcher;
use crate::flow::{CodeRequest, TokenSet, authorization_code, client_credentials};
use crate::grants::AssertionGrant;
use crate::{AuthError, Authorizer};

/// Who grants: a person through an authorizer, else an assertion, else
/// the client itself.
pub(crate) struct Grantor<'a> {
    pub(crate) authorizer: Option<&'a dyn Authorizer>,
    pub(crate) assertion: Option<&'a AssertionGrant>,
    /// Where the authorizer's redirect comes back.
    pub(crate) redirect_uri: &'a str,
    /// The MCP server's URL (an assertion's audience check).
    pub(crate) mcp_url: &'a str,
}

/// Tokens for `scopes` from the authorization server `found` names, by
/// the grant `grantor` stands for; `fetcher` carries the DPoP proofs, if
/// the token is to be bound.
pub(crate) async fn obtain_tokens(
    grantor: &Grantor<'_>,
    fetcher: &Fetcher,
    registration: &Registration,
    found: &Discovered,
    scopes: &[String],
) -> Result<TokenSet, AuthError> {
    let metadata = &found.server;
    let resource = found.resource.as_deref();
    match (grantor.authorizer, grantor.assertion) {
        (Some(authorizer), _) => {
            let request = CodeRequest {
                metadata,
                resource,
                scopes,
                redirect_uri: grantor.redirect_uri,
                require_listed_pkce: found.strict,
            };
            authorization_code(fetcher, authorizer, registration, request).await
        }
        (None, Some(grant)) => {
            grant
                .tokens(
                    fetcher,
                    registration,
                    metadata,
                    resource,
                    grantor.mcp_url,
                    scopes,
                )
                .await
        }
        (None, None) => {
            client_credentials(
                fetcher,
                registration,
                &metadata.token_endpoint,
                resource,
                scopes,
            )
            .await
        }
    }
}
