//! Id correlation, done once: the pending table, timeouts, cancellation.
//!
//! Every transport in the workspace, and any third-party one built on
//! [`crate::Engine`], waits for answers through this code, so a timeout, a
//! progress reset, a cancel or a drop behaves the same whatever carries the
//! bytes. Entries leave the table on every path (answer, error, timeout,
//! cancel, drop, death, close), so a long-lived connection does not leak.

use std::collections::HashMap;
use std::future::pending;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_protocol::result::normalize_result;
use mcp_protocol::{Request, RequestId};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::{Notify, oneshot, watch};
use tokio::time::{Instant, sleep_until};

use crate::{Listener, RequestOptions, ResponseFuture, TransportError};

type Answer = Result<Value, TransportError>;

/// What reaches a waiting request: its answer, or a success answer's
/// result still as text, which the waiting task parses itself (on its own
/// thread, where the result is used and freed, and off the reader's).
enum Delivery {
    Answer(Answer),
    Text(Box<RawValue>),
}

impl Delivery {
    fn open(self) -> Answer {
        match self {
            Delivery::Answer(answer) => answer,
            Delivery::Text(text) => serde_json::from_str(text.get())
                .map(normalize_result)
                .map_err(|e| TransportError::Malformed {
                    detail: format!("the result is not JSON: {e}"),
                }),
        }
    }
}

/// What the waiting side makes of its channel's outcome.
fn received(outcome: Result<Delivery, oneshot::error::RecvError>) -> Answer {
    outcome.map_or(Err(TransportError::Closed), Delivery::open)
}

/// Called when a request that is still pending is given up (cancelled,
/// timed out or dropped) and its options allow a wire cancel.
pub(crate) type CancelSink = Arc<dyn Fn(RequestId, &'static str) + Send + Sync>;

/// The pending-request table shared by a connection's read loop and its
/// callers. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Correlator {
    inner: Arc<Inner>,
}

struct Inner {
    table: Mutex<Table>,
    /// How many reasons there are to hold every base timer still (server
    /// requests being handled that belong to no request: a person may be
    /// typing an answer).
    pauses: Arc<watch::Sender<usize>>,
    cancel_sink: CancelSink,
}

#[derive(Default)]
struct Table {
    pending: HashMap<RequestId, Entry>,
    /// The live requests holding each progress token, oldest first.
    ///
    /// A token should name one live request (the spec asks senders to keep
    /// them unique), but nothing stops a caller from reusing one, and
    /// refusing the request would be an error outside the closed set. So
    /// the request that registered a token first keeps it: its
    /// notifications go to it alone. Ending a request removes only its own
    /// hold on the token, never another's; when the holder ends, the next
    /// live request with the same token takes over.
    by_progress_token: HashMap<RequestId, Vec<RequestId>>,
    /// Once set, every new request fails with this error.
    terminal: Option<TransportError>,
}

struct Entry {
    tx: oneshot::Sender<Delivery>,
    listener: Option<Listener>,
    signals: Arc<Signals>,
    progress_token: Option<RequestId>,
}

/// What reaches a waiting request besides its answer: progress, and
/// reasons to hold its base timer still (a server request that arrived on
/// its stream is being handled). One allocation and one wake-up for both.
#[derive(Default)]
struct Signals {
    /// Rung at each change of the counts below.
    changed: Notify,
    /// Progress notifications so far.
    progress: AtomicU64,
    /// Pauses held on this request's timer.
    pauses: AtomicUsize,
}

/// What [`Correlator::route_progress`] or [`Correlator::route_request`]
/// found for a notification.
#[derive(Debug)]
pub(crate) enum Route {
    /// A live request matched; here is its listener, if it has one.
    Live(Option<Listener>),
    /// No live request has that key.
    NotFound,
}

