//! Timers: the base timeout pauses while the client handles a server
//! request and resumes with what was left; the hard maximum never pauses;
//! progress restarts the base timer, paused or not.
//!
//! Every test runs on tokio's paused clock, so times are exact.

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use mcp_protocol::meta::PROGRESS_TOKEN;
use mcp_protocol::methods::{NOTIFICATION_CANCELLED, NOTIFICATION_PROGRESS, ROOTS_LIST};
use mcp_protocol::{ErrorObject, Message, Notification, Request};
use mcp_transport::{
    ConnectionHandlers, Engine, Outbound, OutboundReceiver, RequestOptions, ResponseFuture,
    Transport, TransportError,
};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::time::{Instant, sleep};

const S: Duration = Duration::from_secs(1);

fn engine() -> (Engine, OutboundReceiver) {
    Engine::new(ConnectionHandlers::discard())
}

/// Runs a request on a task, returning its outcome and when it came.
fn timed(
    future: ResponseFuture,
) -> tokio::task::JoinHandle<(Result<Value, TransportError>, Instant)> {
    tokio::spawn(async move {
        let outcome = future.await;
        (outcome, Instant::now())
    })
}

fn slow(id: i64, options: RequestOptions, engine: &Engine) -> ResponseFuture {
    let params = json!({ "_meta": { PROGRESS_TOKEN: format!("p-{id}") } });
    engine.request(Request::new(id, "test/slow", Some(params)), options)
}

fn progress(engine: &Engine, id: i64) {
    engine.receive(Message::Notification(Notification::new(
        NOTIFICATION_PROGRESS,
        Some(json!({ PROGRESS_TOKEN: format!("p-{id}"), "progress": 1 })),
    )));
}

