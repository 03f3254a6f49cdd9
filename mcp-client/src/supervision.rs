//! A supervised connection: when the server dies (stdio) or the
//! connection ends (HTTP), the client connects again through its
//! connector, with capped, jittered exponential backoff and a restart
//! budget, and the same `Client` goes on.
//!
//! What happens to calls is decided in
//! [`Session::send`](crate::session::Session::send): a call made while the
//! connection is down waits for the restart (within its own timeout) and
//! goes out on the new connection; a call in flight when the server died
//! is sent again only when that is harmless (reads, lists, listens, tools
//! marked read-only or idempotent), and otherwise fails with
//! [`ErrorKind::MayHaveRun`](crate::ErrorKind::MayHaveRun).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_transport::{ConnectionHandlers, Connector, GoneInfo, TransportError};
use tokio::time::Instant;

use crate::connect::Connecting;
use crate::error::{ClientError, ErrorKind, Result};
use crate::events::ServerEvent;
use crate::server_requests::Negotiated;
use crate::session::Session;

/// How a supervised client restarts its connection; see
/// [`ClientBuilder::supervise`](crate::ClientBuilder::supervise).
///
/// The defaults: at most 5 restarts within 60 seconds; the first attempt
/// after 100 ms, each later one after twice the last, at most 5 s, each
/// delay shortened by up to a fifth at random so that many clients of one
/// server do not come back at once. A server that asks for a delay (HTTP
/// 429 or 503 with `Retry-After`) gets at least that. The delays go on
/// doubling across restarts until a call succeeds: a connection that
/// opens without a round trip (a modern HTTP server, its era already
/// known) proves nothing, and a server still down would otherwise spend
/// the budget at the first delay.
///
/// ```
/// use std::time::Duration;
/// use mcp_client::RestartPolicy;
///
/// let policy = RestartPolicy::new()
///     .max_restarts(3, Duration::from_secs(30))
///     .backoff(Duration::from_millis(50), Duration::from_secs(2));
/// # drop(policy);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RestartPolicy {
    /// Restarts allowed within [`window`](Self::window); one more fails
    /// the connection for good.
    pub max_restarts: usize,
    /// The span in which restarts are counted.
    pub window: Duration,
    /// The delay before the first attempt.
    pub initial_delay: Duration,
    /// The longest delay between attempts.
    pub max_delay: Duration,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        RestartPolicy {
            max_restarts: 5,
            window: Duration::from_secs(60),
            initial_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(5),
        }
    }
}

impl RestartPolicy {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// At most `restarts` attempts within `window`.
    pub fn max_restarts(mut self, restarts: usize, window: Duration) -> Self {
        self.max_restarts = restarts;
        self.window = window;
        self
    }

    /// The first delay, and the cap the doubling delays stop at.
    pub fn backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.initial_delay = initial;
        self.max_delay = max.max(initial);
        self
    }

    /// The delay before attempt `n` (1-based), jittered by `seed`.
    fn delay(&self, n: u32, seed: u64) -> Duration {
        let doubled = self
            .initial_delay
            .saturating_mul(1u32 << (n.saturating_sub(1)).min(16));
        let capped = doubled.min(self.max_delay);
        // Up to a fifth shorter, so that clients of one server spread out.
        let fifth = capped / 5;
        let nanos = u64::try_from(fifth.as_nanos()).unwrap_or(u64::MAX);
        let cut = if nanos == 0 { 0 } else { seed % nanos };
        capped - Duration::from_nanos(cut)
    }
}

/// One restart attempt, as the event and the final error report it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RestartAttempt {
    /// Its number in the current run of attempts, from 1.
    pub attempt: u32,
    /// How long it waited before connecting.
    pub after: Duration,
    /// What ended the connection it replaced (or failed the attempt
    /// before it), in words.
    pub cause: String,
    /// The dead server's exit status and stderr tail, when known.
    pub gone: Option<GoneInfo>,
    /// Why the attempt failed; `None` when it connected.
    pub failure: Option<String>,
}

/// The state of a supervised connection.
pub(crate) struct Supervisor {
    policy: RestartPolicy,
    connector: Arc<dyn Connector>,
    handlers: ConnectionHandlers,
    negotiated: Arc<Negotiated>,
    /// When each recent restart began, for the budget.
    recent: Mutex<VecDeque<Instant>>,
    /// Set by `close`: no restart after it.
    stopped: AtomicBool,
    /// Set when the budget ran out: every call fails with this.
    failed: Mutex<Option<ClientError>>,
    /// Attempts since a call last succeeded, which the backoff goes on
    /// from.
    streak: AtomicU32,
}

impl Supervisor {
    pub(crate) fn new(
        policy: RestartPolicy,
        connector: Arc<dyn Connector>,
        handlers: ConnectionHandlers,
        negotiated: Arc<Negotiated>,
    ) -> Self {
        Supervisor {
            policy,
            connector,
            handlers,
            negotiated,
            recent: Mutex::new(VecDeque::new()),
            stopped: AtomicBool::new(false),
            failed: Mutex::new(None),
            streak: AtomicU32::new(0),
        }
    }

    /// A call succeeded: the next restart's backoff starts over.
    pub(crate) fn proven(&self) {
        if self.streak.load(Ordering::Relaxed) != 0 {
            self.streak.store(0, Ordering::Relaxed);
        }
    }

