//! What the bridge's tests share: a bridge serving on one end of an
//! in-memory byte stream, and this workspace's client on the other.

#![allow(dead_code, unreachable_pub)]

pub mod http;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_bridge::{Bridge, BridgeError, Ended};
use mcp_client::prelude::*;
use mcp_client::transport::{ConnectionHandlers, Transport};
use mcp_transport_stdio::StreamTransport;
use serde_json::json;
use tokio::task::JoinHandle;

/// `bridge` serving on one end of a duplex, and a connector for the
/// client on the other end (it connects once).
pub fn serving(bridge: Bridge) -> (JoinHandle<Result<Ended, BridgeError>>, ClientEnd) {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(theirs);
    let serving = tokio::spawn(bridge.serve(read, write));
    (serving, ClientEnd(Mutex::new(Some(ours))))
}

/// The client's end of the bridge's byte stream.
pub struct ClientEnd(Mutex<Option<tokio::io::DuplexStream>>);

impl ClientEnd {
    /// A client connected through the bridge.
    pub async fn client(self, builder: ClientBuilder) -> Client {
        self.connect(builder)
            .await
            .expect("the client connects through the bridge")
    }

    /// A client connecting through the bridge, or why it could not.
    pub async fn connect(self, builder: ClientBuilder) -> mcp_client::Result<Client> {
        let end = Arc::new(self);
        builder
            .connect(move |handlers: ConnectionHandlers| {
                let stream = end.0.lock().unwrap().take();
                async move {
                    let stream = stream.expect("the bridge is connected to once");
                    Ok(Arc::new(StreamTransport::duplex(stream, handlers)) as Arc<dyn Transport>)
                }
            })
            .await
    }
}

/// A client that answers elicitation with the name `Ada`.
pub fn asking() -> ClientBuilder {
    Client::builder()
        .request_timeout(Duration::from_secs(10))
        .on_elicitation(|_request, _ctx| async move {
            let mut form = JsonObject::new();
            form.insert("name".into(), json!("Ada"));
            Ok(ElicitResult::accept(form))
        })
}
