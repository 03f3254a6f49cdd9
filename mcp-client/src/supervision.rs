//! A supervised connection: when the server dies (stdio) or the
//! connection ends (HTTP), the client connects again through its
//! connector, with capped, jittered exponential backoff and a restart
//! budget, and the same `Client` goes on.
//!
//! This file holds the supervisor's state: the restart budget, the
//! backoff and the server's `Retry-After`, and what a restart under way has
//! opened. What happens to calls is decided by the table of
//! [`after_attempt`](crate::call::after_attempt): a call made while the
//! connection is down waits for the restart (within its own timeout) and
//! goes out on the new connection; a call in flight when the server died
//! is sent again only when that is harmless (reads, lists, listens, tools
//! marked read-only or idempotent), and otherwise fails with
//! [`ErrorKind::MayHaveRun`]; so does a call
//! met by a 503, which a gateway may send after forwarding it. The restart
//! itself is the connection's renewal (`renewal.rs`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_transport::{ConnectionHandlers, Connector, Transport, TransportError};
use tokio::time::Instant;

use crate::error::{ClientError, ErrorKind};
use crate::restart_policy::RestartPolicy;
use crate::server_requests::NegotiatedRevision;

/// The state of a supervised connection.
pub(crate) struct Supervisor {
    policy: RestartPolicy,
    pub(crate) connector: Arc<dyn Connector>,
    pub(crate) handlers: ConnectionHandlers,
    pub(crate) negotiated: Arc<NegotiatedRevision>,
    /// When each recent restart began, for the budget.
    recent: Mutex<VecDeque<Instant>>,
    /// Set by `close`: no restart after it.
    stopped: AtomicBool,
    /// Told `true` by `close`, so that a restart waiting or connecting
    /// ends at once.
    stopping: tokio::sync::watch::Sender<bool>,
    /// Held while a restart runs, so that `close` can give it a moment to
    /// end before closing the connection.
    pub(crate) restarting: tokio::sync::Mutex<()>,
    /// What the attempt under way has opened: `close` closes them itself,
    /// since the restart runs in a caller's future, which may never be
    /// polled again.
    pub(crate) opened: Arc<Mutex<Vec<Arc<dyn Transport>>>>,
    /// When the server asked to be tried again (its `Retry-After`, cut to
    /// the policy's maximum), until a later attempt goes out.
    not_before: Mutex<Option<Instant>>,
    /// When the next attempt goes out. A point in time, kept here rather
    /// than in the restart: a call whose timeout runs out drops its restart
    /// mid-wait, and the next restart waits only the rest of it (a wait
    /// started over each time would outgrow every call's timeout).
    planned: Mutex<Option<Planned>>,
    /// Whether `planned` holds a plan, so that a call's success can tell
    /// without taking the lock.
    has_plan: AtomicBool,
    /// A restart that a call which met the server's 503 left for the next
    /// call (it was not sent again itself): the generation it met it under,
    /// and the 503.
    pending: Mutex<Option<(u64, TransportError)>>,
    /// What the restart under way is for, in words.
    cause: Mutex<Option<String>>,
    /// Set when the budget ran out: every call fails with this.
    failed: Mutex<Option<ClientError>>,
    /// Attempts that went out since a call last succeeded, which the
    /// backoff goes on from.
    streak: AtomicU32,
}

/// The next attempt's time, and whether it is the backoff's (which counts
/// in the streak once the attempt goes out) or the server's `Retry-After`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Planned {
    at: Instant,
    backoff: bool,
}

/// The next attempt's time, from the plan already made (by a restart
/// dropped mid-wait), the time the server asked for if still ahead, and
/// the backoff's delay (asked for only when a fresh backoff is planned):
///
/// | plan | the server asked for | next attempt |
/// |---|---|---|
/// | made | a time after it | the server's time |
/// | made | nothing, or a time before it | the plan, unmoved |
/// | none | a time | the server's time, at least the first delay from now (`Retry-After: 0` does not spin) |
/// | none | nothing | the backoff's delay from now |
///
/// A plan moves only for a later time the server asked for, never because
/// time passed, so restarts dropped with their calls one after another
/// still reach the planned time.
fn plan_next(
    planned: Option<Planned>,
    asked: Option<Instant>,
    now: Instant,
    initial_delay: Duration,
    backoff_delay: impl FnOnce() -> Duration,
) -> Planned {
    match (planned, asked) {
        (Some(plan), Some(asked)) if asked > plan.at => Planned {
            at: asked,
            backoff: false,
        },
        (Some(plan), _) => plan,
        (None, Some(asked)) => Planned {
            at: asked.max(now + initial_delay),
            backoff: false,
        },
        (None, None) => Planned {
            at: now + backoff_delay(),
            backoff: true,
        },
    }
}

/// How long `close` waits for a restart under way to end by itself. It
/// ends at once when its caller's future is polled; one that is not (left
/// pending in a `select!`) is not waited for: `close` has closed what it
/// opened, and it sees `close` when it runs again.
const SETTLE: Duration = Duration::from_secs(1);

