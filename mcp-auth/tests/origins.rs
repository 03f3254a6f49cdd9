//! Where tokens go, and where they never show: not to another origin
//! (through a redirect or through metadata that points elsewhere), not in
//! `Debug` output, not in logs at trace level.

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};

use common::{AuthServer, CLIENT_SECRET, provider, send, transport};
use mcp_auth::{PreRegistered, PrivateKey, Secret};
use mcp_transport::{Transport, TransportError};
use mcp_transport_http::HeaderProvider;

/// No request `server` saw carried a bearer token.
fn no_bearer(server: &AuthServer) {
    for seen in server.seen.lock().unwrap().iter() {
        let auth = seen.header("authorization").unwrap_or_default();
        assert!(!auth.starts_with("Bearer"), "{} got {auth}", seen.path);
        assert!(
            !seen.body.contains("access-"),
            "{} got a token in its body",
            seen.path
        );
    }
}

#[tokio::test]
async fn a_token_never_follows_a_redirect_to_another_origin() {
    let server = AuthServer::start().await;
    let elsewhere = AuthServer::start().await;
    let t = transport(&server.mcp_url(), provider(&server.mcp_url()));
    send(&t, 1, "tools/list").await.unwrap();
    server.behave(|b| b.redirect_mcp_to = Some(elsewhere.mcp_url()));
    let outcome = send(&t, 2, "tools/list").await;
    assert!(
        matches!(outcome, Err(TransportError::RedirectRefused { .. })),
        "{outcome:?}"
    );
    assert!(elsewhere.seen.lock().unwrap().is_empty());
    t.close().await;
}

#[tokio::test]
async fn metadata_naming_another_origin_never_gets_the_token() {
    // The MCP server's PRM names an authorization server on another
    // origin: it gets the registration and token requests, never a bearer.
    let server = AuthServer::start().await;
    let authorization = AuthServer::start().await;
    server.behave(|b| b.authorization_server = Some(authorization.base()));
    let oauth = provider(&server.mcp_url());
    let t = transport(&server.mcp_url(), oauth.clone());
    // The other server issues the tokens the MCP server accepts.
    server.behave(|b| b.accept_any_access = true);
    let outcome = send(&t, 1, "tools/list").await;
    assert!(outcome.is_ok(), "{outcome:?} {:?}", oauth.last_error());
    assert_eq!(authorization.seen_at("/token").len(), 1);
    no_bearer(&authorization);

    // And the provider itself adds nothing for a URL on another origin.
    let mine = http::Request::post(server.mcp_url())
        .body(())
        .unwrap()
        .into_parts()
        .0;
    let theirs = http::Request::post(authorization.mcp_url())
        .body(())
        .unwrap()
        .into_parts()
        .0;
    assert!(
        oauth
            .headers(&mine)
            .await
            .unwrap()
            .contains_key("authorization")
    );
    assert!(oauth.headers(&theirs).await.unwrap().is_empty());
    t.close().await;
}

/// A log sink for the whole process (nextest runs each test alone).
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn nothing_secret_in_debug_output_or_trace_logs() {
    let sink = Sink::default();
    let writer = sink.clone();
    let _ = tracing_subscriber::fmt()
        .with_env_filter("trace")
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .try_init();

    let server = AuthServer::start().await;
    server.behave(|b| b.expires_in = 1);
    let oauth = provider(&server.mcp_url());
    let t = transport(&server.mcp_url(), oauth.clone());
    send(&t, 1, "tools/list").await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1000)).await;
    send(&t, 2, "tools/list").await.unwrap();
    t.close().await;

    let debug = format!("{oauth:?} {t:?}");
    let logs = String::from_utf8_lossy(&sink.0.lock().unwrap()).into_owned();
    assert!(logs.contains("refreshed"), "the trace logs were captured");
    for secret in [
        CLIENT_SECRET,
        "access-1",
        "access-2",
        "refresh-1",
        "the-code",
    ] {
        assert!(!debug.contains(secret), "{secret} in Debug: {debug}");
        assert!(!logs.contains(secret), "{secret} in the logs");
    }

    let pem = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgevZzL1gdAFr88hb2\nOF/2NxApJCzGCEDdfSp6VQO30hyhRANCAAQRWz+jn65BtOMvdyHKcvjBeBSDZH2r\n1RTwjmYSi9R/zpBnuQ4EiMnCqfMPWiZqB4QdbAd0E7oH50VpuZ1P087G\n-----END PRIVATE KEY-----\n";
    let key = PrivateKey::from_pem(pem, "ES256").unwrap();
    let pre = PreRegistered::new("id", Some("pre-s3cret".into())).with_private_key(key);
    let shown = format!("{pre:?} {:?}", Secret::new("tok"));
    assert!(
        !shown.contains("pre-s3cret") && !shown.contains("MIGHAgEA") && !shown.contains("tok\""),
        "{shown}"
    );
}

