//! The HTTP server behind the contract suite's peer, in each era's shape.
//!
//! What a server sends goes where that era's server would send it:
//!
//! * an answer on its request's stream (a modern stream ends with it; a
//!   legacy one stays open, as servers may keep it);
//! * a notification tied to a request (its progress token, or a listen's
//!   subscription id) on that request's stream;
//! * anything else on the legacy GET stream when it is open, else on the
//!   newest request stream, else kept for the next stream to open;
//! * in the 2024-11-05 HTTP+SSE transport, everything on the one GET stream.
//!
//! The hub plays the handshake itself (`initialize`, `initialized`), since
//! the suite's rules begin after it, and checks what a server checks: the
//! session id, and the version header from 2025-06-18 on.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Response};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use mcp_protocol::{Message, Notification, Request, RequestId};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

pub(crate) const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
pub(crate) const ABSENT_KEY: &str = "contract/params-absent";
const SESSION: &str = "contract-session";
const ENDPOINT: &str = "/messages?sessionId=contract";

pub(crate) type Body = BoxBody<Bytes, Infallible>;

/// Which transport the hub speaks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Mode {
    /// 2026-07-28: one POST per message, no session.
    Modern,
    /// Streamable HTTP of this legacy revision, with a session.
    Legacy(&'static str),
    /// The 2024-11-05 HTTP+SSE transport.
    Old,
}

struct Stream {
    key: u64,
    /// The request it answers; `None` for the GET stream.
    id: Option<RequestId>,
    token: Option<RequestId>,
    tx: mpsc::Sender<String>,
    queued: u64,
    written: watch::Receiver<u64>,
}

impl Stream {
    fn write(&mut self, chunk: String) -> u64 {
        if self.tx.try_send(chunk).is_ok() {
            self.queued += 1;
        }
        self.queued
    }
}

/// What to wait on until hyper has taken a chunk to write.
pub(crate) type Written = Option<(watch::Receiver<u64>, u64)>;

#[derive(Default)]
struct Streams {
    open: Vec<Stream>,
    get: Option<Stream>,
    waiting: Vec<String>,
    next_key: u64,
}

pub(crate) struct Hub {
    pub(crate) mode: Mode,
    inbox: mpsc::UnboundedSender<Message>,
    streams: Mutex<Streams>,
    /// Requests that failed a server's check (session, version header).
    pub(crate) refused: Mutex<Vec<String>>,
    /// Whether the handshake's `initialize` and `initialized` were taken;
    /// later ones (the suite sends both) go to the suite.
    initialized: [std::sync::atomic::AtomicBool; 2],
}

impl Hub {
    pub(crate) fn new(mode: Mode, inbox: mpsc::UnboundedSender<Message>) -> Hub {
        Hub {
            mode,
            inbox,
            streams: Mutex::new(Streams::default()),
            refused: Mutex::new(Vec::new()),
            initialized: Default::default(),
        }
    }

    fn streams(&self) -> std::sync::MutexGuard<'_, Streams> {
        self.streams.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Ends every stream (the server died).
    pub(crate) fn end_all(&self) {
        let mut streams = self.streams();
        streams.open.clear();
        streams.get = None;
    }

