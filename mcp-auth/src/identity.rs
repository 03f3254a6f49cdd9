//! Client identity, per issuer: the registration an authorization server
//! knows this client by, made once and kept (never presented to another).

use std::collections::HashMap;

use crate::AuthError;
use crate::client::{ClientProfile, Registration, identify};
use crate::fetch::Fetcher;
use crate::grants::AssertionGrant;
use crate::metadata::ServerMetadata;

/// The registration at the server `metadata` describes: the one kept in
/// `registrations` for its issuer, else a new one (pre-registered
/// credentials, a client ID metadata document or dynamic registration;
/// an assertion grant's own rule), kept there.
pub(crate) async fn client_identity(
    registrations: &mut HashMap<String, Registration>,
    fetcher: &Fetcher,
    profile: &ClientProfile,
    assertion: Option<&AssertionGrant>,
    metadata: &ServerMetadata,
) -> Result<Registration, AuthError> {
    if let Some(known) = registrations.get(&metadata.issuer) {
        return Ok(known.clone());
    }
    let made = match assertion {
        Some(grant) => grant.identify(fetcher, profile, metadata).await?,
        None => identify(fetcher, profile, metadata).await?,
    };
    registrations.insert(metadata.issuer.clone(), made.clone());
    Ok(made)
}

/// Whether a grant's refusal says the server no longer knows the client
/// (which then registers again next time).
pub(crate) fn forgets_the_client(e: &AuthError) -> bool {
    matches!(e, AuthError::Grant { error, .. }
        if error == "invalid_client" || error == "unauthorized_client")
}
