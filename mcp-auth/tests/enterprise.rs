//! Enterprise-managed authorization against the in-process servers: the
//! ID token exchanged at the IdP for an ID-JAG (RFC 8693), the ID-JAG
//! presented to the MCP server's AS (RFC 7523), the source asked again at
//! every authorization, a refused token never presented twice.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use common::{AuthServer, CLIENT_ID, CLIENT_SECRET, JWT_BEARER, basic, send, transport};
use mcp_auth::{AuthMethod, EnterpriseIdp, JwtSource, OAuthProvider, PreRegistered};
use mcp_transport::{Transport, TransportError};
use mcp_transport_http::{BoxError, HttpTransportBuilder};

const IDP_CLIENT: &str = "idp-client";
const IDP_SECRET: &str = "idp-s3cret";

fn enterprise(server: &AuthServer, id_token: JwtSource) -> OAuthProvider {
    let url = server.mcp_url();
    let service = HttpTransportBuilder::new(&url).http_service().unwrap();
    let idp = EnterpriseIdp::new(format!("{}/idp/token", server.base()), IDP_CLIENT, id_token)
        .client_secret(IDP_SECRET);
    OAuthProvider::builder(&url)
        .enterprise_managed(
            idp,
            PreRegistered::new(CLIENT_ID, Some(CLIENT_SECRET.into())),
        )
        .build(service)
        .unwrap()
}

#[tokio::test]
async fn the_id_token_becomes_an_id_jag_then_an_access_token() {
    let server = AuthServer::start().await;
    server.behave(|b| b.id_tokens = vec!["id-token-1".into()]);
    let t = transport(
        &server.mcp_url(),
        enterprise(&server, JwtSource::fixed("id-token-1")),
    );
    send(&t, 1, "tools/list").await.unwrap();
    send(&t, 2, "tools/list").await.unwrap();
    t.close().await;

    let exchanges = server.seen_at("/idp/token");
    assert_eq!(exchanges.len(), 1, "one exchange for two requests");
    let form = exchanges[0].form();
    assert_eq!(
        form["grant_type"],
        "urn:ietf:params:oauth:grant-type:token-exchange"
    );
    assert_eq!(
        form["requested_token_type"],
        "urn:ietf:params:oauth:token-type:id-jag"
    );
    assert_eq!(form["audience"], server.base(), "the AS's issuer");
    assert_eq!(form["resource"], server.mcp_url(), "the PRM's resource");
    assert_eq!(form["subject_token"], "id-token-1");
    assert_eq!(
        form["subject_token_type"],
        "urn:ietf:params:oauth:token-type:id_token"
    );
    assert_eq!(
        form["scope"], "mcp:read",
        "the scopes of the resource metadata"
    );
    assert_eq!(
        exchanges[0].header("authorization"),
        Some(basic(IDP_CLIENT, IDP_SECRET).as_str()),
        "the client's credentials at the IdP"
    );

    let grants = server.seen_at("/token");
    assert_eq!(grants.len(), 1);
    let form = grants[0].form();
    assert_eq!(form["grant_type"], JWT_BEARER);
    assert_eq!(
        form["assertion"], "id-jag-for-id-token-1",
        "the ID-JAG the IdP issued"
    );
    assert_eq!(form["resource"], server.mcp_url());
    assert!(!form.contains_key("client_secret"));
    assert_eq!(
        grants[0].header("authorization"),
        Some(basic(CLIENT_ID, CLIENT_SECRET).as_str()),
        "the client's credentials at the MCP server's AS"
    );
    assert!(
        server.seen_at("/authorize").is_empty(),
        "no person involved"
    );
    assert!(server.seen_at("/register").is_empty());
}

#[tokio::test]
async fn the_id_token_source_is_asked_again_at_the_next_authorization() {
    let server = AuthServer::start().await;
    server.behave(|b| b.id_tokens = vec!["id-token-1".into(), "id-token-2".into()]);
    let calls = Arc::new(AtomicU32::new(0));
    let counter = calls.clone();
    let source = JwtSource::from_fn(move || {
        let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
        async move { Ok::<_, BoxError>(format!("id-token-{n}")) }
    });
    let t = transport(&server.mcp_url(), enterprise(&server, source));
    send(&t, 1, "tools/list").await.unwrap();
    // The MCP server forgets the token: the 401 runs both steps again
    // (no refresh token), with a fresh ID token.
    server.behave(|b| b.tokens.clear());
    send(&t, 2, "tools/list").await.unwrap();
    t.close().await;

    assert_eq!(calls.load(Ordering::SeqCst), 2);
    let subjects: Vec<String> = server
        .seen_at("/idp/token")
        .iter()
        .map(|s| s.form()["subject_token"].clone())
        .collect();
    assert_eq!(subjects, ["id-token-1", "id-token-2"]);
    let assertions: Vec<String> = server
        .seen_at("/token")
        .iter()
        .map(|s| s.form()["assertion"].clone())
        .collect();
    assert_eq!(
        assertions,
        ["id-jag-for-id-token-1", "id-jag-for-id-token-2"]
    );
}

