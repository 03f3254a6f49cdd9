//! The provider against the protected reference server, whose
//! authorization server verifies what the in-process one of `common`
//! takes on trust: the PKCE verifier, the redirect URI, the client's
//! registered secret on every token request; and a real MCP server
//! behind the bearer check.

mod common;

use std::collections::HashMap;

use common::{WAIT, transport};
use mcp_auth::{HeadlessAuthorizer, OAuthProvider, PreRegistered};
use mcp_protocol::Request;
use mcp_reference_server::FakeConfig;
use mcp_reference_server::http::{HttpOptions, OAuthOptions, ProtectedHttpFake};
use mcp_transport::{RequestOptions, Transport};
use mcp_transport_http::{HttpTransport, HttpTransportBuilder};
use serde_json::{Value, json};

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"}
    })
}

async fn tools_list(t: &HttpTransport, id: i64) -> Value {
    let request = Request::new(id, "tools/list", Some(json!({"_meta": meta()})));
    tokio::time::timeout(WAIT, t.request(request, RequestOptions::new()))
        .await
        .expect("in time")
        .expect("tools/list")
}

async fn echo(t: &HttpTransport, id: i64, text: &str) -> Value {
    let params = json!({"name": "echo", "arguments": {"text": text}, "_meta": meta()});
    let request = Request::new(id, "tools/call", Some(params));
    tokio::time::timeout(WAIT, t.request(request, RequestOptions::new()))
        .await
        .expect("in time")
        .expect("tools/call")
}

fn headless(url: &str) -> OAuthProvider {
    let service = HttpTransportBuilder::new(url).http_service().unwrap();
    OAuthProvider::builder(url)
        .redirect_uri("http://127.0.0.1:9/callback")
        .authorizer(HeadlessAuthorizer::new(service.clone()))
        .build(service)
        .unwrap()
}

fn count(server: &ProtectedHttpFake, path: &str) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.path() == path)
        .count()
}

fn form(body: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

async fn start(oauth: OAuthOptions) -> ProtectedHttpFake {
    ProtectedHttpFake::start_with(FakeConfig::default(), HttpOptions::new(), oauth)
        .await
        .unwrap()
}

#[tokio::test]
async fn the_code_flow_then_a_refresh_with_the_registered_secret() {
    let server = start(OAuthOptions::new()).await;
    let t = transport(&server.url(), headless(&server.url()));
    let listed = tools_list(&t, 1).await;
    assert!(listed.to_string().contains("\"echo\""), "{listed}");
    assert!(echo(&t, 2, "hi").await.to_string().contains("hi"));
    assert_eq!(count(&server, "/register"), 1);
    assert_eq!(count(&server, "/authorize"), 1);
    assert_eq!(count(&server, "/token"), 1);

    server.expire_tokens();
    tools_list(&t, 3).await;
    let tokens: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.path() == "/token")
        .collect();
    assert_eq!(tokens.len(), 2);
    let refresh = &tokens[1];
    assert_eq!(form(&refresh.body)["grant_type"], "refresh_token");
    assert!(
        refresh
            .header("authorization")
            .is_some_and(|a| a.starts_with("Basic ")),
        "the registered secret on the refresh"
    );
    assert_eq!(count(&server, "/authorize"), 1, "no new authorization");
}

#[tokio::test]
async fn a_call_that_needs_more_scope_steps_up_with_the_union() {
    let server = start(OAuthOptions::new().call_scope("mcp:call")).await;
    let t = transport(&server.url(), headless(&server.url()));
    tools_list(&t, 1).await;
    assert!(
        echo(&t, 2, "stepped up")
            .await
            .to_string()
            .contains("stepped up")
    );
    let authorizations: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.path() == "/authorize")
        .collect();
    assert_eq!(authorizations.len(), 2);
    let query = authorizations[1].uri.split_once('?').unwrap().1;
    let scope = form(query.as_bytes())["scope"].clone();
    let scopes: Vec<&str> = scope.split(' ').collect();
    assert!(
        scopes.contains(&"mcp") && scopes.contains(&"mcp:call"),
        "{scope}"
    );
}

#[tokio::test]
async fn client_credentials_for_a_pre_registered_machine() {
    let server = start(OAuthOptions::new().client("machine", "machine-s3cret")).await;
    let url = server.url();
    let service = HttpTransportBuilder::new(&url).http_service().unwrap();
    let provider = OAuthProvider::builder(&url)
        .client_credentials(PreRegistered::new("machine", Some("machine-s3cret".into())))
        .build(service)
        .unwrap();
    let t = transport(&url, provider);
    tools_list(&t, 1).await;
    assert_eq!(count(&server, "/register"), 0);
    assert_eq!(count(&server, "/authorize"), 0);
    let tokens: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.path() == "/token")
        .collect();
    assert_eq!(tokens.len(), 1);
    assert_eq!(form(&tokens[0].body)["grant_type"], "client_credentials");
}
