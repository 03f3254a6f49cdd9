//! An authorization server and a protected MCP server in process, on
//! loopback, over real HTTP: the PRM, RFC 8414 metadata, registration,
//! `/authorize` (an immediate 302), `/token` (code, refresh, client
//! credentials, JWT bearer), an IdP's `/idp/token` (token exchange for an
//! ID-JAG) and a `/mcp` that checks bearer tokens and scopes.

#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use mcp_protocol::Request;
use mcp_transport::{ConnectionHandlers, RequestOptions, Transport, TransportError};
use mcp_transport_http::{HttpTransport, HttpTransportBuilder};
use serde_json::{Value, json};
use tokio::net::TcpListener;

pub const CLIENT_ID: &str = "registered-client";
pub const CLIENT_SECRET: &str = "registered-s3cret";
pub const WAIT: Duration = Duration::from_secs(10);

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// One request the server saw.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: Method,
    pub path: String,
    pub query: String,
    pub headers: http::HeaderMap,
    pub body: String,
}

impl Seen {
    /// The request, its body read whole.
    pub async fn read(request: http::Request<hyper::body::Incoming>) -> Seen {
        let (parts, body) = request.into_parts();
        let body = body
            .collect()
            .await
            .map(|c| c.to_bytes())
            .unwrap_or_default();
        Seen {
            method: parts.method,
            path: parts.uri.path().to_owned(),
            query: parts.uri.query().unwrap_or_default().to_owned(),
            headers: parts.headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        }
    }

