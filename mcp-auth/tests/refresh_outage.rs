//! A refresh that fails without the grant being refused (the token
//! endpoint unreachable, a 5xx, a body that is no OAuth answer) keeps the
//! login and the stored tokens, and fails the request with a retryable
//! error that says so; the next request refreshes.

mod common;

use std::sync::Arc;

use common::{AuthServer, CLIENT_ID, CLIENT_SECRET, send, transport};
use mcp_auth::{HeadlessAuthorizer, MemoryStore, OAuthProvider, StoredAuthorization, TokenStore};
use mcp_transport::{Transport, TransportError};
use mcp_transport_http::HttpTransportBuilder;
use serde_json::json;

/// A store the test can read while the provider uses it.
#[derive(Clone, Default)]
struct Shared(Arc<MemoryStore>);

impl TokenStore for Shared {
    fn load(&self, server: &str) -> Option<StoredAuthorization> {
        self.0.load(server)
    }
    fn save(&self, server: &str, record: &StoredAuthorization) {
        self.0.save(server, record);
    }
    fn remove(&self, server: &str) {
        self.0.remove(server);
    }
}

/// A login kept from an earlier run: `stored-access` (which the server
/// knows), and a refresh token; due for refresh when `due`.
fn stored(server: &AuthServer, token_endpoint: &str, due: bool) -> StoredAuthorization {
    serde_json::from_value(json!({
        "issuer": server.base(),
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
        "auth_method": "client_secret_basic",
        "token_endpoint": token_endpoint,
        "resource": server.mcp_url(),
        "access_token": "stored-access",
        "refresh_token": "stored-refresh",
        // A second after the epoch: long past.
        "refresh_at": if due { Some(1) } else { None },
        "scopes": ["mcp:read"],
    }))
    .unwrap()
}

fn provider(url: &str, store: &Shared) -> OAuthProvider {
    let service = HttpTransportBuilder::new(url).http_service().unwrap();
    OAuthProvider::builder(url)
        .redirect_uri("http://127.0.0.1:9/callback")
        .authorizer(HeadlessAuthorizer::new(service.clone()))
        .store(store.clone())
        .build(service)
        .unwrap()
}

fn grants(server: &AuthServer) -> Vec<String> {
    server
        .seen_at("/token")
        .iter()
        .map(|s| s.form()["grant_type"].clone())
        .collect()
}

