//! `Mcp-Param-*` headers: computed by the client from the tool's
//! `x-mcp-header` annotations (listing the tools first when it never did)
//! and handed to a transport that sends headers; a transport without
//! headers (stdio) sees nothing new on the wire.

mod common;

use std::sync::{Arc, Mutex};

use common::{FnConnector, FnServer, Reply, discover_result};
use futures::future::BoxFuture;
use mcp_client::Client;
use mcp_protocol::{Notification, Request};
use mcp_transport::{
    ConnectionHandlers, Connector, RequestOptions, ResponseFuture, Transport, TransportError,
    TransportProfile,
};
use serde_json::json;

type Seen = Arc<Mutex<Vec<(String, Vec<(String, String)>)>>>;

/// Records each request's method and extra headers, then passes it on.
struct Recording {
    inner: Arc<dyn Transport>,
    seen: Seen,
    headers: bool,
}

impl Transport for Recording {
    fn request(&self, request: Request, options: RequestOptions) -> ResponseFuture {
        self.seen
            .lock()
            .unwrap()
            .push((request.method.clone(), options.headers.clone()));
        self.inner.request(request, options)
    }
    fn notify(&self, notification: Notification) -> Result<(), TransportError> {
        self.inner.notify(notification)
    }
    fn close(&self) -> BoxFuture<'static, ()> {
        self.inner.close()
    }
    fn is_alive(&self) -> bool {
        self.inner.is_alive()
    }
    fn profile(&self) -> TransportProfile {
        TransportProfile::new().sends_headers(self.headers)
    }
}

struct RecordingConnector {
    inner: FnConnector,
    seen: Seen,
    headers: bool,
}

impl Connector for RecordingConnector {
    fn connect(
        &self,
        handlers: ConnectionHandlers,
    ) -> BoxFuture<'static, Result<Arc<dyn Transport>, TransportError>> {
        let connecting = self.inner.connect(handlers);
        let (seen, headers) = (self.seen.clone(), self.headers);
        Box::pin(async move {
            let inner = connecting.await?;
            Ok(Arc::new(Recording {
                inner,
                seen,
                headers,
            }) as Arc<dyn Transport>)
        })
    }
}

fn server() -> Arc<FnServer> {
    FnServer::new(|_, r| match r.method.as_str() {
        "server/discover" => Reply::Ok(discover_result(&["2026-07-28"])),
        "tools/list" => Reply::Ok(json!({"tools": [{
            "name": "deploy",
            "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "note": {"type": "string"}
            }}
        }]})),
        "tools/call" => Reply::Ok(json!({"content": []})),
        _ => Reply::Err(-32601, "Method not found", None),
    })
}

async fn call_deploy(headers: bool) -> Vec<(String, Vec<(String, String)>)> {
    let seen: Seen = Arc::default();
    let client = Client::builder()
        .connect(RecordingConnector {
            inner: FnConnector(server()),
            seen: seen.clone(),
            headers,
        })
        .await
        .unwrap();
    client
        .call_tool("deploy", json!({"region": "eu west\t1", "note": "x"}))
        .await
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    seen.into_iter()
        .filter(|(m, _)| m != "server/discover")
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_transport_with_headers_gets_the_calls_param_headers() {
    let seen = call_deploy(true).await;
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0], ("tools/list".to_owned(), vec![]), "listed first");
    assert_eq!(seen[1].0, "tools/call");
    let value = mcp_protocol::headers::encode_header_value("eu west\t1").into_owned();
    assert!(value.starts_with("=?base64?"), "a tab is sent as base64");
    assert_eq!(seen[1].1, [("Mcp-Param-Region".to_owned(), value)]);
}

#[tokio::test(start_paused = true)]
async fn a_transport_without_headers_sees_nothing_new() {
    let seen = call_deploy(false).await;
    assert_eq!(
        seen,
        [("tools/call".to_owned(), vec![])],
        "no listing, no headers"
    );
}
