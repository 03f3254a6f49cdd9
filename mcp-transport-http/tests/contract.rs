//! The transport contract suite over real loopback HTTP, in each era and
//! transport: Streamable HTTP of 2025-03-26, 2025-11-25 and 2026-07-28, and
//! the 2024-11-05 HTTP+SSE transport.
//!
//! The suite's peer is a small HTTP server (`contract/hub.rs` says where
//! it writes each message, as a server of that era would). Before the
//! suite starts, the harness runs the legacy handshake through the
//! transport (the hub answers it), so the session id and version header
//! are in force for every rule; the hub refuses a request without them,
//! and each run asserts none was refused. Its sockets set `TCP_NODELAY`,
//! as servers that stream do, so a small event never waits for the
//! client's delayed ACK.
//!
//! How a wire cancel reaches the rules that expect one:
//!
//! * legacy and 2024-11-05: the transport POSTs `notifications/cancelled`,
//!   which the suite sees as it is;
//! * modern: the transport closes the request's stream; the peer sees the
//!   stream close before it answered and reports it to the suite as the
//!   `notifications/cancelled` a stdio transport would have written. To make
//!   the suite's requests modern, the harness adds a modern `_meta`
//!   protocol version to each (and the peer takes it out again, so the suite
//!   sees its requests as it sent them).
//!
//! Rules that cannot apply, and are skipped (asserted exactly):
//!
//! * everywhere, `peer_death`: HTTP has no connection whose end means the
//!   server is gone: a dead server makes pending requests `StreamBroken`
//!   and later ones `Unreachable`, never `ServerGone`;
//! * in modern only, `server_speaks_first`, `server_requests` and
//!   `unhandled_server_request` (a 2026-07-28 server has no stream of its
//!   own and sends no requests: multi round-trip requests replace them),
//!   and `notification_routing` and `listeners_cannot_block` (they send
//!   notifications after every request was answered, and a modern answer
//!   ends its stream).

mod contract {
    pub(crate) mod hub;
}

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use contract::hub::{ABSENT_KEY, Hub, Mode, VERSION_KEY};
use futures::future::BoxFuture;
use http_body_util::BodyExt;
use hyper_util::rt::TokioIo;
use mcp_protocol::{Message, Notification, Request};
use mcp_transport::{
    ConnectionHandlers, RequestOptions, ResponseFuture, Transport, TransportError,
};
use mcp_transport_contract::{Harness, Peer, SuiteConfig, run_contract_suite_with};
use mcp_transport_http::HttpTransportBuilder;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

struct HttpPeer {
    hub: Arc<Hub>,
    inbox: mpsc::UnboundedReceiver<Message>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        self.server.abort();
        let refused = self.hub.refused.lock().unwrap();
        assert!(
            refused.is_empty() || std::thread::panicking(),
            "the server refused requests: {refused:?}"
        );
    }
}

async fn http_peer(mode: Mode) -> (HttpPeer, String) {
    let (inbox_tx, inbox) = mpsc::unbounded_channel();
    let hub = Arc::new(Hub::new(mode, inbox_tx));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let serving = hub.clone();
    let server = tokio::spawn(async move {
        let mut connections = tokio::task::JoinSet::new();
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            // Small SSE chunks must not wait for the client's delayed ACK.
            let _ = socket.set_nodelay(true);
            let hub = serving.clone();
            connections.spawn(async move {
                let service = hyper::service::service_fn(
                    move |request: http::Request<hyper::body::Incoming>| {
                        let hub = hub.clone();
                        async move {
                            let (parts, body) = request.into_parts();
                            let body = body
                                .collect()
                                .await
                                .map(|c| c.to_bytes())
                                .unwrap_or_default();
                            let path = parts.uri.path().to_owned();
                            Ok::<_, Infallible>(
                                hub.handle(parts.method, path, parts.headers, body).await,
                            )
                        }
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(socket), service)
                    .await;
            });
        }
    });
    (HttpPeer { hub, inbox, server }, url)
}

