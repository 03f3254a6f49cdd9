//! DPoP (RFC 9449, SEP-1932): sender-constrained tokens. An ES256 key
//! pair made per provider, a signed proof on every token request and on
//! every request that carries a DPoP-bound token, and the nonces servers
//! hand out (`DPoP-Nonce`), kept per origin.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::{Value, json};

use crate::AuthError;
use crate::origin::origin;
use crate::secret::Secret;

/// The response header a server gives a nonce in (RFC 9449 §8, §9).
pub(crate) const NONCE_HEADER: &str = "dpop-nonce";

/// The error a server answers when a proof lacks its nonce (RFC 9449 §8, §9).
pub(crate) const USE_DPOP_NONCE: &str = "use_dpop_nonce";

/// The only algorithm the proofs use.
const ALGORITHM: &str = "ES256";

/// Whether an [`OAuthProvider`](crate::OAuthProvider) asks for DPoP-bound
/// tokens (RFC 9449). Whatever the mode, a token is presented as its
/// `token_type` says: `DPoP` with a proof, `Bearer` without.
///
/// What counts is the protected resource (the MCP server), which has to
/// take the token: an authorization server that lists DPoP (as most do)
/// says nothing about the resource, and a resource that knows only
/// `Bearer` refuses a DPoP-bound token.
///
/// ```
/// use mcp_auth::{DpopMode, HeadlessAuthorizer, OAuthProvider};
/// use mcp_transport_http::HttpTransportBuilder;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let url = "https://mcp.example.com/mcp";
/// let service = HttpTransportBuilder::new(url).http_service()?;
/// let oauth = OAuthProvider::builder(url)
///     .authorizer(HeadlessAuthorizer::new(service.clone()))
///     .dpop(DpopMode::On)
///     .build(service)?;
/// # let _ = oauth;
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum DpopMode {
    /// Never: token requests carry no proof, so tokens come unbound.
    Off,
    /// Always: every token request carries a proof, whatever the servers
    /// say (a server that does not know DPoP ignores the header; a
    /// resource that knows only `Bearer` then refuses the bound token).
    On,
    /// When the protected resource says it takes DPoP-bound tokens: its
    /// metadata (RFC 9728 §2) lists `ES256` in
    /// `dpop_signing_alg_values_supported` or says
    /// `dpop_bound_access_tokens_required`, or one of the challenges of its
    /// 401 (`WWW-Authenticate`) is `DPoP` (RFC 9449 §7.1). What the
    /// authorization server lists is not enough. A bound token (one stored
    /// by an earlier run, say) that the resource refuses with challenges of
    /// which none is `DPoP` leads to one fresh authorization, for a
    /// `Bearer` token. The default.
    #[default]
    Auto,
}

/// What a protected resource says about DPoP, for [`DpopMode::wanted`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ResourceDpop {
    /// Its metadata lists `ES256` in `dpop_signing_alg_values_supported`.
    pub(crate) lists_es256: bool,
    /// Its metadata says `dpop_bound_access_tokens_required`.
    pub(crate) required: bool,
    /// One of its challenges is `DPoP`.
    pub(crate) challenged: bool,
    /// It refused a DPoP-bound token with challenges of which none is
    /// `DPoP`: whatever its metadata says, it takes `Bearer` only.
    pub(crate) refused_bound: bool,
}

impl ResourceDpop {
    /// From the resource's metadata (if it serves any) and its challenges.
    pub(crate) fn new(
        metadata: Option<&crate::ResourceMetadata>,
        challenge: &crate::BearerChallenge,
        refused_bound: bool,
    ) -> ResourceDpop {
        ResourceDpop {
            lists_es256: metadata
                .and_then(|m| m.dpop_signing_alg_values_supported.as_deref())
                .is_some_and(|algs| algs.iter().any(|a| a == ALGORITHM)),
            required: metadata.is_some_and(|m| m.dpop_bound_access_tokens_required),
            challenged: challenge.offers_dpop(),
            refused_bound,
        }
    }
}