#[tokio::test]
async fn a_refused_id_token_is_not_presented_again() {
    let server = AuthServer::start().await;
    // The IdP knows no ID token: `invalid_grant`.
    let oauth = enterprise(&server, JwtSource::fixed("expired-id-token"));
    let t = transport(&server.mcp_url(), oauth.clone());
    for id in 1..=3 {
        let outcome = send(&t, id, "tools/list").await;
        assert!(
            matches!(
                outcome,
                Err(TransportError::AuthorizationRequired { status: 401, .. })
            ),
            "{outcome:?}"
        );
    }
    t.close().await;
    assert_eq!(
        server.seen_at("/idp/token").len(),
        1,
        "three requests, one exchange"
    );
    assert!(server.seen_at("/token").is_empty(), "no ID-JAG, no grant");
    assert!(
        server.seen_at("/authorize").is_empty(),
        "no fallback to the code flow"
    );
    let error = oauth.last_error().unwrap();
    assert!(error.contains("refused already"), "{error}");
}

#[tokio::test]
async fn the_secret_can_go_in_the_body_and_nothing_secret_shows_in_debug() {
    let server = AuthServer::start().await;
    server.behave(|b| b.id_tokens = vec!["id-token-1".into()]);
    let url = server.mcp_url();
    let service = HttpTransportBuilder::new(&url).http_service().unwrap();
    let idp = EnterpriseIdp::new(
        format!("{}/idp/token", server.base()),
        IDP_CLIENT,
        JwtSource::fixed("id-token-1"),
    )
    .client_secret(IDP_SECRET)
    .auth_method(AuthMethod::SecretPost);
    let builder = OAuthProvider::builder(&url).enterprise_managed(
        idp,
        PreRegistered::new(CLIENT_ID, Some(CLIENT_SECRET.into())),
    );
    let shown_builder = format!("{builder:?}");
    let oauth = builder.build(service).unwrap();
    let t = transport(&url, oauth.clone());
    send(&t, 1, "tools/list").await.unwrap();
    t.close().await;

    let exchange = &server.seen_at("/idp/token")[0];
    assert_eq!(exchange.header("authorization"), None);
    assert_eq!(exchange.form()["client_id"], IDP_CLIENT);
    assert_eq!(exchange.form()["client_secret"], IDP_SECRET);

    let shown = format!("{shown_builder} {oauth:?} {t:?}");
    for secret in [
        IDP_SECRET,
        CLIENT_SECRET,
        "id-token-1",
        "id-jag-1",
        "access-2",
    ] {
        assert!(!shown.contains(secret), "{secret} in Debug: {shown}");
    }
}

/// A log sink for the whole process (nextest runs each test alone).
#[derive(Clone, Default)]
struct Sink(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn nothing_secret_in_trace_logs() {
    let sink = Sink::default();
    let writer = sink.clone();
    let _ = tracing_subscriber::fmt()
        .with_env_filter("trace")
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .try_init();
    let server = AuthServer::start().await;
    server.behave(|b| b.id_tokens = vec!["id-token-1".into()]);
    let t = transport(
        &server.mcp_url(),
        enterprise(&server, JwtSource::fixed("id-token-1")),
    );
    send(&t, 1, "tools/list").await.unwrap();
    t.close().await;

    let logs = String::from_utf8_lossy(&sink.0.lock().unwrap()).into_owned();
    assert!(
        logs.contains("token exchange") && logs.contains("JWT-bearer grant"),
        "the trace logs were captured"
    );
    let headers = [
        basic(IDP_CLIENT, IDP_SECRET),
        basic(CLIENT_ID, CLIENT_SECRET),
    ];
    let headers = headers.iter().map(|h| &h["Basic ".len()..]);
    for secret in [
        IDP_SECRET,
        CLIENT_SECRET,
        "id-token-1",
        "id-jag-for",
        "access-1",
    ]
    .into_iter()
    .chain(headers)
    {
        assert!(!logs.contains(secret), "{secret} in the logs");
    }
}