#[tokio::test]
async fn a_5xx_or_an_unreadable_answer_at_refresh_keeps_the_login() {
    let outages = [
        (503, "<html>down for maintenance</html>", "answered 503"),
        (500, r#"{"error":"server_error"}"#, "answered 500"),
        (429, "slow down", "answered 429"),
        (
            200,
            "<html>a captive portal</html>",
            "could not be refreshed",
        ),
    ];
    for (status, body, says) in outages {
        let server = AuthServer::start().await;
        let url = server.mcp_url();
        server.behave(|b| {
            b.tokens
                .insert("stored-access".into(), vec!["mcp:read".into()]);
            b.token_outage = Some((status, body.into()));
        });
        let record = stored(&server, &format!("{}/token", server.base()), true);
        let store = Shared::default();
        store.save(&url, &record);
        let oauth = provider(&url, &store);
        let t = transport(&url, oauth.clone());

        let outcome = send(&t, 1, "tools/list").await;
        let Err(TransportError::Credentials { cause }) = &outcome else {
            panic!("{status}: {outcome:?}");
        };
        assert!(cause.contains(says), "{status}: {cause}");
        assert!(cause.contains("the login is kept"), "{cause}");
        assert!(!cause.contains("stored-refresh"), "no secret: {cause}");
        assert!(store.load(&url) == Some(record.clone()), "{status}: kept");
        assert!(oauth.is_authorized().await);
        assert!(server.seen_at("/mcp").is_empty(), "nothing was sent");
        assert!(server.seen_at("/authorize").is_empty(), "no new login");

        // The endpoint is back: the next request refreshes, with the
        // same login.
        server.behave(|b| b.token_outage = None);
        send(&t, 2, "tools/list").await.unwrap();
        assert_eq!(grants(&server), ["refresh_token", "refresh_token"]);
        assert_eq!(server.seen_at("/mcp").len(), 1);
        assert!(server.seen_at("/authorize").is_empty());
        let kept = store.load(&url).unwrap();
        assert_eq!(kept.access_token, "access-1");
        t.close().await;
    }
}

/// A 4xx is a refusal, in OAuth's words or not (a proxy's HTML page, an
/// empty body): the login ends and a fresh authorization follows, rather
/// than every request failing with "the login is kept" for good.
#[tokio::test]
async fn a_refusal_without_an_oauth_body_at_refresh_ends_the_login() {
    for (status, body) in [(400, "<html>bad request</html>"), (401, "")] {
        let server = AuthServer::start().await;
        let url = server.mcp_url();
        server.behave(|b| {
            b.tokens
                .insert("stored-access".into(), vec!["mcp:read".into()]);
            b.token_outage = Some((status, body.into()));
        });
        let record = stored(&server, &format!("{}/token", server.base()), true);
        let store = Shared::default();
        store.save(&url, &record);
        let oauth = provider(&url, &store);
        let t = transport(&url, oauth.clone());

        let outcome = send(&t, 1, "tools/list").await;
        if let Err(TransportError::Credentials { cause }) = &outcome {
            assert!(!cause.contains("the login is kept"), "{status}: {cause}");
        }
        assert!(
            store.load(&url) != Some(record.clone()),
            "{status}: the refused login is not kept"
        );
        assert!(
            !server.seen_at("/authorize").is_empty(),
            "{status}: a fresh authorization follows ({outcome:?})"
        );
        t.close().await;
    }
}

#[tokio::test]
async fn an_unreachable_token_endpoint_at_refresh_keeps_the_login() {
    let server = AuthServer::start().await;
    let url = server.mcp_url();
    server.behave(|b| {
        b.tokens
            .insert("stored-access".into(), vec!["mcp:read".into()]);
    });
    // A port nothing listens on any more: the connection is refused.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let record = stored(&server, &format!("http://{closed}/token"), true);
    let store = Shared::default();
    store.save(&url, &record);
    let oauth = provider(&url, &store);
    let t = transport(&url, oauth.clone());
    for id in 1..=2 {
        let outcome = send(&t, id, "tools/list").await;
        let Err(TransportError::Credentials { cause }) = &outcome else {
            panic!("{outcome:?}");
        };
        assert!(
            cause.contains("the token endpoint could not be reached"),
            "{cause}"
        );
        assert!(cause.contains("the login is kept"), "{cause}");
    }
    assert!(store.load(&url) == Some(record));
    assert!(oauth.is_authorized().await);
    assert!(server.seen_at("/mcp").is_empty());
    assert!(server.seen_at("/authorize").is_empty());
    t.close().await;
}

#[tokio::test]
async fn a_401_met_while_the_token_endpoint_is_down_keeps_the_login() {
    let server = AuthServer::start().await;
    let url = server.mcp_url();
    // The server no longer takes the stored token (not yet due), and its
    // token endpoint is down.
    server.behave(|b| b.token_outage = Some((502, "bad gateway".into())));
    let record = stored(&server, &format!("{}/token", server.base()), false);
    let store = Shared::default();
    store.save(&url, &record);
    let oauth = provider(&url, &store);
    let t = transport(&url, oauth.clone());
    let outcome = send(&t, 1, "tools/list").await;
    assert!(
        matches!(
            outcome,
            Err(TransportError::AuthorizationRequired { status: 401, .. })
        ),
        "{outcome:?}"
    );
    assert!(
        server.seen_at("/authorize").is_empty(),
        "no fresh authorization while the authorization server is down"
    );
    assert!(store.load(&url) == Some(record));
    let why = oauth.last_error().unwrap_or_default();
    assert!(why.contains("answered 502"), "{why}");
    // Back: the next request refreshes before it is sent.
    server.behave(|b| b.token_outage = None);
    send(&t, 2, "tools/list").await.unwrap();
    assert_eq!(grants(&server), ["refresh_token", "refresh_token"]);
    assert!(server.seen_at("/authorize").is_empty());
    t.close().await;
}