impl DpopMode {
    /// Whether to send proofs with the token requests for this resource.
    pub(crate) fn wanted(self, resource: ResourceDpop) -> bool {
        match self {
            DpopMode::Off => false,
            DpopMode::On => true,
            DpopMode::Auto => {
                !resource.refused_bound
                    && (resource.required || resource.lists_es256 || resource.challenged)
            }
        }
    }
}

/// A provider's DPoP state: its key, and the nonces servers gave it.
pub(crate) struct Dpop {
    pub(crate) mode: DpopMode,
    /// Replaced once at most: by the key a stored token is bound to.
    key: RwLock<Key>,
    rng: SystemRandom,
    /// The last nonce of each origin (`scheme://host:port`).
    nonces: Mutex<HashMap<String, String>>,
}

impl fmt::Debug for Dpop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The key stays out; the nonces are not secret but say nothing useful.
        f.debug_struct("Dpop")
            .field("mode", &self.mode)
            .field("algorithm", &ALGORITHM)
            .finish_non_exhaustive()
    }
}

/// One key pair.
struct Key {
    pair: EcdsaKeyPair,
    /// The public key as a JWK (RFC 7518 §6.2): what every proof carries.
    jwk: Value,
    /// The private key as PKCS#8, base64url: what a store keeps.
    pkcs8: Secret,
}

impl Key {
    fn from_pkcs8(pkcs8: &[u8], rng: &SystemRandom) -> Result<Key, AuthError> {
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8, rng)
            .map_err(|_| AuthError::Config("the DPoP key is not a P-256 PKCS#8 key".into()))?;
        // An uncompressed point: 0x04, then x and y of 32 bytes each.
        let point = pair.public_key().as_ref();
        if point.len() != 65 || point[0] != 4 {
            return Err(AuthError::Config(
                "the DPoP public key is not an uncompressed P-256 point".into(),
            ));
        }
        let jwk = json!({
            "kty": "EC",
            "crv": "P-256",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..]),
        });
        Ok(Key {
            pair,
            jwk,
            pkcs8: Secret::new(URL_SAFE_NO_PAD.encode(pkcs8)),
        })
    }
}

