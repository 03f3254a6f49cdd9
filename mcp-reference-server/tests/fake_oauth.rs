//! The protected server (`http::ProtectedHttpFake`) spoken to by hand:
//! the challenge, both metadata documents, registration, the immediate
//! authorization, PKCE, the three grants, expiry and the gate.

#![cfg(feature = "oauth")]

mod http_common;

use std::collections::HashMap;
use std::net::SocketAddr;

use base64::Engine;
use http_common::{POST, Reply, request, send};
use mcp_reference_server::FakeConfig;
use mcp_reference_server::http::{HttpOptions, OAuthOptions, ProtectedHttpFake};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const VERIFIER: &str = "a-verifier-of-forty-three-characters-or-more-0123456789";
const REDIRECT: &str = "http://127.0.0.1:4567/callback";

fn challenge(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

fn form(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

async fn json_of(mut reply: Reply) -> Value {
    reply.read_to_end().await;
    reply.json()
}

async fn get(addr: SocketAddr, path: &str) -> Reply {
    send(addr, "GET", path, &[], "").await
}

async fn token(addr: SocketAddr, basic: Option<(&str, &str)>, body: &str) -> Reply {
    let auth = basic.map(|(id, secret)| {
        let pair = base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}"));
        format!("Basic {pair}")
    });
    let mut headers = vec![("content-type", "application/x-www-form-urlencoded")];
    if let Some(auth) = &auth {
        headers.push(("authorization", auth));
    }
    send(addr, "POST", "/token", &headers, body).await
}

/// Registers a confidential client; returns its id and secret.
async fn register(addr: SocketAddr) -> (String, String) {
    let body = json!({"redirect_uris": [REDIRECT], "client_name": "raw",
                      "grant_types": ["authorization_code", "refresh_token"]});
    let reply = send(
        addr,
        "POST",
        "/register",
        &[("content-type", "application/json")],
        &body.to_string(),
    )
    .await;
    assert_eq!(reply.status, 201);
    let answer = json_of(reply).await;
    assert_eq!(answer["token_endpoint_auth_method"], "client_secret_basic");
    (
        answer["client_id"].as_str().unwrap().to_owned(),
        answer["client_secret"].as_str().unwrap().to_owned(),
    )
}

/// `/authorize` for `client`; returns the redirect's query.
async fn authorize(server: &ProtectedHttpFake, client: &str) -> HashMap<String, String> {
    let query = form(&[
        ("response_type", "code"),
        ("client_id", client),
        ("redirect_uri", REDIRECT),
        ("state", "st4te"),
        ("code_challenge", &challenge(VERIFIER)),
        ("code_challenge_method", "S256"),
        ("resource", &server.url()),
    ]);
    let reply = get(server.addr(), &format!("/authorize?{query}")).await;
    assert_eq!(reply.status, 302);
    let location = url::Url::parse(reply.header("location").unwrap()).unwrap();
    assert!(location.as_str().starts_with(REDIRECT), "{location}");
    location.query_pairs().into_owned().collect()
}

/// `tools/list` with `token` (modern: one POST, no session).
async fn tools_list(addr: SocketAddr, token: &str) -> Reply {
    let bearer = format!("Bearer {token}");
    let body = request(
        1,
        "tools/list",
        json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}}}),
    );
    let mut headers = POST.to_vec();
    headers.extend([
        ("authorization", bearer.as_str()),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/list"),
    ]);
    send(addr, "POST", "/mcp", &headers, &body.to_string()).await
}

async fn start(oauth: OAuthOptions) -> ProtectedHttpFake {
    ProtectedHttpFake::start_with(FakeConfig::default(), HttpOptions::new(), oauth)
        .await
        .unwrap()
}

