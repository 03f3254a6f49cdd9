//! Server-request handlers are capped per connection: one over
//! `ConnectionLimits::max_concurrent_server_requests` is answered at once
//! with a JSON-RPC error and never reaches the handler, and the read loop
//! goes on.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_protocol::methods::{NOTIFICATION_CANCELLED, ROOTS_LIST};
use mcp_protocol::{ErrorObject, Message, Notification, Request, Response};
use mcp_transport::{
    ConnectionHandlers, ConnectionLimits, Engine, Outbound, OutboundReceiver, RequestOptions,
    Transport,
};
use serde_json::{Value, json};

/// A handler that counts its calls and never answers.
fn blocking(
    calls: Arc<AtomicUsize>,
) -> impl Fn(Request) -> BoxFuture<'static, Result<Value, ErrorObject>> {
    move |_request| {
        calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(std::future::pending())
    }
}

fn capped(cap: usize, calls: Arc<AtomicUsize>) -> (Engine, OutboundReceiver) {
    let handlers = ConnectionHandlers::discard()
        .with_server_requests(Arc::new(blocking(calls)))
        .with_limits(ConnectionLimits::default().max_concurrent_server_requests(cap));
    Engine::new(handlers)
}

fn server_request(engine: &Engine, id: &str) {
    engine.receive(Message::Request(Request::new(id, ROOTS_LIST, None)));
}

fn drain(out: &mut OutboundReceiver) -> Vec<Message> {
    std::iter::from_fn(|| out.try_recv())
        .map(Outbound::into_message)
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_server_request_over_the_cap_is_refused_at_once_and_never_reaches_the_handler() {
    let calls = Arc::new(AtomicUsize::new(0));
    let (engine, mut out) = capped(2, calls.clone());
    let ours = engine.request(
        Request::new(1, "tools/call", None),
        RequestOptions::new().timeout(Duration::from_secs(60)),
    );
    drain(&mut out);

    server_request(&engine, "s-1");
    server_request(&engine, "s-2");
    server_request(&engine, "s-3");
    // The refusal is written by the read loop itself, before any task runs.
    match &drain(&mut out)[..] {
        [Message::Error(e)] => {
            assert_eq!(e.id, Some("s-3".into()));
            assert!(e.error.message.contains('2'), "{:?}", e.error.message);
        }
        other => panic!("expected one error answer to s-3, got {other:?}"),
    }
    tokio::task::yield_now().await;
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "the handler ran over the cap"
    );

    // The read loop keeps going: an answer to our request still arrives.
    engine.receive(Message::Response(Response {
        id: 1.into(),
        result: json!({ "ok": true }),
    }));
    assert_eq!(ours.await.unwrap()["ok"], true);

    // A handler the server cancels frees its place for the next request.
    engine.receive(Message::Notification(Notification::new(
        NOTIFICATION_CANCELLED,
        Some(json!({ "requestId": "s-1" })),
    )));
    server_request(&engine, "s-4");
    tokio::task::yield_now().await;
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert!(drain(&mut out).is_empty(), "s-4 was refused");
}
