//! The loopback authorizer: the URL shown, the browser's redirect taken
//! on a loopback port, the flow completed.

mod common;

use common::{AuthServer, send, transport};
use mcp_auth::{Authorizer, HeadlessAuthorizer, LoopbackAuthorizer, OAuthProvider};
use mcp_transport::Transport;
use mcp_transport_http::{HttpTransportBuilder, RequestBody};

#[tokio::test]
async fn the_redirect_is_taken_on_the_loopback_port() {
    let server = AuthServer::start().await;
    let service = HttpTransportBuilder::new(server.mcp_url())
        .http_service()
        .unwrap();
    // The "browser": follows the authorization server's redirect to the
    // loopback port.
    let browser = service.clone();
    let authorizer = LoopbackAuthorizer::bind(0)
        .await
        .unwrap()
        .wait(std::time::Duration::from_secs(10))
        .on_url(move |url| {
            let (browser, url) = (browser.clone(), url.to_owned());
            tokio::spawn(async move {
                let redirect = HeadlessAuthorizer::new(browser.clone())
                    .authorize(url)
                    .await
                    .unwrap();
                let request = http::Request::get(redirect)
                    .body(RequestBody::new(bytes::Bytes::new()))
                    .unwrap();
                let response = browser.call(request).await.unwrap();
                assert_eq!(response.status(), 200);
            });
        });
    let redirect_uri = authorizer.redirect_uri();
    let oauth = OAuthProvider::builder(server.mcp_url())
        .redirect_uri(&redirect_uri)
        .authorizer(authorizer)
        .build(service)
        .unwrap();
    let t = transport(&server.mcp_url(), oauth);
    send(&t, 1, "tools/list").await.unwrap();
    let register = server.seen_at("/register");
    assert!(register[0].body.contains(&redirect_uri));
    assert!(register[0].body.contains(r#""application_type":"native""#));
    t.close().await;
}
