//! A small HTTP/1.1 server on a loopback socket for the transport's tests:
//! it records every request and answers through a handler.

#![allow(dead_code, unreachable_pub)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{HeaderMap, Method, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

pub type Body = BoxBody<Bytes, Infallible>;

/// One request the server received.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: Method,
    pub path: String,
    /// The request target as sent (absolute when sent to a proxy).
    pub uri: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Seen {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
    pub fn rpc_method(&self) -> Option<String> {
        self.json()["method"].as_str().map(str::to_owned)
    }
}

pub type Handler = Arc<dyn Fn(Seen) -> BoxFuture<'static, Response<Body>> + Send + Sync>;

pub struct TestServer {
    pub addr: SocketAddr,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    /// The connections accepted so far.
    pub connections: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl TestServer {
    pub async fn start<F, Fut>(handler: F) -> TestServer
    where
        F: Fn(Seen) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Response<Body>> + Send + 'static,
    {
        let handler: Handler = Arc::new(move |seen| Box::pin(handler(seen)));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        let connections = Arc::new(AtomicUsize::new(0));
        let accepted = connections.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                accepted.fetch_add(1, Ordering::Relaxed);
                // Small SSE chunks must not wait for the client's delayed ACK.
                let _ = stream.set_nodelay(true);
                let handler = handler.clone();
                let record = record.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(
                        move |request: http::Request<hyper::body::Incoming>| {
                            let handler = handler.clone();
                            let record = record.clone();
                            async move {
                                let (parts, body) = request.into_parts();
                                let body = body
                                    .collect()
                                    .await
                                    .map(|c| c.to_bytes())
                                    .unwrap_or_default();
                                let seen = Seen {
                                    method: parts.method,
                                    path: parts.uri.path().to_owned(),
                                    uri: parts.uri.to_string(),
                                    headers: parts.headers,
                                    body,
                                };
                                record.lock().unwrap().push(seen.clone());
                                Ok::<_, Infallible>(handler(seen).await)
                            }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        TestServer {
            addr,
            seen,
            connections,
            task,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// The requests whose JSON-RPC method is `method`.
    pub fn seen_method(&self, method: &str) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.rpc_method().as_deref() == Some(method))
            .collect()
    }
}

pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}

pub fn json(status: u16, value: Value) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(full(value.to_string()))
        .unwrap()
}

pub fn result(seen: &Seen, result: Value) -> Response<Body> {
    json(
        200,
        serde_json::json!({"jsonrpc": "2.0", "id": seen.json()["id"], "result": result}),
    )
}

pub fn status(code: u16) -> Response<Body> {
    Response::builder()
        .status(StatusCode::from_u16(code).unwrap())
        .body(full(Bytes::new()))
        .unwrap()
}

/// An SSE response whose events are written through the returned sender;
/// the sender's `send` fails once the client has closed the stream.
pub fn sse() -> (mpsc::Sender<String>, Response<Body>) {
    let (tx, rx) = mpsc::channel::<String>(16);
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        let chunk = rx.recv().await?;
        Some((Ok::<_, Infallible>(Frame::data(Bytes::from(chunk))), rx))
    });
    let response = Response::builder()
        .header("content-type", "text/event-stream")
        .body(StreamBody::new(stream).boxed())
        .unwrap();
    (tx, response)
}

/// Sends keep-alive comments until the client closes the stream; returns
/// how long that took.
pub async fn until_closed(tx: &mpsc::Sender<String>, limit: Duration) -> Option<Duration> {
    let start = tokio::time::Instant::now();
    while start.elapsed() < limit {
        if tx.send(": keep-alive\n\n".to_owned()).await.is_err() {
            return Some(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

pub fn event(value: &Value) -> String {
    format!("event: message\ndata: {value}\n\n")
}
