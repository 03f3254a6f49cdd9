//! A malformed answer whose id can be read fails its request at once with
//! `TransportError::Malformed`; a malformed request of the server's is
//! answered `-32600` and leaves our request with the same id alone.
//!
//! On tokio's paused clock: "at once" means no time passed at all, while
//! each request would otherwise wait a minute for its timeout.

use std::time::Duration;

use mcp_protocol::error_codes::INVALID_REQUEST;
use mcp_protocol::{Inbound, Message, Request, Response};
use mcp_transport::{
    ConnectionHandlers, Engine, Outbound, OutboundReceiver, RequestOptions, ResponseFuture,
    Transport, TransportError,
};
use serde_json::json;
use tokio::time::Instant;

const MINUTE: Duration = Duration::from_secs(60);

/// What a line-based reader does with one line.
fn feed(engine: &Engine, line: &str) {
    match Inbound::parse(line.as_bytes()) {
        Ok(inbound) => engine.receive_inbound(inbound),
        Err(e) => engine.receive_malformed(e),
    }
}

fn call(engine: &Engine, id: i64) -> ResponseFuture {
    engine.request(
        Request::new(id, "tools/call", None),
        RequestOptions::new().timeout(MINUTE),
    )
}

/// Runs `future`, returning its outcome and how long it took.
async fn timed(future: ResponseFuture) -> (Result<serde_json::Value, TransportError>, Duration) {
    let start = Instant::now();
    let outcome = future.await;
    (outcome, start.elapsed())
}

fn assert_malformed_at_once(got: (Result<serde_json::Value, TransportError>, Duration)) {
    let (outcome, took) = got;
    assert!(
        matches!(outcome, Err(TransportError::Malformed { .. })),
        "expected Malformed, got {outcome:?} after {took:?}"
    );
    assert_eq!(took, Duration::ZERO, "the request waited for its timeout");
}

fn drain(out: &mut OutboundReceiver) -> Vec<Message> {
    std::iter::from_fn(|| out.try_recv())
        .map(Outbound::into_message)
        .collect()
}

#[tokio::test(start_paused = true)]
async fn an_answer_with_both_result_and_error_fails_its_request_at_once() {
    let (engine, _out) = Engine::new(ConnectionHandlers::discard());
    let f = call(&engine, 1);
    feed(
        &engine,
        r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":-32000,"message":"both"}}"#,
    );
    assert_malformed_at_once(timed(f).await);
    assert_eq!(engine.pending_count(), 0);
    assert!(
        engine.is_alive(),
        "one bad answer does not end the connection"
    );
}

#[tokio::test(start_paused = true)]
async fn an_answer_with_a_bad_error_member_fails_its_request_at_once_and_says_why() {
    let (engine, _out) = Engine::new(ConnectionHandlers::discard());
    let f = call(&engine, 7);
    feed(
        &engine,
        r#"{"jsonrpc":"2.0","id":7,"error":{"code":"not a number","message":"x"}}"#,
    );
    let (outcome, took) = timed(f).await;
    assert_eq!(took, Duration::ZERO);
    match outcome {
        Err(TransportError::Malformed { detail }) => {
            assert!(
                detail.contains("error"),
                "the detail names the fault: {detail}"
            )
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_malformed_answer_inside_a_batch_fails_only_its_request() {
    let (engine, _out) = Engine::new(ConnectionHandlers::discard());
    let bad = call(&engine, 1);
    let good = call(&engine, 2);
    feed(
        &engine,
        r#"[{"jsonrpc":"1.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{"ok":true}}]"#,
    );
    assert_malformed_at_once(timed(bad).await);
    assert_eq!(good.await.unwrap()["ok"], true);
}

#[tokio::test(start_paused = true)]
async fn a_malformed_server_request_is_answered_invalid_request_and_spares_our_request() {
    let (engine, mut out) = Engine::new(ConnectionHandlers::discard());
    let ours = call(&engine, 1);
    assert!(matches!(&drain(&mut out)[..], [Message::Request(_)]));
    // The server's request 1 (its own id space) with params that are
    // neither an object nor an array.
    feed(
        &engine,
        r#"{"jsonrpc":"2.0","id":1,"method":"roots/list","params":"oops"}"#,
    );
    match &drain(&mut out)[..] {
        [Message::Error(e)] => {
            assert_eq!(e.id, Some(1.into()));
            assert_eq!(e.error.code, INVALID_REQUEST);
        }
        other => panic!("expected one -32600 answer on the wire, got {other:?}"),
    }
    assert_eq!(engine.pending_count(), 1, "our request 1 was failed");
    engine.receive(Message::Response(Response {
        id: 1.into(),
        result: json!({ "mine": true }),
    }));
    assert_eq!(ours.await.unwrap()["mine"], true);
}

#[tokio::test(start_paused = true)]
async fn a_malformed_answer_for_no_pending_request_changes_nothing() {
    let (engine, mut out) = Engine::new(ConnectionHandlers::discard());
    let f = call(&engine, 1);
    drain(&mut out);
    feed(
        &engine,
        r#"{"jsonrpc":"2.0","id":99,"result":{},"error":{}}"#,
    );
    assert!(drain(&mut out).is_empty(), "nothing is sent for an answer");
    assert_eq!(engine.pending_count(), 1);
    engine.receive(Message::Response(Response {
        id: 1.into(),
        result: json!({}),
    }));
    f.await.unwrap();
}