#[tokio::test]
async fn without_a_token_the_challenge_names_the_metadata_that_names_the_issuer() {
    let server = start(OAuthOptions::new()).await;
    let addr = server.addr();
    let reply = tools_list(addr, "made-up").await;
    assert_eq!(reply.status, 401);
    let header = reply.header("www-authenticate").unwrap().to_owned();
    assert!(header.starts_with("Bearer "), "{header}");
    assert!(header.contains("error=\"invalid_token\""), "{header}");
    assert!(
        header.contains(&format!(
            "resource_metadata=\"{}\"",
            server.resource_metadata_url()
        )),
        "{header}"
    );
    let no_token = send(addr, "POST", "/mcp", &POST, "{}").await;
    assert_eq!(no_token.status, 401);
    assert!(
        !no_token
            .header("www-authenticate")
            .unwrap()
            .contains("error=")
    );

    let prm = json_of(get(addr, "/.well-known/oauth-protected-resource/mcp").await).await;
    assert_eq!(prm["resource"], server.url());
    assert_eq!(prm["authorization_servers"], json!([server.issuer()]));
    for path in [
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ] {
        let meta = json_of(get(addr, path).await).await;
        assert_eq!(meta["issuer"], server.issuer());
        assert_eq!(meta["code_challenge_methods_supported"], json!(["S256"]));
        assert_eq!(meta["authorization_response_iss_parameter_supported"], true);
        assert_eq!(meta["token_endpoint"], format!("{}/token", server.issuer()));
    }
}

#[tokio::test]
async fn the_authorization_code_needs_the_verifier_and_gives_tokens_that_serve_mcp() {
    let server = start(OAuthOptions::new()).await;
    let addr = server.addr();
    let (id, secret) = register(addr).await;
    assert_eq!(server.registered_clients(), 1);
    let redirect = authorize(&server, &id).await;
    assert_eq!(redirect["state"], "st4te");
    assert_eq!(redirect["iss"], server.issuer());
    let code = redirect["code"].clone();

    let resource = server.url();
    let exchange = |verifier: &str, code: &str| {
        form(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", verifier),
            ("resource", &resource),
        ])
    };
    // The wrong secret, then the wrong verifier: refused (and the code is
    // spent by the second, as RFC 6749 §4.1.2 allows).
    let body = exchange(VERIFIER, &code);
    let wrong_secret = token(addr, Some((&id, "nope")), &body).await;
    assert_eq!(wrong_secret.status, 401);
    assert_eq!(json_of(wrong_secret).await["error"], "invalid_client");
    let body = exchange(
        "another-verifier-of-forty-three-characters-0123456789",
        &code,
    );
    let wrong = token(addr, Some((&id, &secret)), &body).await;
    assert_eq!(wrong.status, 400);
    assert_eq!(json_of(wrong).await["error"], "invalid_grant");

    let code = authorize(&server, &id).await["code"].clone();
    let body = exchange(VERIFIER, &code);
    let granted = json_of(token(addr, Some((&id, &secret)), &body).await).await;
    assert_eq!(granted["token_type"], "Bearer");
    assert_eq!(granted["expires_in"], 3600);
    let access = granted["access_token"].as_str().unwrap().to_owned();
    let refresh = granted["refresh_token"].as_str().unwrap().to_owned();
    // A code works once.
    let body = exchange(VERIFIER, &code);
    assert_eq!(token(addr, Some((&id, &secret)), &body).await.status, 400);

    let mut listed = tools_list(addr, &access).await;
    assert_eq!(listed.status, 200);
    listed.until("\"echo\"").await;

    // Expired: 401; refreshed (rotated): served again.
    server.expire_tokens();
    assert_eq!(tools_list(addr, &access).await.status, 401);
    let body = form(&[("grant_type", "refresh_token"), ("refresh_token", &refresh)]);
    let without_secret = token(addr, None, &format!("{body}&client_id={id}")).await;
    assert_eq!(without_secret.status, 401);
    let renewed = json_of(token(addr, Some((&id, &secret)), &body).await).await;
    let access = renewed["access_token"].as_str().unwrap().to_owned();
    assert_ne!(renewed["refresh_token"], refresh);
    assert_eq!(tools_list(addr, &access).await.status, 200);
    let reused = token(addr, Some((&id, &secret)), &body).await;
    assert_eq!(json_of(reused).await["error"], "invalid_grant");

    server.revoke_tokens();
    assert_eq!(tools_list(addr, &access).await.status, 401);
}

