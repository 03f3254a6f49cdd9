//! The outbound queue is bounded by bytes: with a writer that never drains
//! it, what goes past `ConnectionLimits::max_outbound_bytes` fails at once
//! with `QueueFull` (never a hang), a lone large message still fits, and a
//! request given up before it left the queue is taken out of it with no
//! `notifications/cancelled` sent for it. `Engine::request_or_start` skips
//! the queue only when the writer waits with nothing queued.
//!
//! On tokio's paused clock; each wait is bounded by a `timeout` so that a
//! hang shows as a failure, not a stuck test.

use std::time::Duration;

use mcp_protocol::{Message, Notification, Request};
use mcp_transport::{
    CancellationToken, ConnectionHandlers, ConnectionLimits, Engine, Outbound, OutboundReceiver,
    RequestOptions, ResponseFuture, Transport, TransportError,
};
use serde_json::{Value, json};

const LIMIT: usize = 4096;

fn engine(limit: usize) -> (Engine, OutboundReceiver) {
    let limits = ConnectionLimits::default().max_outbound_bytes(limit);
    Engine::new(ConnectionHandlers::discard().with_limits(limits))
}

/// A request whose params weigh about `bytes` bytes.
fn sized(id: i64, bytes: usize) -> Request {
    Request::new(id, "tools/call", Some(json!({ "text": "x".repeat(bytes) })))
}

/// The outcome of `f`, or a panic if it is still waiting after a minute
/// of (paused) time.
async fn settle(f: ResponseFuture) -> Result<Value, TransportError> {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .expect("the request hung instead of failing at once")
}

fn drain(out: &mut OutboundReceiver) -> Vec<Outbound> {
    std::iter::from_fn(|| out.try_recv()).collect()
}

fn request_ids(items: &[Outbound]) -> Vec<Value> {
    items
        .iter()
        .filter_map(|i| match i {
            Outbound::Message(Message::Request(r)) => Some(json!(r.id)),
            _ => None,
        })
        .collect()
}

fn cancels(items: &[Outbound]) -> usize {
    items
        .iter()
        .filter(|i| matches!(i, Outbound::Cancel { .. }))
        .count()
}

#[tokio::test(start_paused = true)]
async fn requests_past_the_byte_limit_fail_at_once_with_queue_full() {
    // The receiver is kept but never read: a peer that stopped reading.
    let (engine, _out) = engine(LIMIT);
    let first = engine.request(sized(1, LIMIT / 2), RequestOptions::new());
    let second = engine.request(sized(2, LIMIT / 4), RequestOptions::new());
    let mut refused = 0;
    for id in 3..1000 {
        let f = engine.request(sized(id, LIMIT / 4), RequestOptions::new());
        match settle(f).await {
            Err(TransportError::QueueFull { limit }) => {
                assert_eq!(limit, LIMIT);
                refused += 1;
            }
            other => panic!("request {id}: expected QueueFull, got {other:?}"),
        }
        if refused == 10 {
            break;
        }
    }
    assert_eq!(refused, 10);
    // A notification meets the same bound.
    let n = Notification::new("notifications/x", Some(json!({ "t": "x".repeat(LIMIT) })));
    assert_eq!(
        engine.notify(n),
        Err(TransportError::QueueFull { limit: LIMIT })
    );
    // The refused requests left nothing behind; the queued ones still wait.
    assert_eq!(engine.pending_count(), 2);
    assert!(
        engine.is_alive(),
        "a full queue does not end the connection"
    );
    drop((first, second));
}

#[tokio::test(start_paused = true)]
async fn a_lone_large_message_fits_and_room_comes_back_once_the_writer_drains() {
    let (engine, mut out) = engine(LIMIT);
    let _big = engine.request(sized(1, 100 * LIMIT), RequestOptions::new());
    assert_eq!(
        engine.pending_count(),
        1,
        "the lone large request was refused"
    );
    let f = engine.request(sized(2, 10), RequestOptions::new());
    assert!(matches!(
        settle(f).await,
        Err(TransportError::QueueFull { .. })
    ));
    let sent = drain(&mut out);
    assert_eq!(request_ids(&sent), [json!(1)]);
    let _later = engine.request(sized(3, LIMIT / 2), RequestOptions::new());
    assert_eq!(request_ids(&drain(&mut out)), [json!(3)]);
}

