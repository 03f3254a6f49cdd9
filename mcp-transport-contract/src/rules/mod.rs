//! The rules, one function each, grouped by concept:
//!
//! - [`correlation`]: ids, result normalization, JSON-RPC errors, duplicate
//!   ids, a thousand concurrent requests.
//! - [`timing`]: timeouts, resets on progress, the hard maximum.
//! - [`cancellation`]: the token, dropping the future, after the answer,
//!   `no_wire_cancel`.
//! - [`lifecycle`]: ordering, the peer's death, close.
//! - [`routing`]: inbound notifications and their listeners, malformed
//!   lines.
//! - [`server_requests`](mod@server_requests): requests from the server and their answers.
//!
//! [`RULES`] lists them in the order they run; [`conn`] holds the helpers
//! the rules share.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::time::timeout;

use super::{Outcome, PeerFactory};

// Defined before the rule modules, which use it.
macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(Verdict::Fail(format!($($fmt)+)));
        }
    };
}

mod cancellation;
mod conn;
mod correlation;
mod lifecycle;
mod routing;
mod server_requests;
mod timing;

use cancellation::{cancel_by_token, drop_sends_cancel, no_cancel_after_answer, no_wire_cancel};
use conn::Ctx;
use correlation::{
    duplicate_id_refused, ids_not_renumbered, result_normalized, rpc_error_verbatim,
    thousand_concurrent,
};
use lifecycle::{close_rule, ordering, peer_death};
use routing::{
    listeners_cannot_block, malformed_line_skipped, notification_routing, server_speaks_first,
};
use server_requests::{server_requests, unhandled_server_request};
use timing::{hard_maximum, timeout_resets_on_progress, timeout_rule};

/// The suite's own notification, which no protocol method shares: the
/// peer sends it to mark the end of what a listener should have seen, and
/// `expect_quiet` has the transport send it.
const SENTINEL: &str = "notifications/contract/sentinel";

pub(super) struct Rule {
    pub(super) name: &'static str,
    pub(super) summary: &'static str,
    run: fn(Ctx) -> BoxFuture<'static, Checked>,
}

macro_rules! rule {
    ($name:literal, $summary:literal, $f:ident) => {
        Rule {
            name: $name,
            summary: $summary,
            run: |ctx| Box::pin($f(ctx)),
        }
    };
}

pub(super) const RULES: &[Rule] = &[
    rule!(
        "ids_not_renumbered",
        "the peer sees the id the client chose (numbers and strings) and answers correlate on it",
        ids_not_renumbered
    ),
    rule!(
        "result_normalized",
        "the future yields the result member, an absent resultType defaulted to \"complete\"",
        result_normalized
    ),
    rule!(
        "rpc_error_verbatim",
        "a JSON-RPC error answer is Rpc with code, message and data verbatim",
        rpc_error_verbatim
    ),
    rule!(
        "timeout",
        "a timeout gives Timeout on time (at most 3 units late), sends the wire cancel, and forgets the request",
        timeout_rule
    ),
    rule!(
        "timeout_resets_on_progress",
        "progress restarts the timeout only when the options ask for it",
        timeout_resets_on_progress
    ),
    rule!(
        "hard_maximum",
        "the hard maximum holds (at most 3 units late) however much progress arrives",
        hard_maximum
    ),
    rule!(
        "cancel_by_token",
        "cancelling the token gives Cancelled at once and sends the wire cancel",
        cancel_by_token
    ),
    rule!(
        "drop_sends_cancel",
        "dropping the future (polled or not) sends the wire cancel",
        drop_sends_cancel
    ),
    rule!(
        "no_cancel_after_answer",
        "a cancel or drop after the answer arrived sends nothing",
        no_cancel_after_answer
    ),
    rule!(
        "no_wire_cancel",
        "with no_wire_cancel, cancel, drop and timeout send nothing",
        no_wire_cancel
    ),
    rule!(
        "ordering",
        "request and notify share one ordered queue",
        ordering
    ),
    rule!(
        "duplicate_id_refused",
        "an id already in flight is refused with DuplicateId and not sent",
        duplicate_id_refused
    ),
    rule!(
        "peer_death",
        "the peer dying fails pending and later requests with ServerGone, with the exit status and stderr tail where the transport can know them; is_alive turns false",
        peer_death
    ),
    rule!(
        "close",
        "close is idempotent and bounded; pending and later requests and notifications get Closed",
        close_rule
    ),
    rule!(
        "server_speaks_first",
        "a notification sent before any request reaches the connection listener",
        server_speaks_first
    ),
    rule!(
        "notification_routing",
        "notifications tied to a live request (progress token, subscription id) reach its listener, others the connection's, never a result",
        notification_routing
    ),
    rule!(
        "listeners_cannot_block",
        "a listener that panics (it is shown to run) or is never read holds up neither other requests nor later notifications",
        listeners_cannot_block
    ),
    rule!(
        "server_requests",
        "server requests reach the handler concurrently, answers go back, an inbound cancel aborts the handler",
        server_requests
    ),
    rule!(
        "unhandled_server_request",
        "without a handler a server request is answered -32601",
        unhandled_server_request
    ),
    rule!(
        "thousand_concurrent",
        "a thousand concurrent requests answered out of order all correlate",
        thousand_concurrent
    ),
    rule!(
        "malformed_line_skipped",
        "a malformed line is skipped and the next answer still correlates",
        malformed_line_skipped
    ),
];

/// Runs one rule on its own task, so a panic becomes a failure, bounded
/// in time.
pub(super) async fn run_one(rule: &Rule, factory: Arc<dyn PeerFactory>, unit: Duration) -> Outcome {
    let ctx = Ctx { factory, unit };
    let budget = unit * 400;
    let task = tokio::spawn((rule.run)(ctx));
    let abort = task.abort_handle();
    match timeout(budget, task).await {
        Ok(Ok(Ok(()))) => Outcome::Passed,
        Ok(Ok(Err(Verdict::Fail(why)))) => Outcome::Failed(why),
        Ok(Ok(Err(Verdict::NotApplicable(why)))) => Outcome::NotApplicable(why),
        Ok(Ok(Err(Verdict::PassedInPart(why)))) => Outcome::PassedInPart(why),
        Ok(Err(join)) => match join.try_into_panic() {
            Ok(payload) => Outcome::Failed(format!("panicked: {}", panic_text(&payload))),
            Err(e) => Outcome::Failed(format!("the rule's task failed: {e}")),
        },
        Err(_) => {
            abort.abort();
            Outcome::Failed(format!(
                "did not finish within {budget:?} (a hang: an answer or close that never came)"
            ))
        }
    }
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a non-text panic)".to_owned()
    }
}

enum Verdict {
    Fail(String),
    NotApplicable(String),
    /// The parts of the rule that need no peer passed; the rest did not
    /// run, for this reason.
    PassedInPart(String),
}

type Checked = Result<(), Verdict>;

fn fail(why: impl Into<String>) -> Verdict {
    Verdict::Fail(why.into())
}

fn no_peer() -> Verdict {
    Verdict::NotApplicable("the harness has no peer".into())
}

/// What a peerless rule reports once its peerless part passed.
fn peerless_part(what_ran: &str) -> Verdict {
    Verdict::PassedInPart(format!(
        "the harness has no peer: only {what_ran} ran, and passed"
    ))
}
