//! Listeners: where inbound notifications go, through bounded queues.
//!
//! A transport's read loop must never wait on the code that consumes
//! notifications, so a [`Listener`] is the sending half of a bounded queue
//! that drops its *oldest* entry when full (counting and warning), and whose
//! consumer may vanish, or panic, at any time without the read loop noticing.
//!
//! The queue carries [`Notification`]s by default; the same queue carries a
//! transport's own [`TransportEvent`](crate::TransportEvent)s.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use futures::Stream;
use mcp_protocol::Notification;

/// The queue capacity [`Listener::channel`] users usually want.
pub const DEFAULT_LISTENER_CAPACITY: usize = 1024;

/// Called on the read loop for every item a [`Listener`] is given, before
/// it is queued; see [`Listener::tapped`].
pub type Tap<T> = Arc<dyn Fn(&T) + Send + Sync>;

struct State<T> {
    items: VecDeque<T>,
    waker: Option<Waker>,
    receiver_alive: bool,
}

struct Queue<T> {
    state: Mutex<State<T>>,
    capacity: usize,
    dropped: AtomicU64,
    senders: AtomicUsize,
    name: &'static str,
    tap: Option<Tap<T>>,
}

impl<T> Queue<T> {
    fn lock(&self) -> std::sync::MutexGuard<'_, State<T>> {
        // A panic while holding this lock cannot leave the queue
        // inconsistent (every update is a single push or pop), so a poisoned
        // lock is used as it is.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The sending half: where a transport pushes notifications (or, typed
/// `Listener<TransportEvent>`, its own events).
///
/// Cloning makes another sender for the same queue. [`push`](Self::push)
/// never blocks.
pub struct Listener<T = Notification> {
    queue: Arc<Queue<T>>,
    // This sender's own tap, run before the queue's (see `observed`).
    observer: Option<Tap<T>>,
}

/// The receiving half: a [`Stream`] of notifications. It ends when every
/// [`Listener`] for it is gone.
pub struct ListenerStream<T = Notification> {
    queue: Arc<Queue<T>>,
}

impl Listener {
    /// A queue holding at most `capacity` notifications (at least one).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use mcp_protocol::Notification;
    /// let (listener, mut stream) = mcp_transport::Listener::channel(16);
    /// listener.push(Notification::new("notifications/message", None));
    /// assert_eq!(stream.recv().await.unwrap().method, "notifications/message");
    /// # }
    /// ```
    pub fn channel(capacity: usize) -> (Listener, ListenerStream) {
        Self::named_channel("listener", capacity)
    }

    /// Like [`channel`](Self::channel), with a name used in warnings.
    pub fn named_channel(name: &'static str, capacity: usize) -> (Listener, ListenerStream) {
        Listener::bounded(name, capacity)
    }

    /// A listener that calls `f` for each notification, on a task of its
    /// own. A panic in `f` is caught and logged; later notifications still
    /// arrive. Needs a tokio runtime.
    pub fn from_fn(capacity: usize, f: impl FnMut(Notification) + Send + 'static) -> Listener {
        Listener::callback("callback listener", capacity, f)
    }

    /// A listener that discards everything.
    pub fn discard() -> Listener {
        Listener::sink()
    }
}

impl<T: Send + 'static> Listener<T> {
    /// A named queue of any item type holding at most `capacity` items.
    ///
    /// ```
    /// use mcp_transport::{Listener, TransportEvent};
    /// let (events, mut stream) = Listener::<TransportEvent>::bounded("transport events", 64);
    /// # let _ = (events, stream.try_recv());
    /// ```
    pub fn bounded(name: &'static str, capacity: usize) -> (Listener<T>, ListenerStream<T>) {
        Self::with_tap(name, capacity, None)
    }

