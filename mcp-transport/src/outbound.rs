//! The ordered outbound queue between callers and a transport's writer,
//! bounded by bytes.
//!
//! Callers put messages on it and return at once (the contract's ordering
//! rule); the wire's writer drains it. A peer that stops reading must not
//! make it grow without limit, so it holds at most
//! [`ConnectionLimits::max_outbound_bytes`](crate::ConnectionLimits) of
//! messages (by an estimate of their JSON size), and a request given up
//! before it left the queue is taken out of it rather than cancelled on the
//! wire.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use mcp_protocol::methods::NOTIFICATION_CANCELLED;
use mcp_protocol::{Message, Notification, RequestId};
use serde_json::{Value, json};

/// One item for the wire, in order.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Outbound {
    /// A message to send as it is.
    Message(Message),
    /// Tell the server a request is given up. How is the wire's business:
    /// [`Outbound::into_message`] makes the `notifications/cancelled` that
    /// stdio and legacy HTTP send; modern HTTP closes the request's stream.
    Cancel {
        /// The request given up.
        id: RequestId,
        /// Why, for the server's logs.
        reason: &'static str,
    },
    /// A message already encoded as one line of JSON, newline included:
    /// what an engine made with [`Engine::with_lines`](crate::Engine::with_lines)
    /// queues, so that the caller's task serializes (and frees) its own
    /// message and the writer only copies bytes.
    Line {
        /// The request's id, when the line is a request of ours (so that
        /// one given up before it left the queue can be taken out).
        id: Option<RequestId>,
        /// The JSON and its `\n`.
        line: Vec<u8>,
    },
}

impl Outbound {
    /// The item as a message, a cancel becoming `notifications/cancelled`
    /// (an encoded line is parsed back).
    pub fn into_message(self) -> Message {
        match self {
            Outbound::Message(m) => m,
            Outbound::Line { line, .. } => mcp_protocol::Inbound::parse(&line)
                .ok()
                .and_then(|inbound| inbound.into_messages(|_| {}).into_iter().next())
                .expect("the engine encodes one message per line"),
            Outbound::Cancel { id, reason } => Message::Notification(Notification::new(
                NOTIFICATION_CANCELLED,
                Some(json!({ "requestId": id, "reason": reason })),
            )),
        }
    }

    /// An estimate of the item's JSON size (strings by their length,
    /// without escapes): what the outbound queue is bounded by, and what a
    /// writer can reserve before serializing it.
    pub fn size_hint(&self) -> usize {
        match self {
            Outbound::Message(message) => size_hint(message),
            Outbound::Cancel { reason, .. } => 96 + reason.len(),
            Outbound::Line { line, .. } => line.len(),
        }
    }
}

/// [`Outbound::size_hint`] of a message.
pub(crate) fn size_hint(message: &Message) -> usize {
    match message {
        Message::Request(r) => request_size_hint(r),
        Message::Notification(n) => 48 + n.method.len() + n.params.as_ref().map_or(0, approx_len),
        Message::Response(r) => 48 + approx_len(&r.result),
        Message::Error(e) => {
            64 + e.error.message.len() + e.error.data.as_ref().map_or(0, approx_len)
        }
    }
}

/// [`Outbound::size_hint`] of a request.
pub(crate) fn request_size_hint(r: &mcp_protocol::Request) -> usize {
    64 + r.method.len() + r.params.as_ref().map_or(0, approx_len)
}

/// The JSON size of a value, without escapes: a cheap walk (a string
/// counts by its length), close enough to bound a queue.
fn approx_len(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => 12,
        Value::String(s) => s.len() + 2,
        Value::Array(items) => 2 + items.iter().map(|v| approx_len(v) + 1).sum::<usize>(),
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(k, v)| k.len() + 4 + approx_len(v))
                .sum::<usize>()
        }
    }
}

struct Queued {
    item: Outbound,
    size: usize,
}

#[derive(Default)]
struct State {
    items: VecDeque<Queued>,
    bytes: usize,
    closed: bool,
    /// The writer, when it waits for an item (there is one writer).
    waker: Option<Waker>,
}

/// The shared queue; the engine holds the sending side.
pub(crate) struct Queue {
    state: Mutex<State>,
    limit: usize,
}

/// Why an item was not queued.
pub(crate) enum Refused {
    /// Over the byte limit.
    Full(usize),
    /// The queue is closed: the connection ended.
    Closed,
}

