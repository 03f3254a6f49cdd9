//! Timing: timeouts, their resets on progress, and the hard maximum.

use std::time::Duration;

use mcp_protocol::methods::NOTIFICATION_PROGRESS as PROGRESS;
use mcp_transport::{RequestOptions, ResponseFuture, TransportError};
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep};

use super::conn::{Conn, Ctx, complete, joined, progress, spawn, with_token};
use super::{Checked, Verdict, fail, peerless_part};

/// How late, in units, a timeout may end its request: the slack a busy
/// machine adds between a timer's deadline and the task that awaits it
/// seeing the error (a timer wheel's tick, a task switch or two). Three
/// units is 300 ms on the real clock, far more than that slack, and 30%
/// of the 10-unit timeouts the rules set: a transport whose timeout ends
/// the request any later than that does not keep the limit it was given.
/// Under a paused clock a timeout ends its request exactly on time.
const LATE_UNITS: u32 = 3;

type Timed = JoinHandle<(Result<Value, TransportError>, Instant)>;

/// Runs a request on a task of its own and notes when its outcome came,
/// so a rule that polls now and then still measures the outcome's time.
fn spawn_timed(future: ResponseFuture) -> Timed {
    tokio::spawn(async move {
        let outcome = future.await;
        (outcome, Instant::now())
    })
}

