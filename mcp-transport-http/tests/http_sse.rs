//! The 2024-11-05 HTTP+SSE fallback against a real loopback socket.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{TestServer, event, sse, status};
use mcp_protocol::{Notification, Request};
use mcp_transport::{ConnectionHandlers, RequestOptions, Transport, TransportError};
use mcp_transport_http::HttpTransportBuilder;
use serde_json::json;
use tokio::sync::mpsc;

type Stream = Arc<Mutex<Option<mpsc::Sender<String>>>>;

/// An old server: POST /mcp is 405; GET /mcp opens the event stream and
/// names `endpoint`; POSTs there get 202 and their answers on the stream.
async fn old_server(endpoint: String) -> TestServer {
    let stream: Stream = Arc::new(Mutex::new(None));
    TestServer::start(move |seen| {
        let stream = stream.clone();
        let endpoint = endpoint.clone();
        async move {
            if seen.method == http::Method::GET {
                let (tx, response) = sse();
                let _ = tx.try_send(format!("event: endpoint\ndata: {endpoint}\n\n"));
                *stream.lock().unwrap() = Some(tx);
                return response;
            }
            if seen.path == "/mcp" {
                return status(405);
            }
            let body = seen.json();
            if let (Some(id), Some(method)) = (body.get("id"), body["method"].as_str()) {
                let result = match method {
                    "initialize" => json!({"protocolVersion": "2024-11-05", "capabilities": {},
                        "serverInfo": {"name": "old", "version": "1"}}),
                    _ => json!({"tools": []}),
                };
                let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
                let tx = stream.lock().unwrap().clone();
                if let Some(tx) = tx {
                    let _ = tx.send(event(&answer)).await;
                }
            }
            status(202)
        }
    })
    .await
}

fn initialize() -> Request {
    Request::new(
        1,
        "initialize",
        Some(json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}})),
    )
}

#[tokio::test]
async fn a_refused_initialize_falls_back_to_http_sse_on_the_same_transport() {
    let server = old_server("/messages?sessionId=abc".into()).await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    let init = transport
        .request(
            initialize(),
            RequestOptions::new().timeout(Duration::from_secs(5)),
        )
        .await
        .unwrap();
    assert_eq!(init["protocolVersion"], "2024-11-05");
    transport
        .notify(Notification::new("notifications/initialized", None))
        .unwrap();
    let tools = transport
        .request(
            Request::new(2, "tools/list", None),
            RequestOptions::new().timeout(Duration::from_secs(5)),
        )
        .await
        .unwrap();
    assert_eq!(tools["tools"], json!([]));
    let seen: Vec<(String, String)> = server
        .seen()
        .iter()
        .map(|s| (s.method.to_string(), s.uri.clone()))
        .collect();
    assert_eq!(
        seen,
        [
            ("POST".into(), "/mcp".into()),
            ("GET".into(), "/mcp".into()),
            ("POST".into(), "/messages?sessionId=abc".into()),
            ("POST".into(), "/messages?sessionId=abc".into()),
            ("POST".into(), "/messages?sessionId=abc".into()),
        ]
    );
    assert_eq!(server.seen()[1].header("accept"), Some("text/event-stream"));
    transport.close().await;
}

#[tokio::test]
async fn an_endpoint_on_another_origin_is_refused_and_nothing_is_sent_there() {
    let elsewhere = TestServer::start(|_| async { status(202) }).await;
    let server = old_server(format!("http://{}/steal", elsewhere.addr)).await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    let outcome = transport.request(initialize(), RequestOptions::new()).await;
    assert!(
        matches!(outcome, Err(TransportError::RedirectRefused { .. })),
        "{outcome:?}"
    );
    assert!(elsewhere.seen().is_empty());
    transport.close().await;
}

#[tokio::test]
async fn without_an_event_stream_the_refusal_stands() {
    let server = TestServer::start(|_| async { status(404) }).await;
    let transport = HttpTransportBuilder::new(server.url())
        .build(ConnectionHandlers::discard())
        .unwrap();
    let outcome = transport.request(initialize(), RequestOptions::new()).await;
    assert!(
        matches!(outcome, Err(TransportError::Http { status: 404, .. })),
        "{outcome:?}"
    );
    assert_eq!(server.seen().len(), 2, "the POST and one GET");
    transport.close().await;
}