    /// Like [`bounded`](Self::bounded), with a tap: a cheap, non-blocking
    /// function run on the read loop for each item before it is queued. It
    /// sees every item, even those the queue later drops, so work that must
    /// not be lost (a cache dropping stale entries) does not wait for a
    /// slow consumer. A panicking tap is caught and logged.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use mcp_protocol::Notification;
    /// use mcp_transport::Listener;
    ///
    /// let seen = Arc::new(AtomicUsize::new(0));
    /// let counter = seen.clone();
    /// let (listener, _stream) = Listener::tapped("counted", 1, Arc::new(move |_: &Notification| {
    ///     counter.fetch_add(1, Ordering::Relaxed);
    /// }));
    /// for _ in 0..3 {
    ///     listener.push(Notification::new("n", None));
    /// }
    /// assert_eq!(seen.load(Ordering::Relaxed), 3); // the queue kept only one
    /// assert_eq!(listener.dropped(), 2);
    /// ```
    pub fn tapped(
        name: &'static str,
        capacity: usize,
        tap: Tap<T>,
    ) -> (Listener<T>, ListenerStream<T>) {
        Self::with_tap(name, capacity, Some(tap))
    }

    fn with_tap(
        name: &'static str,
        capacity: usize,
        tap: Option<Tap<T>>,
    ) -> (Listener<T>, ListenerStream<T>) {
        let queue = Arc::new(Queue {
            state: Mutex::new(State {
                items: VecDeque::new(),
                waker: None,
                receiver_alive: true,
            }),
            capacity: capacity.max(1),
            dropped: AtomicU64::new(0),
            senders: AtomicUsize::new(1),
            name,
            tap,
        });
        (
            Listener {
                queue: queue.clone(),
                observer: None,
            },
            ListenerStream { queue },
        )
    }

    /// A listener of any item type that calls `f` for each item on a task
    /// of its own, surviving a panic in `f`. Needs a tokio runtime.
    pub fn callback(
        name: &'static str,
        capacity: usize,
        f: impl FnMut(T) + Send + 'static,
    ) -> Listener<T> {
        let (listener, mut stream) = Self::bounded(name, capacity);
        let mut f = f;
        tokio::spawn(async move {
            use futures::StreamExt;
            while let Some(item) = stream.next().await {
                if catch_unwind(AssertUnwindSafe(|| f(item))).is_err() {
                    tracing::error!(listener = name, "a listener panicked; it keeps receiving");
                }
            }
        });
        listener
    }

    /// A listener of any item type that discards everything.
    pub fn sink() -> Listener<T> {
        let (listener, stream) = Self::bounded("discard", 1);
        drop(stream);
        listener
    }
}

impl<T> Listener<T> {
    /// Another sender for the same queue that calls `observer` on the read
    /// loop for each item pushed through it, before the queue's own tap.
    /// This is how a wrapper (a recorder, say) sees every item in the order
    /// the transport received it without changing where items go.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use mcp_protocol::Notification;
    /// use mcp_transport::Listener;
    ///
    /// let (listener, mut stream) = Listener::channel(4);
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = seen.clone();
    /// let observed = listener.observed(Arc::new(move |n: &Notification| {
    ///     log.lock().unwrap().push(n.method.clone());
    /// }));
    /// observed.push(Notification::new("notifications/message", None));
    /// assert_eq!(*seen.lock().unwrap(), ["notifications/message"]);
    /// assert_eq!(stream.try_recv().unwrap().method, "notifications/message");
    /// ```
    pub fn observed(&self, observer: Tap<T>) -> Listener<T>
    where
        T: 'static,
    {
        let mut sender = self.clone();
        sender.observer = Some(match self.observer.clone() {
            // Observers stack: the newest runs first, then the older ones.
            Some(older) => Arc::new(move |item: &T| {
                observer(item);
                older(item);
            }),
            None => observer,
        });
        sender
    }

