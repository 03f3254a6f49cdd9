//! An engine whose writer has gone (its outbound queue's receiver was
//! dropped without `peer_gone`) can send nothing more: it says so. The
//! connection ends with `ServerGone` ("the transport's writer stopped"):
//! pending and later requests fail at once and `is_alive` turns false. A
//! writer that reported its own cause first keeps that cause, and a
//! receiver dropped after `close` changes nothing.
//!
//! On tokio's paused clock; every wait is bounded, so a hang is a failure.

use std::time::Duration;

use mcp_protocol::{Notification, Request};
use mcp_transport::{
    ConnectionHandlers, Engine, GoneInfo, RequestOptions, ResponseFuture, Transport, TransportError,
};
use serde_json::Value;

async fn settle(f: ResponseFuture) -> Result<Value, TransportError> {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .expect("the request hung")
}

fn reason(got: &Result<Value, TransportError>) -> &str {
    match got {
        Err(TransportError::ServerGone(info)) => &info.reason,
        other => panic!("expected ServerGone, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn an_engine_whose_writer_is_gone_is_not_alive() {
    let (engine, outbound) = Engine::new(ConnectionHandlers::discard());
    drop(outbound);
    assert!(!engine.is_alive(), "is_alive is true with no writer");
    let got =
        settle(engine.request(Request::new(1, "test/any", None), RequestOptions::new())).await;
    assert!(
        got.is_err(),
        "a request with nowhere to go succeeded: {got:?}"
    );
    assert!(
        !engine.is_alive(),
        "requests fail with {got:?}, yet is_alive is true"
    );
    assert_ne!(
        got,
        Err(TransportError::Closed),
        "nobody closed the transport"
    );
    assert_eq!(reason(&got), "the transport's writer stopped");
    assert!(matches!(
        engine.notify(Notification::new("notifications/x", None)),
        Err(TransportError::ServerGone(_))
    ));
}

#[tokio::test(start_paused = true)]
async fn a_request_in_flight_fails_at_once_when_the_writer_goes() {
    let (engine, outbound) = Engine::new(ConnectionHandlers::discard());
    let f = engine.request(
        Request::new(1, "test/any", None),
        RequestOptions::new().timeout(Duration::from_secs(30)),
    );
    let waiting = tokio::spawn(settle(f));
    tokio::task::yield_now().await;
    let start = tokio::time::Instant::now();
    drop(outbound);
    let got = waiting.await.unwrap();
    assert_eq!(reason(&got), "the transport's writer stopped");
    assert_eq!(start.elapsed(), Duration::ZERO, "it waited for its timeout");
    assert_eq!(engine.pending_count(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_writer_that_reports_its_cause_first_keeps_it() {
    let (engine, outbound) = Engine::new(ConnectionHandlers::discard());
    let f = engine.request(Request::new(1, "test/any", None), RequestOptions::new());
    engine.peer_gone(GoneInfo::new("writing failed: broken pipe"));
    drop(outbound);
    assert_eq!(reason(&settle(f).await), "writing failed: broken pipe");
    let later =
        settle(engine.request(Request::new(2, "test/any", None), RequestOptions::new())).await;
    assert_eq!(reason(&later), "writing failed: broken pipe");
}

#[tokio::test(start_paused = true)]
async fn a_writer_that_goes_after_close_changes_nothing() {
    let (engine, outbound) = Engine::new(ConnectionHandlers::discard());
    engine.close().await;
    drop(outbound);
    let got =
        settle(engine.request(Request::new(1, "test/any", None), RequestOptions::new())).await;
    assert_eq!(got, Err(TransportError::Closed));
}

#[tokio::test(start_paused = true)]
async fn a_writer_that_outlives_the_engine_ends_quietly() {
    let (engine, mut outbound) = Engine::new(ConnectionHandlers::discard());
    drop(engine);
    let item = tokio::time::timeout(Duration::from_secs(1), outbound.recv()).await;
    assert_eq!(item, Ok(None), "recv ends once the engine is gone");
    drop(outbound);
}

/// A writer woken by `close` (its queue ended) finds the connection's
/// shutdown already cancelled, so its going is taken as part of the close,
/// not as a writer that stopped on its own (which would warn). The writer
/// runs on another worker thread, where it may run the moment the queue
/// ends; each round is bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_woken_by_close_sees_the_shutdown() {
    for round in 0..200 {
        let (engine, mut outbound) = Engine::new(ConnectionHandlers::discard());
        let shutdown = engine.shutdown_token();
        let (parked_tx, parked_rx) = tokio::sync::oneshot::channel();
        let writer = tokio::spawn(async move {
            let _ = parked_tx.send(());
            let item = outbound.recv().await;
            let cancelled = shutdown.is_cancelled();
            drop(outbound);
            (item, cancelled)
        });
        let _ = parked_rx.await;
        tokio::task::yield_now().await;
        engine.close().await;
        let (item, cancelled) = tokio::time::timeout(Duration::from_secs(5), writer)
            .await
            .expect("the writer hung")
            .unwrap();
        assert_eq!(item, None, "round {round}: the queue did not end");
        assert!(
            cancelled,
            "round {round}: the queue ended before the shutdown was cancelled"
        );
    }
}
