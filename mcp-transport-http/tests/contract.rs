//! The transport contract suite over real loopback HTTP, in each era.
//!
//! The suite's peer is a small HTTP server (`HttpPeer`): each POSTed
//! message is what the suite sees; each request's answer is an SSE stream
//! that carries, besides the request's own answer, what a server would
//! send there while it is open: a notification tied to the request (its
//! progress token, or a listen's subscription id) on that request's
//! stream, other notifications, server requests and raw lines on the
//! newest open stream (or on the next one to open). Its sockets set
//! `TCP_NODELAY`, as servers that stream do, so a small event never waits
//! for the client's delayed ACK.
//!
//! How a wire cancel reaches the rules that expect one:
//!
//! * legacy: the transport POSTs `notifications/cancelled`, which the suite
//!   sees as it is;
//! * modern: the transport closes the request's stream; the peer sees the
//!   stream close before it answered and reports it to the suite as the
//!   `notifications/cancelled` a stdio transport would have written. To make
//!   the suite's requests modern, the harness adds a modern `_meta`
//!   protocol version to each (and the peer takes it out again, so the suite
//!   sees its requests as it sent them).
//!
//! Rules that cannot apply to HTTP, and are skipped (asserted exactly):
//!
//! * in both eras, `server_speaks_first`, `server_requests` and
//!   `unhandled_server_request`: a server can speak only on a request's
//!   stream (the legacy GET stream is not written yet; modern HTTP has
//!   none), so a notification or server request sent while no request is
//!   open waits for one; server requests on a request's stream are shown in
//!   `tests/legacy.rs`;
//! * in both eras, `peer_death`: HTTP has no connection whose end means the
//!   server is gone: a dead server makes pending requests `StreamBroken`
//!   and later ones `Unreachable`, never `ServerGone`;
//! * in modern only, `notification_routing` and `listeners_cannot_block`:
//!   they send notifications after every request was answered, and a
//!   modern answer ends its stream (a legacy stream is read on until the
//!   server ends it).

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use http::Response;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper_util::rt::TokioIo;
use mcp_protocol::{Message, Notification, Request, RequestId};
use mcp_testkit::contract::{Harness, Peer, SuiteConfig, run_contract_suite_with};
use mcp_transport::{
    ConnectionHandlers, RequestOptions, ResponseFuture, Transport, TransportError,
};
use mcp_transport_http::HttpTransportBuilder;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
const ABSENT_KEY: &str = "contract/params-absent";

type Body = BoxBody<Bytes, Infallible>;

struct Stream {
    key: u64,
    id: RequestId,
    /// The request's progress token, if it gave one.
    token: Option<RequestId>,
    tx: mpsc::Sender<String>,
    /// How many chunks were queued, and (from the body) how many hyper
    /// has taken to write.
    queued: u64,
    written: tokio::sync::watch::Receiver<u64>,
}

impl Stream {
    fn write(&mut self, chunk: String) -> u64 {
        if self.tx.try_send(chunk).is_ok() {
            self.queued += 1;
        }
        self.queued
    }
}

type Written = Option<(tokio::sync::watch::Receiver<u64>, u64)>;

#[derive(Default)]
struct Streams {
    open: Vec<Stream>,
    waiting: Vec<String>,
    next_key: u64,
}

struct Hub {
    modern: bool,
    inbox: mpsc::UnboundedSender<Message>,
    streams: Mutex<Streams>,
}

impl Hub {
    fn streams(&self) -> std::sync::MutexGuard<'_, Streams> {
        self.streams.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes a server message where a server would: a notification tied
    /// to a request (its progress token, or the subscription id of a
    /// listen) on that request's stream, anything else on the newest open
    /// stream, or keeps it for the next.
    fn push(&self, message: Option<&Message>, chunk: String) {
        let mut streams = self.streams();
        let tied = message.and_then(|m| match m {
            Message::Notification(n) => {
                let params = n.params.as_ref();
                let token = params
                    .and_then(|p| p.get("progressToken"))
                    .or_else(|| n.meta().and_then(|m| m.get("progressToken")))
                    .and_then(RequestId::from_value);
                let subscription = n
                    .meta()
                    .and_then(|m| m.get("io.modelcontextprotocol/subscriptionId"))
                    .and_then(RequestId::from_value);
                streams.open.iter().position(|s| {
                    (token.is_some() && s.token == token) || subscription.as_ref() == Some(&s.id)
                })
            }
            _ => None,
        });
        let newest = streams.open.len().checked_sub(1);
        match tied.or(newest) {
            Some(i) => {
                streams.open[i].write(chunk);
            }
            None => streams.waiting.push(chunk),
        }
    }

    /// Answers on the request's own stream. A modern stream ends with its
    /// answer; a legacy one stays open (servers SHOULD close it, and may
    /// not), and takes what is sent later while it is the newest.
    ///
    /// Returns what to wait on until hyper has taken the answer to write:
    /// only then has the server "sent" it, as a stdio peer has once its
    /// line is written.
    fn answer(&self, id: &RequestId, chunk: String) -> Written {
        let mut streams = self.streams();
        let i = streams.open.iter().rposition(|s| &s.id == id)?;
        if self.modern {
            let mut stream = streams.open.remove(i);
            let seq = stream.write(chunk);
            Some((stream.written.clone(), seq))
        } else {
            let seq = streams.open[i].write(chunk);
            Some((streams.open[i].written.clone(), seq))
        }
    }