    pub(crate) fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
    }

    /// Counts a restart against the budget; false when it is spent.
    fn spend(&self) -> bool {
        let now = Instant::now();
        let mut recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        while recent
            .front()
            .is_some_and(|t| now.duration_since(*t) > self.policy.window)
        {
            recent.pop_front();
        }
        if recent.len() >= self.policy.max_restarts {
            return false;
        }
        recent.push_back(now);
        true
    }

    fn failure(&self) -> Option<ClientError> {
        self.failed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// A seed for the jitter, different per attempt and per process.
fn seed(attempt: u32) -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    u64::from(nanos).wrapping_mul(6_364_136_223_846_793_005) ^ u64::from(attempt)
}

impl Session {
    /// Whether this connection restarts when it ends.
    pub(crate) fn supervised(&self) -> bool {
        self.supervisor
            .as_ref()
            .is_some_and(|s| !s.stopped.load(Ordering::Acquire))
    }

    /// The error a supervised connection gave up with, if it did.
    pub(crate) fn supervision_failure(&self) -> Option<ClientError> {
        self.supervisor.as_ref().and_then(Supervisor::failure)
    }

    /// Connects again, once for every request that met the end of the
    /// connection under generation `seen`, attempt after attempt within the
    /// budget. On success the new connection is in place (the verdict
    /// reused, or probed again when it no longer holds), the caches are
    /// dropped and, in legacy, the log level and resource subscriptions
    /// set again; each attempt is told as [`ServerEvent::Restarted`].
    pub(crate) async fn restart(&self, seen: u64, cause: &TransportError) -> Result<()> {
        let Some(supervisor) = self.supervisor.as_ref() else {
            return Ok(());
        };
        let recovery = &self.recovery;
        let _held = recovery.reinitializing.lock().await;
        if recovery.generation() != seen {
            // Another request already restarted it (or gave up).
            return supervisor.failure().map_or(Ok(()), Err);
        }
        recovery.busy.store(true, Ordering::Release);
        // Boxed: connecting again is a whole connect (several KiB of
        // future), and every request's future would otherwise carry room
        // for it, copied at each level of every call.
        let outcome = Box::pin(self.attempts(supervisor, cause)).await;
        recovery.bump();
        recovery.busy.store(false, Ordering::Release);
        if let Err(e) = &outcome {
            *supervisor.failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.clone());
        }
        outcome
    }

    async fn attempts(&self, supervisor: &Supervisor, cause: &TransportError) -> Result<()> {
        let mut history: Vec<RestartAttempt> = Vec::new();
        let mut cause_text = cause.to_string();
        let mut gone = match cause {
            TransportError::ServerGone(info) => Some((**info).clone()),
            _ => None,
        };
        let mut floor = Duration::ZERO;
        for attempt in 1u32.. {
            if supervisor.stopped.load(Ordering::Acquire) {
                return Err(ClientError::from(TransportError::Closed));
            }
            if !supervisor.spend() {
                tracing::warn!(
                    attempts = history.len(),
                    "the restart budget is spent; giving up"
                );
                return Err(ClientError::new(ErrorKind::RestartsExhausted {
                    attempts: history,
                }));
            }
            // Counted across restarts until a call succeeds (see
            // `RestartPolicy`).
            let nth = supervisor.streak.fetch_add(1, Ordering::Relaxed) + 1;
            let after = supervisor.policy.delay(nth, seed(attempt)).max(floor);
            tracing::info!(attempt, ?after, cause = %cause_text, "the connection ended; connecting again");
            tokio::time::sleep(after).await;
            let mut record = RestartAttempt {
                attempt,
                after,
                cause: cause_text.clone(),
                gone: gone.take(),
                failure: None,
            };
            match self.reconnect(supervisor).await {
                Ok(()) => {
                    self.tell(ServerEvent::Restarted(record));
                    return Ok(());
                }
                Err(e) => {
                    floor = match e.transport_error() {
                        Some(TransportError::RetryLater {
                            retry_after: Some(d),
                            ..
                        }) => *d,
                        _ => Duration::ZERO,
                    };
                    tracing::warn!(attempt, error = %e, "the restart failed");
                    record.failure = Some(e.to_string());
                    cause_text = e.to_string();
                    if let Some(TransportError::ServerGone(info)) = e.transport_error() {
                        gone = Some((**info).clone());
                    }
                    self.tell(ServerEvent::Restarted(record.clone()));
                    history.push(record);
                }
            }
        }
        unreachable!("the loop returns")
    }

    /// An event of the supervisor's, to the callback and the streams like
    /// the server's own.
    fn tell(&self, event: ServerEvent) {
        crate::events::deliver(self.config.event_callback.as_deref(), &self.events, event);
    }

    /// One connection attempt, with the verdict in hand.
    async fn reconnect(&self, supervisor: &Supervisor) -> Result<()> {
        let established = Connecting {
            config: &self.config,
            connector: supervisor.connector.as_ref(),
            handlers: supervisor.handlers.clone(),
            ids: self.ids.clone(),
            late_discover: self.late_discover.clone(),
            negotiated: supervisor.negotiated.clone(),
        }
        .run(Some(self.verdict()))
        .await?;
        let old = self.transport();
        self.replace_transport(established.transport);
        old.close().await;
        self.update_verdict(|v| *v = established.verdict);
        self.cache.clear();
        if self.era() == mcp_protocol::Era::Legacy {
            self.reapply().await;
        }
        Ok(())
    }
}