async fn joined_timed(handle: Timed) -> (Result<Value, TransportError>, Instant) {
    match handle.await {
        Ok(r) => r,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

/// The part of a timing rule that needs no peer: whatever the transport
/// does with it, a request with these options ends (with its answer or
/// `Timeout`) by its limit, never later.
async fn ends_by(c: &mut Conn, options: RequestOptions, limit: Duration) -> Checked {
    let start = Instant::now();
    let h = spawn_timed(c.request_with(1, "contract/slow", None, options));
    let (got, ended) = c
        .outcome(joined_timed(h), 40, "a request with a limit")
        .await?;
    let elapsed = ended - start;
    ensure!(
        matches!(got, Ok(_) | Err(TransportError::Timeout { .. })),
        "a request with a limit of {limit:?} gave {got:?}, neither an answer nor Timeout"
    );
    let late = c.u(LATE_UNITS);
    ensure!(
        elapsed <= limit + late,
        "a request with a limit of {limit:?} ended after {elapsed:?} (allowed: up to {late:?} late)"
    );
    Ok(())
}

pub(super) async fn timeout_rule(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    let limit = c.u(10);
    if c.peer.is_none() {
        ends_by(&mut c, RequestOptions::new().timeout(limit), limit).await?;
        c.end().await;
        return Err(peerless_part(
            "the check that a request ends by its timeout",
        ));
    }
    let start = Instant::now();
    let h = spawn_timed(c.request_with(
        1,
        "contract/slow",
        None,
        RequestOptions::new().timeout(limit),
    ));
    c.recv_request(1, "contract/slow").await?;
    let (got, ended) = c
        .outcome(joined_timed(h), 40, "the request with a timeout")
        .await?;
    let elapsed = ended - start;
    match &got {
        Err(TransportError::Timeout { method, after }) => {
            ensure!(
                method == "contract/slow",
                "Timeout names the method {method:?}"
            );
            ensure!(
                *after == limit,
                "Timeout says {after:?}, the limit was {limit:?}"
            );
        }
        other => return Err(fail(format!("expected Timeout, got {other:?}"))),
    }
    let late = c.u(LATE_UNITS);
    ensure!(
        elapsed >= limit && elapsed <= limit + late,
        "the timeout of {limit:?} ended the request after {elapsed:?} (allowed: up to {late:?} late)"
    );
    c.recv_cancel(1).await?;
    // The late answer must be ignored, and the id free again.
    c.answer(1, json!({ "late": true })).await?;
    let f = c.request(2, "contract/next", None);
    c.recv_request(2, "contract/next").await?;
    c.answer(2, json!({ "n": 2 })).await?;
    c.expect_result(
        f,
        complete(json!({ "n": 2 })),
        "the request after a timeout",
    )
    .await?;
    let f = c.request(1, "contract/again", None);
    c.recv_request(1, "contract/again").await?;
    c.answer(1, json!({ "again": true })).await?;
    c.expect_result(
        f,
        complete(json!({ "again": true })),
        "a new request reusing the timed-out id",
    )
    .await?;
    c.end().await;
    Ok(())
}

pub(super) async fn timeout_resets_on_progress(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    c.peer()?;
    // With resets: progress every 5 units keeps a 10-unit timeout alive.
    let options = RequestOptions::new()
        .timeout(c.u(10))
        .reset_timeout_on_progress(c.u(200));
    let h = spawn(c.request_with(1, "contract/long", with_token("p-1"), options));
    c.recv_request(1, "contract/long").await?;
    for k in 1..=3 {
        sleep(c.u(5)).await;
        ensure!(
            !h.is_finished(),
            "the request ended after {} units although progress arrived every 5 units: {:?}",
            5 * k,
            joined(h).await
        );
        c.notify_from_peer(PROGRESS, progress("p-1", k)).await?;
    }
    sleep(c.u(5)).await;
    ensure!(
        !h.is_finished(),
        "the request ended 20 units in (the timeout is 10), 5 units after the last progress: {:?}",
        joined(h).await
    );
    c.answer(1, json!({ "done": true })).await?;
    c.expect_result(
        joined(h),
        complete(json!({ "done": true })),
        "the long request",
    )
    .await?;

    // Without: progress does not extend the timeout.
    let limit = c.u(10);
    let start = Instant::now();
    let h = spawn_timed(c.request_with(
        2,
        "contract/long",
        with_token("p-2"),
        RequestOptions::new().timeout(limit),
    ));
    c.recv_request(2, "contract/long").await?;
    sleep(c.u(6)).await;
    c.notify_from_peer(PROGRESS, progress("p-2", 1)).await?;
    let (got, ended) = c
        .outcome(joined_timed(h), 40, "the request without resets")
        .await?;
    let elapsed = ended - start;
    ensure!(
        matches!(got, Err(TransportError::Timeout { .. })),
        "expected Timeout without resets, got {got:?}"
    );
    ensure!(
        elapsed <= limit + c.u(LATE_UNITS),
        "without resets the timeout of {limit:?} fired after {elapsed:?}: progress extended it"
    );
    c.recv_cancel(2).await?;
    c.end().await;
    Ok(())
}

pub(super) async fn hard_maximum(ctx: Ctx) -> Checked {
    let mut c = ctx.connect_discard().await;
    let max = c.u(30);
    let options = RequestOptions::new()
        .timeout(c.u(10))
        .reset_timeout_on_progress(max);
    if c.peer.is_none() {
        ends_by(&mut c, options, max).await?;
        c.end().await;
        return Err(peerless_part(
            "the check that a request with resets ends by its hard maximum",
        ));
    }
    let start = Instant::now();
    let h = spawn_timed(c.request_with(1, "contract/endless", with_token("p-max"), options));
    c.recv_request(1, "contract/endless").await?;
    let mut k = 0;
    while !h.is_finished() && k < 20 {
        sleep(c.u(5)).await;
        k += 1;
        if !h.is_finished() {
            c.notify_from_peer(PROGRESS, progress("p-max", k)).await?;
        }
    }
    let (got, ended) = c
        .outcome(joined_timed(h), 20, "the endless request")
        .await?;
    let elapsed = ended - start;
    match &got {
        Err(TransportError::Timeout { after, .. }) => {
            ensure!(
                *after == max,
                "Timeout says {after:?}; the hard maximum was {max:?}"
            )
        }
        other => {
            return Err(fail(format!(
                "expected Timeout at the hard maximum, got {other:?}"
            )));
        }
    }
    let late = c.u(LATE_UNITS);
    ensure!(
        elapsed >= max && elapsed <= max + late,
        "the hard maximum of {max:?} ended the request after {elapsed:?} (allowed: up to {late:?} late)"
    );
    c.recv_cancel(1).await?;
    c.end().await;
    Ok(())
}
