//! The stream transport over an in-memory duplex, with the test playing
//! the server line by line, on tokio's paused clock (nothing here does real
//! I/O), so timeouts and bounds are exact whatever the machine's load.

use std::time::Duration;

use futures::StreamExt;
use mcp_protocol::{Notification, Request};
use mcp_transport::{
    ConnectionHandlers, Listener, ListenerStream, RequestOptions, Transport, TransportError,
    TransportEvent,
};
use mcp_transport_stdio::StreamTransport;
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};
use tokio::time::Instant;

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

    async fn write(&mut self, bytes: &[u8]) {
        self.write.write_all(bytes).await.unwrap();
        self.write.flush().await.unwrap();
    }

    async fn answer(&mut self, id: &Value, result: Value) {
        let line = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string() + "\n";
        self.write(line.as_bytes()).await;
    }
}

type Events = ListenerStream<TransportEvent>;

fn setup(limit: usize, buffer: usize) -> (StreamTransport, Events, Peer) {
    let (ours, theirs) = tokio::io::duplex(buffer);
    let (listener, events) = Listener::bounded("transport events", 1024);
    let t = StreamTransport::builder()
        .max_message_size(limit)
        .name("duplex")
        .build_duplex(ours, ConnectionHandlers::discard().with_events(listener));
    let (read, write) = tokio::io::split(theirs);
    let peer = Peer {
        lines: BufReader::new(read).lines(),
        write,
    };
    (t, events, peer)
}

async fn next_event(events: &mut Events) -> TransportEvent {
    tokio::time::timeout(Duration::from_secs(5), events.next())
        .await
        .expect("an event in time")
        .expect("open")
}