#[tokio::test]
async fn authorize_refuses_plain_pkce_and_unregistered_redirects() {
    let server = start(OAuthOptions::new()).await;
    let addr = server.addr();
    let (id, _) = register(addr).await;
    let plain = form(&[
        ("response_type", "code"),
        ("client_id", &id),
        ("redirect_uri", REDIRECT),
        ("state", "s"),
        ("code_challenge", VERIFIER),
        ("code_challenge_method", "plain"),
    ]);
    let reply = get(addr, &format!("/authorize?{plain}")).await;
    assert_eq!(reply.status, 302);
    let location = reply.header("location").unwrap();
    assert!(location.contains("error=invalid_request"), "{location}");
    assert!(!location.contains("code="), "{location}");

    let elsewhere = form(&[
        ("response_type", "code"),
        ("client_id", &id),
        ("redirect_uri", "https://attacker.example/cb"),
        ("code_challenge", &challenge(VERIFIER)),
        ("code_challenge_method", "S256"),
    ]);
    let reply = get(addr, &format!("/authorize?{elsewhere}")).await;
    assert_eq!(reply.status, 400);
    assert!(reply.header("location").is_none());
}

#[tokio::test]
async fn client_credentials_for_a_pre_registered_client_with_short_tokens() {
    let lifetime = std::time::Duration::from_secs(1);
    let server = start(
        OAuthOptions::new()
            .client("machine", "machine-s3cret")
            .token_lifetime(lifetime),
    )
    .await;
    let addr = server.addr();
    let body = form(&[("grant_type", "client_credentials")]);
    let wrong = token(addr, Some(("machine", "guess")), &body).await;
    assert_eq!(wrong.status, 401);
    // client_secret_post works as well as basic.
    let post = form(&[
        ("grant_type", "client_credentials"),
        ("client_id", "machine"),
        ("client_secret", "machine-s3cret"),
    ]);
    let granted = json_of(token(addr, None, &post).await).await;
    assert_eq!(granted["expires_in"], 1);
    assert!(granted.get("refresh_token").is_none());
    let access = granted["access_token"].as_str().unwrap().to_owned();
    assert_eq!(tools_list(addr, &access).await.status, 200);
    tokio::time::sleep(lifetime + std::time::Duration::from_millis(100)).await;
    assert_eq!(tools_list(addr, &access).await.status, 401);
    assert!(!format!("{server:?}").contains("s3cret"));
}

#[tokio::test]
async fn tools_call_without_the_call_scope_gets_403_insufficient_scope() {
    let server = start(OAuthOptions::new().call_scope("mcp:call")).await;
    let addr = server.addr();
    let (id, secret) = register(addr).await;
    let code = authorize(&server, &id).await["code"].clone();
    let body = form(&[
        ("grant_type", "authorization_code"),
        ("code", &code),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
    ]);
    let granted = json_of(token(addr, Some((&id, &secret)), &body).await).await;
    assert_eq!(granted["scope"], "mcp");
    let bearer = format!("Bearer {}", granted["access_token"].as_str().unwrap());
    let call = request(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    let mut headers = POST.to_vec();
    headers.push(("authorization", &bearer));
    let reply = send(addr, "POST", "/mcp", &headers, &call.to_string()).await;
    assert_eq!(reply.status, 403);
    let header = reply.header("www-authenticate").unwrap();
    assert!(header.contains("error=\"insufficient_scope\""), "{header}");
    assert!(header.contains("scope=\"mcp:call\""), "{header}");
}
