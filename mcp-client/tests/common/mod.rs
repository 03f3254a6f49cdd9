//! A server made of a closure, for tests that need exact control of every
//! answer: built on the transport engine, it records every message the
//! client sent, per connection.

#![allow(dead_code, unreachable_pub)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_client::Client;
use mcp_protocol::types::{ContentBlock, ResourceContents};
use mcp_protocol::{ErrorObject, ErrorResponse, Message, Request, Response};
use mcp_transport::{
    ConnectionHandlers, Connector, Engine, ExitInfo, GoneInfo, Transport, TransportError,
};
use serde_json::{Value, json};

/// How the server answers one request.
pub enum Reply {
    Ok(Value),
    Err(i64, &'static str, Option<Value>),
    Silent,
    Later(Duration, Value),
    Die(&'static str),
    /// An answer with the request's id that is not valid JSON-RPC (both
    /// `result` and `error`).
    Malformed,
}

type Handler = dyn Fn(usize, &Request) -> Reply + Send + Sync;

pub struct FnServer {
    handler: Box<Handler>,
    pub log: Mutex<Vec<(usize, Message)>>,
    connections: AtomicUsize,
}

impl FnServer {
    pub fn new(handler: impl Fn(usize, &Request) -> Reply + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(FnServer {
            handler: Box::new(handler),
            log: Mutex::new(Vec::new()),
            connections: AtomicUsize::new(0),
        })
    }

    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// The methods the client sent, with the connection each went on.
    pub fn methods(&self) -> Vec<(usize, String)> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter_map(|(c, m)| m.method().map(|m| (*c, m.to_owned())))
            .collect()
    }

    /// The requests the client sent.
    pub fn requests(&self) -> Vec<Request> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter_map(|(_, m)| match m {
                Message::Request(r) => Some(r.clone()),
                _ => None,
            })
            .collect()
    }
}

pub struct FnConnector(pub Arc<FnServer>);

impl Connector for FnConnector {
    fn connect(
        &self,
        handlers: ConnectionHandlers,
    ) -> BoxFuture<'static, Result<Arc<dyn Transport>, TransportError>> {
        let server = self.0.clone();
        Box::pin(async move {
            let conn = server.connections.fetch_add(1, Ordering::SeqCst);
            let (engine, mut outbound) = Engine::new(handlers);
            let peer = engine.clone();
            tokio::spawn(async move {
                while let Some(item) = outbound.recv().await {
                    let message = item.into_message();
                    server.log.lock().unwrap().push((conn, message.clone()));
                    let Message::Request(request) = message else {
                        continue;
                    };
                    let id = request.id.clone();
                    match (server.handler)(conn, &request) {
                        Reply::Ok(result) => {
                            peer.receive(Message::Response(Response { id, result }))
                        }
                        Reply::Err(code, message, data) => {
                            let mut error = ErrorObject::new(code, message);
                            error.data = data;
                            peer.receive(Message::Error(ErrorResponse {
                                id: Some(id),
                                error,
                            }))
                        }
                        Reply::Silent => {}
                        Reply::Malformed => {
                            let line = serde_json::json!({
                                "jsonrpc": "2.0", "id": id, "result": {},
                                "error": {"code": 1, "message": "both"}
                            });
                            match mcp_protocol::Inbound::parse(line.to_string().as_bytes()) {
                                Ok(inbound) => peer.receive_inbound(inbound),
                                Err(e) => peer.receive_malformed(e),
                            }
                        }
                        Reply::Later(after, result) => {
                            let peer = peer.clone();
                            tokio::spawn(async move {
                                tokio::time::sleep(after).await;
                                peer.receive(Message::Response(Response { id, result }));
                            });
                        }
                        Reply::Die(tail) => {
                            peer.peer_gone(
                                GoneInfo::new("the server exited")
                                    .with_exit(ExitInfo::code(1))
                                    .with_stderr_tail(tail),
                            );
                            return;
                        }
                    }
                }
            });
            Ok(Arc::new(engine) as Arc<dyn Transport>)
        })
    }
}

/// A legacy answer to `initialize`: echoes the offered version.
pub fn initialize_result(request: &Request) -> Value {
    let version = request
        .params
        .as_ref()
        .and_then(|p| p.get("protocolVersion"))
        .cloned()
        .unwrap_or(json!("2025-11-25"));
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": true}},
        "serverInfo": {"name": "fn-legacy", "version": "1"},
    })
}

/// A modern `server/discover` answer.
pub fn discover_result(versions: &[&str]) -> Value {
    json!({
        "resultType": "complete",
        "supportedVersions": versions,
        "capabilities": {"tools": {}},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fn-modern", "version": "1"}},
        "ttlMs": 0,
        "cacheScope": "public",
    })
}

/// Answers the legacy handshake and `tools/list`; the probe is answered by
/// `probe`.
pub fn legacy_after(probe: impl Fn(usize) -> Reply + Send + Sync + 'static) -> Arc<FnServer> {
    FnServer::new(move |conn, r| match r.method.as_str() {
        "server/discover" => probe(conn),
        "initialize" => Reply::Ok(initialize_result(r)),
        "tools/list" => Reply::Ok(json!({"tools": []})),
        _ => Reply::Err(-32601, "no such method", None),
    })
}

fn text_of(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect()
}

/// What a user writes, whatever the era.
pub async fn user_code(client: &Client) {
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");

    let result = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert!(!result.is_error());
    assert_eq!(text_of(&result.content), "hi");

    let read = client.read_resource("fake://text/hello").await.unwrap();
    match &read.contents[0] {
        ResourceContents::Text(t) => assert_eq!(t.text, "Hello from the fake MCP server.\n"),
        other => panic!("expected text, got {other:?}"),
    }
    let blob = client.read_resource("fake://blob/bytes").await.unwrap();
    match &blob.contents[0] {
        ResourceContents::Blob(b) => assert_eq!(b.blob, "AAEC/v8="),
        other => panic!("expected a blob, got {other:?}"),
    }

    let prompt = client
        .get_prompt("greeting", [("name".to_owned(), "Ada".to_owned())])
        .await
        .unwrap();
    let rendered = serde_json::to_string(&prompt.messages).unwrap();
    assert!(rendered.contains("Ada"), "{rendered}");
}
