//! The server-side option that refuses URLs handed out by a server when
//! they point inside the network (`refuse_internal_addresses`): off by
//! default; on, an authorization server on another loopback address (or
//! another port of the configured host) is never contacted, nor is an
//! internal authorization endpoint, while the configured server's own
//! origin still works.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{AuthServer, send, transport};
use mcp_auth::{HeadlessAuthorizer, OAuthProvider};
use mcp_transport_http::HttpTransportBuilder;

/// A listener on 127.0.0.2 (loopback, but not the configured host) that
/// counts connections and closes each at once.
async fn elsewhere_on_loopback() -> (String, Arc<AtomicUsize>) {
    counting_listener("127.0.0.2:0").await
}

/// A listener on `addr` that counts connections and closes each at once.
async fn counting_listener(addr: &str) -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            drop(socket);
        }
    });
    (format!("http://{addr}"), count)
}

fn provider(url: &str, refuse: bool) -> OAuthProvider {
    let service = HttpTransportBuilder::new(url).http_service().unwrap();
    OAuthProvider::builder(url)
        .redirect_uri("http://127.0.0.1:9/callback")
        .authorizer(HeadlessAuthorizer::new(service.clone()))
        .refuse_internal_addresses(refuse)
        .build(service)
        .unwrap()
}

#[tokio::test]
async fn an_authorization_server_inside_the_network_is_refused_only_with_the_option() {
    let server = AuthServer::start().await;
    let (authorization, contacted) = elsewhere_on_loopback().await;
    server.behave(|b| b.authorization_server = Some(authorization.clone()));

    let refusing = provider(&server.mcp_url(), true);
    let t = transport(&server.mcp_url(), refusing.clone());
    assert!(send(&t, 1, "tools/list").await.is_err());
    assert_eq!(contacted.load(Ordering::SeqCst), 0, "never contacted");
    let error = refusing.last_error().unwrap_or_default();
    assert!(error.contains("private, loopback or link-local"), "{error}");

    // Off (the default): the same metadata is followed.
    let t = transport(&server.mcp_url(), provider(&server.mcp_url(), false));
    assert!(send(&t, 2, "tools/list").await.is_err());
    assert!(contacted.load(Ordering::SeqCst) >= 1, "contacted");
}

#[tokio::test]
async fn the_configured_servers_own_host_passes_with_the_option() {
    let server = AuthServer::start().await;
    let t = transport(&server.mcp_url(), provider(&server.mcp_url(), true));
    send(&t, 1, "tools/list").await.unwrap();
    assert_eq!(server.seen_at("/token").len(), 1);
}

#[tokio::test]
async fn the_headless_authorizer_never_fetches_an_internal_authorization_endpoint() {
    // The metadata comes from the configured origin (allowed), but names
    // an authorization endpoint elsewhere on loopback: the headless
    // authorizer, which GETs that URL itself, must not be handed it.
    let server = AuthServer::start().await;
    let (elsewhere, contacted) = elsewhere_on_loopback().await;
    server.behave(|b| b.authorization_endpoint = Some(format!("{elsewhere}/authorize")));

    let refusing = provider(&server.mcp_url(), true);
    let t = transport(&server.mcp_url(), refusing.clone());
    assert!(send(&t, 1, "tools/list").await.is_err());
    assert_eq!(
        contacted.load(Ordering::SeqCst),
        0,
        "the internal authorization endpoint was fetched"
    );
    let error = refusing.last_error().unwrap_or_default();
    assert!(error.contains("private, loopback or link-local"), "{error}");
}

#[tokio::test]
async fn another_port_of_the_configured_host_is_refused_with_the_option() {
    // Same host as the MCP server (127.0.0.1), another port: another
    // service of that machine, not the server that was configured.
    let server = AuthServer::start().await;
    let (other_port, contacted) = counting_listener("127.0.0.1:0").await;
    server.behave(|b| b.authorization_server = Some(other_port.clone()));

    let refusing = provider(&server.mcp_url(), true);
    let t = transport(&server.mcp_url(), refusing.clone());
    assert!(send(&t, 1, "tools/list").await.is_err());
    assert_eq!(
        contacted.load(Ordering::SeqCst),
        0,
        "another port of the configured host was contacted"
    );
    let error = refusing.last_error().unwrap_or_default();
    assert!(error.contains("private, loopback or link-local"), "{error}");
}
