//! A request whose credentials cannot be had (a header provider that
//! fails: an OAuth refresh whose token endpoint is down) fails at once with
//! a typed error; a supervised client keeps its connection and session
//! rather than restarting for it, and the next call, credentials back,
//! goes out on the same session.

#![cfg(feature = "http")]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_client::http::http::{self, HeaderMap, HeaderValue};
use mcp_client::http::{BoxError, HeaderProvider};
use mcp_client::{Client, ErrorKind, HttpTransportBuilder, RestartPolicy, ServerEvent};
use mcp_reference_server::FakeConfig;
use mcp_reference_server::http::HttpFake;
use mcp_transport::TransportError;
use serde_json::json;

/// Adds a header while `working`; fails otherwise, as an OAuth provider
/// does when the token endpoint cannot be reached.
struct Flaky(Arc<AtomicBool>);

impl HeaderProvider for Flaky {
    fn headers(
        &self,
        _request: &http::request::Parts,
    ) -> BoxFuture<'static, Result<HeaderMap, BoxError>> {
        let working = self.0.load(Ordering::SeqCst);
        Box::pin(async move {
            if !working {
                return Err("the token endpoint could not be reached".into());
            }
            let mut headers = HeaderMap::new();
            headers.insert("x-credential", HeaderValue::from_static("yes"));
            Ok(headers)
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_supervised_client_does_not_restart_for_credentials_it_cannot_have() {
    for config in [FakeConfig::legacy(), FakeConfig::modern()] {
        let server = HttpFake::start(config).await.unwrap();
        let working = Arc::new(AtomicBool::new(true));
        let http = HttpTransportBuilder::new(server.url())
            .header_provider(Arc::new(Flaky(working.clone())));
        let client = Client::builder()
            .supervise(RestartPolicy::new())
            .connect(http)
            .await
            .unwrap();
        let mut events = client.events();
        client
            .call_tool("echo", json!({"text": "one"}))
            .await
            .unwrap();
        let sessions = server.session_ids();

        working.store(false, Ordering::SeqCst);
        let failed = tokio::time::timeout(
            Duration::from_secs(10),
            client.call_tool("echo", json!({"text": "two"})),
        )
        .await
        .expect("the call fails at once, not at its timeout")
        .unwrap_err();
        assert!(
            matches!(
                failed.kind(),
                ErrorKind::Transport(TransportError::Credentials { .. })
            ),
            "{failed:?}"
        );
        assert!(
            failed.to_string().contains("token endpoint"),
            "the cause is told: {failed}"
        );

        working.store(true, Ordering::SeqCst);
        client
            .call_tool("echo", json!({"text": "three"}))
            .await
            .unwrap();
        assert_eq!(server.session_ids(), sessions, "the same session goes on");
        while let Ok(Some(event)) =
            tokio::time::timeout(Duration::from_millis(100), events.recv()).await
        {
            assert!(
                !matches!(event, ServerEvent::Restarted(_)),
                "no restart for credentials: {event:?}"
            );
        }
        client.close().await;
    }
}
