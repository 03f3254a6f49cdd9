//! How a supervised client restarts its connection, and what it reports
//! of each attempt: the policy a user sets and the record an event and the
//! final error carry.

use std::time::Duration;

use mcp_transport::GoneInfo;

/// How a supervised client restarts its connection; see
/// [`ClientBuilder::supervise`](crate::ClientBuilder::supervise).
///
/// The defaults: at most 5 restarts within 60 seconds; the first attempt
/// after 100 ms, each later one after twice the last, at most 5 s, each
/// delay shortened by up to a fifth at random so that many clients of one
/// server do not come back at once. The delays go on doubling across
/// restarts until a call succeeds: a connection that opens without a round
/// trip (a modern HTTP server, its era already known) proves nothing.
/// Each delay ends at a point in time: a call whose timeout runs out while
/// a restart waits leaves the rest of the wait to the next call's restart,
/// and only attempts that went out make the delays grow, so calls with
/// timeouts shorter than the delays still reconnect once the server is
/// back.
///
/// A server that asks for a delay (HTTP 429 or 503 with `Retry-After`) is
/// tried again after that delay instead of the backoff's, at most
/// [`max_retry_after`](Self::max_retry_after) (60 s by default) later.
///
/// Only a restart after a server that was reached counts against the
/// budget (one that died, or failed an attempt otherwise). A restart after
/// an attempt that reached nothing (a refused connection, an unresolved
/// name) or after a server that asked to be retried later (429, 503) is
/// free: a server in a maintenance window is waited for, within each
/// call's own timeout, rather than given up on. A call whose timeout runs
/// out while the restart waits fails with
/// [`ErrorKind::Restarting`](crate::ErrorKind::Restarting), which says when
/// the server asked to be retried.
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
    /// The longest delay a server's `Retry-After` is honoured with; a
    /// longer one is cut to this.
    pub max_retry_after: Duration,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        RestartPolicy {
            max_restarts: 5,
            window: Duration::from_secs(60),
            initial_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(5),
            max_retry_after: Duration::from_secs(60),
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

    /// The longest wait a server's `Retry-After` gets: a server that asks
    /// for more (a day, say) is tried again after `max`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_client::RestartPolicy;
    ///
    /// let policy = RestartPolicy::new().max_retry_after(Duration::from_secs(10));
    /// assert_eq!(policy.max_retry_after, Duration::from_secs(10));
    /// ```
    pub fn max_retry_after(mut self, max: Duration) -> Self {
        self.max_retry_after = max;
        self
    }

    /// The delay before attempt `n` (1-based), jittered by `seed`.
    pub(crate) fn delay(&self, n: u32, seed: u64) -> Duration {
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