#[tokio::test(start_paused = true)]
async fn bad_lines_cost_only_themselves() {
    let (t, mut events, mut peer) = setup(200, 1 << 16);
    let f1 = t.request(Request::new(1, "a", None), RequestOptions::new());
    let f2 = t.request(Request::new(2, "b", None), RequestOptions::new());
    let f3 = t.request(Request::new(3, "c", None), RequestOptions::new());
    for _ in 0..3 {
        peer.read().await;
    }
    peer.write(b"plain noise\n").await;
    peer.write(b"\xc3\x28\xff\n").await;
    peer.write(b"\n   \r\n").await; // blank lines: silently ignored
    peer.write(b"[]\n").await; // an empty batch: malformed
    // An answer to 1 over the limit, in pieces.
    peer.write(br#"{"jsonrpc":"2.0","id":1,"result":{"pad":""#)
        .await;
    for _ in 0..10 {
        peer.write(&[b'x'; 100]).await;
    }
    peer.write(b"\"}}\r\n").await;
    // A batch answering 2 and 3, one bad element beside them.
    peer.write(
        br#"[{"jsonrpc":"2.0","id":2,"result":{}},{"nope":1},{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad"}}]"#,
    )
    .await;
    peer.write(b"\n").await;

    match f1.await {
        Err(TransportError::MessageTooLarge { size, limit: 200 }) => assert!(size > 200),
        other => panic!("{other:?}"),
    }
    assert_eq!(f2.await.unwrap()["resultType"], "complete");
    assert_eq!(
        f3.await,
        Err(TransportError::Rpc {
            code: -32602,
            message: "bad".into(),
            data: None
        })
    );
    let mut seen = Vec::new();
    for _ in 0..5 {
        seen.push(match next_event(&mut events).await {
            TransportEvent::Noise { .. } => "noise",
            TransportEvent::Malformed { .. } => "malformed",
            TransportEvent::TooLarge { .. } => "too large",
            other => panic!("{other:?}"),
        });
    }
    assert_eq!(
        seen,
        ["noise", "noise", "malformed", "too large", "malformed"]
    );
    assert!(t.is_alive());
}

/// A small answer is handed to its caller as text and a large one is
/// parsed by the reader; the caller cannot tell which.
#[tokio::test(start_paused = true)]
async fn small_and_large_answers_arrive_alike() {
    let (t, _events, mut peer) = setup(1 << 20, 1 << 20);
    let small = t.request(Request::new(1, "a", None), RequestOptions::new());
    let large = t.request(Request::new(2, "b", None), RequestOptions::new());
    for _ in 0..2 {
        peer.read().await;
    }
    let text = "é\"x".repeat(10_000);
    peer.answer(
        &json!(1),
        json!({"content": [{"type": "text", "text": "hi"}]}),
    )
    .await;
    peer.answer(
        &json!(2),
        json!({"content": [{"type": "text", "text": text}]}),
    )
    .await;
    let small = small.await.unwrap();
    let large = large.await.unwrap();
    assert_eq!(small["content"][0]["text"], "hi");
    assert_eq!(large["content"][0]["text"], text.as_str());
    for result in [small, large] {
        assert_eq!(
            result["resultType"], "complete",
            "legacy results are normalized"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn the_stream_ending_fails_pending_requests() {
    let (t, _events, mut peer) = setup(1 << 20, 1 << 16);
    let f = t.request(Request::new(1, "a", None), RequestOptions::new());
    peer.read().await;
    drop(peer);
    match f.await {
        Err(TransportError::ServerGone(info)) => assert_eq!(info.reason, "the stream ended"),
        other => panic!("{other:?}"),
    }
    assert!(!t.is_alive());
    assert!(matches!(
        t.request(Request::new(2, "b", None), RequestOptions::new())
            .await,
        Err(TransportError::ServerGone(_))
    ));
}

#[tokio::test(start_paused = true)]
async fn a_peer_that_never_reads_never_blocks_us() {
    // A tiny buffer nobody reads: the writer blocks on the first request.
    let (t, _events, _peer) = setup(1 << 20, 64);
    let big = json!("q".repeat(10_000));
    let stuck = t.request(Request::new(1, "a", Some(big)), RequestOptions::new());
    let r = t
        .request(
            Request::new(2, "b", None),
            RequestOptions::new().timeout(Duration::from_millis(100)),
        )
        .await;
    assert!(matches!(r, Err(TransportError::Timeout { .. })), "{r:?}");
    // Notifications are queued, never waited on.
    t.notify(Notification::new("notifications/x", None))
        .unwrap();
    let start = Instant::now();
    t.close().await;
    assert!(start.elapsed() < Duration::from_millis(100));
    assert_eq!(stuck.await, Err(TransportError::Closed));
    t.close().await;
    assert!(!t.is_alive());
}

#[tokio::test(start_paused = true)]
async fn order_and_wire_cancels() {
    let (t, _events, mut peer) = setup(1 << 20, 1 << 16);
    t.notify(Notification::new("notifications/initialized", None))
        .unwrap();
    let f = t.request(
        Request::new(1, "tools/call", None),
        RequestOptions::new().timeout(Duration::from_millis(50)),
    );
    assert_eq!(peer.read().await["method"], "notifications/initialized");
    assert_eq!(peer.read().await["method"], "tools/call");
    assert!(matches!(f.await, Err(TransportError::Timeout { .. })));
    let cancel = peer.read().await;
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], 1);
    // A late answer is dropped; the connection goes on.
    peer.answer(&json!(1), json!({})).await;
    let f = t.request(Request::new(2, "ping", None), RequestOptions::new());
    let id = peer.read().await["id"].clone();
    peer.answer(&id, json!({"ok": true})).await;
    assert_eq!(f.await.unwrap()["ok"], true);
}

#[tokio::test(start_paused = true)]
async fn server_requests_without_a_handler_get_method_not_found() {
    let (_t, _events, mut peer) = setup(1 << 20, 1 << 16);
    peer.write(br#"{"jsonrpc":"2.0","id":"s1","method":"roots/list"}"#)
        .await;
    peer.write(b"\n").await;
    let answer = peer.read().await;
    assert_eq!(answer["id"], "s1");
    assert_eq!(answer["error"]["code"], -32601);
}
