//! Ten thousand requests that time out, are cancelled or are dropped leave
//! nothing behind in the pending table.

use std::time::Duration;

use mcp_protocol::{Message, Request, Response};
use mcp_transport::{
    CancellationToken, ConnectionHandlers, RequestOptions, Transport, TransportError,
};
use mcp_transport_contract::{Peer, memory_harness};
use serde_json::json;

#[tokio::test(start_paused = true)]
async fn ten_thousand_abandoned_requests_leave_no_entry() {
    const N: i64 = 10_000;
    let (engine, mut peer) = memory_harness(ConnectionHandlers::discard());
    let mut timed_out = Vec::new();
    let mut cancelled = Vec::new();
    let mut tokens = Vec::new();
    for i in 0..N {
        let request = Request::new(i, "contract/abandoned", None);
        match i % 3 {
            0 => timed_out.push(tokio::spawn(engine.request(
                request,
                RequestOptions::new().timeout(Duration::from_millis(10 + (i % 50) as u64)),
            ))),
            1 => {
                let token = CancellationToken::new();
                cancelled.push(tokio::spawn(
                    engine.request(request, RequestOptions::new().cancellation(token.clone())),
                ));
                tokens.push(token);
            }
            _ => {
                let future = engine.request(request, RequestOptions::new());
                if i % 2 == 0 {
                    drop(future); // never polled
                } else {
                    let handle = tokio::spawn(future);
                    tokio::task::yield_now().await;
                    handle.abort(); // dropped while pending
                }
            }
        }
    }
    for token in &tokens {
        token.cancel();
    }
    for h in timed_out {
        assert!(matches!(
            h.await.unwrap(),
            Err(TransportError::Timeout { .. })
        ));
    }
    for h in cancelled {
        assert_eq!(h.await.unwrap(), Err(TransportError::Cancelled));
    }
    tokio::task::yield_now().await;
    assert_eq!(engine.pending_count(), 0);

    // The peer read nothing meanwhile, so every request was given up while
    // still in the outbound queue: each was taken out of it, and no cancel
    // was sent for a request the server never saw.
    let sent = peer.sent();
    let requests = sent
        .iter()
        .filter(|m| matches!(m, Message::Request(_)))
        .count();
    let cancels = sent
        .iter()
        .filter(|m| m.method() == Some("notifications/cancelled"))
        .count();
    assert_eq!((requests, cancels), (0, 0));

    // Late answers to all of them are ignored, and the engine still works.
    for i in 0..N {
        peer.send(Message::Response(Response {
            id: i.into(),
            result: json!({}),
        }))
        .await;
    }
    let future = engine.request(Request::new(N, "ping", None), RequestOptions::new());
    peer.send(Message::Response(Response {
        id: N.into(),
        result: json!({}),
    }))
    .await;
    assert_eq!(future.await.unwrap(), json!({ "resultType": "complete" }));
    assert_eq!(engine.pending_count(), 0);
}