impl Supervisor {
    pub(crate) fn new(
        policy: RestartPolicy,
        connector: Arc<dyn Connector>,
        handlers: ConnectionHandlers,
        negotiated: Arc<NegotiatedRevision>,
    ) -> Self {
        Supervisor {
            policy,
            connector,
            handlers,
            negotiated,
            recent: Mutex::new(VecDeque::new()),
            stopped: AtomicBool::new(false),
            stopping: tokio::sync::watch::Sender::new(false),
            restarting: tokio::sync::Mutex::new(()),
            opened: Arc::default(),
            not_before: Mutex::new(None),
            planned: Mutex::new(None),
            has_plan: AtomicBool::new(false),
            pending: Mutex::new(None),
            cause: Mutex::new(None),
            failed: Mutex::new(None),
            streak: AtomicU32::new(0),
        }
    }

    /// A call succeeded: the next restart's backoff starts over.
    pub(crate) fn call_succeeded(&self) {
        if self.streak.load(Ordering::Relaxed) != 0 {
            self.streak.store(0, Ordering::Relaxed);
        }
        if self.has_plan.load(Ordering::Acquire) {
            *lock(&self.planned) = None;
            self.has_plan.store(false, Ordering::Release);
        }
    }

    /// When attempt `attempt` of this run goes out: the time already
    /// planned (by a restart dropped mid-wait), or the time the server
    /// asked for (`Retry-After`) if later; else the backoff's next delay
    /// from now. A plan moves only for a later time the server asked for,
    /// never because time passed: restarts dropped with their calls one
    /// after another still reach the planned time.
    pub(crate) fn next_attempt(&self, attempt: u32) -> Instant {
        let now = Instant::now();
        // The server's time, while still ahead (one passed asks nothing).
        let asked = lock(&self.not_before).filter(|t| *t > now);
        let mut planned = lock(&self.planned);
        let plan = plan_next(*planned, asked, now, self.policy.initial_delay, || {
            // Counted across restarts until a call succeeds (see
            // `RestartPolicy`).
            let nth = self.streak.load(Ordering::Relaxed) + 1;
            self.policy.delay(nth, seed(attempt))
        });
        *planned = Some(plan);
        self.has_plan.store(true, Ordering::Release);
        plan.at
    }

    /// The planned attempt goes out now: a backoff's advances the streak,
    /// one after a server that was reached spends the budget, and the
    /// next attempt is planned afresh.
    pub(crate) fn going_out(&self, reached: bool) {
        let plan = lock(&self.planned).take();
        self.has_plan.store(false, Ordering::Release);
        if plan.is_none_or(|p| p.backoff) {
            self.streak.fetch_add(1, Ordering::Relaxed);
        }
        *lock(&self.not_before) = None;
        if reached {
            lock(&self.recent).push_back(Instant::now());
        }
    }

    /// A call met the server's 503 under `generation` and was not sent
    /// again: the next call restarts the connection first.
    pub(crate) fn restart_later(&self, generation: u64, cause: TransportError) {
        *lock(&self.pending) = Some((generation, cause));
    }

    /// The restart a call left for later, if the connection is still the
    /// one it met the 503 on.
    pub(crate) fn pending_restart(&self, generation: u64) -> Option<TransportError> {
        lock(&self.pending)
            .as_ref()
            .filter(|(seen, _)| *seen == generation)
            .map(|(_, cause)| cause.clone())
    }

