//! A progress token reused by live requests (a caller's mistake): the
//! request that registered it first keeps it, ending a request removes only
//! its own hold on the token, and when the holder ends the next live
//! request with the same token takes over.

use std::time::Duration;

use mcp_protocol::meta::PROGRESS_TOKEN;
use mcp_protocol::methods::{NOTIFICATION_PROGRESS, TOOLS_CALL};
use mcp_protocol::{Message, Notification, Request, Response};
use mcp_transport::{
    ConnectionHandlers, Engine, Listener, ListenerStream, OutboundReceiver, RequestOptions,
    ResponseFuture, Transport, TransportError,
};
use serde_json::json;

fn setup() -> (Engine, OutboundReceiver, ListenerStream) {
    let (listener, connection) = Listener::channel(64);
    let (engine, outbound) = Engine::new(ConnectionHandlers::new(listener));
    (engine, outbound, connection)
}

fn with_token(
    engine: &Engine,
    id: i64,
    options: RequestOptions,
) -> (ResponseFuture, ListenerStream) {
    let (l, s) = Listener::channel(64);
    let params = json!({ "_meta": { PROGRESS_TOKEN: "tok" } });
    let f = engine.request(
        Request::new(id, TOOLS_CALL, Some(params)),
        options.listener(l),
    );
    (f, s)
}

fn progress(engine: &Engine, n: u64) {
    engine.receive(Message::Notification(Notification::new(
        NOTIFICATION_PROGRESS,
        Some(json!({ PROGRESS_TOKEN: "tok", "progress": n })),
    )));
}

fn answer(engine: &Engine, id: i64) {
    engine.receive(Message::Response(Response {
        id: id.into(),
        result: json!({}),
    }));
}

fn count(stream: &mut ListenerStream) -> usize {
    std::iter::from_fn(|| stream.try_recv()).count()
}

#[tokio::test]
async fn while_both_are_live_the_first_request_keeps_the_token() {
    let (engine, _out, mut connection) = setup();
    let (_first, mut a) = with_token(&engine, 1, RequestOptions::new());
    let (_second, mut b) = with_token(&engine, 2, RequestOptions::new());
    progress(&engine, 1);
    assert_eq!((count(&mut a), count(&mut b)), (1, 0));
    assert_eq!(count(&mut connection), 0);
}

#[tokio::test]
async fn the_second_ending_first_leaves_the_first_its_token() {
    let (engine, _out, _connection) = setup();
    let (_first, mut a) = with_token(&engine, 1, RequestOptions::new());
    let (second, mut b) = with_token(&engine, 2, RequestOptions::new());
    answer(&engine, 2);
    second.await.unwrap();
    progress(&engine, 1);
    assert_eq!(count(&mut a), 1, "the live request lost its progress");
    assert_eq!(count(&mut b), 0);
}

#[tokio::test]
async fn the_token_passes_on_in_order_and_is_gone_with_its_last_holder() {
    let (engine, _out, mut connection) = setup();
    let (first, mut a) = with_token(&engine, 1, RequestOptions::new());
    let (second, mut b) = with_token(&engine, 2, RequestOptions::new());
    let (third, mut c) = with_token(&engine, 3, RequestOptions::new());
    drop(first);
    progress(&engine, 1);
    assert_eq!((count(&mut a), count(&mut b), count(&mut c)), (0, 1, 0));
    answer(&engine, 2);
    second.await.unwrap();
    progress(&engine, 2);
    assert_eq!((count(&mut b), count(&mut c)), (0, 1));
    answer(&engine, 3);
    third.await.unwrap();
    progress(&engine, 3);
    assert_eq!(count(&mut c), 0);
    assert_eq!(count(&mut connection), 0, "late progress is dropped");
    assert_eq!(engine.pending_count(), 0);
}

#[tokio::test(start_paused = true)]
async fn the_holder_after_a_hand_over_gets_its_timeout_reset_by_progress() {
    let (engine, _out, _connection) = setup();
    let s = Duration::from_secs(1);
    let (first, _a) = with_token(&engine, 1, RequestOptions::new());
    let (second, _b) = with_token(
        &engine,
        2,
        RequestOptions::new()
            .timeout(10 * s)
            .reset_timeout_on_progress(100 * s),
    );
    answer(&engine, 1);
    first.await.unwrap();
    let waiting = tokio::spawn(second);
    for n in 0..5 {
        tokio::time::sleep(8 * s).await;
        progress(&engine, n);
    }
    // 40 s in, well past the 10 s base timeout, the request still waits.
    tokio::task::yield_now().await;
    assert!(!waiting.is_finished());
    answer(&engine, 2);
    let outcome: Result<_, TransportError> = waiting.await.unwrap();
    outcome.unwrap();
}
