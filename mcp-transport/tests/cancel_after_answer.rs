//! A cancel that comes after the answer sends nothing, and the answer
//! wins a race with a cancel that is not yet seen; a cancel before the
//! answer sends exactly one wire cancel, and the late answer is dropped.

use mcp_protocol::{Message, Request, RequestId, Response};
use mcp_transport::{
    CancellationToken, ConnectionHandlers, Engine, Outbound, OutboundReceiver, RequestOptions,
    Transport, TransportError,
};
use serde_json::json;

fn engine() -> (Engine, OutboundReceiver) {
    Engine::new(ConnectionHandlers::discard())
}

fn answer(engine: &Engine, id: i64) {
    engine.receive(Message::Response(Response {
        id: id.into(),
        result: json!({ "n": id }),
    }));
}

/// Everything queued for the wire so far, requests left out.
fn cancels(out: &mut OutboundReceiver) -> Vec<RequestId> {
    let mut ids = Vec::new();
    while let Some(item) = out.try_recv() {
        match item {
            Outbound::Cancel { id, .. } => ids.push(id),
            Outbound::Message(Message::Request(_)) => {}
            other => panic!("unexpected on the wire: {other:?}"),
        }
    }
    ids
}

fn request(engine: &Engine, id: i64, options: RequestOptions) -> mcp_transport::ResponseFuture {
    engine.request(Request::new(id, "test/quick", None), options)
}

#[tokio::test]
async fn a_token_cancelled_after_the_answer_sends_nothing() {
    let (engine, mut out) = engine();
    let token = CancellationToken::new();
    let f = request(
        &engine,
        1,
        RequestOptions::new().cancellation(token.clone()),
    );
    answer(&engine, 1);
    assert_eq!(f.await.unwrap()["n"], 1);
    token.cancel();
    tokio::task::yield_now().await;
    assert_eq!(cancels(&mut out), []);
}

#[tokio::test]
async fn an_answer_that_arrived_wins_over_a_token_cancelled_before_the_first_poll() {
    let (engine, mut out) = engine();
    let token = CancellationToken::new();
    let f = request(
        &engine,
        1,
        RequestOptions::new().cancellation(token.clone()),
    );
    answer(&engine, 1);
    token.cancel();
    assert_eq!(f.await.unwrap()["n"], 1, "the answer was there first");
    assert_eq!(cancels(&mut out), []);
}

#[tokio::test]
async fn dropping_an_answered_future_sends_nothing() {
    let (engine, mut out) = engine();
    let unpolled = request(&engine, 1, RequestOptions::new());
    let polled = tokio::spawn(request(&engine, 2, RequestOptions::new()));
    tokio::task::yield_now().await;
    answer(&engine, 1);
    answer(&engine, 2);
    drop(unpolled);
    // Dropped after its outcome was taken.
    assert_eq!(polled.await.unwrap().unwrap()["n"], 2);
    assert_eq!(cancels(&mut out), []);
    assert_eq!(engine.pending_count(), 0);
}

#[tokio::test]
async fn a_cancel_before_the_answer_sends_one_cancel_and_the_late_answer_is_dropped() {
    let (engine, mut out) = engine();
    let token = CancellationToken::new();
    let f = tokio::spawn(request(
        &engine,
        1,
        RequestOptions::new().cancellation(token.clone()),
    ));
    tokio::task::yield_now().await;
    // The writer takes the request first: only a request the server may
    // have seen is cancelled on the wire.
    assert_eq!(cancels(&mut out), []);
    token.cancel();
    assert_eq!(f.await.unwrap(), Err(TransportError::Cancelled));
    assert_eq!(cancels(&mut out), [RequestId::Number(1)]);
    assert!(
        !engine.fail_request(&1.into(), TransportError::Closed),
        "the cancelled request is still pending"
    );
    answer(&engine, 1);
    assert_eq!(cancels(&mut out), []);
    // The id is free for a new request, which gets its own answer.
    let again = request(&engine, 1, RequestOptions::new());
    answer(&engine, 1);
    assert_eq!(again.await.unwrap()["n"], 1);
}

#[tokio::test]
async fn no_wire_cancel_gives_cancelled_and_sends_nothing() {
    let (engine, mut out) = engine();
    let token = CancellationToken::new();
    let options = RequestOptions::new()
        .cancellation(token.clone())
        .no_wire_cancel();
    let f = tokio::spawn(request(&engine, 1, options));
    tokio::task::yield_now().await;
    token.cancel();
    assert_eq!(f.await.unwrap(), Err(TransportError::Cancelled));
    drop(request(&engine, 2, RequestOptions::new().no_wire_cancel()));
    assert_eq!(cancels(&mut out), []);
    assert_eq!(engine.pending_count(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_timeout_sends_one_cancel_and_an_answer_after_it_is_dropped() {
    let (engine, mut out) = engine();
    let f = request(
        &engine,
        1,
        RequestOptions::new().timeout(std::time::Duration::from_secs(1)),
    );
    // Written before it timed out, so the server may be working on it.
    assert_eq!(cancels(&mut out), []);
    assert!(matches!(f.await, Err(TransportError::Timeout { .. })));
    assert_eq!(cancels(&mut out), [RequestId::Number(1)]);
    answer(&engine, 1);
    assert_eq!(cancels(&mut out), []);
    assert_eq!(engine.pending_count(), 0);
}

#[tokio::test]
async fn a_cancel_after_close_sends_nothing() {
    let (engine, mut out) = engine();
    let token = CancellationToken::new();
    let f = tokio::spawn(request(
        &engine,
        1,
        RequestOptions::new().cancellation(token.clone()),
    ));
    tokio::task::yield_now().await;
    engine.close().await;
    assert_eq!(f.await.unwrap(), Err(TransportError::Closed));
    token.cancel();
    tokio::task::yield_now().await;
    assert_eq!(cancels(&mut out), []);
}
