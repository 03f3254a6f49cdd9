//! Workload identity against the in-process server: the workload's JWT as
//! the assertion of a JWT-bearer grant, with or without a client id; a
//! refused token not retried and no other grant tried; a rotated token
//! file read again.

mod common;

use std::sync::{Arc, Mutex};

use common::{AuthServer, JWT_BEARER, send, transport};
use mcp_auth::{JwtSource, OAuthProvider, PreRegistered};
use mcp_transport::{Transport, TransportError};
use mcp_transport_http::HttpTransportBuilder;

fn workload(server: &AuthServer, source: JwtSource, client_id: Option<&str>) -> OAuthProvider {
    let url = server.mcp_url();
    let service = HttpTransportBuilder::new(&url).http_service().unwrap();
    // Opaque test tokens have no `aud`: the issuer is named.
    let mut builder = OAuthProvider::builder(&url)
        .issuer(server.base())
        .workload_identity(source);
    if let Some(id) = client_id {
        builder = builder.pre_registered(PreRegistered::new(id, None));
    }
    builder.build(service).unwrap()
}

fn refused(outcome: &Result<serde_json::Value, TransportError>) -> bool {
    matches!(
        outcome,
        Err(TransportError::AuthorizationRequired { status: 401, .. })
    )
}

#[tokio::test]
async fn the_workload_token_is_the_assertion_of_a_jwt_bearer_grant() {
    let server = AuthServer::start().await;
    server.behave(|b| b.assertions = vec!["workload-jwt".into()]);
    let t = transport(
        &server.mcp_url(),
        workload(&server, JwtSource::fixed("workload-jwt"), None),
    );
    send(&t, 1, "tools/list").await.unwrap();
    send(&t, 2, "tools/list").await.unwrap();
    t.close().await;

    let grants = server.seen_at("/token");
    assert_eq!(grants.len(), 1);
    let form = grants[0].form();
    assert_eq!(form["grant_type"], JWT_BEARER);
    assert_eq!(form["assertion"], "workload-jwt");
    assert_eq!(form["resource"], server.mcp_url());
    assert_eq!(form["scope"], "mcp:read");
    assert!(
        !form.contains_key("client_id"),
        "no registration, no client id"
    );
    assert_eq!(grants[0].header("authorization"), None);
    assert!(server.seen_at("/register").is_empty(), "no registration");
    assert!(server.seen_at("/authorize").is_empty());
}

#[tokio::test]
async fn a_client_id_goes_in_the_body() {
    let server = AuthServer::start().await;
    server.behave(|b| b.assertions = vec!["workload-jwt".into()]);
    let t = transport(
        &server.mcp_url(),
        workload(
            &server,
            JwtSource::fixed("workload-jwt"),
            Some("workload-1"),
        ),
    );
    send(&t, 1, "tools/list").await.unwrap();
    t.close().await;
    let grant = &server.seen_at("/token")[0];
    assert_eq!(grant.form()["client_id"], "workload-1");
    assert_eq!(grant.header("authorization"), None, "no secret to send");
}

#[tokio::test]
async fn a_refused_token_is_not_retried_and_no_other_grant_is_tried() {
    let server = AuthServer::start().await;
    // The AS takes no assertion: `invalid_grant`.
    let oauth = workload(&server, JwtSource::fixed("wrong-audience-jwt"), None);
    let t = transport(&server.mcp_url(), oauth.clone());
    for id in 1..=3 {
        let outcome = send(&t, id, "tools/list").await;
        assert!(refused(&outcome), "{outcome:?}");
    }
    t.close().await;
    let grants: Vec<String> = server
        .seen_at("/token")
        .iter()
        .map(|s| s.form()["grant_type"].clone())
        .collect();
    assert_eq!(grants, [JWT_BEARER], "three requests, one token request");
    assert!(server.seen_at("/authorize").is_empty());
    assert!(server.seen_at("/register").is_empty());
    let error = oauth.last_error().unwrap();
    assert!(error.contains("refused already"), "{error}");
}

#[tokio::test]
async fn a_rotated_token_file_is_read_again() {
    let server = AuthServer::start().await;
    server.behave(|b| b.assertions = vec!["rotated-jwt".into()]);
    let dir = std::env::temp_dir().join(format!("mcp-auth-workload-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("token");
    std::fs::write(&path, "expired-jwt\n").unwrap();
    let source = JwtSource::file(&path);
    assert!(!format!("{source:?}").contains("expired-jwt"));
    let t = transport(&server.mcp_url(), workload(&server, source, None));

    let first = send(&t, 1, "tools/list").await;
    assert!(refused(&first), "{first:?}");
    // The platform rotates the token: the next authorization uses it.
    std::fs::write(&path, "rotated-jwt\n").unwrap();
    send(&t, 2, "tools/list").await.unwrap();
    t.close().await;

    let assertions: Vec<String> = server
        .seen_at("/token")
        .iter()
        .map(|s| s.form()["assertion"].clone())
        .collect();
    assert_eq!(assertions, ["expired-jwt", "rotated-jwt"], "trimmed");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_failing_source_is_reported_and_no_request_is_made() {
    let server = AuthServer::start().await;
    let asked = Arc::new(Mutex::new(0));
    let count = asked.clone();
    let source = JwtSource::from_fn(move || {
        *count.lock().unwrap() += 1;
        async { Err::<String, _>("the metadata service is down".into()) }
    });
    let oauth = workload(&server, source, None);
    let t = transport(&server.mcp_url(), oauth.clone());
    let outcome = send(&t, 1, "tools/list").await;
    assert!(refused(&outcome), "{outcome:?}");
    t.close().await;
    assert_eq!(*asked.lock().unwrap(), 1);
    assert!(server.seen_at("/token").is_empty());
    let error = oauth.last_error().unwrap();
    assert!(error.contains("the metadata service is down"), "{error}");
}
