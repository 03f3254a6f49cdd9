//! Where credentials may go: a pre-registered secret, or a workload's
//! token, is sent only to the authorization server it is for. The MCP
//! server (127.0.0.1) names an authorization server on another host
//! (127.0.0.2), as a hostile or misconfigured server could.

mod common;

use base64::Engine;
use common::{AuthServer, CLIENT_ID, CLIENT_SECRET, JWT_BEARER, basic, send, transport};
use mcp_auth::{HeadlessAuthorizer, JwtSource, OAuthProvider, OAuthProviderBuilder, PreRegistered};
use mcp_transport::Transport;
use mcp_transport_http::HttpTransportBuilder;

/// The MCP server, and the authorization server on another host that its
/// metadata names.
async fn servers() -> (AuthServer, AuthServer) {
    let mcp = AuthServer::start().await;
    let elsewhere = AuthServer::start_on("127.0.0.2").await;
    let named = elsewhere.base();
    mcp.behave(|b| {
        b.authorization_server = Some(named);
        b.accept_any_access = true;
    });
    (mcp, elsewhere)
}

fn build(
    mcp: &AuthServer,
    setup: impl FnOnce(OAuthProviderBuilder) -> OAuthProviderBuilder,
) -> OAuthProvider {
    let url = mcp.mcp_url();
    let service = HttpTransportBuilder::new(&url).http_service().unwrap();
    setup(
        OAuthProvider::builder(&url)
            .redirect_uri("http://127.0.0.1:9/callback")
            .authorizer(HeadlessAuthorizer::new(service.clone())),
    )
    .build(service)
    .unwrap()
}

/// A JWT (unsigned: the test server does not check) with `aud`.
fn jwt(aud: &str) -> String {
    let part = |v: serde_json::Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
    };
    format!(
        "{}.{}.sig",
        part(serde_json::json!({"alg": "ES256", "typ": "JWT"})),
        part(serde_json::json!({"iss": "https://platform.example", "aud": aud}))
    )
}

/// What reached `server` with a client secret on it.
fn secrets_seen(server: &AuthServer) -> Vec<String> {
    server
        .seen
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.header("authorization").is_some() || s.body.contains(CLIENT_SECRET))
        .map(|s| s.path.clone())
        .collect()
}

#[tokio::test]
async fn a_secret_that_names_no_issuer_never_goes_to_another_host() {
    let credentials = || PreRegistered::new(CLIENT_ID, Some(CLIENT_SECRET.into()));
    for machine in [true, false] {
        let (mcp, elsewhere) = servers().await;
        let oauth = build(&mcp, |b| {
            if machine {
                b.client_credentials(credentials())
            } else {
                b.pre_registered(credentials())
            }
        });
        let t = transport(&mcp.mcp_url(), oauth.clone());
        assert!(send(&t, 1, "tools/list").await.is_err());
        t.close().await;
        let sent = secrets_seen(&elsewhere);
        assert!(
            sent.is_empty(),
            "machine={machine}: the secret went to {} at {sent:?}",
            elsewhere.base()
        );
        let error = oauth.last_error().unwrap_or_default();
        assert!(error.contains("PreRegistered::at"), "{error}");
    }
}

#[tokio::test]
async fn credentials_that_name_their_issuer_go_there() {
    let (mcp, elsewhere) = servers().await;
    let issuer = elsewhere.base();
    let oauth = build(&mcp, |b| {
        b.pre_registered(PreRegistered::at(
            issuer,
            CLIENT_ID,
            Some(CLIENT_SECRET.into()),
        ))
    });
    let t = transport(&mcp.mcp_url(), oauth);
    send(&t, 1, "tools/list").await.unwrap();
    t.close().await;
    let token = elsewhere.seen_at("/token");
    assert_eq!(token.len(), 1);
    assert_eq!(
        token[0].header("authorization"),
        Some(basic(CLIENT_ID, CLIENT_SECRET).as_str())
    );
    assert!(elsewhere.seen_at("/register").is_empty(), "no registration");
}

#[tokio::test]
async fn a_configured_issuer_is_the_only_authorization_server_used() {
    let (mcp, elsewhere) = servers().await;
    let oauth = build(&mcp, |b| {
        b.issuer("https://auth.example.com")
            .client_credentials(PreRegistered::new(CLIENT_ID, Some(CLIENT_SECRET.into())))
    });
    let t = transport(&mcp.mcp_url(), oauth.clone());
    assert!(send(&t, 1, "tools/list").await.is_err());
    t.close().await;
    assert!(
        elsewhere.seen.lock().unwrap().is_empty(),
        "the server the resource named was contacted"
    );
    let error = oauth.last_error().unwrap_or_default();
    assert!(
        error.contains("https://auth.example.com") && error.contains(&elsewhere.base()),
        "{error}"
    );
}

#[tokio::test]
async fn a_workload_token_goes_only_where_its_audience_says() {
    let (mcp, elsewhere) = servers().await;
    let foreign = jwt("https://sts.example.com");
    elsewhere.behave(|b| b.assertions = vec![foreign.clone()]);
    let oauth = build(&mcp, |b| b.workload_identity(JwtSource::fixed(foreign)));
    let t = transport(&mcp.mcp_url(), oauth.clone());
    assert!(send(&t, 1, "tools/list").await.is_err());
    t.close().await;
    assert!(
        elsewhere.seen_at("/token").is_empty(),
        "a token for another audience went to {}",
        elsewhere.base()
    );
    let error = oauth.last_error().unwrap_or_default();
    assert!(error.contains("audience"), "{error}");

    // A token whose audience is that authorization server goes there.
    let (mcp, elsewhere) = servers().await;
    let own = jwt(&elsewhere.base());
    elsewhere.behave(|b| b.assertions = vec![own.clone()]);
    let oauth = build(&mcp, |b| b.workload_identity(JwtSource::fixed(own.clone())));
    let t = transport(&mcp.mcp_url(), oauth);
    send(&t, 1, "tools/list").await.unwrap();
    t.close().await;
    let grant = &elsewhere.seen_at("/token")[0];
    assert_eq!(grant.form()["grant_type"], JWT_BEARER);
    assert_eq!(grant.form()["assertion"], own);
}