impl Dpop {
    /// A fresh P-256 key pair, in memory.
    pub(crate) fn generate(mode: DpopMode) -> Result<Dpop, AuthError> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| AuthError::Config("could not generate a DPoP key".into()))?;
        let key = Key::from_pkcs8(pkcs8.as_ref(), &rng)?;
        Ok(Dpop {
            mode,
            key: RwLock::new(key),
            rng,
            nonces: Mutex::new(HashMap::new()),
        })
    }

    /// The private key, for the token store only (a bound token is of no
    /// use without it).
    pub(crate) fn export(&self) -> Option<Secret> {
        self.key.read().ok().map(|k| k.pkcs8.clone())
    }

    /// Takes the key a stored token is bound to; `false` if it is not one.
    pub(crate) fn adopt(&self, exported: &str) -> bool {
        let key = URL_SAFE_NO_PAD
            .decode(exported)
            .ok()
            .and_then(|der| Key::from_pkcs8(&der, &self.rng).ok());
        match (key, self.key.write()) {
            (Some(key), Ok(mut current)) => {
                *current = key;
                true
            }
            _ => false,
        }
    }

    /// The JWK SHA-256 thumbprint of the public key (RFC 7638): the
    /// `cnf.jkt` a server binds tokens to.
    #[cfg(test)]
    pub(crate) fn thumbprint(&self) -> String {
        let jwk = self.jwk();
        // The required members in lexicographic order, no whitespace.
        let canonical = format!(
            r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
            jwk["x"].as_str().unwrap_or_default(),
            jwk["y"].as_str().unwrap_or_default()
        );
        URL_SAFE_NO_PAD.encode(ring::digest::digest(
            &ring::digest::SHA256,
            canonical.as_bytes(),
        ))
    }

    /// A proof for one request (RFC 9449 §4.2): `method` and `url` as
    /// sent (the URL loses its query and fragment), `ath` when an access
    /// token goes with it, and the nonce kept for the URL's origin.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
    ) -> Result<String, AuthError> {
        let nonce = origin(url).and_then(|o| self.nonce(&o));
        self.sign_proof(method, url, access_token, nonce.as_deref(), now())
    }

    fn sign_proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
        iat: u64,
    ) -> Result<String, AuthError> {
        let htu = htu(url)?;
        let mut jti = [0u8; 16];
        self.rng
            .fill(&mut jti)
            .map_err(|_| AuthError::Config("no randomness for a DPoP proof".into()))?;
        let key = self
            .key
            .read()
            .map_err(|_| AuthError::Config("the DPoP key is unusable".into()))?;
        let header = json!({"typ": "dpop+jwt", "alg": ALGORITHM, "jwk": key.jwk});
        let mut claims = json!({
            "jti": URL_SAFE_NO_PAD.encode(jti),
            "htm": method,
            "htu": htu,
            "iat": iat,
        });
        if let Some(token) = access_token {
            claims["ath"] = json!(access_token_hash(token));
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = json!(nonce);
        }
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        // ring's FIXED encoding is r || s, what JWS ES256 wants (RFC 7518 §3.4).
        let signature = key
            .pair
            .sign(&self.rng, input.as_bytes())
            .map_err(|_| AuthError::Config("could not sign a DPoP proof".into()))?;
        Ok(format!(
            "{input}.{}",
            URL_SAFE_NO_PAD.encode(signature.as_ref())
        ))
    }

    #[cfg(test)]
    fn jwk(&self) -> Value {
        self.key.read().unwrap().jwk.clone()
    }

    /// The nonce kept for `origin`.
    pub(crate) fn nonce(&self, origin: &str) -> Option<String> {
        self.nonces.lock().ok()?.get(origin).cloned()
    }

    /// Keeps the `DPoP-Nonce` of an answer from `url`, if it has one: the
    /// latest replaces the one before (RFC 9449 §8, §9). Whether it had one.
    pub(crate) fn observe(&self, url: &str, headers: &http::HeaderMap) -> bool {
        let Some(nonce) = headers
            .get(NONCE_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|n| !n.is_empty())
        else {
            return false;
        };
        let (Some(origin), Ok(mut nonces)) = (origin(url), self.nonces.lock()) else {
            return false;
        };
        if nonces.get(&origin).map(String::as_str) != Some(nonce) {
            tracing::debug!(%origin, "new DPoP nonce");
            nonces.insert(origin, nonce.to_owned());
        }
        true
    }
}

/// `htu`: the URL without its query and fragment (RFC 9449 §4.2).
fn htu(url: &str) -> Result<String, AuthError> {
    let mut parsed = url::Url::parse(url)
        .map_err(|e| AuthError::Protocol(format!("{url:?} is not a URL for a DPoP proof: {e}")))?;
    parsed.set_query(None);
    parsed.set_fragment(None);
    Ok(parsed.into())
}

/// `ath`: base64url of the SHA-256 of the token's ASCII (RFC 9449 §4.2).
pub(crate) fn access_token_hash(token: &str) -> String {
    URL_SAFE_NO_PAD.encode(ring::digest::digest(
        &ring::digest::SHA256,
        token.as_bytes(),
    ))
}

