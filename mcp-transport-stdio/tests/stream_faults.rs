//! Faulty lines over a real byte stream (a `StreamTransport` over an
//! in-memory duplex, the test playing the server line by line): malformed
//! answers fail their request at once, malformed and oversized server
//! requests are answered with an error and never fail our request with the
//! same id, oversized answers fail with `MessageTooLarge`, and none of it
//! reaches the connection listener (diagnostics are `TransportEvent`s).
//!
//! On tokio's paused clock (nothing here does real I/O), so "at once" is
//! exact: no time passes, while each request would wait a minute.

use std::time::Duration;

use futures::StreamExt;
use mcp_protocol::error_codes::INVALID_REQUEST;
use mcp_protocol::{Notification, Request};
use mcp_transport::{
    ConnectionHandlers, Listener, ListenerStream, RequestOptions, ResponseFuture, Transport,
    TransportError, TransportEvent,
};
use mcp_transport_stdio::StreamTransport;
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};
use tokio::time::Instant;

const LIMIT: usize = 512;
const MINUTE: Duration = Duration::from_secs(60);

struct Peer {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    write: WriteHalf<DuplexStream>,
}

impl Peer {
    async fn read(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(5), self.lines.next_line())
            .await
            .expect("a line in time")
            .unwrap()
            .expect("a line");
        serde_json::from_str(&line).unwrap()
    }

    async fn line(&mut self, text: &str) {
        self.write.write_all(text.as_bytes()).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
        self.write.flush().await.unwrap();
    }
}

struct Setup {
    t: StreamTransport,
    connection: ListenerStream,
    events: ListenerStream<TransportEvent>,
    peer: Peer,
}

fn setup() -> Setup {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (listener, connection) = Listener::channel(64);
    let (events_listener, events) = Listener::<TransportEvent>::bounded("transport events", 64);
    let t = StreamTransport::builder()
        .max_message_size(LIMIT)
        .build_duplex(
            ours,
            ConnectionHandlers::new(listener).with_events(events_listener),
        );
    let (read, write) = tokio::io::split(theirs);
    let peer = Peer {
        lines: BufReader::new(read).lines(),
        write,
    };
    Setup {
        t,
        connection,
        events,
        peer,
    }
}

fn call(t: &StreamTransport, id: i64) -> ResponseFuture {
    t.request(
        Request::new(id, "tools/call", None),
        RequestOptions::new().timeout(MINUTE),
    )
}

async fn timed(f: ResponseFuture) -> (Result<Value, TransportError>, Duration) {
    let start = Instant::now();
    let outcome = f.await;
    (outcome, start.elapsed())
}

/// A server request of well over `LIMIT` bytes, its method first.
fn huge_request(id: &Value) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "sampling/createMessage",
        "params": { "messages": [{ "role": "user", "content": { "type": "text", "text": "x".repeat(4 * LIMIT) } }] }
    })
    .to_string()
}

