//! The engine under a random server: the input is a script of what a
//! server does (answers, errors, answers twice or to ids never sent,
//! progress, notifications, requests of its own, junk, malformed and
//! oversized lines, its stream's end) interleaved with what callers do
//! (call, cancel, drop, time out), played against a `StreamTransport` over
//! an in-memory duplex on tokio's paused clock.
//!
//! What must hold, after each step and at the end:
//! - no panic, and no request waits for nothing: while the connection
//!   lives, the pending table holds exactly the calls still in flight;
//! - a request given up (cancelled, timed out) was cancelled on the wire,
//!   or never written at all;
//! - every outcome is one the script allows: a result or error the server
//!   sent for that id, a timeout only with a timeout, a cancel only when
//!   cancelled, a size or parse failure only when a line named the id;
//! - once the server's stream ends, every call ends (none hangs), and once
//!   the transport is dropped no task is left behind.
//!
//! With `MCP_FUZZ_SHOW` set, each run prints its script and the calls'
//! outcomes (to read a crash's input: `MCP_FUZZ_SHOW=1` and the replay).

mod checks;
mod script;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arbitrary::Unstructured;
use futures::future::BoxFuture;
use mcp_protocol::{ErrorObject, Request, RequestId};
use mcp_transport::{
    ConnectionHandlers, Listener, ListenerStream, RequestOptions, Transport, TransportError,
    TransportEvent,
};
use mcp_transport_stdio::StreamTransport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, WriteHalf};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use checks::named_ids;
use script::{How, ServerMethod, Step, Suffix};

/// The transport's maximum message size: small, so oversized lines are
/// cheap to make.
const LIMIT: usize = 1024;
/// At most this many steps are played.
const MAX_STEPS: usize = 48;
/// How long, on the paused clock, a call may take to end once the
/// server's stream ended: far past any timeout a script sets.
const HANG: Duration = Duration::from_secs(3600);

/// The input is read as a script (see the module docs).
pub fn engine(input: &[u8]) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime");
    let steps = script::read(&mut Unstructured::new(input), MAX_STEPS);
    if std::env::var_os("MCP_FUZZ_SHOW").is_some() {
        eprintln!("{steps:#?}");
    }
    runtime.block_on(play(steps));
}

/// What the server side read from the client.
#[derive(Default)]
struct Seen {
    /// Our requests, in the order they arrived.
    requests: Vec<RequestId>,
    /// The ids named by the client's `notifications/cancelled`.
    cancels: HashSet<RequestId>,
    /// How many answers each id of the server's requests got.
    answers: HashMap<String, usize>,
}

/// One caller: a request and what was done to it.
struct Caller {
    id: RequestId,
    task: JoinHandle<Result<Value, TransportError>>,
    token: CancellationToken,
    timeout: bool,
    cancelled: bool,
    dropped: bool,
    /// Whether its id was that of an earlier call.
    reused: bool,
    /// Its outcome once it ended (`None` inside when it was dropped).
    ended: Option<Option<Result<Value, TransportError>>>,
}

/// What the server wrote naming one of our ids.
#[derive(Default)]
struct Sent {
    results: Vec<Value>,
    errors: Vec<i64>,
    /// A line naming the id that the client cannot read (too large, not
    /// JSON, malformed).
    unreadable: bool,
    /// Junk that names the id: any outcome may come of it.
    wild: bool,
}

struct Play {
    transport: StreamTransport,
    server: Option<WriteHalf<DuplexStream>>,
    seen: Arc<Mutex<Seen>>,
    reader: JoinHandle<()>,
    callers: Vec<Caller>,
    sent: HashMap<RequestId, Sent>,
    /// The ids of the server's own requests so far.
    server_requests: Vec<i64>,
    /// Server requests the server cancelled.
    server_cancelled: HashSet<i64>,
    /// Kept, never read: a listener nobody drains must not block reading.
    _streams: Vec<ListenerStream>,
    _events: ListenerStream<TransportEvent>,
    /// Whether the client closed the transport.
    closed: bool,
    /// Whether junk held a request of the server's, which the client may
    /// answer too.
    junk_requests: bool,
}

async fn play(steps: Vec<Step>) {
    let mut play = Play::start();
    for step in steps {
        play.step(step).await;
        settle().await;
        play.check_in_flight().await;
    }
    play.finish().await;
}

/// Lets every task run until nothing more is ready, on the paused clock.
async fn settle() {
    tokio::time::sleep(Duration::from_micros(1)).await;
}