/// Whether a token endpoint's error body is `use_dpop_nonce` (RFC 9449 §8).
pub(crate) fn is_use_nonce_error(body: &[u8]) -> bool {
    serde_json::from_slice::<Value>(body)
        .ok()
        .is_some_and(|v| v["error"] == USE_DPOP_NONCE)
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(part: &str) -> Value {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    }

    /// Checks the signature with the `jwk` of the proof's own header.
    fn verified(proof: &str) -> (Value, Value) {
        let parts: Vec<&str> = proof.split('.').collect();
        assert_eq!(parts.len(), 3);
        let (header, claims) = (decode(parts[0]), decode(parts[1]));
        let x = URL_SAFE_NO_PAD
            .decode(header["jwk"]["x"].as_str().unwrap())
            .unwrap();
        let y = URL_SAFE_NO_PAD
            .decode(header["jwk"]["y"].as_str().unwrap())
            .unwrap();
        let point = [&[4u8][..], &x, &y].concat();
        let signature = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        ring::signature::UnparsedPublicKey::new(&ring::signature::ECDSA_P256_SHA256_FIXED, point)
            .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature)
            .expect("the proof's signature verifies with its jwk");
        (header, claims)
    }

    #[test]
    fn a_proof_is_a_signed_dpop_jwt_with_the_public_key_only() {
        let dpop = Dpop::generate(DpopMode::On).unwrap();
        let proof = dpop
            .proof("POST", "https://as.example.com/token?x=1#f", None)
            .unwrap();
        let (header, claims) = verified(&proof);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert_eq!(header["jwk"]["kty"], "EC");
        assert_eq!(header["jwk"]["crv"], "P-256");
        assert!(header["jwk"].get("d").is_none(), "no private part");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://as.example.com/token");
        assert!(claims["iat"].as_u64().unwrap().abs_diff(now()) < 5);
        assert!(claims.get("ath").is_none(), "no token, no ath");
        assert!(claims.get("nonce").is_none(), "no nonce given yet");
        assert!(claims["jti"].as_str().unwrap().len() >= 16);
    }

    #[test]
    fn each_proof_has_its_own_jti() {
        let dpop = Dpop::generate(DpopMode::On).unwrap();
        let jtis: std::collections::HashSet<String> = (0..20)
            .map(|_| {
                let p = dpop.proof("GET", "https://h/mcp", None).unwrap();
                verified(&p).1["jti"].as_str().unwrap().to_owned()
            })
            .collect();
        assert_eq!(jtis.len(), 20);
    }

    #[test]
    fn ath_is_the_rfc_9449_example() {
        // RFC 9449 §7.1: the access token and the ath of its proof.
        assert_eq!(
            access_token_hash("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"),
            "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"
        );
        let dpop = Dpop::generate(DpopMode::On).unwrap();
        let p = dpop
            .proof(
                "POST",
                "https://h/mcp",
                Some("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"),
            )
            .unwrap();
        assert_eq!(
            verified(&p).1["ath"],
            "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"
        );
    }

    #[test]
    fn nonces_are_kept_per_origin_and_replaced() {
        let dpop = Dpop::generate(DpopMode::On).unwrap();
        let mut headers = http::HeaderMap::new();
        assert!(!dpop.observe("https://as.example.com/token", &headers));
        headers.insert(NONCE_HEADER, "n1".parse().unwrap());
        assert!(dpop.observe("https://as.example.com/token", &headers));
        let p = dpop
            .proof("POST", "https://as.example.com/token", None)
            .unwrap();
        assert_eq!(verified(&p).1["nonce"], "n1");
        let other = dpop
            .proof("POST", "https://rs.example.com/mcp", None)
            .unwrap();
        assert!(verified(&other).1.get("nonce").is_none(), "another origin");
        headers.insert(NONCE_HEADER, "n2".parse().unwrap());
        dpop.observe("https://as.example.com/other", &headers);
        let p = dpop
            .proof("POST", "https://as.example.com/token", None)
            .unwrap();
        assert_eq!(verified(&p).1["nonce"], "n2");
    }

    #[test]
    fn the_thumbprint_is_rfc_7638() {
        let dpop = Dpop::generate(DpopMode::On).unwrap();
        let t = dpop.thumbprint();
        assert_eq!(URL_SAFE_NO_PAD.decode(&t).unwrap().len(), 32);
        // Fixed iat: the proof builder does not read the clock itself.
        let p = dpop
            .sign_proof("GET", "https://h/", None, Some("n"), 7)
            .unwrap();
        let (_, claims) = verified(&p);
        assert_eq!(claims["iat"], 7);
        assert_eq!(claims["nonce"], "n");
    }

    #[test]
    fn an_exported_key_is_adopted_whole() {
        let (a, b) = (
            Dpop::generate(DpopMode::On).unwrap(),
            Dpop::generate(DpopMode::On).unwrap(),
        );
        assert_ne!(a.thumbprint(), b.thumbprint());
        assert!(b.adopt(a.export().unwrap().expose()));
        assert_eq!(a.thumbprint(), b.thumbprint());
        verified(&b.proof("GET", "https://h/", None).unwrap());
        assert!(!b.adopt("not a key"));
        assert_eq!(a.thumbprint(), b.thumbprint(), "kept on a bad one");
    }

    fn prm(extra: Value) -> crate::ResourceMetadata {
        let mut m = json!({
            "resource": "http://localhost:3001/mcp",
            "authorization_servers": ["http://localhost:3002"],
        });
        for (k, v) in extra.as_object().unwrap() {
            m[k] = v.clone();
        }
        serde_json::from_value(m).unwrap()
    }

    fn auto(metadata: Option<&crate::ResourceMetadata>, header: &str, refused: bool) -> bool {
        let challenge = crate::BearerChallenge::parse(header);
        DpopMode::Auto.wanted(ResourceDpop::new(metadata, &challenge, refused))
    }

    #[test]
    fn auto_follows_the_resource_not_the_authorization_server() {
        let plain = prm(json!({}));
        let bearer = r#"Bearer error="invalid_token", resource_metadata="http://h/p""#;
        // The authorization server's listing is not an input at all: a
        // resource that says nothing of DPoP, and challenges with Bearer,
        // gets Bearer tokens.
        assert!(!auto(Some(&plain), bearer, false));
        assert!(!auto(None, bearer, false));
        assert!(!auto(None, "", false));
        // The resource's metadata says so.
        let es = prm(json!({"dpop_signing_alg_values_supported": ["ES256"]}));
        let rs = prm(json!({"dpop_signing_alg_values_supported": ["RS256"]}));
        let required = prm(json!({"dpop_bound_access_tokens_required": true}));
        assert!(auto(Some(&es), bearer, false));
        assert!(!auto(Some(&rs), bearer, false));
        assert!(auto(Some(&required), "", false));
        // Or a DPoP challenge, anywhere among its challenges.
        assert!(auto(
            Some(&plain),
            r#"Bearer realm="x", DPoP algs="ES256""#,
            false
        ));
        // A resource that refused a bound token with Bearer challenges only
        // takes Bearer, whatever its metadata says.
        assert!(!auto(Some(&es), bearer, true));
        assert!(DpopMode::On.wanted(ResourceDpop::default()));
        assert!(!DpopMode::Off.wanted(ResourceDpop {
            required: true,
            challenged: true,
            ..ResourceDpop::default()
        }));
    }

    /// The exact inputs of the official `auth/dpop` and `auth/dpop-nonce`
    /// scenarios: resource metadata without DPoP fields, and a first 401
    /// whose only challenge is `DPoP`: its scheme is the only signal.
    #[test]
    fn the_conformance_dpop_scenarios_get_bound_tokens() {
        let metadata = prm(json!({"scopes_supported": ["mcp:basic"]}));
        let url = "http://localhost:3001/.well-known/oauth-protected-resource/mcp";
        assert!(auto(
            Some(&metadata),
            &format!(r#"DPoP resource_metadata="{url}""#),
            false
        ));
        assert!(auto(
            Some(&metadata),
            &format!(r#"DPoP error="use_dpop_nonce", resource_metadata="{url}""#),
            false
        ));
    }

    #[test]
    fn debug_shows_no_key() {
        let dpop = Dpop::generate(DpopMode::Auto).unwrap();
        let shown = format!("{dpop:?}");
        assert!(!shown.contains(dpop.jwk()["x"].as_str().unwrap()));
        assert!(!shown.contains(dpop.export().unwrap().expose()));
        assert!(shown.contains("ES256"));
    }

    #[test]
    fn use_dpop_nonce_is_read_from_the_error_body() {
        assert!(is_use_nonce_error(br#"{"error":"use_dpop_nonce"}"#));
        assert!(!is_use_nonce_error(br#"{"error":"invalid_grant"}"#));
        assert!(!is_use_nonce_error(b"not json"));
    }
}
