//! Lines passed through a newline-delimited transport as they are: a
//! [`LineTap`] sees each line its transport reads before the engine does
//! and may take it; a [`LineSender`] queues a line of JSON on the
//! transport's ordered outbound queue without parsing it.
//!
//! A relay between two such transports (a bridge from one stdio peer to
//! another, where ids need no renumbering) can hand a message from one
//! side to the other without building and serializing it again; whatever
//! it does not take goes through the engine as usual.

use mcp_protocol::RequestId;

use crate::outbound::{Outbound, Queue, Refused};
use crate::{Engine, TransportError};

/// Sees every line a newline-delimited transport reads, on its read loop,
/// before the engine; a line it takes never reaches the engine.
///
/// It runs on the read loop, so it must not block: queueing the line on
/// another transport ([`LineSender::send`]) is what it is for.
///
/// ```
/// use mcp_transport::{ConnectionHandlers, LineTap};
///
/// /// Takes nothing, counting lines.
/// #[derive(Default)]
/// struct Counting(std::sync::atomic::AtomicUsize);
///
/// impl LineTap for Counting {
///     fn take(&self, _line: &[u8]) -> bool {
///         self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
///         false
///     }
/// }
///
/// let handlers = ConnectionHandlers::discard().with_line_tap(std::sync::Arc::new(Counting::default()));
/// assert!(handlers.line_tap.is_some());
/// ```
pub trait LineTap: Send + Sync + 'static {
    /// Whether the tap took `line` (one JSON text, without its newline).
    fn take(&self, line: &[u8]) -> bool;

    /// A line over the transport's size limit was skipped, unread: its
    /// first bytes (`prefix`, enough to find an id with
    /// [`mcp_protocol::framing::sniff`]), the bytes seen and the limit.
    /// The engine is told next (it logs it, and fails or refuses what the
    /// id names among its own requests); a tap whose lines carry other
    /// requests answers those. Nothing by default.
    fn too_large(&self, prefix: &[u8], size: usize, limit: usize) {
        let _ = (prefix, size, limit);
    }
}

/// What a line queued with [`LineSender::send`] is: the queue bounds
/// requests and notifications by its byte limit, never answers or cancels.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LineKind {
    /// A request with this id (the peer's id, passed on: the engine's
    /// own requests never name it, so giving one up never unqueues it).
    Request(RequestId),
    /// A notification.
    Notification,
    /// A `notifications/cancelled`: like the engine's own cancels, queued
    /// past the byte limit, since a cancel refused leaves the peer working
    /// for nobody.
    Cancel,
    /// An answer to the peer's request (a result or an error).
    Answer,
}

/// Queues lines of JSON on a newline-delimited transport's outbound queue,
/// in order with everything else it sends; see
/// [`Transport::line_sender`](crate::Transport::line_sender).
#[derive(Clone, Debug)]
pub struct LineSender(Engine);

impl LineSender {
    pub(crate) fn new(engine: Engine) -> LineSender {
        LineSender(engine)
    }

    /// Queues `line` (one JSON text; the newline is added if missing).
    /// A request or notification over the queue's byte limit fails with
    /// [`TransportError::QueueFull`]; after the connection ended, every
    /// line fails with the error its requests fail with.
    ///
    /// ```
    /// use mcp_transport::{ConnectionHandlers, Engine, LineKind, Outbound, Transport};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let (engine, mut outbound) = Engine::with_lines(ConnectionHandlers::discard());
    /// let lines = engine.line_sender().expect("a line engine takes lines");
    /// lines.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec(), LineKind::Notification).unwrap();
    /// match outbound.try_recv() {
    ///     Some(Outbound::Line { line, .. }) => assert!(line.ends_with(b"}\n")),
    ///     other => panic!("{other:?}"),
    /// }
    /// # }
    /// ```
    pub fn send(&self, mut line: Vec<u8>, kind: LineKind) -> Result<(), TransportError> {
        if line.last() != Some(&b'\n') {
            line.push(b'\n');
        }
        let queue: &Queue = self.0.queue();
        let pushed = match kind {
            LineKind::Request(_) | LineKind::Notification => {
                queue.push(Outbound::Line { id: None, line })
            }
            LineKind::Answer | LineKind::Cancel => {
                queue.push_always(Outbound::Line { id: None, line })
            }
        };
        pushed.map_err(|refused| match refused {
            Refused::Full(limit) => TransportError::QueueFull { limit },
            Refused::Closed => self.0.terminal(),
        })
    }

    /// Why the connection ended, once it has: the error its requests
    /// fail with (the peer gone and why, or closed).
    pub fn ended(&self) -> Option<TransportError> {
        self.0.ended()
    }
}
