//! The flows against the in-process authorization server: refresh on
//! expiry with the registered secret, step-up on 403, `invalid_grant`
//! leading to one fresh authorization and not a loop.

mod common;

use common::{AuthServer, CLIENT_ID, CLIENT_SECRET, provider, send, transport};
use mcp_transport::{Transport, TransportError};

#[tokio::test]
async fn an_expiring_token_is_refreshed_with_the_registered_secret() {
    let server = AuthServer::start().await;
    // A one-second token is refreshed after 0.9 s, before it is sent.
    server.behave(|b| b.expires_in = 1);
    let t = transport(&server.mcp_url(), provider(&server.mcp_url()));
    send(&t, 1, "tools/list").await.unwrap();
    send(&t, 2, "tools/list").await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    send(&t, 3, "tools/list").await.unwrap();

    let tokens = server.seen_at("/token");
    let grants: Vec<String> = tokens
        .iter()
        .map(|s| s.form()["grant_type"].clone())
        .collect();
    assert_eq!(grants, ["authorization_code", "refresh_token"]);
    let refresh = &tokens[1];
    assert_eq!(refresh.form()["refresh_token"], "refresh-1");
    assert_eq!(
        refresh.form()["resource"],
        server.mcp_url(),
        "the same resource on refresh"
    );
    // The server answers invalid_client to anything but Basic with the
    // registered id and secret; the refresh went through, so it had them.
    assert!(
        refresh
            .header("authorization")
            .unwrap()
            .starts_with("Basic ")
    );
    assert!(
        !refresh.body.contains(CLIENT_SECRET),
        "one method only, not also in the body"
    );
    let _ = CLIENT_ID;
    let mcp = server.seen_at("/mcp");
    assert_eq!(
        mcp.last().unwrap().header("authorization"),
        Some("Bearer access-2")
    );
    assert_eq!(server.seen_at("/register").len(), 1, "registered once");
    assert_eq!(server.seen_at("/authorize").len(), 1, "authorized once");
    t.close().await;
}

#[tokio::test]
async fn a_403_for_more_scope_steps_up_once_with_the_union() {
    let server = AuthServer::start().await;
    server.behave(|b| {
        b.challenge_scope = Some("mcp:read".into());
        b.call_scope = Some("mcp:write".into());
    });
    let t = transport(&server.mcp_url(), provider(&server.mcp_url()));
    send(&t, 1, "tools/list").await.unwrap();
    send(&t, 2, "tools/call").await.unwrap();
    let scopes: Vec<String> = server
        .seen_at("/authorize")
        .iter()
        .map(|s| s.query_pairs()["scope"].clone())
        .collect();
    assert_eq!(scopes, ["mcp:read", "mcp:read mcp:write"]);

    // A 403 for a scope the token already has cannot be helped by asking
    // again: it is the outcome, with no authorization request.
    server.behave(|b| {
        b.call_scope = Some("mcp:admin".into());
        for scopes in b.tokens.values_mut() {
            scopes.retain(|s| s != "mcp:admin");
        }
    });
    let outcome = send(&t, 3, "tools/call").await;
    // One step-up to mcp:admin is tried (the token does not have it) ...
    assert!(outcome.is_ok(), "{outcome:?}");
    server.behave(|b| {
        for scopes in b.tokens.values_mut() {
            scopes.retain(|s| s != "mcp:admin");
        }
    });
    let before = server.seen_at("/authorize").len();
    // ... and the server still refusing a token that was granted it ends there.
    let outcome = send(&t, 4, "tools/call").await;
    assert!(
        matches!(
            outcome,
            Err(TransportError::AuthorizationRequired { status: 403, .. })
        ),
        "{outcome:?}"
    );
    assert_eq!(
        server.seen_at("/authorize").len(),
        before,
        "no further authorization"
    );
    t.close().await;
}