impl Peer for HttpPeer {
    fn recv(&mut self) -> BoxFuture<'_, Option<Message>> {
        Box::pin(self.inbox.recv())
    }

    fn send(&mut self, message: Message) -> BoxFuture<'_, ()> {
        let chunk = format!("event: message\ndata: {}\n\n", message.to_value());
        let written = match &message {
            Message::Response(r) => self.hub.answer(&r.id, chunk),
            Message::Error(e) if e.id.is_some() => self.hub.answer(e.id.as_ref().unwrap(), chunk),
            _ => {
                self.hub.push(Some(&message), chunk);
                None
            }
        };
        Box::pin(async move {
            if let Some((mut written, seq)) = written {
                let _ =
                    tokio::time::timeout(Duration::from_secs(1), written.wait_for(|w| *w >= seq))
                        .await;
            }
        })
    }

    fn send_raw(&mut self, line: Vec<u8>) -> BoxFuture<'_, ()> {
        self.hub.push(
            None,
            format!("data: {}\n\n", String::from_utf8_lossy(&line)),
        );
        Box::pin(async {})
    }

    fn die(&mut self) -> BoxFuture<'_, ()> {
        self.server.abort();
        self.hub.end_all();
        Box::pin(async {})
    }
}

/// Makes the suite's requests modern: a modern protocol version in each
/// request's `_meta` (marking params that were absent).
struct Modernize(Arc<dyn Transport>);

impl Transport for Modernize {
    fn request(&self, mut request: Request, options: RequestOptions) -> ResponseFuture {
        let absent = request.params.is_none();
        let params = request.params.get_or_insert_with(|| json!({}));
        if let Value::Object(map) = params {
            let meta = map.entry("_meta").or_insert_with(|| json!({}));
            meta[VERSION_KEY] = json!("2026-07-28");
            if absent {
                meta[ABSENT_KEY] = json!(true);
            }
        }
        self.0.request(request, options)
    }
    fn notify(&self, notification: Notification) -> Result<(), TransportError> {
        self.0.notify(notification)
    }
    fn close(&self) -> BoxFuture<'static, ()> {
        self.0.close()
    }
    fn is_alive(&self) -> bool {
        self.0.is_alive()
    }
}

/// The legacy handshake, answered by the hub, so that the session (and
/// the version header) are in force before the suite's first rule.
async fn handshake(transport: &Arc<dyn Transport>) {
    let initialize = Request::new(
        "contract-initialize",
        "initialize",
        Some(json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "contract", "version": "1"}})),
    );
    transport
        .request(
            initialize,
            RequestOptions::new().timeout(Duration::from_secs(10)),
        )
        .await
        .expect("the hub answers initialize");
    transport
        .notify(Notification::new("notifications/initialized", None))
        .unwrap();
}

const SKIPPED_LEGACY: &[&str] = &["peer_death"];

const SKIPPED_MODERN: &[&str] = &[
    "server_speaks_first",
    "server_requests",
    "unhandled_server_request",
    "peer_death",
    "notification_routing",
    "listeners_cannot_block",
];

async fn run(mode: Mode) {
    let skipped = if mode == Mode::Modern {
        SKIPPED_MODERN
    } else {
        SKIPPED_LEGACY
    };
    let mut config = SuiteConfig::new();
    for rule in skipped {
        config = config.skip(*rule);
    }
    let report = run_contract_suite_with(
        move |handlers: ConnectionHandlers| async move {
            let (peer, url) = http_peer(mode).await;
            let transport: Arc<dyn Transport> =
                Arc::new(HttpTransportBuilder::new(url).build(handlers).unwrap());
            if mode == Mode::Modern {
                return Harness::new(Arc::new(Modernize(transport)), peer);
            }
            handshake(&transport).await;
            Harness::new(transport, peer)
        },
        config,
    )
    .await;
    println!("{mode:?}:\n{report}");
    report.assert_all_passed_except(skipped);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contract_suite_over_2025_03_26_http() {
    run(Mode::Legacy("2025-03-26")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contract_suite_over_2025_11_25_http() {
    run(Mode::Legacy("2025-11-25")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contract_suite_over_modern_http() {
    run(Mode::Modern).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contract_suite_over_2024_11_05_http_and_sse() {
    run(Mode::Old).await;
}
