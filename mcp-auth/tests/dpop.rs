//! DPoP (RFC 9449) against an in-process authorization server and MCP
//! server that check every proof: its signature with the `jwk` it
//! carries, `typ`, `htm`, `htu`, `iat`, a `jti` never seen before, `ath`
//! and the key the token is bound to; and that ask for nonces.

mod common;

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use common::{Seen, send, transport};
use http::{Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use mcp_auth::{DpopMode, HeadlessAuthorizer, OAuthProvider};
use mcp_transport::Transport;
use mcp_transport_http::HttpTransportBuilder;
use serde_json::{Value, json};
use tokio::net::TcpListener;

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

const AS_NONCE: &str = "as-nonce-1";

/// What the servers do, and what they saw.
#[derive(Default)]
struct World {
    /// The AS metadata lists ES256 for proofs.
    advertise_dpop: bool,
    /// The token endpoint wants `AS_NONCE`.
    as_nonce: bool,
    /// The MCP endpoint wants the nonce it last gave (`rs-…`).
    rs_nonce: bool,
    /// The MCP endpoint hands a new nonce on each success.
    rotate_rs_nonce: bool,
    /// The MCP endpoint knows only `Bearer` (as the Python and TypeScript
    /// SDKs' bearer middleware): its challenges are `Bearer`, and it
    /// refuses the `DPoP` scheme.
    rs_bearer_only: bool,
    /// Requests the Bearer-only endpoint refused for their `DPoP` scheme.
    refused_dpop: u32,
    /// The current MCP nonce.
    rs_current: u32,
    expires_in: u64,
    counter: u32,
    /// Tokens: the JWK thumbprint they are bound to (`None`: Bearer).
    tokens: HashMap<String, Option<String>>,
    jtis: HashSet<String>,
    /// Everything a proof or a token got wrong.
    faults: Vec<String>,
    seen: Vec<Seen>,
}

/// The MCP server and, on another origin, its authorization server: one
/// world, two listeners.
struct Servers {
    addr: SocketAddr,
    world: Arc<Mutex<World>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Servers {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Servers {
    async fn start(change: impl FnOnce(&mut World)) -> Servers {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let as_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let as_addr = as_listener.local_addr().unwrap();
        let bases = Arc::new((format!("http://{addr}"), format!("http://{as_addr}")));
        let mut world = World {
            advertise_dpop: true,
            expires_in: 3600,
            ..World::default()
        };
        change(&mut world);
        let world = Arc::new(Mutex::new(world));
        let shared = world.clone();
        let task = tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    a = listener.accept() => a,
                    a = as_listener.accept() => a,
                };
                let Ok((stream, _)) = accepted else { break };
                let (world, bases) = (shared.clone(), bases.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(
                        move |request: http::Request<hyper::body::Incoming>| {
                            let (world, bases) = (world.clone(), bases.clone());
                            async move {
                                let seen = Seen::read(request).await;
                                let mut w = world.lock().unwrap();
                                w.seen.push(seen.clone());
                                Ok::<_, Infallible>(handle(&bases, &mut w, &seen))
                            }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Servers { addr, world, task }
    }

    fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base())
    }

    fn seen_at(&self, path: &str) -> Vec<Seen> {
        let w = self.world.lock().unwrap();
        w.seen.iter().filter(|s| s.path == path).cloned().collect()
    }

    fn faults(&self) -> Vec<String> {
        self.world.lock().unwrap().faults.clone()
    }

    fn jtis(&self) -> usize {
        self.world.lock().unwrap().jtis.len()
    }
}

fn answer(status: StatusCode, headers: &[(&str, String)], body: Value) -> Response<Body> {
    let mut r = Response::builder()
        .status(status)
        .header("content-type", "application/json");
    for (name, value) in headers {
        r = r.header(*name, value.as_str());
    }
    r.body(Full::new(Bytes::from(body.to_string())).boxed())
        .unwrap()
}

/// One handler for both origins: `bases` is (MCP server, authorization server).
fn handle(bases: &(String, String), w: &mut World, seen: &Seen) -> Response<Body> {
    let (rs, base) = (bases.0.as_str(), bases.1.as_str());
    match (seen.method.as_str(), seen.path.as_str()) {
        ("GET", "/.well-known/oauth-protected-resource/mcp") => answer(
            StatusCode::OK,
            &[],
            json!({"resource": format!("{rs}/mcp"), "authorization_servers": [base]}),
        ),
        ("GET", "/.well-known/oauth-authorization-server") => {
            let mut m = json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "registration_endpoint": format!("{base}/register"),
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "authorization_response_iss_parameter_supported": true,
            });
            if w.advertise_dpop {
                m["dpop_signing_alg_values_supported"] = json!(["ES256", "RS256"]);
            }
            answer(StatusCode::OK, &[], m)
        }
        ("POST", "/register") => answer(
            StatusCode::CREATED,
            &[],
            json!({"client_id": "public-client", "token_endpoint_auth_method": "none"}),
        ),
        ("GET", "/authorize") => {
            let q = seen.query_pairs();
            let mut location = url::Url::parse(&q["redirect_uri"]).unwrap();
            location
                .query_pairs_mut()
                .append_pair("code", "the-code")
                .append_pair("state", &q["state"])
                .append_pair("iss", base);
            Response::builder()
                .status(StatusCode::FOUND)
                .header("location", location.as_str())
                .body(Full::new(Bytes::new()).boxed())
                .unwrap()
        }
        ("POST", "/token") => token(base, w, seen),
        ("POST", "/mcp") => mcp(rs, w, seen),
        _ => answer(StatusCode::NOT_FOUND, &[], json!({})),
    }
}

/// A checked proof: its claims and its key's thumbprint.
struct Proof {
    claims: Value,
    jkt: String,
}

/// Checks a proof as RFC 9449 §4.3 has a server do, on its own code path
/// (the signature by ring with the key the header carries, the thumbprint
/// by RFC 7638).
fn check_proof(w: &mut World, seen: &Seen, htu: &str) -> Result<Proof, String> {
    let values: Vec<_> = seen.headers.get_all("dpop").iter().collect();
    let [value] = values.as_slice() else {
        return Err(format!("{} DPoP headers", values.len()));
    };
    let proof = value.to_str().map_err(|e| e.to_string())?;
    let parts: Vec<&str> = proof.split('.').collect();
    let [h, c, s] = parts.as_slice() else {
        return Err("not a JWS".into());
    };
    let decode = |p: &str| -> Result<Value, String> {
        let bytes = URL_SAFE_NO_PAD.decode(p).map_err(|e| e.to_string())?;
        serde_json::from_slice(&bytes).map_err(|e| e.to_string())
    };
    let (header, claims) = (decode(h)?, decode(c)?);
    if header["typ"] != "dpop+jwt" || header["alg"] != "ES256" {
        return Err(format!("header {header}"));
    }
    let jwk = &header["jwk"];
    if jwk.get("d").is_some() || jwk["kty"] != "EC" || jwk["crv"] != "P-256" {
        return Err(format!("jwk {jwk}"));
    }
    let coordinate = |name: &str| {
        URL_SAFE_NO_PAD
            .decode(jwk[name].as_str().unwrap_or_default())
            .map_err(|e| e.to_string())
    };
    let point = [vec![4u8], coordinate("x")?, coordinate("y")?].concat();
    let signature = URL_SAFE_NO_PAD.decode(s).map_err(|e| e.to_string())?;
    ring::signature::UnparsedPublicKey::new(&ring::signature::ECDSA_P256_SHA256_FIXED, &point)
        .verify(format!("{h}.{c}").as_bytes(), &signature)
        .map_err(|_| "the signature does not verify with the jwk".to_owned())?;
    if claims["htm"] != seen.method.as_str() {
        return Err(format!("htm {}", claims["htm"]));
    }
    if claims["htu"] != htu {
        return Err(format!("htu {} instead of {htu}", claims["htu"]));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    if claims["iat"]
        .as_u64()
        .is_none_or(|iat| iat.abs_diff(now) > 60)
    {
        return Err(format!("iat {}", claims["iat"]));
    }
    let jti = claims["jti"].as_str().ok_or("no jti")?.to_owned();
    if !w.jtis.insert(jti) {
        return Err("a jti seen before".into());
    }
    let canonical = format!(
        r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
        jwk["x"].as_str().unwrap_or_default(),
        jwk["y"].as_str().unwrap_or_default()
    );
    let jkt = URL_SAFE_NO_PAD.encode(ring::digest::digest(
        &ring::digest::SHA256,
        canonical.as_bytes(),
    ));
    Ok(Proof { claims, jkt })
}

fn token(base: &str, w: &mut World, seen: &Seen) -> Response<Body> {
    let form = seen.form();
    let grant = form.get("grant_type").cloned().unwrap_or_default();
    if grant != "authorization_code" && grant != "refresh_token" {
        return answer(
            StatusCode::BAD_REQUEST,
            &[],
            json!({"error": "unsupported_grant_type"}),
        );
    }
    let mut jkt = None;
    if seen.headers.contains_key("dpop") {
        match check_proof(w, seen, &format!("{base}/token")) {
            Ok(proof) => {
                if proof.claims.get("ath").is_some() {
                    w.faults.push("ath on a token request".into());
                }
                if w.as_nonce && proof.claims["nonce"] != AS_NONCE {
                    return answer(
                        StatusCode::BAD_REQUEST,
                        &[("dpop-nonce", AS_NONCE.to_owned())],
                        json!({"error": "use_dpop_nonce"}),
                    );
                }
                jkt = Some(proof.jkt);
            }
            Err(e) => {
                w.faults.push(format!("token request proof: {e}"));
                return answer(
                    StatusCode::BAD_REQUEST,
                    &[],
                    json!({"error": "invalid_dpop_proof"}),
                );
            }
        }
    }
    w.counter += 1;
    let access = format!("access-{}", w.counter);
    let token_type = if jkt.is_some() { "DPoP" } else { "Bearer" };
    w.tokens.insert(access.clone(), jkt);
    answer(
        StatusCode::OK,
        &[],
        json!({
            "access_token": access,
            "token_type": token_type,
            "expires_in": w.expires_in,
            "refresh_token": format!("refresh-{}", w.counter),
        }),
    )
}

fn rs_nonce(w: &World) -> String {
    format!("rs-{}", w.rs_current)
}

fn mcp(base: &str, w: &mut World, seen: &Seen) -> Response<Body> {
    let prm = format!("{base}/.well-known/oauth-protected-resource/mcp");
    if w.rs_bearer_only {
        return bearer_only_mcp(&prm, w, seen);
    }
    let Some(authorization) = seen.header("authorization") else {
        return answer(
            StatusCode::UNAUTHORIZED,
            &[(
                "www-authenticate",
                format!(r#"DPoP resource_metadata="{prm}""#),
            )],
            json!({}),
        );
    };
    let (scheme, token) = authorization.split_once(' ').unwrap_or_default();
    let Some(binding) = w.tokens.get(token).cloned() else {
        w.faults.push(format!("unknown token {token}"));
        return answer(StatusCode::UNAUTHORIZED, &[], json!({}));
    };
    let mut headers = Vec::new();
    match binding {
        None => {
            if scheme != "Bearer" || seen.headers.contains_key("dpop") {
                w.faults
                    .push(format!("a Bearer token sent as {scheme}, or with a proof"));
            }
        }
        Some(jkt) => {
            if scheme != "DPoP" {
                w.faults.push(format!("a DPoP token sent as {scheme}"));
            }
            match check_proof(w, seen, &format!("{base}/mcp")) {
                Ok(proof) => {
                    let ath = URL_SAFE_NO_PAD.encode(ring::digest::digest(
                        &ring::digest::SHA256,
                        token.as_bytes(),
                    ));
                    if proof.claims["ath"] != ath.as_str() {
                        w.faults.push("ath is not the token's".into());
                    }
                    if proof.jkt != jkt {
                        w.faults.push("the proof's key is not the token's".into());
                    }
                    if w.rs_nonce && proof.claims["nonce"] != rs_nonce(w).as_str() {
                        return answer(
                            StatusCode::UNAUTHORIZED,
                            &[
                                (
                                    "www-authenticate",
                                    format!(
                                        r#"DPoP error="use_dpop_nonce", resource_metadata="{prm}""#
                                    ),
                                ),
                                ("dpop-nonce", rs_nonce(w)),
                            ],
                            json!({"error": "use_dpop_nonce"}),
                        );
                    }
                    if w.rotate_rs_nonce {
                        w.rs_current += 1;
                        headers.push(("dpop-nonce", rs_nonce(w)));
                    }
                }
                Err(e) => w.faults.push(format!("resource request proof: {e}")),
            }
        }
    }
    let message: Value = serde_json::from_str(&seen.body).unwrap_or(Value::Null);
    answer(
        StatusCode::OK,
        &headers,
        json!({"jsonrpc": "2.0", "id": message["id"], "result": {}}),
    )
}

/// A resource that knows only `Bearer`: any known token, sent as
/// `Bearer` without a proof, is taken (such a resource does not look at
/// `cnf`); anything else is refused with a `Bearer` challenge.
fn bearer_only_mcp(prm: &str, w: &mut World, seen: &Seen) -> Response<Body> {
    let refuse = |error: &str| {
        answer(
            StatusCode::UNAUTHORIZED,
            &[(
                "www-authenticate",
                format!(r#"Bearer {error}resource_metadata="{prm}""#),
            )],
            json!({"error": "invalid_token"}),
        )
    };
    let Some(authorization) = seen.header("authorization") else {
        return refuse("");
    };
    let Some(token) = authorization.strip_prefix("Bearer ") else {
        w.refused_dpop += 1;
        return refuse(r#"error="invalid_token", "#);
    };
    if !w.tokens.contains_key(token) {
        return refuse(r#"error="invalid_token", "#);
    }
    if seen.headers.contains_key("dpop") {
        w.faults.push("a Bearer token sent with a proof".into());
    }
    let message: Value = serde_json::from_str(&seen.body).unwrap_or(Value::Null);
    answer(
        StatusCode::OK,
        &[],
        json!({"jsonrpc": "2.0", "id": message["id"], "result": {}}),
    )
}

fn provider(url: &str, mode: DpopMode) -> OAuthProvider {
    let service = HttpTransportBuilder::new(url).http_service().unwrap();
    OAuthProvider::builder(url)
        .redirect_uri("http://127.0.0.1:9/callback")
        .authorizer(HeadlessAuthorizer::new(service.clone()))
        .dpop(mode)
        .build(service)
        .unwrap()
}

fn nonce_of(seen: &Seen) -> Option<String> {
    let proof = seen.header("dpop")?;
    let claims = proof.split('.').nth(1)?;
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).ok()?).ok()?;
    claims["nonce"].as_str().map(str::to_owned)
}

#[tokio::test]
async fn a_bound_token_is_obtained_with_a_proof_and_sent_with_a_fresh_one_each_time() {
    let servers = Servers::start(|_| {}).await;
    let t = transport(
        &servers.mcp_url(),
        provider(&servers.mcp_url(), DpopMode::Auto),
    );
    for id in 1..=3 {
        send(&t, id, "tools/list").await.unwrap();
    }
    assert_eq!(servers.faults(), Vec::<String>::new());
    let token = servers.seen_at("/token");
    assert_eq!(token.len(), 1);
    assert!(
        token[0].headers.contains_key("dpop"),
        "a proof at the token endpoint"
    );
    let mcp = servers.seen_at("/mcp");
    assert_eq!(mcp.len(), 4, "the unauthenticated 401, then three");
    for seen in &mcp[1..] {
        assert_eq!(seen.header("authorization"), Some("DPoP access-1"));
    }
    // One jti per proof: the token request's and each MCP request's.
    assert_eq!(servers.jtis(), 4);
    t.close().await;
}

#[tokio::test]
async fn the_token_endpoint_nonce_is_taken_and_the_request_sent_once_more() {
    let servers = Servers::start(|w| w.as_nonce = true).await;
    let t = transport(
        &servers.mcp_url(),
        provider(&servers.mcp_url(), DpopMode::Auto),
    );
    send(&t, 1, "tools/list").await.unwrap();
    assert_eq!(servers.faults(), Vec::<String>::new());
    let token = servers.seen_at("/token");
    assert_eq!(token.len(), 2, "refused for the nonce, then granted");
    assert_eq!(nonce_of(&token[0]), None);
    assert_eq!(nonce_of(&token[1]).as_deref(), Some(AS_NONCE));
    assert_eq!(
        token[0].form()["code"],
        token[1].form()["code"],
        "the same grant"
    );
    assert_eq!(servers.seen_at("/authorize").len(), 1, "authorized once");
    // The resource's proofs do not carry the authorization server's nonce.
    let mcp = servers.seen_at("/mcp");
    assert_eq!(nonce_of(mcp.last().unwrap()), None);
    t.close().await;
}

#[tokio::test]
async fn the_resource_nonce_is_taken_and_a_newer_one_replaces_it() {
    let servers = Servers::start(|w| {
        w.rs_nonce = true;
        w.rotate_rs_nonce = true;
    })
    .await;
    let t = transport(
        &servers.mcp_url(),
        provider(&servers.mcp_url(), DpopMode::Auto),
    );
    send(&t, 1, "tools/list").await.unwrap();
    send(&t, 2, "tools/list").await.unwrap();
    assert_eq!(servers.faults(), Vec::<String>::new());
    let mcp = servers.seen_at("/mcp");
    let nonces: Vec<Option<String>> = mcp[1..].iter().map(nonce_of).collect();
    // 401 (no token), 401 use_dpop_nonce, 200 giving rs-1, 200 with rs-1.
    assert_eq!(
        nonces,
        [None, Some("rs-0".to_owned()), Some("rs-1".to_owned())]
    );
    assert_eq!(
        servers.seen_at("/token").len(),
        1,
        "a nonce is not a new grant"
    );
    t.close().await;
}

#[tokio::test]
async fn both_servers_nonces_in_one_flow() {
    let servers = Servers::start(|w| {
        w.as_nonce = true;
        w.rs_nonce = true;
    })
    .await;
    let t = transport(
        &servers.mcp_url(),
        provider(&servers.mcp_url(), DpopMode::Auto),
    );
    send(&t, 1, "tools/list").await.unwrap();
    send(&t, 2, "tools/list").await.unwrap();
    assert_eq!(servers.faults(), Vec::<String>::new());
    assert_eq!(servers.seen_at("/token").len(), 2);
    // 401, 401 use_dpop_nonce, 200; then 200 at once with the kept nonce.
    assert_eq!(servers.seen_at("/mcp").len(), 4);
    t.close().await;
}

#[tokio::test]
async fn a_refresh_carries_a_proof_and_the_new_token_is_bound_too() {
    let servers = Servers::start(|w| w.expires_in = 1).await;
    let t = transport(
        &servers.mcp_url(),
        provider(&servers.mcp_url(), DpopMode::Auto),
    );
    send(&t, 1, "tools/list").await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    send(&t, 2, "tools/list").await.unwrap();
    assert_eq!(servers.faults(), Vec::<String>::new());
    let token = servers.seen_at("/token");
    assert_eq!(token.len(), 2);
    assert_eq!(token[1].form()["grant_type"], "refresh_token");
    assert!(token[1].headers.contains_key("dpop"));
    let mcp = servers.seen_at("/mcp");
    assert_eq!(
        mcp.last().unwrap().header("authorization"),
        Some("DPoP access-2")
    );
    t.close().await;
}

#[tokio::test]
async fn auto_for_a_bearer_only_resource_and_off_stay_with_bearer() {
    // The authorization server lists ES256 in both runs.
    for (bearer_only, mode) in [(true, DpopMode::Auto), (false, DpopMode::Off)] {
        let servers = Servers::start(|w| w.rs_bearer_only = bearer_only).await;
        let t = transport(&servers.mcp_url(), provider(&servers.mcp_url(), mode));
        send(&t, 1, "tools/list").await.unwrap();
        assert_eq!(servers.faults(), Vec::<String>::new());
        let token = servers.seen_at("/token");
        assert!(!token[0].headers.contains_key("dpop"), "{mode:?}: no proof");
        let mcp = servers.seen_at("/mcp");
        assert_eq!(
            mcp.last().unwrap().header("authorization"),
            Some("Bearer access-1")
        );
        t.close().await;
    }
}

#[tokio::test]
async fn auto_binds_for_a_dpop_challenge_though_nothing_else_says_dpop() {
    // As in the official `auth/dpop` scenario, but with an authorization
    // server that lists nothing either: the resource's challenge decides.
    let servers = Servers::start(|w| w.advertise_dpop = false).await;
    let t = transport(
        &servers.mcp_url(),
        provider(&servers.mcp_url(), DpopMode::Auto),
    );
    send(&t, 1, "tools/list").await.unwrap();
    assert_eq!(servers.faults(), Vec::<String>::new());
    assert!(servers.seen_at("/token")[0].headers.contains_key("dpop"));
    assert_eq!(
        servers
            .seen_at("/mcp")
            .last()
            .unwrap()
            .header("authorization"),
        Some("DPoP access-1")
    );
    t.close().await;
}

#[tokio::test]
async fn a_login_then_calls_to_a_bearer_only_resource_behind_a_dpop_authorization_server() {
    // The resource's metadata has no DPoP fields, its challenges are
    // Bearer, it refuses the DPoP scheme; the authorization server lists
    // ES256 (as oidc-provider, Keycloak, Okta and Auth0 do).
    let servers = Servers::start(|w| w.rs_bearer_only = true).await;
    let oauth = provider(&servers.mcp_url(), DpopMode::Auto);
    // `mcp login`: the flow before any request.
    oauth.authorize().await.unwrap();
    let t = transport(&servers.mcp_url(), oauth.clone());
    for id in 1..=3 {
        send(&t, id, "tools/list").await.unwrap();
    }
    assert_eq!(servers.faults(), Vec::<String>::new());
    let token = servers.seen_at("/token");
    assert_eq!(token.len(), 1, "one grant, no refresh");
    assert!(!token[0].headers.contains_key("dpop"), "no proof");
    let mcp = servers.seen_at("/mcp");
    assert_eq!(mcp.len(), 3, "each call once, none refused");
    for seen in &mcp {
        assert_eq!(seen.header("authorization"), Some("Bearer access-1"));
    }
    t.close().await;
}

#[tokio::test]
async fn a_stored_bound_token_for_a_bearer_only_resource_leads_to_one_fresh_authorization() {
    let servers = Servers::start(|_| {}).await;
    let dir =
        std::env::temp_dir().join(format!("mcp-auth-dpop-bearer-only-{}", std::process::id()));
    let path = dir.join("tokens.json");
    let with_store = || {
        let url = servers.mcp_url();
        let service = HttpTransportBuilder::new(&url).http_service().unwrap();
        OAuthProvider::builder(&url)
            .redirect_uri("http://127.0.0.1:9/callback")
            .authorizer(HeadlessAuthorizer::new(service.clone()))
            .store(mcp_auth::FileStore::new(&path))
            .build(service)
            .unwrap()
    };
    // A run against the resource while it took DPoP stored a bound token.
    let first = transport(&servers.mcp_url(), with_store());
    send(&first, 1, "tools/list").await.unwrap();
    first.close().await;
    assert_eq!(
        servers
            .seen_at("/mcp")
            .last()
            .unwrap()
            .header("authorization"),
        Some("DPoP access-1")
    );
    // Now it knows only Bearer.
    servers.world.lock().unwrap().rs_bearer_only = true;
    let second = transport(&servers.mcp_url(), with_store());
    for id in 1..=3 {
        send(&second, id, "tools/list").await.unwrap();
    }
    second.close().await;
    assert_eq!(servers.faults(), Vec::<String>::new());
    assert_eq!(
        servers.world.lock().unwrap().refused_dpop,
        1,
        "refused once"
    );
    let grants: Vec<(String, bool)> = servers
        .seen_at("/token")
        .iter()
        .map(|s| {
            (
                s.form()["grant_type"].clone(),
                s.headers.contains_key("dpop"),
            )
        })
        .collect();
    assert_eq!(
        grants,
        [
            ("authorization_code".to_owned(), true),
            ("authorization_code".to_owned(), false)
        ],
        "one fresh authorization, without proofs, and no refresh of the bound token"
    );
    assert_eq!(
        servers
            .seen_at("/mcp")
            .last()
            .unwrap()
            .header("authorization"),
        Some("Bearer access-2")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn on_sends_proofs_to_a_server_that_does_not_list_dpop() {
    let servers = Servers::start(|w| w.advertise_dpop = false).await;
    let t = transport(
        &servers.mcp_url(),
        provider(&servers.mcp_url(), DpopMode::On),
    );
    send(&t, 1, "tools/list").await.unwrap();
    assert_eq!(servers.faults(), Vec::<String>::new());
    assert!(servers.seen_at("/token")[0].headers.contains_key("dpop"));
    t.close().await;
}

#[tokio::test]
async fn the_provider_debug_shows_the_mode_not_the_key() {
    let servers = Servers::start(|_| {}).await;
    let oauth = provider(&servers.mcp_url(), DpopMode::Auto);
    let t = transport(&servers.mcp_url(), oauth.clone());
    send(&t, 1, "tools/list").await.unwrap();
    let shown = format!("{oauth:?}");
    assert!(shown.contains("Auto"), "{shown}");
    // The public key's coordinates are not secret, and not shown either:
    // nothing of the key is.
    let proof = servers.seen_at("/token")[0]
        .header("dpop")
        .unwrap()
        .to_owned();
    let header: Value = serde_json::from_slice(
        &URL_SAFE_NO_PAD
            .decode(proof.split('.').next().unwrap())
            .unwrap(),
    )
    .unwrap();
    assert!(!shown.contains(header["jwk"]["x"].as_str().unwrap()));
    assert!(!shown.contains("access-1"));
    t.close().await;
}

#[tokio::test]
async fn a_later_provider_goes_on_with_the_stored_token_and_its_key() {
    let servers = Servers::start(|_| {}).await;
    let dir = std::env::temp_dir().join(format!("mcp-auth-dpop-{}", std::process::id()));
    let path = dir.join("tokens.json");
    let with_store = |mode| {
        let url = servers.mcp_url();
        let service = HttpTransportBuilder::new(&url).http_service().unwrap();
        OAuthProvider::builder(&url)
            .redirect_uri("http://127.0.0.1:9/callback")
            .authorizer(HeadlessAuthorizer::new(service.clone()))
            .store(mcp_auth::FileStore::new(&path))
            .dpop(mode)
            .build(service)
            .unwrap()
    };
    let first = transport(&servers.mcp_url(), with_store(DpopMode::Auto));
    send(&first, 1, "tools/list").await.unwrap();
    first.close().await;
    let second = transport(&servers.mcp_url(), with_store(DpopMode::Auto));
    send(&second, 1, "tools/list").await.unwrap();
    second.close().await;
    // The server checks that each proof's key is the one the token is
    // bound to: the second provider signed with the first one's key.
    assert_eq!(servers.faults(), Vec::<String>::new());
    assert_eq!(servers.seen_at("/token").len(), 1, "no second grant");
    assert_eq!(
        servers
            .seen_at("/mcp")
            .last()
            .unwrap()
            .header("authorization"),
        Some("DPoP access-1")
    );
    // Without DPoP, the bound token is of no use: a fresh (Bearer) grant.
    let third = transport(&servers.mcp_url(), with_store(DpopMode::Off));
    send(&third, 1, "tools/list").await.unwrap();
    third.close().await;
    assert_eq!(servers.seen_at("/token").len(), 2);
    assert_eq!(
        servers.seen_at("/register").len(),
        1,
        "the registration is kept"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