impl Queue {
    pub(crate) fn new(limit: usize) -> Arc<Queue> {
        Arc::new(Queue {
            state: Mutex::new(State::default()),
            limit,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Every update under this lock is a single push or pop.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues a request or a notification, refusing it when it would take
    /// the queue past its limit (a lone item always fits).
    pub(crate) fn push(&self, item: Outbound) -> Result<(), Refused> {
        self.enqueue(item, true)
    }

    /// Queues an item that must not be refused for size: a cancel or an
    /// answer to the server (bounded by what the server sent).
    pub(crate) fn push_always(&self, item: Outbound) -> Result<(), Refused> {
        self.enqueue(item, false)
    }

    fn enqueue(&self, item: Outbound, bounded: bool) -> Result<(), Refused> {
        let size = item.size_hint();
        let waker = {
            let mut state = self.lock();
            if state.closed {
                return Err(Refused::Closed);
            }
            if bounded && !state.items.is_empty() && state.bytes + size > self.limit {
                return Err(Refused::Full(self.limit));
            }
            state.bytes += size;
            state.items.push_back(Queued { item, size });
            state.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
        Ok(())
    }

    /// Gives `value` to `direct` instead of queueing it when the writer
    /// waits for an item (its last poll found the queue empty) and nothing
    /// is queued; hands it back otherwise. `direct` runs under the queue's
    /// lock, so nothing is queued or taken meanwhile: it is the writer's
    /// next step, in order. It must not use the queue.
    pub(crate) fn run_if_idle<T>(&self, value: T, direct: impl FnOnce(T)) -> Result<(), T> {
        let state = self.lock();
        if state.closed || !state.items.is_empty() || state.waker.is_none() {
            return Err(value);
        }
        direct(value);
        Ok(())
    }

    /// Takes a request that has not been written yet out of the queue;
    /// returns whether it was there.
    pub(crate) fn remove_request(&self, id: &RequestId) -> bool {
        let mut state = self.lock();
        let position = state.items.iter().position(|q| match &q.item {
            Outbound::Message(Message::Request(r)) => &r.id == id,
            Outbound::Line {
                id: Some(line_id), ..
            } => line_id == id,
            _ => false,
        });
        match position.and_then(|i| state.items.remove(i)) {
            Some(removed) => {
                state.bytes -= removed.size;
                true
            }
            None => false,
        }
    }

    /// Stops taking items; the receiver drains what is queued, then ends.
    pub(crate) fn close(&self) {
        let waker = {
            let mut state = self.lock();
            state.closed = true;
            state.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    fn pop(state: &mut State) -> Option<Outbound> {
        let queued = state.items.pop_front()?;
        state.bytes -= queued.size;
        Some(queued.item)
    }

    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        self.lock().bytes
    }
}

/// Run once when an [`OutboundReceiver`] is dropped.
pub(crate) type OnDrop = Box<dyn FnOnce() + Send + Sync>;

/// The receiving end of an engine's outbound queue, for the wire's writer.
///
/// Dropping it tells the engine that its writer stopped: if the connection
/// has not already ended (closed, or [`Engine::peer_gone`]), it ends with
/// [`TransportError::ServerGone`] ("the transport's writer stopped"), so
/// pending and later requests fail at once and
/// [`is_alive`](crate::Transport::is_alive) turns false. A writer that
/// knows why it stopped (a write failed, the process exited) reports that
/// with [`Engine::peer_gone`] *before* it drops the receiver, so the
/// caller learns the real cause.
///
/// [`Engine::peer_gone`]: crate::Engine::peer_gone
/// [`TransportError::ServerGone`]: crate::TransportError::ServerGone
pub struct OutboundReceiver {
    queue: Arc<Queue>,
    on_drop: Option<OnDrop>,
}

impl OutboundReceiver {
    pub(crate) fn new(queue: Arc<Queue>, on_drop: Option<OnDrop>) -> Self {
        OutboundReceiver { queue, on_drop }
    }

    /// The next item in order, waiting for one; `None` once the
    /// connection has ended and the queue is drained.
    pub async fn recv(&mut self) -> Option<Outbound> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Polls for the next item, for writers that are hand-written futures.
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Outbound>> {
        let mut state = self.queue.lock();
        if let Some(item) = Queue::pop(&mut state) {
            return Poll::Ready(Some(item));
        }
        if state.closed {
            return Poll::Ready(None);
        }
        state.waker = Some(cx.waker().clone());
        Poll::Pending
    }

    /// The next item if one is queued, without waiting.
    pub fn try_recv(&mut self) -> Option<Outbound> {
        Queue::pop(&mut self.queue.lock())
    }
}

impl Drop for OutboundReceiver {
    fn drop(&mut self) {
        // The engine ends first, so that a request made meanwhile fails
        // with the connection's terminal error rather than a bare refusal;
        // then nothing more is taken.
        if let Some(on_drop) = self.on_drop.take() {
            on_drop();
        }
        self.queue.close();
    }
}

impl std::fmt::Debug for OutboundReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.queue.lock();
        f.debug_struct("OutboundReceiver")
            .field("queued", &state.items.len())
            .field("bytes", &state.bytes)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_protocol::Request;

    fn request(id: i64, text: &str) -> Outbound {
        Outbound::Message(Message::Request(Request::new(
            id,
            "tools/call",
            Some(json!({ "text": text })),
        )))
    }

    #[test]
    fn refuses_past_the_limit_but_takes_a_lone_item() {
        let q = Queue::new(200);
        let big = "x".repeat(1000);
        assert!(q.push(request(1, &big)).is_ok(), "a lone item always fits");
        assert!(matches!(
            q.push(request(2, "small")),
            Err(Refused::Full(200))
        ));
        assert!(
            q.push_always(Outbound::Cancel {
                id: 1.into(),
                reason: "r"
            })
            .is_ok()
        );
        let mut rx = OutboundReceiver::new(q.clone(), None);
        assert!(rx.try_recv().is_some());
        assert!(rx.try_recv().is_some());
        assert_eq!(q.bytes(), 0);
        assert!(q.push(request(3, "small")).is_ok());
    }

    #[test]
    fn a_request_given_up_leaves_the_queue() {
        let q = Queue::new(1 << 20);
        q.push(request(1, "a")).ok();
        q.push(request(2, "b")).ok();
        assert!(q.remove_request(&2.into()));
        assert!(!q.remove_request(&2.into()));
        let mut rx = OutboundReceiver::new(q.clone(), None);
        assert_eq!(rx.try_recv(), Some(request(1, "a")));
        assert_eq!(rx.try_recv(), None);
        assert_eq!(q.bytes(), 0);
    }

    #[tokio::test]
    async fn recv_ends_after_close_and_drain() {
        let q = Queue::new(1 << 20);
        let mut rx = OutboundReceiver::new(q.clone(), None);
        q.push(request(1, "a")).ok();
        q.close();
        assert!(rx.recv().await.is_some());
        assert!(rx.recv().await.is_none());
        assert!(matches!(q.push(request(2, "b")), Err(Refused::Closed)));
    }
}