/// The client's answers to server requests: `ping` at once, `slow` after
/// a while (so the server can cancel it), anything else refused.
fn handler(request: Request) -> BoxFuture<'static, Result<Value, ErrorObject>> {
    Box::pin(async move {
        match request.method.as_str() {
            "ping" => Ok(json!({})),
            "slow" => {
                tokio::time::sleep(Duration::from_millis(300)).await;
                Ok(json!({"slow": true}))
            }
            other => Err(ErrorObject::new(-32601, format!("no {other}"))),
        }
    })
}

impl Play {
    fn start() -> Play {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (listener, stream) = Listener::channel(2);
        let (events, events_stream) = Listener::<TransportEvent>::bounded("events", 2);
        let handlers = ConnectionHandlers::new(listener)
            .with_events(events)
            .with_server_requests(Arc::new(handler));
        let transport = StreamTransport::builder()
            .max_message_size(LIMIT)
            .build_duplex(ours, handlers);
        let (read, write) = tokio::io::split(theirs);
        let seen = Arc::new(Mutex::new(Seen::default()));
        let reader = tokio::spawn(read_client(BufReader::new(read), seen.clone()));
        Play {
            transport,
            server: Some(write),
            seen,
            reader,
            callers: Vec::new(),
            sent: HashMap::new(),
            server_requests: Vec::new(),
            server_cancelled: HashSet::new(),
            _streams: vec![stream],
            _events: events_stream,
            closed: false,
            junk_requests: false,
        }
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().unwrap()
    }

    /// The id of the `n`th request the server has read, if any.
    fn read_request(&self, n: u8) -> Option<RequestId> {
        let seen = self.seen();
        let requests = &seen.requests;
        (!requests.is_empty()).then(|| requests[usize::from(n) % requests.len()].clone())
    }

    async fn write(&mut self, line: &[u8]) {
        if let Some(server) = &mut self.server {
            // The client may be gone; then there is nobody to write to.
            let _ = server.write_all(line).await;
            let _ = server.flush().await;
        }
    }

    /// Ends the server's side of the stream (the client reads its end);
    /// the server still reads what the client writes.
    async fn end_stream(&mut self) {
        if let Some(mut server) = self.server.take() {
            let _ = server.shutdown().await;
        }
    }

