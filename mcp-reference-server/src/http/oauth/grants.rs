//! What the authorization server has handed out: registered clients,
//! codes waiting to be exchanged, access and refresh tokens.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// A registered client.
pub(super) struct Client {
    pub(super) secret: Option<String>,
    /// `client_secret_basic`, `client_secret_post` or `none`.
    pub(super) method: String,
    /// Empty for a pre-registered client: any loopback redirect will do.
    pub(super) redirect_uris: Vec<String>,
}

/// An authorization code, until it is exchanged (once).
pub(super) struct Code {
    pub(super) client_id: String,
    pub(super) redirect_uri: String,
    pub(super) challenge: String,
    pub(super) scopes: Vec<String>,
}

/// An access token.
pub(super) struct Access {
    pub(super) scopes: Vec<String>,
    pub(super) expires_at: Instant,
}

/// A refresh token.
pub(super) struct Refresh {
    pub(super) client_id: String,
    pub(super) scopes: Vec<String>,
}

/// Everything handed out, behind the authority's lock.
#[derive(Default)]
pub(super) struct Grants {
    pub(super) clients: HashMap<String, Client>,
    pub(super) codes: HashMap<String, Code>,
    pub(super) access: HashMap<String, Access>,
    pub(super) refresh: HashMap<String, Refresh>,
    counter: u64,
}

impl Grants {
    /// A fresh value, unguessable enough for a test: a hash of a counter,
    /// the time and `what`.
    pub(super) fn fresh(&mut self, what: &str) -> String {
        self.counter += 1;
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let digest = Sha256::digest(format!("{what}/{}/{nanos}", self.counter));
        let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
        format!("{what}-{}-{hex}", self.counter)
    }

    /// Issues an access token (and a refresh token if asked), and returns
    /// the token endpoint's answer.
    pub(super) fn issue(
        &mut self,
        client_id: &str,
        scopes: Vec<String>,
        lifetime: Duration,
        refresh: bool,
    ) -> Value {
        let access = self.fresh("access");
        self.access.insert(
            access.clone(),
            Access {
                scopes: scopes.clone(),
                expires_at: Instant::now() + lifetime,
            },
        );
        let mut answer = json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": lifetime.as_secs(),
            "scope": scopes.join(" "),
        });
        if refresh {
            let token = self.fresh("refresh");
            self.refresh.insert(
                token.clone(),
                Refresh {
                    client_id: client_id.to_owned(),
                    scopes,
                },
            );
            answer["refresh_token"] = json!(token);
        }
        answer
    }

    /// The scopes of a valid, unexpired access token.
    pub(super) fn scopes_of(&self, token: &str) -> Option<&[String]> {
        self.access
            .get(token)
            .filter(|a| a.expires_at > Instant::now())
            .map(|a| a.scopes.as_slice())
    }

    /// Every access token expires now (refresh tokens stay good).
    pub(super) fn expire_access(&mut self) {
        let now = Instant::now();
        for a in self.access.values_mut() {
            a.expires_at = now;
        }
    }

    /// Every access and refresh token is forgotten.
    pub(super) fn revoke_all(&mut self) {
        self.access.clear();
        self.refresh.clear();
    }
}

/// The PKCE S256 challenge of a verifier (RFC 7636 §4.2).
pub(super) fn s256(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Whether a verifier has the form RFC 7636 §4.1 asks: 43 to 128
/// unreserved characters.
pub(super) fn verifier_well_formed(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s256_matches_rfc_7636_appendix_b() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert!(verifier_well_formed(verifier));
        assert_eq!(
            s256(verifier),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn expired_tokens_are_refused() {
        let mut grants = Grants::default();
        let answer = grants.issue("c", vec!["mcp".into()], Duration::from_secs(60), true);
        let token = answer["access_token"].as_str().unwrap().to_owned();
        assert!(grants.scopes_of(&token).is_some());
        grants.expire_access();
        assert!(grants.scopes_of(&token).is_none());
        assert_eq!(grants.refresh.len(), 1);
    }
}
