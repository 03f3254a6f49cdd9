//! Secrets that never show in `Debug` output or logs.

use std::fmt;
use std::sync::Arc;

/// A secret string (a token, a client secret): `Debug` prints
/// `Secret(..)`, never the value.
///
/// ```
/// use mcp_auth::Secret;
/// let s = Secret::new("hunter2");
/// assert_eq!(format!("{s:?}"), "Secret(..)");
/// assert_eq!(s.expose(), "hunter2");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Arc<str>);

impl Secret {
    /// Wraps `value`.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(Arc::from(value.into()))
    }

    /// The value, for the one place that must send it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// A private key for `private_key_jwt` client authentication: a PEM
/// (PKCS#8) key and its JWS algorithm. `Debug` shows the algorithm only.
#[derive(Clone)]
pub struct PrivateKey {
    pub(crate) pem: Secret,
    pub(crate) algorithm: jsonwebtoken::Algorithm,
    pub(crate) key_id: Option<String>,
}

impl PrivateKey {
    /// A key from its PEM text and algorithm name (`ES256`, `RS256`, ...).
    /// Fails for an algorithm name this crate does not know or a PEM
    /// the algorithm cannot use.
    pub fn from_pem(pem: &str, algorithm: &str) -> Result<Self, crate::AuthError> {
        use jsonwebtoken::{Algorithm, EncodingKey};
        let alg: Algorithm = algorithm
            .parse()
            .map_err(|_| crate::AuthError::Config(format!("unknown JWS algorithm {algorithm}")))?;
        let ok = match alg {
            Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(pem.as_bytes()).is_ok(),
            Algorithm::EdDSA => EncodingKey::from_ed_pem(pem.as_bytes()).is_ok(),
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512 => EncodingKey::from_rsa_pem(pem.as_bytes()).is_ok(),
            _ => false,
        };
        if !ok {
            return Err(crate::AuthError::Config(format!(
                "the private key is not a PEM key for {algorithm}"
            )));
        }
        Ok(PrivateKey {
            pem: Secret::new(pem),
            algorithm: alg,
            key_id: None,
        })
    }

    /// Names the key (`kid` in the assertion's header).
    pub fn with_key_id(mut self, kid: impl Into<String>) -> Self {
        self.key_id = Some(kid.into());
        self
    }

    /// A signed client assertion (RFC 7523 §3): `iss` and `sub` the
    /// client id, `aud` the authorization server's issuer, valid 5 minutes.
    pub(crate) fn assertion(
        &self,
        client_id: &str,
        audience: &str,
    ) -> Result<String, crate::AuthError> {
        use jsonwebtoken::{EncodingKey, Header, encode};
        let pem = self.pem.expose().as_bytes();
        let key = match self.algorithm {
            jsonwebtoken::Algorithm::ES256 | jsonwebtoken::Algorithm::ES384 => {
                EncodingKey::from_ec_pem(pem)
            }
            jsonwebtoken::Algorithm::EdDSA => EncodingKey::from_ed_pem(pem),
            _ => EncodingKey::from_rsa_pem(pem),
        }
        .map_err(|e| crate::AuthError::Config(format!("the private key: {e}")))?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let claims = serde_json::json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + 300,
            "jti": oauth2::CsrfToken::new_random().secret(),
        });
        let mut header = Header::new(self.algorithm);
        header.kid = self.key_id.clone();
        encode(&header, &claims, &key)
            .map_err(|e| crate::AuthError::Config(format!("signing the client assertion: {e}")))
    }
}

impl fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PrivateKey")
            .field("algorithm", &self.algorithm)
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}