    pub(crate) fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.stopping.send_replace(true);
    }

    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    /// Stops the connection for good and closes what a restart under way
    /// opened, so that nothing it started outlives `close`; then gives the
    /// restart a moment to end (a wait is cut short). A restart whose
    /// caller's future is not polled is not waited for: it sees `stopped`
    /// when it runs again, and closes what it opens then.
    pub(crate) async fn stop_and_settle(&self) {
        self.stop();
        let opened = std::mem::take(&mut *lock(&self.opened));
        for transport in opened {
            transport.close().await;
        }
        let _ = tokio::time::timeout(SETTLE, self.restarting.lock()).await;
    }

    /// Resolves once `close` was called.
    pub(crate) async fn stopped(&self) {
        let mut told = self.stopping.subscribe();
        // An error means the sender is gone, which the supervisor owns.
        let _ = told.wait_for(|stopped| *stopped).await;
    }

    /// The server asked to be tried again after `retry_after` (cut to the
    /// policy's maximum): no attempt goes out before then.
    pub(crate) fn asked_to_wait(&self, retry_after: Option<Duration>) {
        let Some(asked) = retry_after else { return };
        let until = Instant::now() + asked.min(self.policy.max_retry_after);
        let mut not_before = self.not_before.lock().unwrap_or_else(|p| p.into_inner());
        *not_before = Some(not_before.map_or(until, |t| t.max(until)));
    }

    /// The wait the server asked for, from now, if it is still ahead.
    fn asked_wait(&self) -> Option<Duration> {
        let not_before = *self.not_before.lock().unwrap_or_else(|p| p.into_inner());
        not_before.map(|t| t.saturating_duration_since(Instant::now()))
    }

    /// What the restart under way is for (`None`: it connected).
    pub(crate) fn set_cause(&self, cause: Option<&str>) {
        *self.cause.lock().unwrap_or_else(|p| p.into_inner()) = cause.map(str::to_owned);
    }

    /// The error of a call whose own timeout ran out while the connection
    /// was being restarted.
    pub(crate) fn restarting_error(&self) -> ClientError {
        let cause = self
            .cause
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .unwrap_or_else(|| "the connection ended".to_owned());
        ClientError::new(ErrorKind::Restarting {
            retry_after: self.asked_wait().filter(|d| !d.is_zero()),
            cause,
        })
    }

    /// Whether the budget allows one more restart (counted when it goes
    /// out, see `going_out`).
    pub(crate) fn within_budget(&self) -> bool {
        let now = Instant::now();
        let mut recent = lock(&self.recent);
        while recent
            .front()
            .is_some_and(|t| now.duration_since(*t) > self.policy.window)
        {
            recent.pop_front();
        }
        recent.len() < self.policy.max_restarts
    }

    /// The error the supervisor gave up with, if it did.
    pub(crate) fn failure(&self) -> Option<ClientError> {
        self.failed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Gives up: every later call fails with `error`.
    pub(crate) fn give_up(&self, error: ClientError) {
        *lock(&self.failed) = Some(error);
    }

    /// The connector of one restart attempt, noting what it opens.
    pub(crate) fn opened_connector(&self) -> Opened {
        Opened {
            inner: self.connector.clone(),
            transports: self.opened.clone(),
            stopping: self.stopping.subscribe(),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// A seed for the jitter, different per attempt and per process.
fn seed(attempt: u32) -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    u64::from(nanos).wrapping_mul(6_364_136_223_846_793_005) ^ u64::from(attempt)
}

/// The connector of a restart, noting every connection it opens in the
/// supervisor, so that `close` (or the restart itself, when it sees
/// `close`) closes them (a connect may open two, the probe's and the
/// legacy one's).
pub(crate) struct Opened {
    inner: Arc<dyn Connector>,
    transports: Arc<Mutex<Vec<Arc<dyn Transport>>>>,
    stopping: tokio::sync::watch::Receiver<bool>,
}

impl Opened {
    pub(crate) async fn close_all(&self) {
        let opened: Vec<_> = std::mem::take(&mut *lock(&self.transports));
        for transport in opened {
            transport.close().await;
        }
    }
}

/// Lets go of what an attempt opened when it ends.
pub(crate) struct Forget<'a>(pub(crate) &'a Mutex<Vec<Arc<dyn Transport>>>);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        lock(self.0).clear();
    }
}

impl Connector for Opened {
    fn connect(
        &self,
        handlers: ConnectionHandlers,
    ) -> BoxFuture<'static, std::result::Result<Arc<dyn Transport>, TransportError>> {
        let connecting = self.inner.connect(handlers);
        let transports = self.transports.clone();
        let stopping = self.stopping.clone();
        Box::pin(async move {
            let transport = connecting.await?;
            {
                // Checked under the lock that `close` takes the list with:
                // either `close` finds this connection there, or this
                // sees `close`.
                let mut opened = lock(&transports);
                if !*stopping.borrow() {
                    opened.push(transport.clone());
                    return Ok(transport);
                }
            }
            transport.close().await;
            Err(TransportError::Closed)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One test per row of `plan_next`'s table, and the case that made it
    /// a table: restarts dropped one after another while the server's
    /// `Retry-After` has passed leave the plan where it was.
    #[test]
    fn the_next_attempt_row_by_row() {
        let now = Instant::now();
        let s = Duration::from_secs;
        let first = s(1);
        let plan = |at, backoff| Planned { at, backoff };
        let no_backoff = || -> Duration { panic!("no fresh backoff is planned here") };

        // A plan, and the server asks for later: the server's time.
        assert_eq!(
            plan_next(
                Some(plan(now + s(1), true)),
                Some(now + s(5)),
                now,
                first,
                no_backoff
            ),
            plan(now + s(5), false)
        );
        // A plan, and the server asks for earlier, or nothing: unmoved.
        let made = plan(now + s(3), true);
        assert_eq!(
            plan_next(Some(made), Some(now + s(2)), now, first, no_backoff),
            made
        );
        assert_eq!(plan_next(Some(made), None, now, first, no_backoff), made);
        // No plan, the server asks: its time, not sooner than the first delay.
        assert_eq!(
            plan_next(None, Some(now + s(4)), now, first, no_backoff),
            plan(now + s(4), false)
        );
        assert_eq!(
            plan_next(None, Some(now), now, first, no_backoff),
            plan(now + first, false)
        );
        // No plan, nothing asked: the backoff.
        assert_eq!(
            plan_next(None, None, now, first, || s(2)),
            plan(now + s(2), true)
        );
        // Dropped restarts later on, the server's time passed (the caller
        // passes no time then): the plan stays, however late they come.
        let made = plan(now + s(2), false);
        for later in [s(1), s(2), s(10)] {
            assert_eq!(
                plan_next(Some(made), None, now + later, first, no_backoff),
                made
            );
        }
    }
}
