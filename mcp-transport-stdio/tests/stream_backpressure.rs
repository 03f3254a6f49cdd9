//! A stdio peer that never reads: the outbound queue behind the stuck
//! writer is bounded by bytes, so requests past
//! `ConnectionLimits::max_outbound_bytes` fail at once with `QueueFull`
//! (never a hang), a lone large message is still taken, and a request given
//! up while it waits in the queue never reaches the wire, nor does a cancel
//! for it.
//!
//! On tokio's paused clock (an in-memory duplex, no real I/O); every wait
//! is bounded by a `timeout`, so a hang shows as a failure.

use std::time::Duration;

use futures::FutureExt;
use mcp_protocol::{Notification, Request};
use mcp_transport::{
    CancellationToken, ConnectionHandlers, ConnectionLimits, RequestOptions, ResponseFuture,
    Transport, TransportError,
};
use mcp_transport_stdio::StreamTransport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf};

const QUEUE: usize = 8 * 1024;

struct Peer {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    _write: WriteHalf<DuplexStream>,
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
}

/// A transport whose peer reads nothing until the test says so, through a
/// pipe of 64 bytes: the writer blocks on the first message.
fn setup() -> (StreamTransport, Peer) {
    let (ours, theirs) = tokio::io::duplex(64);
    let limits = ConnectionLimits::default().max_outbound_bytes(QUEUE);
    let t = StreamTransport::builder()
        .build_duplex(ours, ConnectionHandlers::discard().with_limits(limits));
    let (read, write) = tokio::io::split(theirs);
    let peer = Peer {
        lines: BufReader::new(read).lines(),
        _write: write,
    };
    (t, peer)
}

fn sized(id: i64, bytes: usize) -> Request {
    Request::new(id, "tools/call", Some(json!({ "text": "x".repeat(bytes) })))
}

async fn settle(f: ResponseFuture) -> Result<Value, TransportError> {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .expect("the request hung instead of failing at once")
}

/// Lets the writer task take what is queued and block on the full pipe.
async fn let_the_writer_run() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_peer_that_never_reads_meets_queue_full_never_a_hang() {
    let (t, _peer) = setup();
    // Far larger than the queue's bound, yet taken: it is alone.
    let _lone = t.request(sized(1, 10 * QUEUE), RequestOptions::new());
    let_the_writer_run().await;
    let mut waiting = Vec::new();
    let mut refused = None;
    for id in 2..100 {
        let mut f = t.request(sized(id, 1000), RequestOptions::new());
        // Polled once, and kept: a dropped request would leave the queue.
        match (&mut f).now_or_never() {
            None => waiting.push((id, f)), // queued, waiting for the peer
            Some(Err(TransportError::QueueFull { limit })) => {
                assert_eq!(limit, QUEUE);
                refused = Some(id);
                break;
            }
            Some(other) => panic!("request {id}: {other:?}"),
        }
    }
    let refused = refused.expect("no request was refused: the queue is unbounded");
    assert!(
        (5..=10).contains(&waiting.len()),
        "{} requests of ~1 KB were queued before {refused} was refused",
        waiting.len()
    );
    // Still full: the next one fails at once too, and so does a
    // notification too big for the room left.
    let f = t.request(sized(1000, 1000), RequestOptions::new());
    assert!(matches!(
        settle(f).await,
        Err(TransportError::QueueFull { .. })
    ));
    let n = Notification::new("notifications/x", Some(json!({ "t": "n".repeat(QUEUE) })));
    assert!(matches!(t.notify(n), Err(TransportError::QueueFull { .. })));
    assert!(t.is_alive());
    // Closing is not held up by the stuck writer.
    tokio::time::timeout(Duration::from_millis(1), t.close())
        .await
        .expect("close returned at once");
}

#[tokio::test(start_paused = true)]
async fn a_request_given_up_in_the_queue_never_reaches_the_wire() {
    let (t, mut peer) = setup();
    let _first = t.request(sized(1, 4096), RequestOptions::new());
    let_the_writer_run().await;
    // Queued behind the stuck writer.
    let token = CancellationToken::new();
    let cancelled = t.request(
        sized(2, 10),
        RequestOptions::new().cancellation(token.clone()),
    );
    let timed_out = t.request(
        sized(3, 10),
        RequestOptions::new().timeout(Duration::from_secs(1)),
    );
    let dropped = t.request(sized(4, 10), RequestOptions::new());
    let _kept = t.request(sized(5, 10), RequestOptions::new());
    token.cancel();
    assert_eq!(settle(cancelled).await, Err(TransportError::Cancelled));
    assert!(matches!(
        settle(timed_out).await,
        Err(TransportError::Timeout { .. })
    ));
    drop(dropped);
    t.notify(Notification::new("test/marker", None)).unwrap();
    // The peer starts reading: request 1, request 5, the marker; nothing
    // of 2, 3 or 4, and no cancel.
    let mut seen = Vec::new();
    loop {
        let m = peer.read().await;
        let done = m["method"] == "test/marker";
        seen.push(match m.get("id") {
            Some(id) => format!("{} {id}", m["method"].as_str().unwrap()),
            None => m["method"].as_str().unwrap().to_owned(),
        });
        if done {
            break;
        }
    }
    assert_eq!(seen, ["tools/call 1", "tools/call 5", "test/marker"]);
}