    pub fn form(&self) -> HashMap<String, String> {
        url::form_urlencoded::parse(self.body.as_bytes())
            .into_owned()
            .collect()
    }
    pub fn query_pairs(&self) -> HashMap<String, String> {
        url::form_urlencoded::parse(self.query.as_bytes())
            .into_owned()
            .collect()
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// How the server behaves; tests change it between requests.
#[derive(Debug)]
pub struct Behaviour {
    /// Issue refresh tokens.
    pub refresh_tokens: bool,
    /// `expires_in` of every token.
    pub expires_in: u64,
    /// Answer every refresh with `invalid_grant`.
    pub refuse_refresh: bool,
    /// The scope `tools/call` needs (403 `insufficient_scope` without it).
    pub call_scope: Option<String>,
    /// The scope the first 401 asks for.
    pub challenge_scope: Option<String>,
    /// The authorization server the PRM names (default: this server).
    pub authorization_server: Option<String>,
    /// The `authorization_endpoint` of the metadata (default: this
    /// server's `/authorize`).
    pub authorization_endpoint: Option<String>,
    /// `/mcp` answers 307 to this URL.
    pub redirect_mcp_to: Option<String>,
    /// Issue refreshed tokens that the MCP endpoint then refuses.
    pub refuse_refreshed: bool,
    /// Accept any `access-…` token (one issued by another server).
    pub accept_any_access: bool,
    /// The MCP endpoint refuses every token, known or not.
    pub refuse_all: bool,
    /// `/token` answers this status and body to everything (an outage).
    pub token_outage: Option<(u16, String)>,
    /// Tokens the MCP endpoint accepts, with their scopes.
    pub tokens: HashMap<String, Vec<String>>,
    /// The last authorization request's scopes.
    pub last_scope: Vec<String>,
    pub counter: u32,
    /// Refresh tokens are single-use (rotated): one presented again is
    /// refused with `invalid_grant` and revokes the whole grant (every
    /// token issued), as some authorization servers do.
    pub rotate_refresh: bool,
    /// The refresh tokens still good, with `rotate_refresh`.
    pub live_refresh: Vec<String>,
    /// Refresh answers wait until `/mcp` has refused this many requests
    /// (at most 20 s): a refresh then overlaps the other clients' refusals.
    pub hold_refresh_until_refusals: Option<u32>,
    /// How many requests `/mcp` refused with 401.
    pub refusals: u32,
    /// The ID tokens `/idp/token` exchanges for an ID-JAG.
    pub id_tokens: Vec<String>,
    /// The assertions the JWT-bearer grant takes (ID-JAGs the IdP issued
    /// are added).
    pub assertions: Vec<String>,
}

impl Default for Behaviour {
    fn default() -> Self {
        Behaviour {
            refresh_tokens: true,
            expires_in: 3600,
            refuse_refresh: false,
            call_scope: None,
            challenge_scope: None,
            authorization_server: None,
            authorization_endpoint: None,
            redirect_mcp_to: None,
            accept_any_access: false,
            refuse_all: false,
            token_outage: None,
            refuse_refreshed: false,
            tokens: HashMap::new(),
            last_scope: Vec::new(),
            counter: 0,
            rotate_refresh: false,
            live_refresh: Vec::new(),
            hold_refresh_until_refusals: None,
            refusals: 0,
            id_tokens: Vec::new(),
            assertions: Vec::new(),
        }
    }
}

pub struct AuthServer {
    pub addr: SocketAddr,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    pub behaviour: Arc<Mutex<Behaviour>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn full(status: StatusCode, content_type: &str, body: String) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(Full::new(Bytes::from(body)).boxed())
        .unwrap()
}

fn json_answer(status: StatusCode, value: Value) -> Response<Body> {
    full(status, "application/json", value.to_string())
}

impl AuthServer {
    pub async fn start() -> AuthServer {
        AuthServer::start_on("127.0.0.1").await
    }

    /// On another loopback address (`127.0.0.2`: another host to the
    /// client, on the same machine).
    pub async fn start_on(ip: &str) -> AuthServer {
        let listener = TcpListener::bind((ip, 0)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let behaviour = Arc::new(Mutex::new(Behaviour::default()));
        let (record, state) = (seen.clone(), behaviour.clone());
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (record, state) = (record.clone(), state.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(
                        move |request: http::Request<hyper::body::Incoming>| {
                            let (record, state) = (record.clone(), state.clone());
                            async move {
                                let seen = Seen::read(request).await;
                                record.lock().unwrap().push(seen.clone());
                                hold_refresh(&state, &seen).await;
                                Ok::<_, Infallible>(handle(addr, &state, seen))
                            }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        AuthServer {
            addr,
            seen,
            behaviour,
            task,
        }
    }

    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base())
    }

    pub fn seen_at(&self, path: &str) -> Vec<Seen> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.path == path)
            .cloned()
            .collect()
    }

    pub fn behave(&self, change: impl FnOnce(&mut Behaviour)) {
        change(&mut self.behaviour.lock().unwrap());
    }
}

/// With `hold_refresh_until_refusals`, a refresh waits for the refusals.
async fn hold_refresh(state: &Mutex<Behaviour>, seen: &Seen) {
    let is_refresh = seen.path == "/token"
        && seen
            .form()
            .get("grant_type")
            .is_some_and(|g| g == "refresh_token");
    if !is_refresh {
        return;
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let open = {
            let b = state.lock().unwrap();
            b.hold_refresh_until_refusals
                .is_none_or(|n| b.refusals >= n)
        };
        if open || tokio::time::Instant::now() >= deadline {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn handle(addr: SocketAddr, state: &Mutex<Behaviour>, seen: Seen) -> Response<Body> {
    let base = format!("http://{addr}");
    let mut b = state.lock().unwrap();
    match (seen.method.as_str(), seen.path.as_str()) {
        ("GET", "/.well-known/oauth-protected-resource/mcp") => json_answer(
            StatusCode::OK,
            json!({
                "resource": format!("{base}/mcp"),
                "authorization_servers": [b.authorization_server.clone().unwrap_or(base.clone())],
                "scopes_supported": ["mcp:read"],
            }),
        ),
        ("GET", "/.well-known/oauth-authorization-server") => json_answer(
            StatusCode::OK,
            json!({
                "issuer": base,
                "authorization_endpoint": b
                    .authorization_endpoint
                    .clone()
                    .unwrap_or_else(|| format!("{base}/authorize")),
                "token_endpoint": format!("{base}/token"),
                "registration_endpoint": format!("{base}/register"),
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic"],
                "authorization_response_iss_parameter_supported": true,
            }),
        ),
        ("POST", "/register") => json_answer(
            StatusCode::CREATED,
            json!({
                "client_id": CLIENT_ID,
                "client_secret": CLIENT_SECRET,
                "token_endpoint_auth_method": "client_secret_basic",
            }),
        ),
        ("GET", "/authorize") => {
            let q = seen.query_pairs();
            b.last_scope = q
                .get("scope")
                .map(|s| s.split(' ').map(str::to_owned).collect())
                .unwrap_or_default();
            let mut location = url::Url::parse(&q["redirect_uri"]).unwrap();
            location
                .query_pairs_mut()
                .append_pair("code", "the-code")
                .append_pair("state", &q["state"])
                .append_pair("iss", &base);
            Response::builder()
                .status(StatusCode::FOUND)
                .header("location", location.as_str())
                .body(Full::new(Bytes::new()).boxed())
                .unwrap()
        }
        ("POST", "/token")
            if seen
                .form()
                .get("grant_type")
                .is_some_and(|g| g == JWT_BEARER) =>
        {
            jwt_bearer(&mut b, &seen)
        }
        ("POST", "/token") => token(&mut b, &seen),
        ("POST", "/idp/token") => token_exchange(&mut b, &seen),
        ("POST", "/mcp") => mcp(&base, &mut b, &seen),
        _ => full(StatusCode::NOT_FOUND, "text/plain", "not found".into()),
    }
}

pub const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// `Authorization: Basic` for `id:secret`.
pub fn basic(id: &str, secret: &str) -> String {
    use base64::Engine;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}"))
    )
}

/// RFC 8693 at the IdP: a known ID token becomes an ID-JAG the AS takes.
fn token_exchange(b: &mut Behaviour, seen: &Seen) -> Response<Body> {
    let form = seen.form();
    let Some(subject) = form
        .get("subject_token")
        .filter(|t| b.id_tokens.contains(t))
    else {
        return json_answer(StatusCode::BAD_REQUEST, json!({"error": "invalid_grant"}));
    };
    let id_jag = format!("id-jag-for-{subject}");
    b.assertions.push(id_jag.clone());
    json_answer(
        StatusCode::OK,
        json!({
            "access_token": id_jag,
            "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
            "token_type": "N_A",
        }),
    )
}

/// RFC 7523 at the AS: a known assertion for an access token, without a
/// refresh token. A client that authenticates must do it right; one that
/// does not is taken (workloads).
fn jwt_bearer(b: &mut Behaviour, seen: &Seen) -> Response<Body> {
    if seen
        .header("authorization")
        .is_some_and(|h| h != basic(CLIENT_ID, CLIENT_SECRET))
    {
        return json_answer(StatusCode::UNAUTHORIZED, json!({"error": "invalid_client"}));
    }
    let form = seen.form();
    if !form
        .get("assertion")
        .is_some_and(|a| b.assertions.contains(a))
    {
        return json_answer(StatusCode::BAD_REQUEST, json!({"error": "invalid_grant"}));
    }
    b.counter += 1;
    let access = format!("access-{}", b.counter);
    b.tokens.insert(access.clone(), Vec::new());
    json_answer(
        StatusCode::OK,
        json!({"access_token": access, "token_type": "Bearer", "expires_in": b.expires_in}),
    )
}

fn token(b: &mut Behaviour, seen: &Seen) -> Response<Body> {
    if let Some((status, body)) = &b.token_outage {
        let status = StatusCode::from_u16(*status).unwrap();
        return full(status, "text/html", body.clone());
    }
    let expected = basic(CLIENT_ID, CLIENT_SECRET);
    if seen.header("authorization") != Some(expected.as_str()) {
        return json_answer(StatusCode::UNAUTHORIZED, json!({"error": "invalid_client"}));
    }
    let form = seen.form();
    let scopes = match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => b.last_scope.clone(),
        Some("refresh_token") if b.refuse_refresh => {
            return json_answer(StatusCode::BAD_REQUEST, json!({"error": "invalid_grant"}));
        }
        Some("refresh_token") if b.rotate_refresh => {
            let presented = form.get("refresh_token").cloned().unwrap_or_default();
            let Some(at) = b.live_refresh.iter().position(|t| *t == presented) else {
                // Reuse: the whole grant is revoked.
                b.tokens.clear();
                b.live_refresh.clear();
                return json_answer(StatusCode::BAD_REQUEST, json!({"error": "invalid_grant"}));
            };
            b.live_refresh.remove(at);
            b.last_scope.clone()
        }
        Some("refresh_token") => b.last_scope.clone(),
        _ => {
            return json_answer(
                StatusCode::BAD_REQUEST,
                json!({"error": "unsupported_grant_type"}),
            );
        }
    };
    b.counter += 1;
    let access = format!("access-{}", b.counter);
    if !(b.refuse_refreshed && form["grant_type"] == "refresh_token") {
        b.tokens.insert(access.clone(), scopes.clone());
    }
    let mut answer = json!({
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": b.expires_in,
        "scope": scopes.join(" "),
    });
    if b.refresh_tokens {
        let refresh = format!("refresh-{}", b.counter);
        b.live_refresh.push(refresh.clone());
        answer["refresh_token"] = json!(refresh);
    }
    json_answer(StatusCode::OK, answer)
}

fn mcp(base: &str, b: &mut Behaviour, seen: &Seen) -> Response<Body> {
    if let Some(to) = &b.redirect_mcp_to {
        return Response::builder()
            .status(StatusCode::TEMPORARY_REDIRECT)
            .header("location", to.as_str())
            .body(Full::new(Bytes::new()).boxed())
            .unwrap();
    }
    let token = seen
        .header("authorization")
        .and_then(|v| v.strip_prefix("Bearer "));
    let any = Vec::new();
    let known = token
        .filter(|_| !b.refuse_all)
        .and_then(|t| b.tokens.get(t));
    let foreign =
        (b.accept_any_access && !b.refuse_all && token.is_some_and(|t| t.starts_with("access-")))
            .then_some(&any);
    let Some(scopes) = known.or(foreign) else {
        b.refusals += 1;
        let scope = b
            .challenge_scope
            .as_ref()
            .map(|s| format!(", scope=\"{s}\""))
            .unwrap_or_default();
        return Response::builder()
            .status(StatusCode::UNAUTHORIZED)
            .header(
                "www-authenticate",
                format!(
                    "Bearer error=\"invalid_token\"{scope}, resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
                ),
            )
            .body(Full::new(Bytes::new()).boxed())
            .unwrap();
    };
    let message: Value = serde_json::from_str(&seen.body).unwrap_or(Value::Null);
    if message["method"] == "tools/call"
        && let Some(needed) = &b.call_scope
        && !scopes.contains(needed)
    {
        return Response::builder()
            .status(StatusCode::FORBIDDEN)
            .header(
                "www-authenticate",
                format!("Bearer error=\"insufficient_scope\", scope=\"{needed}\""),
            )
            .body(Full::new(Bytes::new()).boxed())
            .unwrap();
    }
    json_answer(
        StatusCode::OK,
        json!({"jsonrpc": "2.0", "id": message["id"], "result": {}}),
    )
}

/// A modern request (no session, no handshake needed).
pub fn modern(id: i64, method: &str) -> Request {
    Request::new(
        id,
        method,
        Some(json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"}
        }})),
    )
}

/// A transport to `url` with `provider`, and the provider's service.
pub fn transport(url: &str, provider: mcp_auth::OAuthProvider) -> HttpTransport {
    HttpTransportBuilder::new(url)
        .header_provider(Arc::new(provider))
        .build(ConnectionHandlers::discard())
        .unwrap()
}

/// The provider with the headless authorizer, for `url`.
pub fn provider(url: &str) -> mcp_auth::OAuthProvider {
    let service = HttpTransportBuilder::new(url).http_service().unwrap();
    mcp_auth::OAuthProvider::builder(url)
        .redirect_uri("http://127.0.0.1:9/callback")
        .authorizer(mcp_auth::HeadlessAuthorizer::new(service.clone()))
        .build(service)
        .unwrap()
}

/// Sends `method` with a bound on the wait.
pub async fn send(t: &HttpTransport, id: i64, method: &str) -> Result<Value, TransportError> {
    tokio::time::timeout(WAIT, t.request(modern(id, method), RequestOptions::new()))
        .await
        .expect("the request did not end in time")
}
