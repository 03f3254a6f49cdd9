//! Listeners: where inbound notifications go, through bounded queues.
//!
//! A transport's read loop must never wait on the code that consumes
//! notifications, so a [`Listener`] is the sending half of a bounded queue
//! that drops its *oldest* entry when full (counting and warning), and whose
//! consumer may vanish, or panic, at any time without the read loop noticing.

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

struct State {
    items: VecDeque<Notification>,
    waker: Option<Waker>,
    receiver_alive: bool,
}

struct Queue {
    state: Mutex<State>,
    capacity: usize,
    dropped: AtomicU64,
    senders: AtomicUsize,
    name: &'static str,
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding this lock cannot leave the queue
        // inconsistent (every update is a single push or pop), so a poisoned
        // lock is used as it is.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The sending half: where a transport pushes notifications.
///
/// Cloning makes another sender for the same queue. [`push`](Self::push)
/// never blocks.
pub struct Listener {
    queue: Arc<Queue>,
}

/// The receiving half: a [`Stream`] of notifications. It ends when every
/// [`Listener`] for it is gone.
pub struct ListenerStream {
    queue: Arc<Queue>,
}

impl Listener {
    /// A queue holding at most `capacity` notifications (at least one).
    pub fn channel(capacity: usize) -> (Listener, ListenerStream) {
        Self::named_channel("listener", capacity)
    }

    /// Like [`channel`](Self::channel), with a name used in warnings.
    pub fn named_channel(name: &'static str, capacity: usize) -> (Listener, ListenerStream) {
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
        });
        (
            Listener {
                queue: queue.clone(),
            },
            ListenerStream { queue },
        )
    }

    /// A listener that calls `f` for each notification, on a task of its
    /// own. A panic in `f` is caught and logged; later notifications still
    /// arrive. Needs a tokio runtime.
    pub fn from_fn(capacity: usize, f: impl FnMut(Notification) + Send + 'static) -> Listener {
        let (listener, mut stream) = Self::named_channel("callback listener", capacity);
        let mut f = f;
        tokio::spawn(async move {
            use futures::StreamExt;
            while let Some(n) = stream.next().await {
                let method = n.method.clone();
                if catch_unwind(AssertUnwindSafe(|| f(n))).is_err() {
                    tracing::error!(%method, "a notification listener panicked; it keeps receiving");
                }
            }
        });
        listener
    }

    /// A listener that discards everything.
    pub fn discard() -> Listener {
        let (listener, stream) = Self::named_channel("discard", 1);
        drop(stream);
        listener
    }

    /// Queues a notification. When the queue is full the oldest entry is
    /// dropped, counted and warned about; when the receiver is gone the
    /// notification is discarded. Never blocks.
    pub fn push(&self, notification: Notification) {
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
            state.items.push_back(notification);
            state.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// How many notifications were dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.queue.dropped.load(Ordering::Relaxed)
    }

    /// Whether the receiving half still exists.
    pub fn is_connected(&self) -> bool {
        self.queue.lock().receiver_alive
    }
}

impl Clone for Listener {
    fn clone(&self) -> Self {
        self.queue.senders.fetch_add(1, Ordering::Relaxed);
        Listener {
            queue: self.queue.clone(),
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if self.queue.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            let waker = self.queue.lock().waker.take();
            if let Some(w) = waker {
                w.wake();
            }
        }
    }
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listener")
            .field("name", &self.queue.name)
            .field("capacity", &self.queue.capacity)
            .field("dropped", &self.dropped())
            .finish()
    }
}

impl ListenerStream {
    /// The next notification, or `None` once every sender is gone and the
    /// queue is empty.
    pub async fn recv(&mut self) -> Option<Notification> {
        futures::StreamExt::next(self).await
    }

    /// A notification already queued, without waiting.
    pub fn try_recv(&mut self) -> Option<Notification> {
        self.queue.lock().items.pop_front()
    }

    /// How many notifications were dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.queue.dropped.load(Ordering::Relaxed)
    }
}

impl Stream for ListenerStream {
    type Item = Notification;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Notification>> {
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

impl Drop for ListenerStream {
    fn drop(&mut self) {
        let mut state = self.queue.lock();
        state.receiver_alive = false;
        state.items.clear();
    }
}

impl std::fmt::Debug for ListenerStream {
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