#[tokio::test(start_paused = true)]
async fn a_request_cancelled_before_it_left_the_queue_is_removed_without_a_wire_cancel() {
    let (engine, mut out) = engine(LIMIT);
    let token = CancellationToken::new();
    let given_up = engine.request(
        sized(1, 100),
        RequestOptions::new().cancellation(token.clone()),
    );
    let kept = engine.request(sized(2, 100), RequestOptions::new());
    token.cancel();
    assert_eq!(settle(given_up).await, Err(TransportError::Cancelled));
    let sent = drain(&mut out);
    assert_eq!(request_ids(&sent), [json!(2)], "{sent:?}");
    assert_eq!(cancels(&sent), 0, "a cancel went out for an unsent request");
    drop(kept);
}

#[tokio::test(start_paused = true)]
async fn a_request_timed_out_or_dropped_before_it_left_the_queue_is_removed_without_a_wire_cancel()
{
    let (engine, mut out) = engine(LIMIT);
    let timed_out = engine.request(
        sized(1, 100),
        RequestOptions::new().timeout(Duration::from_secs(1)),
    );
    let dropped = engine.request(sized(2, 100), RequestOptions::new());
    assert!(matches!(
        settle(timed_out).await,
        Err(TransportError::Timeout { .. })
    ));
    drop(dropped);
    let sent = drain(&mut out);
    assert!(sent.is_empty(), "{sent:?}");
    assert_eq!(engine.pending_count(), 0);
    // The bytes they held are free again: a request of almost the whole
    // limit fits behind a small one.
    let _a = engine.request(sized(3, 10), RequestOptions::new());
    let _b = engine.request(sized(4, LIMIT - 400), RequestOptions::new());
    assert_eq!(request_ids(&drain(&mut out)), [json!(3), json!(4)]);
}

#[tokio::test(start_paused = true)]
async fn a_request_given_up_after_it_was_written_is_still_cancelled_on_the_wire() {
    let (engine, mut out) = engine(LIMIT);
    let f = engine.request(
        sized(1, 100),
        RequestOptions::new().timeout(Duration::from_secs(1)),
    );
    assert_eq!(request_ids(&drain(&mut out)), [json!(1)]);
    assert!(matches!(
        settle(f).await,
        Err(TransportError::Timeout { .. })
    ));
    let sent = drain(&mut out);
    assert_eq!(cancels(&sent), 1, "{sent:?}");
}

#[tokio::test(start_paused = true)]
async fn request_or_start_skips_the_queue_only_for_a_waiting_writer_with_nothing_queued() {
    use futures::FutureExt;
    let (engine, mut out) = engine(LIMIT);
    let started = std::sync::Mutex::new(Vec::new());
    let start = |r: Request| started.lock().unwrap().push(json!(r.id));
    // The writer has not waited yet: queued.
    let _a = engine.request_or_start(sized(1, 10), RequestOptions::new(), start);
    assert!(started.lock().unwrap().is_empty());
    assert_eq!(request_ids(&drain(&mut out)), [json!(1)]);
    // The writer waits with nothing queued: started at once.
    assert!(out.recv().now_or_never().is_none());
    let _b = engine.request_or_start(sized(2, 10), RequestOptions::new(), start);
    assert_eq!(*started.lock().unwrap(), [json!(2)]);
    // A notification queued while it waits: the next request goes behind
    // it, through the queue, in order.
    engine
        .notify(Notification::new("notifications/roots/list_changed", None))
        .unwrap();
    let _c = engine.request_or_start(sized(3, 10), RequestOptions::new(), start);
    assert_eq!(*started.lock().unwrap(), [json!(2)]);
    let items = drain(&mut out);
    assert!(matches!(
        &items[0],
        Outbound::Message(Message::Notification(_))
    ));
    assert_eq!(request_ids(&items), [json!(3)]);
    // A closed engine refuses it, and never starts it.
    assert!(out.recv().now_or_never().is_none());
    drop(engine.close());
    let d = engine.request_or_start(sized(4, 10), RequestOptions::new(), start);
    assert!(settle(d).await.is_err());
    assert_eq!(*started.lock().unwrap(), [json!(2)]);
}
