//! Inbound traffic: notifications routed to the right listener from the
//! first message on, listeners that cannot block the read loop, and
//! malformed lines skipped.

use std::time::Duration;

use mcp_protocol::meta::{PROGRESS_TOKEN, SUBSCRIPTION_ID};
use mcp_protocol::methods::{
    NOTIFICATION_MESSAGE, NOTIFICATION_PROGRESS as PROGRESS, NOTIFICATION_PROMPTS_LIST_CHANGED,
    NOTIFICATION_RESOURCES_UPDATED, NOTIFICATION_TOOLS_LIST_CHANGED, SUBSCRIPTIONS_LISTEN,
    TOOLS_CALL, TOOLS_LIST,
};
use mcp_protocol::{Message, Notification};
use mcp_transport::{ConnectionHandlers, Listener, ListenerStream, RequestOptions};
use serde_json::json;
use tokio::time::Instant;

use super::conn::{Ctx, complete, progress, with_token};
use super::{Checked, SENTINEL, Verdict, fail};

/// The connection listener's notifications up to a sentinel: everything it
/// was given (a transport's own diagnostics are `TransportEvent`s on the
/// events listener, never notifications here).
async fn until_sentinel(
    stream: &mut ListenerStream,
    within: Duration,
) -> Result<Vec<Notification>, Verdict> {
    let mut seen = Vec::new();
    let deadline = Instant::now() + within;
    loop {
        let n = tokio::time::timeout_at(deadline, stream.recv())
            .await
            .map_err(|_| {
                fail(format!(
                    "the connection listener did not get the sentinel within {within:?}; it got {:?}",
                    methods(&seen)
                ))
            })?
            .ok_or_else(|| fail("the connection listener ended"))?;
        if n.method == SENTINEL {
            return Ok(seen);
        }
        seen.push(n);
    }
}

fn methods(ns: &[Notification]) -> Vec<&str> {
    ns.iter().map(|n| n.method.as_str()).collect()
}

pub(super) async fn server_speaks_first(ctx: Ctx) -> Checked {
    let (listener, mut stream) = Listener::channel(64);
    let mut c = ctx.connect(ConnectionHandlers::new(listener)).await;
    c.peer()?;
    c.notify_from_peer(NOTIFICATION_TOOLS_LIST_CHANGED, json!({}))
        .await?;
    c.notify_from_peer(SENTINEL, json!({})).await?;
    let seen = until_sentinel(&mut stream, c.u(30)).await?;
    ensure!(
        methods(&seen) == [NOTIFICATION_TOOLS_LIST_CHANGED],
        "the connection listener got {:?}",
        methods(&seen)
    );
    c.end().await;
    Ok(())
}

pub(super) async fn notification_routing(ctx: Ctx) -> Checked {
    let (listener, mut conn_stream) = Listener::channel(64);
    let mut c = ctx.connect(ConnectionHandlers::new(listener)).await;
    c.peer()?;
    let (la, mut a_stream) = Listener::channel(64);
    let (lb, mut b_stream) = Listener::channel(64);
    let fa = c.request_with(
        1,
        TOOLS_CALL,
        with_token("tok-1"),
        RequestOptions::new().listener(la),
    );
    let fb = c.request_with(
        "sub-2",
        SUBSCRIPTIONS_LISTEN,
        None,
        RequestOptions::new().listener(lb),
    );
    c.recv_request(1, TOOLS_CALL).await?;
    c.recv_request("sub-2", SUBSCRIPTIONS_LISTEN).await?;
    c.notify_from_peer(PROGRESS, progress("tok-1", 1)).await?;
    c.notify_from_peer(
        NOTIFICATION_MESSAGE,
        json!({ "level": "info", "data": "working", "_meta": { PROGRESS_TOKEN: "tok-1" } }),
    )
    .await?;
    c.notify_from_peer(
        NOTIFICATION_RESOURCES_UPDATED,
        json!({ "uri": "file:///a", "_meta": { SUBSCRIPTION_ID: "sub-2" } }),
    )
    .await?;
    c.notify_from_peer(NOTIFICATION_TOOLS_LIST_CHANGED, json!({}))
        .await?;
    c.notify_from_peer(
        NOTIFICATION_RESOURCES_UPDATED,
        json!({ "uri": "file:///b", "_meta": { SUBSCRIPTION_ID: "sub-unknown" } }),
    )
    .await?;
    c.notify_from_peer(PROGRESS, progress("tok-unknown", 1))
        .await?;
    c.answer(1, json!({ "a": 1 })).await?;
    c.answer("sub-2", json!({ "b": 2 })).await?;
    c.expect_result(
        fa,
        complete(json!({ "a": 1 })),
        "the request with a progress token",
    )
    .await?;
    c.expect_result(fb, complete(json!({ "b": 2 })), "the subscription request")
        .await?;
    // Progress for a finished request is dropped quietly.
    c.notify_from_peer(PROGRESS, progress("tok-1", 2)).await?;
    c.notify_from_peer(SENTINEL, json!({})).await?;

    let conn = until_sentinel(&mut conn_stream, c.u(30)).await?;
    let uri_b = conn
        .iter()
        .any(|n| n.params.as_ref().map(|p| &p["uri"]) == Some(&json!("file:///b")));
    ensure!(
        methods(&conn)
            == [
                NOTIFICATION_TOOLS_LIST_CHANGED,
                NOTIFICATION_RESOURCES_UPDATED
            ]
            && uri_b,
        "the connection listener got {:?}; expected list_changed and the update of an unknown subscription only",
        conn.iter()
            .map(|n| Message::from(n.clone()).to_value())
            .collect::<Vec<_>>()
    );
    let a: Vec<Notification> = std::iter::from_fn(|| a_stream.try_recv()).collect();
    ensure!(
        methods(&a) == [PROGRESS, NOTIFICATION_MESSAGE],
        "the request's listener got {:?}; expected its progress and its message",
        methods(&a)
    );
    ensure!(
        a[0].params.as_ref().map(|p| &p["progress"]) == Some(&json!(1)),
        "the request's listener got the progress {:?}",
        a[0].params
    );
    let b: Vec<Notification> = std::iter::from_fn(|| b_stream.try_recv()).collect();
    ensure!(
        methods(&b) == [NOTIFICATION_RESOURCES_UPDATED]
            && b[0].params.as_ref().map(|p| &p["uri"]) == Some(&json!("file:///a")),
        "the subscription's listener got {:?}",
        methods(&b)
    );
    c.end().await;
    Ok(())
}

