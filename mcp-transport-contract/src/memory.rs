//! An in-memory wire: an [`Engine`] whose other end is a [`MemoryPeer`].

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use mcp_protocol::{Inbound, Message};
use mcp_transport::{ConnectionHandlers, Engine, GoneInfo, OutboundReceiver};

use super::Peer;

/// An [`Engine`] over an in-memory wire, and the peer at its other end.
///
/// Nothing is serialized: the peer sees the engine's outbound items as
/// messages (a cancel as `notifications/cancelled`), and what it sends goes
/// straight to [`Engine::receive`]. This is the wire the scripted transport
/// plays its script on; the suite runs on it in `tests/contract_scripted.rs`.
pub fn memory_harness(handlers: ConnectionHandlers) -> (Engine, MemoryPeer) {
    let (engine, outbound) = Engine::new(handlers);
    let peer = MemoryPeer {
        engine: engine.clone(),
        tap: Arc::new(Tap::new(outbound)),
        dead: false,
    };
    (engine, peer)
}

/// The server end of [`memory_harness`]'s wire. It records everything the
/// engine sent, in order ([`sent`](Self::sent)).
pub struct MemoryPeer {
    engine: Engine,
    tap: Arc<Tap>,
    dead: bool,
}

impl MemoryPeer {
    /// Everything the client side sent so far, in order, including what
    /// this peer has not received yet.
    pub fn sent(&self) -> Vec<Message> {
        self.tap.log()
    }

    /// The engine on the client side.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The log of what the engine sent, shared: a double built on this
    /// wire (the testkit's scripted and cassette transports) reads the
    /// engine's messages through it.
    pub fn tap(&self) -> Arc<Tap> {
        self.tap.clone()
    }

    /// Ends the connection as a dead server would, with these details.
    pub fn die_with(&mut self, info: GoneInfo) {
        self.dead = true;
        self.engine.peer_gone(info);
    }
}

impl std::fmt::Debug for MemoryPeer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryPeer")
            .field("engine", &self.engine)
            .field("dead", &self.dead)
            .finish()
    }
}

impl Peer for MemoryPeer {
    fn recv(&mut self) -> BoxFuture<'_, Option<Message>> {
        let tap = self.tap.clone();
        let dead = self.dead;
        Box::pin(async move {
            if dead {
                return None;
            }
            std::future::poll_fn(|cx| tap.poll_recv(cx)).await
        })
    }

    fn send(&mut self, message: Message) -> BoxFuture<'_, ()> {
        if !self.dead {
            self.engine.receive(message);
        }
        Box::pin(std::future::ready(()))
    }

    fn send_raw(&mut self, line: Vec<u8>) -> BoxFuture<'_, ()> {
        if !self.dead {
            match Inbound::parse(&line) {
                Ok(inbound) => self.engine.receive_inbound(inbound),
                Err(error) => self.engine.receive_malformed(error),
            }
        }
        Box::pin(std::future::ready(()))
    }

    /// Ends the connection with a reason only: an in-memory wire has no
    /// process, so no exit status or stderr (a harness that made some up
    /// here would only be checking itself in `peer_death`).
    fn die(&mut self) -> BoxFuture<'_, ()> {
        self.die_with(GoneInfo::new("the in-memory peer died"));
        Box::pin(std::future::ready(()))
    }
}

/// Reads an engine's outbound queue, logging every item as a message.
///
/// Items can be drained into the log without being received
/// ([`log`](Self::log)), so the log is exact at any moment while the
/// receiver still sees every message once, in order. [`MemoryPeer::tap`]
/// shares it with a double that plays the server on the same wire.
pub struct Tap {
    state: Mutex<TapState>,
}

struct TapState {
    rx: OutboundReceiver,
    log: Vec<Message>,
    queue: VecDeque<Message>,
}

impl Tap {
    fn new(rx: OutboundReceiver) -> Tap {
        Tap {
            state: Mutex::new(TapState {
                rx,
                log: Vec::new(),
                queue: VecDeque::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, TapState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Moves whatever the engine queued into the log and the receive
    /// queue; returns whether anything is waiting to be received.
    pub fn drain(&self) -> bool {
        let mut state = self.lock();
        while let Some(item) = state.rx.try_recv() {
            let message = item.into_message();
            state.log.push(message.clone());
            state.queue.push_back(message);
        }
        !state.queue.is_empty()
    }

    /// Everything sent so far.
    pub fn log(&self) -> Vec<Message> {
        self.drain();
        self.lock().log.clone()
    }

    /// The next message, in order.
    pub fn poll_recv(&self, cx: &mut Context<'_>) -> Poll<Option<Message>> {
        let mut state = self.lock();
        if let Some(message) = state.queue.pop_front() {
            return Poll::Ready(Some(message));
        }
        match state.rx.poll_recv(cx) {
            Poll::Ready(Some(item)) => {
                let message = item.into_message();
                state.log.push(message.clone());
                Poll::Ready(Some(message))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}