#[test]
fn a_plain_http_mcp_server_off_loopback_gets_no_provider() {
    let build = |url: &str, insecure: bool| {
        let service = mcp_transport_http::HttpTransportBuilder::new(url)
            .http_service()
            .unwrap();
        mcp_auth::OAuthProvider::builder(url)
            .authorizer(mcp_auth::HeadlessAuthorizer::new(service.clone()))
            .allow_insecure_http(insecure)
            .build(service)
    };
    let url = "http://mcp.example.com/mcp?api_key=k3y";
    match build(url, false) {
        Err(mcp_auth::AuthError::Config(message)) => {
            assert!(message.contains("http://mcp.example.com"), "{message}");
            assert!(message.contains("https"), "{message}");
            assert!(!message.contains("k3y"), "no query in errors: {message}");
        }
        other => panic!("{other:?}"),
    }
    // Loopback, https, and a test setup that asks for it, are built.
    for (url, insecure) in [
        ("http://127.0.0.1:9/mcp", false),
        ("http://localhost:9/mcp", false),
        ("http://[::1]:9/mcp", false),
        ("https://mcp.example.com/mcp", false),
        ("http://mcp.example.com/mcp", true),
    ] {
        assert!(build(url, insecure).is_ok(), "{url}");
    }
    // A provider's Debug output shows its URL without query values.
    let shown = format!(
        "{:?}",
        build("https://h.example/mcp?api_key=k3y", false).unwrap()
    );
    assert!(shown.contains("https://h.example/mcp"), "{shown}");
    assert!(!shown.contains("k3y"), "no query values in Debug: {shown}");
}

#[tokio::test]
async fn the_provider_as_a_layer_authorizes_a_bare_client_on_its_origin_only() {
    use mcp_transport_http::{HttpService, HttpTransportBuilder, RedirectRefused, RequestBody};
    use tower::{Layer, ServiceExt};

    let server = AuthServer::start().await;
    let elsewhere = AuthServer::start().await;
    let oauth = provider(&server.mcp_url());
    let client = HttpTransportBuilder::new(server.mcp_url())
        .http_service()
        .unwrap();
    let authorized = HttpService::new(oauth.layer(client));
    let post = |url: String| {
        let message = mcp_protocol::Message::Request(common::modern(1, "tools/list"));
        let body = serde_json::to_vec(&message).unwrap();
        http::Request::post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/list")
            .body(RequestBody::new(body.into()))
            .unwrap()
    };
    // The 401 is answered inside the layer: the flow runs, the request
    // goes again with the token.
    let response = authorized
        .clone()
        .oneshot(post(server.mcp_url()))
        .await
        .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    assert!(oauth.is_authorized().await);
    let last = server.seen_at("/mcp").pop().unwrap();
    assert!(last.header("authorization").unwrap().starts_with("Bearer "));

    // A redirect to another origin is refused inside the layer too.
    server.behave(|b| b.redirect_mcp_to = Some(elsewhere.mcp_url()));
    let refused = authorized
        .oneshot(post(server.mcp_url()))
        .await
        .unwrap_err();
    assert!(
        refused.downcast_ref::<RedirectRefused>().is_some(),
        "{refused}"
    );
    assert!(elsewhere.seen.lock().unwrap().is_empty());
}