#[tokio::test]
async fn invalid_grant_leads_to_one_fresh_authorization_not_a_loop() {
    let server = AuthServer::start().await;
    let t = transport(&server.mcp_url(), provider(&server.mcp_url()));
    send(&t, 1, "tools/list").await.unwrap();
    // The server forgets every token and refuses the refresh.
    server.behave(|b| {
        b.tokens.clear();
        b.refuse_refresh = true;
    });
    send(&t, 2, "tools/list").await.unwrap();
    let grants: Vec<String> = server
        .seen_at("/token")
        .iter()
        .map(|s| s.form()["grant_type"].clone())
        .collect();
    assert_eq!(
        grants,
        ["authorization_code", "refresh_token", "authorization_code"]
    );
    assert_eq!(server.seen_at("/authorize").len(), 2);

    // A server that refuses every token: each request costs one refresh
    // or one authorization, never more, and fails with the 401; a
    // refreshed token refused again ends the grant (the next request
    // authorizes afresh rather than refreshing again).
    server.behave(|b| {
        b.refuse_refresh = false;
        b.refuse_all = true;
    });
    let grants = || -> Vec<String> {
        server
            .seen_at("/token")
            .iter()
            .map(|s| s.form()["grant_type"].clone())
            .collect()
    };
    let before = grants().len();
    let authorized = server.seen_at("/authorize").len();
    for id in 3..=6 {
        let outcome = send(&t, id, "tools/list").await;
        assert!(
            matches!(
                outcome,
                Err(TransportError::AuthorizationRequired { status: 401, .. })
            ),
            "request {id}: {outcome:?}"
        );
    }
    assert_eq!(
        grants()[before..],
        [
            "refresh_token",
            "authorization_code",
            "refresh_token",
            "authorization_code"
        ],
        "one grant per request: a refresh, then, that refreshed token refused, an authorization"
    );
    assert_eq!(server.seen_at("/authorize").len(), authorized + 2);
    // Each request was sent twice (the token, then the new one), no more.
    let mcp = server.seen_at("/mcp").len();
    let outcome = send(&t, 7, "tools/list").await;
    assert!(outcome.is_err(), "{outcome:?}");
    assert_eq!(server.seen_at("/mcp").len(), mcp + 2);
    t.close().await;
}

#[tokio::test]
async fn concurrent_requests_that_meet_an_expired_token_share_one_refresh() {
    let server = AuthServer::start().await;
    server.behave(|b| b.expires_in = 1);
    let t = std::sync::Arc::new(transport(&server.mcp_url(), provider(&server.mcp_url())));
    send(&t, 1, "tools/list").await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1000)).await;
    let mut tasks = Vec::new();
    for id in 10..18 {
        let t = t.clone();
        tasks.push(tokio::spawn(
            async move { send(&t, id, "tools/list").await },
        ));
    }
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    let refreshes = server
        .seen_at("/token")
        .iter()
        .filter(|s| s.form()["grant_type"] == "refresh_token")
        .count();
    assert_eq!(refreshes, 1, "eight requests, one refresh");
    assert_eq!(server.seen_at("/authorize").len(), 1);
    t.close().await;
}

#[tokio::test]
async fn a_file_store_carries_the_authorization_to_a_later_run() {
    let server = AuthServer::start().await;
    let dir = std::env::temp_dir().join(format!("mcp-auth-store-{}", std::process::id()));
    let path = dir.join("tokens.json");
    let with_store = || {
        let url = server.mcp_url();
        let service = mcp_transport_http::HttpTransportBuilder::new(&url)
            .http_service()
            .unwrap();
        mcp_auth::OAuthProvider::builder(&url)
            .redirect_uri("http://127.0.0.1:9/callback")
            .authorizer(mcp_auth::HeadlessAuthorizer::new(service.clone()))
            .store(mcp_auth::FileStore::new(&path))
            .build(service)
            .unwrap()
    };
    let first = with_store();
    let t = transport(&server.mcp_url(), first.clone());
    send(&t, 1, "tools/list").await.unwrap();
    t.close().await;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "owner-only");
    }

    // A later run: the stored token is used, nothing is authorized again.
    let second = with_store();
    assert!(second.is_authorized().await);
    let t = transport(&server.mcp_url(), second.clone());
    send(&t, 2, "tools/list").await.unwrap();
    t.close().await;
    assert_eq!(server.seen_at("/authorize").len(), 1);
    assert_eq!(server.seen_at("/register").len(), 1);

    second.logout().await;
    assert!(
        !with_store().is_authorized().await,
        "logout empties the store"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_refreshed_token_refused_again_leads_to_a_fresh_authorization() {
    let server = AuthServer::start().await;
    let t = transport(&server.mcp_url(), provider(&server.mcp_url()));
    send(&t, 1, "tools/list").await.unwrap();
    // The server forgets the token, and refuses the refreshed one.
    server.behave(|b| {
        b.tokens.clear();
        b.refuse_refreshed = true;
    });
    // 401 -> refresh -> refused again: this request fails ...
    let first = send(&t, 2, "tools/list").await;
    assert!(
        matches!(
            first,
            Err(TransportError::AuthorizationRequired { status: 401, .. })
        ),
        "{first:?}"
    );
    // ... and the next authorizes afresh rather than refreshing again.
    let outcome = send(&t, 3, "tools/list").await;
    assert!(outcome.is_ok(), "{outcome:?}");
    let grants: Vec<String> = server
        .seen_at("/token")
        .iter()
        .map(|s| s.form()["grant_type"].clone())
        .collect();
    assert_eq!(
        grants,
        ["authorization_code", "refresh_token", "authorization_code"]
    );
    t.close().await;
}
