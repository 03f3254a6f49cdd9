//! The connection's life: one ordered queue, the peer's death, close.

use mcp_protocol::methods::NOTIFICATION_INITIALIZED;
use mcp_protocol::{Message, Notification, RequestId};
use mcp_transport::{RequestOptions, TransportError};
use serde_json::{Value, json};
use tokio::time::{Instant, sleep, timeout};

use super::conn::{Conn, Ctx, complete, joined, show, spawn};
use super::{Checked, Verdict, fail, peerless_part};
use crate::{DIE_CODE, DIE_STDERR};

pub(super) async fn ordering(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    let notify = |c: &Conn, n: u64| {
        c.transport
            .notify(Notification::new(
                NOTIFICATION_INITIALIZED,
                Some(json!({ "n": n })),
            ))
            .map_err(|e| fail(format!("notify failed: {e}")))
    };
    notify(&c, 1)?;
    let f1 = c.request(1, "contract/first", None);
    notify(&c, 2)?;
    let f2 = c.request(2, "contract/second", None);
    notify(&c, 3)?;
    for (k, expect_request) in [(1, false), (1, true), (2, false), (2, true), (3, false)] {
        let m = c.recv("the next message in order").await?;
        let ok = match (&m, expect_request) {
            (Message::Notification(n), false) => n.params == Some(json!({ "n": k })),
            (Message::Request(r), true) => r.id == RequestId::Number(k),
            _ => false,
        };
        let expected = if expect_request {
            format!("request {k}")
        } else {
            format!("notification {k}")
        };
        ensure!(
            ok,
            "out of order: expected {expected} next, the peer saw {}",
            show(&m)
        );
    }
    c.answer(1, json!({})).await?;
    c.answer(2, json!({})).await?;
    c.expect_result(f1, complete(json!({})), "request 1")
        .await?;
    c.expect_result(f2, complete(json!({})), "request 2")
        .await?;
    c.end().await;
    Ok(())
}

pub(super) async fn peer_death(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    ensure!(c.transport.is_alive(), "a new transport is not alive");
    let a = spawn(c.request(1, "contract/slow", None));
    let b = spawn(c.request_with(
        2,
        "contract/slow",
        None,
        RequestOptions::new().timeout(c.u(200)),
    ));
    c.recv_request(1, "contract/slow").await?;
    c.recv_request(2, "contract/slow").await?;
    c.peer()?.die().await;
    let expect = Expected {
        exit: c.reports_exit_status,
        stderr: c.reports_stderr_tail,
    };
    for (id, h) in [(1, a), (2, b)] {
        let got = c
            .outcome(joined(h), 30, &format!("pending request {id}"))
            .await?;
        check_gone(&got, &format!("pending request {id}"), expect)?;
    }
    let deadline = Instant::now() + c.u(30);
    while c.transport.is_alive() && Instant::now() < deadline {
        sleep(c.u(1) / 10).await;
    }
    ensure!(
        !c.transport.is_alive(),
        "is_alive is still true after the peer died"
    );
    let got = c
        .outcome(c.request(3, "contract/later", None), 10, "a later request")
        .await?;
    check_gone(&got, "a request after the death", expect)?;
    c.end().await;
    Ok(())
}

/// What the harness says the transport can know of its peer's death.
#[derive(Clone, Copy)]
struct Expected {
    exit: bool,
    stderr: bool,
}

/// The error must be `ServerGone`; its exit status and stderr tail must be
/// those of the peer's death ([`DIE_CODE`], [`DIE_STDERR`]) when given, and
/// must be given when the harness says the transport can know them.
fn check_gone(got: &Result<Value, TransportError>, what: &str, expect: Expected) -> Checked {
    let Err(TransportError::ServerGone(info)) = got else {
        return Err(fail(format!("{what}: expected ServerGone, got {got:?}")));
    };
    match &info.exit {
        Some(exit) => ensure!(
            exit.code == Some(DIE_CODE) || (!expect.exit && exit.code.is_none()),
            "{what}: the server exited with code {DIE_CODE}, ServerGone says {exit}"
        ),
        None => ensure!(
            !expect.exit,
            "{what}: the transport runs the server's process, but ServerGone has no exit \
             status (the server exited with code {DIE_CODE}): {info}"
        ),
    }
    match &info.stderr_tail {
        Some(tail) => ensure!(
            tail.contains(DIE_STDERR),
            "{what}: the server's stderr ended {DIE_STDERR:?}, ServerGone's tail is {tail:?}"
        ),
        None => ensure!(
            !expect.stderr,
            "{what}: the transport captures the server's stderr, but ServerGone has no stderr \
             tail (the server's last words were {DIE_STDERR:?}): {info}"
        ),
    }
    Ok(())
}

pub(super) async fn close_rule(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    ensure!(c.transport.is_alive(), "a new transport is not alive");
    c.transport
        .notify(Notification::new(NOTIFICATION_INITIALIZED, None))
        .map_err(|e| fail(format!("notify on a live transport failed: {e}")))?;
    let pending = if c.peer.is_some() {
        c.recv("the notification").await?;
        let h = spawn(c.request(1, "contract/slow", None));
        c.recv_request(1, "contract/slow").await?;
        Some(h)
    } else {
        None
    };
    let within = c.u(20);
    timeout(within, c.transport.close())
        .await
        .map_err(|_| fail(format!("close did not finish within {within:?}")))?;
    if let Some(h) = pending {
        let got = c.outcome(joined(h), 10, "the pending request").await?;
        ensure!(
            matches!(got, Err(TransportError::Closed)),
            "a pending request got {got:?} at close, not Closed"
        );
    }
    ensure!(!c.transport.is_alive(), "is_alive is true after close");
    let got = c
        .outcome(
            c.request(2, "contract/later", None),
            10,
            "a request after close",
        )
        .await?;
    ensure!(
        matches!(got, Err(TransportError::Closed)),
        "a request after close got {got:?}, not Closed"
    );
    let sent = c
        .transport
        .notify(Notification::new("notifications/late", None));
    ensure!(
        matches!(sent, Err(TransportError::Closed)),
        "a notification after close gave {sent:?}, not Err(Closed)"
    );
    timeout(within, c.transport.close())
        .await
        .map_err(|_| fail(format!("a second close did not finish within {within:?}")))?;
    let peerless = c.peer.is_none();
    c.end().await;
    if peerless {
        return Err(peerless_part(
            "the check of close without a pending request (a pending request needs a peer)",
        ));
    }
    Ok(())
}