impl Correlator {
    /// An empty table; `cancel_sink` carries wire cancels out.
    pub(crate) fn new(cancel_sink: CancelSink) -> Self {
        Correlator {
            inner: Arc::new(Inner {
                table: Mutex::new(Table::default()),
                pauses: Arc::new(watch::Sender::new(0)),
                cancel_sink,
            }),
        }
    }

    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        // Every update under this lock is a single insert or remove; a
        // panic elsewhere cannot leave it half done.
        self.inner.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers `request` and returns the future of its answer. Register
    /// *before* sending, so an immediate answer finds its entry.
    ///
    /// Fails at once with the connection's terminal error after death or
    /// close, and with [`TransportError::DuplicateId`] for an id in flight.
    pub(crate) fn register(
        &self,
        request: &Request,
        options: RequestOptions,
    ) -> Result<ResponseFuture, TransportError> {
        let (tx, rx) = oneshot::channel();
        let signals = Arc::new(Signals::default());
        let progress_token = request
            .meta()
            .and_then(|m| m.get("progressToken"))
            .and_then(RequestId::from_value);
        {
            let mut table = self.table();
            if let Some(err) = &table.terminal {
                return Err(err.clone());
            }
            if table.pending.contains_key(&request.id) {
                return Err(TransportError::DuplicateId(request.id.clone()));
            }
            if let Some(token) = &progress_token {
                table
                    .by_progress_token
                    .entry(token.clone())
                    .or_default()
                    .push(request.id.clone());
            }
            table.pending.insert(
                request.id.clone(),
                Entry {
                    tx,
                    listener: options.listener.clone(),
                    signals: signals.clone(),
                    progress_token,
                },
            );
        }
        let guard = Guard {
            correlator: self.clone(),
            id: request.id.clone(),
            cancel_on_wire: options.cancel_on_wire,
            armed: true,
        };
        let wait = Wait {
            method: request.method.clone(),
            options,
            signals,
            progress_seen: 0,
            pauses: self.inner.pauses.subscribe(),
        };
        Ok(Box::pin(wait.run(guard, rx)))
    }

    /// Delivers an answer; returns false (and drops it) when no request
    /// with that id is pending.
    pub(crate) fn resolve(&self, id: &RequestId, answer: Answer) -> bool {
        self.deliver(id, Delivery::Answer(answer))
    }

    /// Delivers a success answer's result as text, which the waiting task
    /// parses; returns false (and drops it) as [`resolve`](Self::resolve).
    pub(crate) fn resolve_text(&self, id: &RequestId, result: &RawValue) -> bool {
        self.deliver(id, Delivery::Text(result.to_owned()))
    }

    fn deliver(&self, id: &RequestId, delivery: Delivery) -> bool {
        match self.remove(id) {
            Some(entry) => {
                // The waiter may have just gone; then nobody wants it.
                let _ = entry.tx.send(delivery);
                true
            }
            None => false,
        }
    }

    /// Fails every pending request with `error`, and every later one too.
    /// The first terminal error wins.
    pub(crate) fn fail_all(&self, error: TransportError) {
        let entries: Vec<Entry> = {
            let mut table = self.table();
            if table.terminal.is_none() {
                table.terminal = Some(error.clone());
            }
            table.by_progress_token.clear();
            table.pending.drain().map(|(_, e)| e).collect()
        };
        let error = self.terminal_error().unwrap_or(error);
        for entry in entries {
            let _ = entry.tx.send(Delivery::Answer(Err(error.clone())));
        }
    }

    /// The error every new request fails with, once the connection ended.
    pub(crate) fn terminal_error(&self) -> Option<TransportError> {
        self.table().terminal.clone()
    }

    /// Finds the live request a notification belongs to, by progress token
    /// (which also restarts its timeout when it asked for that). When live
    /// requests share the token, the one that registered it first.
    pub(crate) fn route_progress(&self, token: &RequestId) -> Route {
        let table = self.table();
        let Some(entry) = table
            .by_progress_token
            .get(token)
            .and_then(|holders| holders.first())
            .and_then(|id| table.pending.get(id))
        else {
            return Route::NotFound;
        };
        entry.signals.progress.fetch_add(1, Ordering::Relaxed);
        entry.signals.changed.notify_one();
        Route::Live(entry.listener.clone())
    }