    async fn handle(self: Arc<Self>, body: Bytes) -> Response<Body> {
        let Ok(value) = serde_json::from_slice::<Value>(&body) else {
            return status(400);
        };
        let Ok(mut message) = Message::from_value(value) else {
            return status(400);
        };
        let Message::Request(request) = &mut message else {
            let _ = self.inbox.send(message);
            return status(202);
        };
        if self.modern {
            strip_injected(request);
        }
        let id = request.id.clone();
        let token = request
            .meta()
            .and_then(|m| m.get("progressToken"))
            .and_then(RequestId::from_value);
        let (tx, rx) = mpsc::channel::<String>(1024);
        let (written_tx, written) = tokio::sync::watch::channel(0u64);
        let key = {
            let mut streams = self.streams();
            streams.next_key += 1;
            let key = streams.next_key;
            let mut stream = Stream {
                key,
                id: id.clone(),
                token,
                tx,
                queued: 0,
                written,
            };
            for chunk in std::mem::take(&mut streams.waiting) {
                stream.write(chunk);
            }
            streams.open.push(stream);
            key
        };
        let _ = self.inbox.send(message);
        // Keep-alives find a closed stream: closing it is the modern cancel.
        let hub = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(20)).await;
                let closed = {
                    let mut streams = hub.streams();
                    match streams.open.iter_mut().find(|s| s.key == key) {
                        None => return, // answered
                        Some(s) => {
                            s.write(":\n\n".into());
                            s.tx.is_closed()
                        }
                    }
                };
                if closed {
                    hub.streams().open.retain(|s| s.key != key);
                    if hub.modern {
                        let cancel = Notification::new(
                            "notifications/cancelled",
                            Some(json!({"requestId": id, "reason": "the stream was closed"})),
                        );
                        let _ = hub.inbox.send(Message::Notification(cancel));
                    }
                    return;
                }
            }
        });
        let stream = futures::stream::unfold((rx, written_tx, 0u64), |(mut rx, w, n)| async move {
            // Asked for the next chunk: hyper has taken the previous ones.
            w.send_replace(n);
            let chunk = rx.recv().await?;
            Some((
                Ok::<_, Infallible>(Frame::data(Bytes::from(chunk))),
                (rx, w, n + 1),
            ))
        });
        Response::builder()
            .header("content-type", "text/event-stream")
            .body(StreamBody::new(stream).boxed())
            .unwrap()
    }
}

fn strip_injected(request: &mut Request) {
    let Some(Value::Object(params)) = request.params.as_mut() else {
        return;
    };
    let mut absent = false;
    if let Some(Value::Object(meta)) = params.get_mut("_meta") {
        meta.remove(VERSION_KEY);
        absent = meta.remove(ABSENT_KEY).is_some();
        if meta.is_empty() {
            params.remove("_meta");
        }
    }
    if absent && params.is_empty() {
        request.params = None;
    }
}

fn status(code: u16) -> Response<Body> {
    Response::builder()
        .status(code)
        .body(Full::new(Bytes::new()).boxed())
        .unwrap()
}

struct HttpPeer {
    hub: Arc<Hub>,
    inbox: mpsc::UnboundedReceiver<Message>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn http_peer(modern: bool) -> (HttpPeer, String) {
    let (inbox_tx, inbox) = mpsc::unbounded_channel();
    let hub = Arc::new(Hub {
        modern,
        inbox: inbox_tx,
        streams: Mutex::new(Streams::default()),
    });
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
                            let body = request
                                .into_body()
                                .collect()
                                .await
                                .map(|c| c.to_bytes())
                                .unwrap_or_default();
                            Ok::<_, Infallible>(hub.handle(body).await)
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
        self.hub.streams().open.clear();
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

const SKIPPED_LEGACY: &[&str] = &[
    "server_speaks_first",
    "server_requests",
    "unhandled_server_request",
    "peer_death",
];

const SKIPPED_MODERN: &[&str] = &[
    "server_speaks_first",
    "server_requests",
    "unhandled_server_request",
    "peer_death",
    "notification_routing",
    "listeners_cannot_block",
];

async fn run(modern: bool) {
    let skipped = if modern {
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
            let (peer, url) = http_peer(modern).await;
            let transport: Arc<dyn Transport> =
                Arc::new(HttpTransportBuilder::new(url).build(handlers).unwrap());
            let transport: Arc<dyn Transport> = if modern {
                Arc::new(Modernize(transport))
            } else {
                transport
            };
            Harness::new(transport, peer)
        },
        config,
    )
    .await;
    println!("{report}");
    report.assert_all_passed_except(skipped);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contract_suite_over_legacy_http() {
    run(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contract_suite_over_modern_http() {
    run(true).await;
}