fn timeout_after(outcome: &Result<Value, TransportError>) -> Duration {
    match outcome {
        Err(TransportError::Timeout { after, .. }) => *after,
        other => panic!("expected Timeout, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_pause_holds_the_base_timer_and_it_resumes_with_what_was_left() {
    let (engine, _out) = engine();
    let start = Instant::now();
    let h = timed(slow(1, RequestOptions::new().timeout(10 * S), &engine));
    sleep(4 * S).await;
    let pause = engine.pause_timers();
    sleep(20 * S).await;
    assert!(!h.is_finished(), "the timer ran while paused");
    drop(pause);
    let (outcome, ended) = h.await.unwrap();
    assert_eq!(timeout_after(&outcome), 10 * S);
    // 4 s before the pause, 20 s paused, the 6 s that were left.
    assert_eq!(ended - start, 30 * S);
}

#[tokio::test(start_paused = true)]
async fn the_hard_maximum_keeps_running_while_paused() {
    let (engine, _out) = engine();
    let start = Instant::now();
    let options = RequestOptions::new().timeout(10 * S).max_total(15 * S);
    let h = timed(slow(1, options, &engine));
    sleep(S).await;
    let _pause = engine.pause_timers();
    let (outcome, ended) = h.await.unwrap();
    assert_eq!(timeout_after(&outcome), 15 * S);
    assert_eq!(ended - start, 15 * S);
}

#[tokio::test(start_paused = true)]
async fn a_request_made_while_paused_starts_paused() {
    let (engine, _out) = engine();
    let pause = engine.pause_timers();
    let h = timed(slow(1, RequestOptions::new().timeout(5 * S), &engine));
    sleep(20 * S).await;
    assert!(!h.is_finished());
    let resumed = Instant::now();
    drop(pause);
    let (outcome, ended) = h.await.unwrap();
    assert_eq!(timeout_after(&outcome), 5 * S);
    assert_eq!(ended - resumed, 5 * S);
}

#[tokio::test(start_paused = true)]
async fn timers_resume_only_when_every_pause_ends() {
    let (engine, _out) = engine();
    let start = Instant::now();
    let h = timed(slow(1, RequestOptions::new().timeout(10 * S), &engine));
    sleep(2 * S).await;
    let first = engine.pause_timers();
    let second = engine.pause_timers();
    sleep(5 * S).await;
    drop(first);
    sleep(30 * S).await;
    assert!(!h.is_finished(), "one pause of two ended and the timer ran");
    drop(second);
    let (_, ended) = h.await.unwrap();
    assert_eq!(ended - start, (2 + 5 + 30 + 8) * S);
}

#[tokio::test(start_paused = true)]
async fn progress_while_paused_restarts_the_base_timer() {
    let (engine, _out) = engine();
    let start = Instant::now();
    let options = RequestOptions::new()
        .timeout(10 * S)
        .reset_timeout_on_progress(600 * S);
    let h = timed(slow(1, options, &engine));
    sleep(8 * S).await;
    let pause = engine.pause_timers();
    sleep(12 * S).await;
    progress(&engine, 1);
    sleep(10 * S).await;
    drop(pause);
    let (outcome, ended) = h.await.unwrap();
    assert_eq!(timeout_after(&outcome), 10 * S);
    // Resumed at 30 s with the whole 10 s the progress gave back (not the
    // 2 s that were left at the pause).
    assert_eq!(ended - start, 40 * S);
}

#[tokio::test(start_paused = true)]
async fn progress_restarts_a_running_timer_only_when_asked() {
    let (engine, _out) = engine();
    let start = Instant::now();
    let resets = RequestOptions::new()
        .timeout(10 * S)
        .reset_timeout_on_progress(600 * S);
    let with = timed(slow(1, resets, &engine));
    let without = timed(slow(2, RequestOptions::new().timeout(10 * S), &engine));
    sleep(7 * S).await;
    progress(&engine, 1);
    progress(&engine, 2);
    let (_, ended) = without.await.unwrap();
    assert_eq!(ended - start, 10 * S);
    let (_, ended) = with.await.unwrap();
    assert_eq!(ended - start, 17 * S);
}

#[tokio::test(start_paused = true)]
async fn progress_past_the_hard_maximum_ends_the_wait_there_and_says_so() {
    // The base timer, pushed on by progress, would run out at 34 s; the
    // hard maximum at 25 s comes first, and the error names it.
    let (engine, _out) = engine();
    let start = Instant::now();
    let options = RequestOptions::new()
        .timeout(10 * S)
        .reset_timeout_on_progress(25 * S);
    let h = timed(slow(1, options, &engine));
    for _ in 0..3 {
        sleep(8 * S).await;
        progress(&engine, 1);
    }
    let (outcome, ended) = h.await.unwrap();
    assert_eq!(timeout_after(&outcome), 25 * S);
    assert_eq!(ended - start, 25 * S);
    // And the other way round: the base timer first, the error names it.
    let h = timed(slow(
        2,
        RequestOptions::new().timeout(10 * S).max_total(25 * S),
        &engine,
    ));
    let (outcome, ended) = h.await.unwrap();
    assert_eq!(timeout_after(&outcome), 10 * S);
    assert_eq!(ended - start, 35 * S);
}

/// A server-request handler that waits until it is released.
struct Held(std::sync::Mutex<Option<oneshot::Receiver<()>>>);

impl mcp_transport::ServerRequestHandler for Held {
    fn handle(&self, _request: Request) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        let release = self.0.lock().unwrap().take().expect("one request");
        async move {
            let _ = release.await;
            Ok(json!({ "roots": [] }))
        }
        .boxed()
    }
}

#[tokio::test(start_paused = true)]
async fn a_running_server_request_pauses_the_timers_until_it_is_answered() {
    let (release, held) = oneshot::channel();
    let handlers = ConnectionHandlers::discard()
        .with_server_requests(Arc::new(Held(std::sync::Mutex::new(Some(held)))));
    let (engine, mut out) = Engine::new(handlers);
    let start = Instant::now();
    let h = timed(slow(1, RequestOptions::new().timeout(10 * S), &engine));
    sleep(2 * S).await;
    engine.receive(Message::Request(Request::new("s-1", ROOTS_LIST, None)));
    sleep(30 * S).await;
    assert!(!h.is_finished(), "the timer ran while the handler did");
    release.send(()).unwrap();
    let (outcome, ended) = h.await.unwrap();
    assert_eq!(timeout_after(&outcome), 10 * S);
    assert_eq!(ended - start, (2 + 30 + 8) * S);
    // The handler's answer went out.
    let sent: Vec<Message> = std::iter::from_fn(|| out.try_recv())
        .map(Outbound::into_message)
        .collect();
    assert!(
        sent.iter()
            .any(|m| matches!(m, Message::Response(r) if r.id == "s-1".into())),
        "{sent:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_server_request_the_server_cancels_resumes_the_timers() {
    let (_release, held) = oneshot::channel();
    let handlers = ConnectionHandlers::discard()
        .with_server_requests(Arc::new(Held(std::sync::Mutex::new(Some(held)))));
    let (engine, mut out) = Engine::new(handlers);
    let start = Instant::now();
    let h = timed(slow(1, RequestOptions::new().timeout(10 * S), &engine));
    sleep(2 * S).await;
    engine.receive(Message::Request(Request::new("s-1", ROOTS_LIST, None)));
    sleep(30 * S).await;
    assert!(!h.is_finished());
    engine.receive(Message::Notification(Notification::new(
        NOTIFICATION_CANCELLED,
        Some(json!({ "requestId": "s-1" })),
    )));
    let (outcome, ended) = h.await.unwrap();
    assert_eq!(timeout_after(&outcome), 10 * S);
    assert_eq!(ended - start, (2 + 30 + 8) * S);
    // The aborted handler's request gets no answer; the only thing sent
    // besides the request is its wire cancel at the timeout.
    let sent: Vec<Message> = std::iter::from_fn(|| out.try_recv())
        .map(Outbound::into_message)
        .collect();
    assert!(
        !sent.iter().any(|m| m.id() == Some(&"s-1".into())),
        "{sent:?}"
    );
}
