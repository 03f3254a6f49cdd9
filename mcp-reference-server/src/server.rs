//! The fake in process: a [`Transport`] with no bytes, whose outbound queue
//! the fake's logic consumes directly.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use mcp_protocol::Message;
use mcp_transport::{
    ConnectionHandlers, Connector, Engine, ExitInfo, GoneInfo, Transport, TransportError,
};

use super::config::FakeConfig;
use super::session::{Out, Session};

type Log = Arc<Mutex<Vec<Message>>>;

/// A fake MCP server, in process. Each connection is a fresh server (as a
/// freshly started process would be): its own handshake, tool list and
/// subscriptions.
///
/// ```
/// use mcp_protocol::Request;
/// use mcp_reference_server::{FakeConfig, FakeServer};
/// use mcp_transport::{ConnectionHandlers, RequestOptions, Transport};
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = FakeServer::new(FakeConfig::modern());
/// let transport = server.connect(ConnectionHandlers::discard());
/// let meta = json!({"_meta": {
///     "io.modelcontextprotocol/protocolVersion": "2026-07-28",
///     "io.modelcontextprotocol/clientCapabilities": {}}});
/// let request = Request::new(1, "server/discover", Some(meta));
/// let result = transport.request(request, RequestOptions::new()).await.unwrap();
/// assert_eq!(result["supportedVersions"], json!(["2026-07-28"]));
/// # }
/// ```
#[derive(Clone)]
pub struct FakeServer {
    config: Arc<FakeConfig>,
    connections: Arc<Mutex<Vec<Logs>>>,
}

/// What one connection carried, each way.
#[derive(Clone, Default)]
struct Logs {
    received: Log,
    sent: Log,
}

impl FakeServer {
    /// A server with this configuration.
    pub fn new(config: FakeConfig) -> FakeServer {
        FakeServer {
            config: Arc::new(config),
            connections: Arc::default(),
        }
    }

    /// Its configuration.
    pub fn config(&self) -> &FakeConfig {
        &self.config
    }

    /// Opens a connection to a fresh server; inbound traffic goes to
    /// `handlers`. Must be called inside a tokio runtime.
    ///
    /// When the server "exits" (the [`Knob::ExitOnRequestBeforeInitialize`]
    /// knob), the transport reports `ServerGone` with exit code 1 and the
    /// server's last stderr line.
    ///
    /// [`Knob::ExitOnRequestBeforeInitialize`]: super::Knob::ExitOnRequestBeforeInitialize
    pub fn connect(&self, handlers: ConnectionHandlers) -> Arc<dyn Transport> {
        let (engine, mut outbound) = Engine::new(handlers);
        let (session, mut out) = Session::new(self.config.clone());
        let logs = Logs::default();
        self.lock().push(logs.clone());
        let (log, sent) = (logs.received, logs.sent);

        let shutdown = engine.shutdown_token();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = shutdown.cancelled() => break,
                    item = outbound.recv() => match item {
                        Some(item) => {
                            let message = item.into_message();
                            log.lock().unwrap_or_else(|p| p.into_inner()).push(message.clone());
                            session.handle(message);
                        }
                        None => break,
                    },
                }
            }
            session.stop();
        });

        let client = engine.clone();
        let shutdown = engine.shutdown_token();
        tokio::spawn(async move {
            loop {
                let item = tokio::select! {
                    _ = shutdown.cancelled() => break,
                    item = out.recv() => item,
                };
                match item {
                    Some(Out::Message(message) | Out::Related { message, .. }) => {
                        sent.lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push(message.clone());
                        client.receive(message);
                    }
                    Some(Out::Exit { code, stderr }) => {
                        let info = GoneInfo::new("the fake server exited")
                            .with_exit(ExitInfo::code(code))
                            .with_stderr_tail(stderr);
                        client.peer_gone(info);
                        break;
                    }
                    Some(Out::End) | None => break,
                }
            }
        });
        Arc::new(engine)
    }

    /// A connector making a fresh connection each time.
    pub fn connector(&self) -> FakeConnector {
        FakeConnector {
            server: self.clone(),
        }
    }

    /// How many connections were opened.
    pub fn connection_count(&self) -> usize {
        self.lock().len()
    }

    /// Everything the client sent on connection `index` (0 is the first),
    /// in order, cancels included.
    pub fn received(&self, index: usize) -> Vec<Message> {
        self.lock()
            .get(index)
            .map(|logs| {
                logs.received
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone()
            })
            .unwrap_or_default()
    }

    /// Everything the server sent on connection `index` (0 is the first),
    /// in order: answers, notifications and its own requests.
    pub fn sent(&self, index: usize) -> Vec<Message> {
        self.lock()
            .get(index)
            .map(|logs| logs.sent.lock().unwrap_or_else(|p| p.into_inner()).clone())
            .unwrap_or_default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Logs>> {
        self.connections.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl std::fmt::Debug for FakeServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeServer")
            .field("era", &self.config.era)
            .field("connections", &self.connection_count())
            .finish()
    }
}

/// Makes fresh connections to a [`FakeServer`].
#[derive(Clone, Debug)]
pub struct FakeConnector {
    server: FakeServer,
}

impl Connector for FakeConnector {
    fn connect(
        &self,
        handlers: ConnectionHandlers,
    ) -> BoxFuture<'static, Result<Arc<dyn Transport>, TransportError>> {
        let server = self.server.clone();
        Box::pin(async move { Ok(server.connect(handlers)) })
    }
}
