//! The bridge served over HTTP on a free loopback port, and raw HTTP/1.1
//! exchanges with it (for what a client of ours never sends).

use std::net::SocketAddr;
use std::time::Duration;

use mcp_bridge::{Bridge, BridgeError, Ended, HttpOptions};
use mcp_client::HttpTransportBuilder;
use mcp_client::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A bridge serving `bridge` over HTTP on a free loopback port.
pub struct Served {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    serving: JoinHandle<Result<Ended, BridgeError>>,
}

impl Served {
    pub async fn start(bridge: Bridge, options: HttpOptions) -> Served {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let serving = tokio::spawn(bridge.serve_http(listener, options, async {
            let _ = stopped.await;
        }));
        Served {
            addr,
            stop: Some(stop),
            serving,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    pub async fn client(&self, builder: ClientBuilder) -> Client {
        builder
            .connect(HttpTransportBuilder::new(self.url()))
            .await
            .expect("the client connects through the bridge")
    }

    pub async fn stop(mut self) -> Ended {
        let _ = self.stop.take().unwrap().send(());
        tokio::time::timeout(Duration::from_secs(6), self.serving)
            .await
            .expect("serving stops within its bound")
            .unwrap()
            .unwrap()
    }
}

/// One raw HTTP/1.1 exchange: the status and the whole head and body
/// (the connection is closed after the answer).
pub async fn raw(addr: SocketAddr, request: &str) -> (u16, String) {
    let mut socket = tokio::net::TcpStream::connect(addr).await.unwrap();
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(2), socket.read_to_end(&mut answer)).await;
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, text)
}

pub fn post(host: &str, extra: &str, body: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
}

pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
