//! Cancellation: by token, by dropping the future, not after the answer,
//! and not on the wire with `no_wire_cancel`.

use mcp_protocol::methods::INITIALIZE;
use mcp_transport::{CancellationToken, RequestOptions, TransportError};
use serde_json::json;
use tokio::time::sleep;

use super::conn::{Conn, Ctx, complete, joined, spawn};
use super::{Checked, Verdict, peerless_part};

/// A request whose token was cancelled before it was made ends with
/// `Cancelled`; this part needs no peer.
async fn cancelled_before(c: &mut Conn, id: i64, method: &str, options: RequestOptions) -> Checked {
    let token = CancellationToken::new();
    token.cancel();
    let f = c.request_with(id, method, None, options.cancellation(token));
    let got = c.outcome(f, 5, "a request with a cancelled token").await?;
    ensure!(
        matches!(got, Err(TransportError::Cancelled)),
        "a request whose token was already cancelled gave {got:?}"
    );
    Ok(())
}

pub(super) async fn cancel_by_token(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    if c.peer.is_none() {
        cancelled_before(&mut c, 2, "contract/slow", RequestOptions::new()).await?;
        c.end().await;
        return Err(peerless_part(
            "the check of a token cancelled before the request",
        ));
    }
    let token = CancellationToken::new();
    let h = spawn(c.request_with(
        1,
        "contract/slow",
        None,
        RequestOptions::new().cancellation(token.clone()),
    ));
    c.recv_request(1, "contract/slow").await?;
    token.cancel();
    let got = c.outcome(joined(h), 5, "the cancelled request").await?;
    ensure!(
        matches!(got, Err(TransportError::Cancelled)),
        "expected Cancelled, got {got:?}"
    );
    c.recv_cancel(1).await?;
    // A token cancelled before the request is sent cancels it too.
    cancelled_before(&mut c, 2, "contract/slow", RequestOptions::new()).await?;
    c.end().await;
    Ok(())
}

pub(super) async fn drop_sends_cancel(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    let f = c.request(1, "contract/slow", None);
    c.recv_request(1, "contract/slow").await?;
    drop(f);
    c.recv_cancel(1).await?;
    let h = spawn(c.request(2, "contract/slow", None));
    c.recv_request(2, "contract/slow").await?;
    sleep(c.u(1)).await;
    h.abort();
    c.recv_cancel(2).await?;
    c.end().await;
    Ok(())
}

pub(super) async fn no_cancel_after_answer(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    let token = CancellationToken::new();
    let f = c.request_with(
        1,
        "contract/quick",
        None,
        RequestOptions::new().cancellation(token.clone()),
    );
    c.recv_request(1, "contract/quick").await?;
    c.answer(1, json!({})).await?;
    c.expect_result(f, complete(json!({})), "request 1").await?;
    token.cancel();
    c.expect_quiet("for a token cancelled after the answer")
        .await?;

    // Answered but never polled, then dropped.
    let unpolled = c.request(2, "contract/quick", None);
    c.recv_request(2, "contract/quick").await?;
    c.answer(2, json!({})).await?;
    // A round trip behind it proves the answer was read.
    let f = c.request(3, "contract/quick", None);
    c.recv_request(3, "contract/quick").await?;
    c.answer(3, json!({})).await?;
    c.expect_result(f, complete(json!({})), "request 3").await?;
    // Where each answer comes on a stream of its own (an HTTP response),
    // a later round trip does not prove this answer was read: give its
    // stream a moment.
    sleep(std::time::Duration::from_millis(250)).await;
    drop(unpolled);
    c.expect_quiet("for a dropped future whose answer had arrived")
        .await?;
    c.end().await;
    Ok(())
}

pub(super) async fn no_wire_cancel(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    if c.peer.is_none() {
        let options = RequestOptions::new().no_wire_cancel();
        cancelled_before(&mut c, 4, INITIALIZE, options).await?;
        c.end().await;
        return Err(peerless_part(
            "the check of a token cancelled before a request with no_wire_cancel",
        ));
    }
    let token = CancellationToken::new();
    let options = RequestOptions::new()
        .no_wire_cancel()
        .cancellation(token.clone());
    let h = spawn(c.request_with(1, INITIALIZE, None, options));
    c.recv_request(1, INITIALIZE).await?;
    token.cancel();
    let got = c.outcome(joined(h), 5, "the cancelled request").await?;
    ensure!(
        matches!(got, Err(TransportError::Cancelled)),
        "expected Cancelled, got {got:?}"
    );
    let f = c.request_with(2, INITIALIZE, None, RequestOptions::new().no_wire_cancel());
    c.recv_request(2, INITIALIZE).await?;
    drop(f);
    let f = c.request_with(
        3,
        INITIALIZE,
        None,
        RequestOptions::new().no_wire_cancel().timeout(c.u(5)),
    );
    c.recv_request(3, INITIALIZE).await?;
    let got = c.outcome(f, 30, "the request with a timeout").await?;
    ensure!(
        matches!(got, Err(TransportError::Timeout { .. })),
        "expected Timeout, got {got:?}"
    );
    c.expect_quiet("for requests with no_wire_cancel").await?;
    // Last, as the request itself may reach the peer.
    cancelled_before(
        &mut c,
        4,
        INITIALIZE,
        RequestOptions::new().no_wire_cancel(),
    )
    .await?;
    c.end().await;
    Ok(())
}