pub(super) async fn listeners_cannot_block(ctx: Ctx) -> Checked {
    // The connection listener notes each notification it is given, and
    // panics on list_changed.
    let (seen_tx, mut seen) = tokio::sync::mpsc::unbounded_channel::<String>();
    let listener = Listener::from_fn(4, move |n| {
        let _ = seen_tx.send(n.method.clone());
        if n.method == NOTIFICATION_TOOLS_LIST_CHANGED {
            panic!(
                "a connection listener panics on purpose (the contract suite checks this is survived)"
            );
        }
    });
    let mut c = ctx.connect(ConnectionHandlers::new(listener)).await;
    c.peer()?;
    // A request listener whose queue is never read.
    let (blocked, _unread) = Listener::channel(1);
    let fa = c.request_with(
        1,
        TOOLS_CALL,
        with_token("tok-b"),
        RequestOptions::new().listener(blocked),
    );
    let fb = c.request(2, TOOLS_LIST, None);
    c.recv_request(1, TOOLS_CALL).await?;
    c.recv_request(2, TOOLS_LIST).await?;
    for k in 0..50 {
        c.notify_from_peer(PROGRESS, progress("tok-b", k)).await?;
    }
    // One panic is enough: request 3 below shows the read loop survived.
    c.notify_from_peer(NOTIFICATION_TOOLS_LIST_CHANGED, json!({}))
        .await?;
    c.answer(2, json!({ "b": 2 })).await?;
    c.answer(1, json!({ "a": 1 })).await?;
    c.expect_result(fb, complete(json!({ "b": 2 })), "the other request")
        .await?;
    c.expect_result(
        fa,
        complete(json!({ "a": 1 })),
        "the request with the unread listener",
    )
    .await?;
    let f = c.request(3, TOOLS_LIST, None);
    c.recv_request(3, TOOLS_LIST).await?;
    c.answer(3, json!({ "c": 3 })).await?;
    c.expect_result(f, complete(json!({ "c": 3 })), "a request after the panics")
        .await?;
    // The panicking listener ran, and notifications still reach the
    // connection after its panic.
    c.notify_from_peer(NOTIFICATION_PROMPTS_LIST_CHANGED, json!({}))
        .await?;
    c.notify_from_peer(SENTINEL, json!({})).await?;
    let mut methods = Vec::new();
    let deadline = Instant::now() + c.u(30);
    while methods.last().map(String::as_str) != Some(SENTINEL) {
        match tokio::time::timeout_at(deadline, seen.recv()).await {
            Ok(Some(m)) => methods.push(m),
            _ => break,
        }
    }
    ensure!(
        methods
            == [
                NOTIFICATION_TOOLS_LIST_CHANGED,
                NOTIFICATION_PROMPTS_LIST_CHANGED,
                SENTINEL
            ],
        "the connection listener (which panics on list_changed) was given {methods:?}; \
         expected the list_changed it panicked on, then the later notifications"
    );
    c.end().await;
    Ok(())
}

pub(super) async fn malformed_line_skipped(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    if !c.peer()?.can_send_raw() {
        return Err(Verdict::NotApplicable(
            "the peer cannot send raw bytes".into(),
        ));
    }
    let f = c.request(1, TOOLS_LIST, None);
    c.recv_request(1, TOOLS_LIST).await?;
    let lines: [&[u8]; 7] = [
        b"{not json",
        b"\"a string\"",
        b"[]",
        b"{\"jsonrpc\":\"2.0\"}",
        b"{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{}}",
        b"hello, this is a log line on stdout",
        b"[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}, 5]",
    ];
    for line in lines {
        c.peer()?.send_raw(line.to_vec()).await;
    }
    c.answer(1, json!({ "tools": [] })).await?;
    c.expect_result(
        f,
        complete(json!({ "tools": [] })),
        "the request answered after the bad lines",
    )
    .await?;
    let f = c.request(2, TOOLS_LIST, None);
    c.recv_request(2, TOOLS_LIST).await?;
    c.answer(2, json!({ "n": 2 })).await?;
    c.expect_result(f, complete(json!({ "n": 2 })), "a later request")
        .await?;
    ensure!(
        c.transport.is_alive(),
        "the transport died of malformed lines"
    );
    c.end().await;
    Ok(())
}