    /// Finds the live request with this id (a subscription's notifications
    /// carry the id of the request that opened it).
    pub(crate) fn route_request(&self, id: &RequestId) -> Route {
        match self.table().pending.get(id) {
            Some(entry) => Route::Live(entry.listener.clone()),
            None => Route::NotFound,
        }
    }

    /// How many requests are waiting for an answer.
    pub(crate) fn pending_count(&self) -> usize {
        self.table().pending.len()
    }

    /// Holds every pending request's base timer still until the guard is
    /// dropped; hard maximums keep running. Used while the client handles
    /// a server request, which a person may take a while to answer.
    pub(crate) fn pause_timers(&self) -> TimerPause {
        TimerPause::hold(Held::Connection(self.inner.pauses.clone()))
    }

    /// Holds one pending request's base timer still until the guard is
    /// dropped; `None` when no such request is pending.
    pub(crate) fn pause_timer_of(&self, id: &RequestId) -> Option<TimerPause> {
        let signals = self.table().pending.get(id)?.signals.clone();
        Some(TimerPause::hold(Held::Request(signals)))
    }

    fn remove(&self, id: &RequestId) -> Option<Entry> {
        let mut table = self.table();
        let entry = table.pending.remove(id)?;
        if let Some(token) = &entry.progress_token
            && let Some(holders) = table.by_progress_token.get_mut(token)
        {
            holders.retain(|holder| holder != id);
            if holders.is_empty() {
                table.by_progress_token.remove(token);
            }
        }
        Some(entry)
    }
}

impl std::fmt::Debug for Correlator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Correlator")
            .field("pending", &self.pending_count())
            .finish()
    }
}

/// Keeps base timers paused while it lives; see
/// [`Engine::pause_timers`](crate::Engine::pause_timers) and
/// [`Engine::pause_timer_of`](crate::Engine::pause_timer_of).
#[must_use = "timers resume when this is dropped"]
pub struct TimerPause {
    held: Held,
}

/// Whose timers a [`TimerPause`] holds.
enum Held {
    /// Every request's of the connection.
    Connection(Arc<watch::Sender<usize>>),
    /// One request's.
    Request(Arc<Signals>),
}

impl TimerPause {
    fn hold(held: Held) -> TimerPause {
        match &held {
            Held::Connection(pauses) => pauses.send_modify(|n| *n += 1),
            Held::Request(signals) => {
                signals.pauses.fetch_add(1, Ordering::Relaxed);
                signals.changed.notify_one();
            }
        }
        TimerPause { held }
    }
}

impl Drop for TimerPause {
    fn drop(&mut self) {
        match &self.held {
            Held::Connection(pauses) => pauses.send_modify(|n| *n = n.saturating_sub(1)),
            Held::Request(signals) => {
                signals.pauses.fetch_sub(1, Ordering::Relaxed);
                signals.changed.notify_one();
            }
        }
    }
}

impl std::fmt::Debug for TimerPause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimerPause").finish_non_exhaustive()
    }
}

/// Takes a request out of the table when its future ends or is dropped
/// without an answer, and tells the server when that is allowed.
struct Guard {
    correlator: Correlator,
    id: RequestId,
    cancel_on_wire: bool,
    armed: bool,
}

impl Guard {
    /// Gives the request up. If its answer (or the connection's end) won
    /// the race, that outcome is returned instead and nothing is sent.
    async fn give_up(
        &mut self,
        error: TransportError,
        reason: &'static str,
        rx: oneshot::Receiver<Delivery>,
    ) -> Answer {
        self.armed = false;
        if self.correlator.remove(&self.id).is_some() {
            if self.cancel_on_wire {
                (self.correlator.inner.cancel_sink)(self.id.clone(), reason);
            }
            return Err(error);
        }
        received(rx.await)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.armed && self.take_out() && self.cancel_on_wire {
            (self.correlator.inner.cancel_sink)(
                self.id.clone(),
                "the client abandoned the request",
            );
        }
    }
}