    async fn step(&mut self, step: Step) {
        match step {
            Step::Call {
                timeout,
                progress,
                reuse,
            } => self.call(timeout, progress, reuse),
            Step::Cancel(n) => {
                if let Some(c) = pick(&mut self.callers, n) {
                    c.cancelled = true;
                    c.token.cancel();
                }
            }
            Step::Drop(n) => {
                if let Some(c) = pick(&mut self.callers, n) {
                    c.dropped = true;
                    c.task.abort();
                }
            }
            Step::Answer { to, how } => {
                if let Some(id) = self.read_request(to) {
                    self.answer(id, how).await;
                }
            }
            Step::Unknown(n) => {
                let id = RequestId::Number(1_000 + i64::from(n));
                self.answer(id, How::Result).await;
            }
            Step::Progress { to } => {
                if let Some(id) = self.read_request(to) {
                    let token = format!("p{id}");
                    let line = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                        "params": {"progressToken": token, "progress": 1}});
                    self.write(&line_of(&line)).await;
                }
            }
            Step::Notification => {
                let line = json!({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "info", "data": "x"}});
                self.write(&line_of(&line)).await;
            }
            Step::ServerRequest(method) => {
                let id = 500 + self.server_requests.len() as i64;
                self.server_requests.push(id);
                let method = match method {
                    ServerMethod::Ping => "ping",
                    ServerMethod::Slow => "slow",
                    ServerMethod::Unknown => "roots/list",
                };
                let line = json!({"jsonrpc": "2.0", "id": id, "method": method});
                self.write(&line_of(&line)).await;
            }
            Step::CancelServerRequest(n) => {
                if let Some(&id) = self
                    .server_requests
                    .get(usize::from(n) % self.server_requests.len().max(1))
                {
                    self.server_cancelled.insert(id);
                    let line = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": id}});
                    self.write(&line_of(&line)).await;
                }
            }
            Step::Junk { start, len, bytes } => {
                let mut line = script::junk(start, len, bytes);
                let (ids, request) = named_ids(&line);
                self.junk_requests |= request;
                for id in ids {
                    self.sent.entry(id).or_default().wild = true;
                }
                line.push(b'\n');
                self.write(&line).await;
            }
            Step::Oversized { to, suffix } => {
                let id = match to {
                    Some(n) => self.read_request(n),
                    None => None,
                };
                if let Some(id) = &id {
                    self.sent.entry(id.clone()).or_default().unreadable = true;
                }
                let id = id.map_or(Value::Null, |id| id.to_value());
                let mut line =
                    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"pad":""#).into_bytes();
                line.resize(LIMIT + 16, b'x');
                line.extend_from_slice(br#""}}"#);
                match suffix {
                    Suffix::Newline => line.push(b'\n'),
                    // A stream that ends in the middle of a line.
                    Suffix::Cut => {
                        self.write(&line).await;
                        self.end_stream().await;
                        return;
                    }
                }
                self.write(&line).await;
            }
            Step::Wait(ms) => tokio::time::sleep(Duration::from_millis(u64::from(ms))).await,
            Step::EndStream => self.end_stream().await,
            Step::Close => {
                self.closed = true;
                self.transport.close().await;
            }
        }
    }

    fn call(&mut self, timeout: Option<u8>, progress: bool, reuse: Option<u8>) {
        let reused = reuse.and_then(|n| {
            let len = self.callers.len();
            (len > 0).then(|| self.callers[usize::from(n) % len].id.clone())
        });
        let id = reused
            .clone()
            .unwrap_or(RequestId::Number(self.callers.len() as i64 + 1));
        let params = progress.then(|| json!({"_meta": {"progressToken": format!("p{id}")}}));
        let token = CancellationToken::new();
        let mut options = RequestOptions::new().cancellation(token.clone());
        if let Some(ms) = timeout {
            let after = Duration::from_millis(u64::from(ms) * 10 + 1);
            options = options.timeout(after).reset_timeout_on_progress(after * 4);
        }
        let (listener, stream) = Listener::channel(1);
        self._streams.push(stream);
        let future = self.transport.request(
            Request::new(id.clone(), "tools/call", params),
            options.listener(listener),
        );
        self.callers.push(Caller {
            id,
            task: tokio::spawn(future),
            token,
            timeout: timeout.is_some(),
            cancelled: false,
            dropped: false,
            reused: reused.is_some(),
            ended: None,
        });
    }

    async fn answer(&mut self, id: RequestId, how: How) {
        let n = self.sent.values().map(|s| s.results.len()).sum::<usize>();
        let result = json!({"n": n});
        let error = |code: i64| json!({"code": code, "message": "no"});
        let sent = self.sent.entry(id.clone()).or_default();
        let line = match how {
            How::Result => {
                sent.results.push(result.clone());
                json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
            }
            How::Twice => {
                sent.results.push(result.clone());
                let one = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
                format!("{one}\n{one}")
            }
            How::Error(code) => {
                let code = -32000 - i64::from(code);
                sent.errors.push(code);
                json!({"jsonrpc": "2.0", "id": id, "error": error(code)}).to_string()
            }
            // An error the client cannot tie to a request: only an event.
            How::NullIdError => {
                json!({"jsonrpc": "2.0", "id": null, "error": error(-32600)}).to_string()
            }
            How::OutOfRange => {
                sent.unreadable = true;
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"n":1e600}}}}"#)
            }
            How::Batch => {
                sent.results.push(result.clone());
                json!([{"jsonrpc": "2.0", "id": id, "result": result}, {"jsonrpc": "2.0", "method": "notifications/message", "params": {}}]).to_string()
            }
        };
        self.write(format!("{line}\n").as_bytes()).await;
    }
}

fn line_of(value: &Value) -> Vec<u8> {
    let mut line = value.to_string().into_bytes();
    line.push(b'\n');
    line
}

fn pick(callers: &mut [Caller], n: u8) -> Option<&mut Caller> {
    let len = callers.len();
    (len > 0).then(|| &mut callers[usize::from(n) % len])
}

/// The server's reading side: notes each request, cancel and answer the
/// client writes, until the client's stream ends.
async fn read_client(reader: BufReader<tokio::io::ReadHalf<DuplexStream>>, seen: Arc<Mutex<Seen>>) {
    let mut lines = reader.lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let message: Value = serde_json::from_str(&line).expect("the client writes JSON");
        let mut seen = seen.lock().unwrap();
        match (
            message.get("method").and_then(Value::as_str),
            message.get("id"),
        ) {
            (Some("notifications/cancelled"), _) => {
                let id = &message["params"]["requestId"];
                seen.cancels
                    .insert(RequestId::from_value(id).expect("a cancel names an id"));
            }
            (Some(_), Some(id)) => {
                seen.requests
                    .push(RequestId::from_value(id).expect("a request has an id"));
            }
            (None, Some(id)) => *seen.answers.entry(id.to_string()).or_default() += 1,
            _ => {}
        }
    }
}