    /// Writes a server message that is no answer where a server would.
    pub(crate) fn push(&self, message: Option<&Message>, chunk: String) {
        let mut streams = self.streams();
        let tied = message.and_then(|m| match m {
            Message::Notification(n) if self.mode != Mode::Old => {
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
                    (token.is_some() && s.token == token)
                        || (subscription.is_some() && subscription == s.id)
                })
            }
            _ => None,
        });
        if let Some(i) = tied {
            streams.open[i].write(chunk);
        } else if let Some(get) = streams.get.as_mut() {
            get.write(chunk);
        } else if let Some(newest) = streams.open.last_mut() {
            newest.write(chunk);
        } else {
            streams.waiting.push(chunk);
        }
    }

    /// Answers a request: on its own stream, or on the GET stream in the
    /// 2024-11-05 transport.
    pub(crate) fn answer(&self, id: &RequestId, chunk: String) -> Written {
        let mut streams = self.streams();
        if self.mode == Mode::Old {
            let get = streams.get.as_mut()?;
            let seq = get.write(chunk);
            return Some((get.written.clone(), seq));
        }
        let i = streams
            .open
            .iter()
            .rposition(|s| s.id.as_ref() == Some(id))?;
        if self.mode == Mode::Modern {
            let mut stream = streams.open.remove(i);
            let seq = stream.write(chunk);
            Some((stream.written.clone(), seq))
        } else {
            let seq = streams.open[i].write(chunk);
            Some((streams.open[i].written.clone(), seq))
        }
    }

    fn refuse(&self, why: String) -> Response<Body> {
        self.refused.lock().unwrap().push(why);
        status(404)
    }

    /// The legacy checks of every request after `initialize`.
    fn check(&self, headers: &HeaderMap) -> Option<Response<Body>> {
        let Mode::Legacy(version) = self.mode else {
            return None;
        };
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        if header("mcp-session-id") != Some(SESSION) {
            return Some(self.refuse(format!("session {:?}", header("mcp-session-id"))));
        }
        let wanted = (version >= "2025-06-18").then_some(version);
        if header("mcp-protocol-version") != wanted {
            return Some(self.refuse(format!("version {:?}", header("mcp-protocol-version"))));
        }
        None
    }

    pub(crate) async fn handle(
        self: Arc<Self>,
        method: Method,
        path: String,
        headers: HeaderMap,
        body: Bytes,
    ) -> Response<Body> {
        match (self.mode, method) {
            (Mode::Modern, Method::GET) => status(405),
            (_, Method::GET) => {
                if let Some(refused) = self.check(&headers) {
                    return refused;
                }
                self.open_get()
            }
            (_, Method::DELETE) => status(200),
            (Mode::Old, Method::POST) if path == "/mcp" => status(405),
            (_, Method::POST) => self.post(&headers, body).await,
            _ => status(405),
        }
    }

    fn open_get(&self) -> Response<Body> {
        let (stream, response) = self.stream(None, None);
        let mut streams = self.streams();
        let mut stream = stream;
        if self.mode == Mode::Old {
            stream.write(format!("event: endpoint\ndata: {ENDPOINT}\n\n"));
        }
        for chunk in std::mem::take(&mut streams.waiting) {
            stream.write(chunk);
        }
        streams.get = Some(stream);
        response
    }

    async fn post(self: &Arc<Self>, headers: &HeaderMap, body: Bytes) -> Response<Body> {
        let Ok(value) = serde_json::from_slice::<Value>(&body) else {
            return status(400);
        };
        let Ok(mut message) = Message::from_value(value) else {
            return status(400);
        };
        // A modern connection has no handshake.
        let first = |i: usize| {
            self.mode != Mode::Modern
                && !self.initialized[i].swap(true, std::sync::atomic::Ordering::SeqCst)
        };
        match &message {
            Message::Request(r) if r.method == "initialize" && first(0) => {
                return self.initialize(r);
            }
            Message::Notification(n) if n.method == "notifications/initialized" && first(1) => {
                return status(202);
            }
            _ => {}
        }
        if let Some(refused) = self.check(headers) {
            return refused;
        }
        let Message::Request(request) = &mut message else {
            let _ = self.inbox.send(message);
            return status(202);
        };
        if self.mode == Mode::Modern {
            strip_injected(request);
        }
        if self.mode == Mode::Old {
            let _ = self.inbox.send(message);
            return status(202);
        }
        let id = request.id.clone();
        let token = request
            .meta()
            .and_then(|m| m.get("progressToken"))
            .and_then(RequestId::from_value);
        let (stream, response) = self.stream(Some(id.clone()), token);
        let key = stream.key;
        {
            let mut streams = self.streams();
            let mut stream = stream;
            if streams.get.is_none() {
                for chunk in std::mem::take(&mut streams.waiting) {
                    stream.write(chunk);
                }
            }
            streams.open.push(stream);
        }
        let _ = self.inbox.send(message);
        self.watch_for_close(key, id);
        response
    }

    /// The hub's own handshake answer.
    fn initialize(&self, request: &Request) -> Response<Body> {
        let version = match self.mode {
            Mode::Legacy(v) => v,
            _ => "2024-11-05",
        };
        let result = json!({"jsonrpc": "2.0", "id": request.id, "result": {
            "protocolVersion": version, "capabilities": {},
            "serverInfo": {"name": "contract", "version": "1"}}});
        if self.mode == Mode::Old {
            let chunk = format!("event: message\ndata: {result}\n\n");
            if let Some(get) = self.streams().get.as_mut() {
                get.write(chunk);
            }
            return status(202);
        }
        let mut response = Response::builder()
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(result.to_string())).boxed())
            .unwrap();
        response
            .headers_mut()
            .insert("mcp-session-id", SESSION.parse().unwrap());
        response
    }

    fn stream(&self, id: Option<RequestId>, token: Option<RequestId>) -> (Stream, Response<Body>) {
        let (tx, rx) = mpsc::channel::<String>(1024);
        let (written_tx, written) = watch::channel(0u64);
        let key = {
            let mut streams = self.streams();
            streams.next_key += 1;
            streams.next_key
        };
        let stream = Stream {
            key,
            id,
            token,
            tx,
            queued: 0,
            written,
        };
        let body = futures::stream::unfold((rx, written_tx, 0u64), |(mut rx, w, n)| async move {
            // Asked for the next chunk: hyper has taken the previous ones.
            w.send_replace(n);
            let chunk = rx.recv().await?;
            Some((
                Ok::<_, Infallible>(Frame::data(Bytes::from(chunk))),
                (rx, w, n + 1),
            ))
        });
        let response = Response::builder()
            .header("content-type", "text/event-stream")
            .body(StreamBody::new(body).boxed())
            .unwrap();
        (stream, response)
    }

    /// Keep-alives find a closed stream: closing it is the modern cancel.
    fn watch_for_close(self: &Arc<Self>, key: u64, id: RequestId) {
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
                    if hub.mode == Mode::Modern {
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
    }
}

/// Takes out what the harness added to make a request modern.
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

pub(crate) fn status(code: u16) -> Response<Body> {
    Response::builder()
        .status(code)
        .body(Full::new(Bytes::new()).boxed())
        .unwrap()
}