#[tokio::test(start_paused = true)]
async fn a_malformed_answer_fails_its_request_at_once_over_a_stream() {
    let mut s = setup();
    let both = call(&s.t, 1);
    let bad_error = call(&s.t, 2);
    s.peer.read().await;
    s.peer.read().await;
    s.peer
        .line(r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":-32000,"message":"x"}}"#)
        .await;
    s.peer
        .line(r#"{"jsonrpc":"2.0","id":2,"error":{"message":"no code"}}"#)
        .await;
    for f in [both, bad_error] {
        let (outcome, took) = timed(f).await;
        assert!(
            matches!(outcome, Err(TransportError::Malformed { .. })),
            "expected Malformed, got {outcome:?} after {took:?}"
        );
        assert_eq!(took, Duration::ZERO, "the request waited for its timeout");
    }
    assert!(s.t.is_alive());
}

#[tokio::test(start_paused = true)]
async fn a_malformed_server_request_is_answered_and_spares_our_request_over_a_stream() {
    let mut s = setup();
    let ours = call(&s.t, 1);
    s.peer.read().await;
    s.peer
        .line(r#"{"jsonrpc":"2.0","id":1,"method":"roots/list","params":42}"#)
        .await;
    let answer = s.peer.read().await;
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(answer["error"]["code"], INVALID_REQUEST, "{answer}");
    s.peer
        .line(r#"{"jsonrpc":"2.0","id":1,"result":{"mine":true}}"#)
        .await;
    assert_eq!(ours.await.unwrap()["mine"], true);
}

#[tokio::test(start_paused = true)]
async fn an_oversized_server_request_is_answered_and_spares_our_request_over_a_stream() {
    let mut s = setup();
    let ours = call(&s.t, 1);
    s.peer.read().await;
    s.peer.line(&huge_request(&json!(1))).await;
    let answer = s.peer.read().await;
    assert_eq!(answer["id"], 1, "{answer}");
    assert!(answer["error"]["code"].is_i64(), "{answer}");
    assert!(answer.get("result").is_none(), "{answer}");
    // Our request 1 is still waiting, and gets its own answer.
    s.peer
        .line(r#"{"jsonrpc":"2.0","id":1,"result":{"mine":true}}"#)
        .await;
    let (outcome, took) = timed(ours).await;
    assert_eq!(outcome.unwrap()["mine"], true);
    assert_eq!(took, Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn an_oversized_answer_still_fails_its_request_over_a_stream() {
    let mut s = setup();
    let ours = call(&s.t, 1);
    s.peer.read().await;
    let big = json!({ "jsonrpc": "2.0", "id": 1, "result": { "text": "y".repeat(4 * LIMIT) } });
    s.peer.line(&big.to_string()).await;
    match timed(ours).await {
        (Err(TransportError::MessageTooLarge { size, limit }), took) => {
            assert_eq!(limit, LIMIT);
            assert!(size > LIMIT);
            assert_eq!(took, Duration::ZERO);
        }
        other => panic!("expected MessageTooLarge, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn noise_malformed_and_oversized_lines_never_reach_the_connection_listener() {
    let mut s = setup();
    s.peer.line("starting up, please wait").await;
    s.peer.line(r#"{"jsonrpc":"2.0","id":5}"#).await;
    s.peer.line(r#"{"jsonrpc":"2.0","method":17}"#).await;
    s.peer.line(&huge_request(&json!("s-1"))).await;
    s.peer
        .line(
            &json!({ "jsonrpc": "2.0", "id": 9, "result": { "t": "z".repeat(4 * LIMIT) } })
                .to_string(),
        )
        .await;
    s.peer
        .line(r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error"}}"#)
        .await;
    s.peer
        .line(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#)
        .await;
    // The server's own notification is the first and only thing the
    // connection listener gets.
    let first: Notification = tokio::time::timeout(Duration::from_secs(5), s.connection.next())
        .await
        .expect("the notification in time")
        .expect("open");
    assert_eq!(
        first.method, "notifications/tools/list_changed",
        "the connection listener was given a transport diagnostic"
    );
    assert!(s.connection.try_recv().is_none());
    let kinds: Vec<&str> = std::iter::from_fn(|| s.events.try_recv())
        .map(|e| match e {
            TransportEvent::Noise { .. } => "noise",
            TransportEvent::Malformed { .. } => "malformed",
            TransportEvent::TooLarge { request: true, .. } => "too large request",
            TransportEvent::TooLarge { .. } => "too large answer",
            TransportEvent::NullIdError { .. } => "null id",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "noise",
            "malformed",
            "malformed",
            "too large request",
            "too large answer",
            "null id"
        ]
    );
    // The oversized server request was answered even so.
    assert_eq!(s.peer.read().await["id"], "s-1");
}

/// A number JSON cannot hold (`1e600`) makes an answer unreadable; small
/// or large, the request it names fails at once, not after its timeout.
#[tokio::test(start_paused = true)]
async fn an_answer_with_a_number_out_of_range_fails_its_request_at_once_whatever_its_size() {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let t = StreamTransport::builder()
        .max_message_size(1 << 20)
        .build_duplex(ours, ConnectionHandlers::discard());
    let (read, write) = tokio::io::split(theirs);
    let mut peer = Peer {
        lines: BufReader::new(read).lines(),
        write,
    };
    let small = call(&t, 1);
    let large = call(&t, 2);
    peer.read().await;
    peer.read().await;
    peer.line(r#"{"jsonrpc":"2.0","id":1,"result":{"n":1.52e600}}"#)
        .await;
    let padding = "x".repeat(16 * 1024);
    peer.line(&format!(
        r#"{{"jsonrpc":"2.0","id":2,"result":{{"pad":"{padding}","n":1.52e600}}}}"#
    ))
    .await;
    for f in [small, large] {
        let (outcome, took) = timed(f).await;
        assert!(
            matches!(outcome, Err(TransportError::Malformed { .. })),
            "expected Malformed, got {outcome:?} after {took:?}"
        );
        assert_eq!(took, Duration::ZERO, "the request waited for its timeout");
    }
    assert!(t.is_alive());
}

/// A subscriber whose every warning panics, as one does whose writer
/// fails and which reports that with `eprintln!` on a closed stderr.
struct PanicsOnWarn;

impl tracing::Subscriber for PanicsOnWarn {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        if *event.metadata().level() == tracing::Level::WARN {
            panic!("a log line that cannot be written");
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// A reader that panics (here, logging) ends the connection: the request
/// waiting for an answer fails at once instead of waiting for its timeout.
#[tokio::test(flavor = "current_thread")]
async fn a_reader_that_panics_ends_the_connection_instead_of_leaving_it_hanging() {
    let _logs = tracing::subscriber::set_default(PanicsOnWarn);
    for noise in [true, false] {
        let mut s = setup();
        let pending = call(&s.t, 1);
        s.peer.read().await;
        if noise {
            // Skipped with a warning: the warning panics in the read loop.
            s.peer.line("not JSON at all").await;
        } else {
            // The end of the stream, warned about after it is reported.
            drop(s.peer);
        }
        let outcome = tokio::time::timeout(Duration::from_secs(5), pending)
            .await
            .expect("the request ended");
        assert!(
            matches!(outcome, Err(TransportError::ServerGone(_))),
            "{outcome:?}"
        );
        assert!(!s.t.is_alive());
    }
}