impl Guard {
    /// Takes a dropped request's entry out of the table; true when it was
    /// still there.
    #[cfg(not(fuzz_planted))]
    fn take_out(&self) -> bool {
        self.correlator.remove(&self.id).is_some()
    }

    /// The bug `cargo xtask fuzz --planted` builds in, for the `engine`
    /// target to find: a dropped request's entry stays in the table.
    #[cfg(fuzz_planted)]
    fn take_out(&self) -> bool {
        false
    }
}

/// The waiting half of a request: its timers and its cancellation.
struct Wait {
    method: String,
    options: RequestOptions,
    /// This request's progress and pauses.
    signals: Arc<Signals>,
    /// The progress count last acted on.
    progress_seen: u64,
    /// The connection's pauses.
    pauses: watch::Receiver<usize>,
}

/// Stops or restarts the base timer when whether it is held changed:
/// while held, `base` is `None` and `left` keeps what was left of it.
fn repause(paused: bool, base: &mut Option<Instant>, left: &mut Option<Duration>) {
    match (paused, *base, *left) {
        (true, Some(deadline), _) => {
            *left = Some(deadline.saturating_duration_since(Instant::now()));
            *base = None;
        }
        (false, None, Some(rest)) => {
            *base = Some(Instant::now() + rest);
            *left = None;
        }
        _ => {}
    }
}

/// The earlier of two optional deadlines.
fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

async fn sleep_until_opt(deadline: Option<Instant>) {
    match deadline {
        Some(d) => sleep_until(d).await,
        None => pending().await,
    }
}

impl Wait {
    /// Whether the base timer is held: by the connection, or for this
    /// request alone.
    fn paused(&mut self) -> bool {
        *self.pauses.borrow_and_update() > 0 || self.signals.pauses.load(Ordering::Relaxed) > 0
    }

    async fn run(mut self, mut guard: Guard, mut rx: oneshot::Receiver<Delivery>) -> Answer {
        let start = Instant::now();
        let hard = self.options.max_total.map(|d| start + d);
        let base_len = self.options.timeout;
        // While paused, `base` is None and `paused_left` holds what was left.
        let mut base = base_len.map(|d| start + d);
        let mut paused_left: Option<Duration> = None;
        if self.paused() {
            paused_left = base_len;
            base = None;
        }
        let token = self.options.cancellation.clone();
        let cancelled = async move {
            match token {
                Some(t) => t.cancelled_owned().await,
                None => pending().await,
            }
        };
        tokio::pin!(cancelled);
        loop {
            tokio::select! {
                biased;
                outcome = &mut rx => {
                    guard.armed = false;
                    return received(outcome);
                }
                _ = &mut cancelled => {
                    return guard
                        .give_up(TransportError::Cancelled, "the client cancelled the request", rx)
                        .await;
                }
                // One timer for both deadlines, the earlier (a timer per
                // request costs a registration in tokio's wheel).
                _ = sleep_until_opt(earliest(hard, base)) => {
                    let after = if hard.is_some_and(|h| base.is_none_or(|b| h <= b)) {
                        self.options.max_total.unwrap_or_default()
                    } else {
                        base_len.unwrap_or_default()
                    };
                    let error = TransportError::Timeout { method: self.method, after };
                    return guard.give_up(error, "the request timed out", rx).await;
                }
                // Progress, or this request's own pauses.
                _ = self.signals.changed.notified() => {
                    let progress = self.signals.progress.load(Ordering::Relaxed);
                    if progress != self.progress_seen {
                        self.progress_seen = progress;
                        if self.options.reset_on_progress {
                            if base.is_some() {
                                base = base_len.map(|d| Instant::now() + d);
                            } else if paused_left.is_some() {
                                paused_left = base_len;
                            }
                        }
                    }
                    repause(self.paused(), &mut base, &mut paused_left);
                }
                Ok(()) = self.pauses.changed() => {
                    repause(self.paused(), &mut base, &mut paused_left);
                }
            }
        }
    }
}
