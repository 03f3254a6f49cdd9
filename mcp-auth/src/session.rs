//! One authorization as the provider holds it, and as it is stored.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::client::{AuthMethod, ClientProfile, Registration};
use crate::flow::TokenSet;
use crate::secret::Secret;
use crate::store::StoredAuthorization;

/// Everything a token needs to be used and refreshed: one record.
pub(crate) struct Session {
    pub(crate) tokens: TokenSet,
    pub(crate) registration: Registration,
    pub(crate) token_endpoint: String,
    pub(crate) resource: Option<String>,
    pub(crate) obtained: Instant,
    /// Whether the grant's token requests carried DPoP proofs: its
    /// refreshes then do too.
    pub(crate) dpop: bool,
    /// Whether the token came from a refresh made for a 401: if the
    /// server refuses that one too, refreshing again cannot help.
    pub(crate) refreshed_on_challenge: bool,
}

impl Session {
    pub(crate) fn to_stored(&self) -> StoredAuthorization {
        let now = SystemTime::now();
        StoredAuthorization {
            issuer: self.registration.issuer.clone(),
            client_id: self.registration.client_id.clone(),
            client_secret: self
                .registration
                .client_secret
                .as_ref()
                .map(|s| s.expose().to_owned()),
            auth_method: self.registration.method.as_str().to_owned(),
            token_endpoint: self.token_endpoint.clone(),
            resource: self.resource.clone(),
            access_token: self.tokens.access.expose().to_owned(),
            refresh_token: self.tokens.refresh.as_ref().map(|s| s.expose().to_owned()),
            refresh_at: self.tokens.refresh_at.and_then(|at| {
                let left = at.saturating_duration_since(Instant::now());
                (now + left)
                    .duration_since(UNIX_EPOCH)
                    .ok()
                    .map(|d| d.as_secs())
            }),
            scopes: self.tokens.scopes.clone(),
            dpop_bound: self.tokens.bound,
            // Set by the provider, which holds the key.
            dpop_key: None,
        }
    }

    pub(crate) fn from_stored(record: StoredAuthorization, profile: &ClientProfile) -> Session {
        let now_unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let method = AuthMethod::from_name(&record.auth_method).unwrap_or(AuthMethod::None);
        // A key is configuration, never stored: it comes from the setup.
        let private_key = profile
            .pre_registered
            .as_ref()
            .filter(|p| p.client_id == record.client_id)
            .and_then(|p| p.private_key.clone());
        Session {
            tokens: TokenSet {
                access: Secret::new(record.access_token),
                refresh: record.refresh_token.map(Secret::new),
                refresh_at: record
                    .refresh_at
                    .map(|at| Instant::now() + Duration::from_secs(at.saturating_sub(now_unix))),
                scopes: record.scopes,
                bound: record.dpop_bound,
            },
            registration: Registration {
                issuer: record.issuer,
                client_id: record.client_id,
                client_secret: record.client_secret.map(Secret::new),
                private_key,
                method,
            },
            token_endpoint: record.token_endpoint,
            resource: record.resource,
            dpop: record.dpop_bound || record.dpop_key.is_some(),
            // Older than any challenge that may come.
            obtained: Instant::now() - Duration::from_secs(1),
            refreshed_on_challenge: false,
        }
    }
}