    /// Queues an item. When the queue is full the oldest entry is dropped,
    /// counted and warned about; when the receiver is gone the item is
    /// discarded. Never blocks. A tap, if any, sees the item first.
    pub fn push(&self, item: T) {
        if let Some(observer) = &self.observer
            && catch_unwind(AssertUnwindSafe(|| observer(&item))).is_err()
        {
            tracing::error!(listener = self.queue.name, "a listener's observer panicked");
        }
        if let Some(tap) = &self.queue.tap
            && catch_unwind(AssertUnwindSafe(|| tap(&item))).is_err()
        {
            tracing::error!(listener = self.queue.name, "a listener's tap panicked");
        }
        let waker = {
            let mut state = self.queue.lock();
            if !state.receiver_alive {
                return;
            }
            if state.items.len() >= self.queue.capacity {
                state.items.pop_front();
                let n = self.queue.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                // Warn on the first drop and then at powers of two, so a
                // flood does not become a flood of warnings too.
                if n.is_power_of_two() {
                    tracing::warn!(
                        listener = self.queue.name,
                        dropped = n,
                        capacity = self.queue.capacity,
                        "a notification listener is not keeping up; its oldest notifications were dropped"
                    );
                }
            }
            state.items.push_back(item);
            state.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// How many items were dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.queue.dropped.load(Ordering::Relaxed)
    }

    /// Whether the receiving half still exists.
    pub fn is_connected(&self) -> bool {
        self.queue.lock().receiver_alive
    }
}

impl<T> Clone for Listener<T> {
    fn clone(&self) -> Self {
        self.queue.senders.fetch_add(1, Ordering::Relaxed);
        Listener {
            queue: self.queue.clone(),
            observer: self.observer.clone(),
        }
    }
}

impl<T> Drop for Listener<T> {
    fn drop(&mut self) {
        if self.queue.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            let waker = self.queue.lock().waker.take();
            if let Some(w) = waker {
                w.wake();
            }
        }
    }
}

impl<T> std::fmt::Debug for Listener<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listener")
            .field("name", &self.queue.name)
            .field("capacity", &self.queue.capacity)
            .field("dropped", &self.dropped())
            .finish()
    }
}

impl<T> ListenerStream<T> {
    /// The next item, or `None` once every sender is gone and the queue is
    /// empty.
    pub async fn recv(&mut self) -> Option<T> {
        futures::StreamExt::next(self).await
    }

    /// An item already queued, without waiting.
    pub fn try_recv(&mut self) -> Option<T> {
        self.queue.lock().items.pop_front()
    }

    /// How many items were dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.queue.dropped.load(Ordering::Relaxed)
    }
}

impl<T> Stream for ListenerStream<T> {
    type Item = T;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut state = self.queue.lock();
        if let Some(n) = state.items.pop_front() {
            return Poll::Ready(Some(n));
        }
        if self.queue.senders.load(Ordering::Acquire) == 0 {
            return Poll::Ready(None);
        }
        state.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl<T> Drop for ListenerStream<T> {
    fn drop(&mut self) {
        let mut state = self.queue.lock();
        state.receiver_alive = false;
        state.items.clear();
    }
}

impl<T> std::fmt::Debug for ListenerStream<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListenerStream")
            .field("name", &self.queue.name)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(i: u32) -> Notification {
        Notification::new(format!("n{i}"), None)
    }

    #[tokio::test]
    async fn drops_oldest_when_full() {
        let (l, mut s) = Listener::channel(2);
        for i in 0..5 {
            l.push(n(i));
        }
        assert_eq!(l.dropped(), 3);
        assert_eq!(s.recv().await.unwrap().method, "n3");
        assert_eq!(s.recv().await.unwrap().method, "n4");
        drop(l);
        assert!(s.recv().await.is_none());
    }

    #[tokio::test]
    async fn push_after_receiver_gone_is_harmless() {
        let (l, s) = Listener::channel(2);
        drop(s);
        l.push(n(1));
        assert!(!l.is_connected());
    }

    #[test]
    fn tap_sees_what_the_queue_drops_and_survives_a_panic() {
        let seen = Arc::new(AtomicUsize::new(0));
        let counter = seen.clone();
        let (l, mut s) = Listener::tapped(
            "t",
            1,
            Arc::new(move |n: &Notification| {
                counter.fetch_add(1, Ordering::Relaxed);
                assert_ne!(n.method, "n2", "a tap that panics");
            }),
        );
        for i in 0..4 {
            l.push(n(i));
        }
        assert_eq!(seen.load(Ordering::Relaxed), 4);
        assert_eq!(s.try_recv().unwrap().method, "n3");
    }

    #[tokio::test]
    async fn callback_survives_panic() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let l = Listener::from_fn(8, move |n| {
            if n.method == "n1" {
                panic!("boom");
            }
            tx.send(n.method).unwrap();
        });
        l.push(n(1));
        l.push(n(2));
        assert_eq!(rx.recv().await.unwrap(), "n2");
    }
}
