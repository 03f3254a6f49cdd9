//! A request whose exchange runs in its caller's task while the caller
//! waits for it, rather than on a task of its own.
//!
//! Why: a request on a task of its own costs two hand-offs between tasks
//! per call (caller → exchange when it starts, exchange → caller when it
//! delivers) on top of the HTTP client's own (caller → connection →
//! caller). On a multi-threaded runtime one hand-off too many in a row
//! puts a task on the run queue, which wakes an idle worker thread: a pair
//! of context switches per call, the largest part of the latency of one
//! caller's calls. Driven by its caller, a request costs what a bare HTTP
//! client does.
//!
//! The exchange still never depends on being polled to be sent: it is
//! polled once on the caller's call (the request is then with the HTTP
//! client, or on its way to a connection), and any wake that comes while
//! no caller waits for it (never polled yet, or dropped) moves it to a task
//! of its own. The writer does the same before it waits for a request's
//! body to leave ([`Driver::detach`]), so that a future polled once and
//! then set aside cannot hold back the messages after it.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker};

use mcp_transport::{ResponseFuture, TransportError};
use serde_json::Value;

use super::RequestGuard;

/// One request's exchange: its POST and the reading of its answer.
pub(super) type Exchange = Pin<Box<dyn Future<Output = ()> + Send>>;

/// How many times in a row one poll goes round again after a wake that
/// came during it, before it yields to the runtime instead (a budget-spent
/// tokio resource wakes at once, and must not spin).
const MAX_ROUNDS: usize = 4;

/// Who holds a driven exchange, shared by its caller's future and the
/// waker its exchange and answer were polled with.
pub(super) struct Driver {
    state: Mutex<State>,
    runtime: tokio::runtime::Handle,
}

#[derive(Default)]
struct State {
    /// The exchange, while nobody polls it; `None` once it is being
    /// polled, finished, or moved to a task of its own.
    exchange: Option<Exchange>,
    /// The caller's waker, from its last poll; `None` before its first
    /// poll and after it is done.
    caller: Option<Waker>,
    /// The caller is inside [`Driven::poll`].
    polling: bool,
    /// A wake came while it was.
    woken: bool,
    /// The writer waits for this request's body: the exchange is not to
    /// wait for a caller any more.
    detached: bool,
}

impl Driver {
    /// A driver for an exchange about to start: its first poll is under
    /// way (see [`Driven::start`]).
    pub(super) fn new(runtime: tokio::runtime::Handle) -> Arc<Driver> {
        Arc::new(Driver {
            state: Mutex::new(State {
                polling: true,
                ..State::default()
            }),
            runtime,
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Moves the exchange to a task of its own, now if nobody polls it,
    /// or else as soon as its poll ends.
    pub(super) fn detach(&self) {
        let mut state = self.state();
        state.detached = true;
        let exchange = state.exchange.take();
        drop(state);
        if let Some(exchange) = exchange {
            self.runtime.spawn(exchange);
        }
    }

    /// Puts back an exchange a poll has ended with, for the caller's next
    /// poll; or, when it is to go on by itself, spawns it.
    fn park(&self, mut state: MutexGuard<'_, State>, exchange: Option<Exchange>, alone: bool) {
        state.polling = false;
        match exchange {
            Some(exchange) if alone || state.detached => {
                drop(state);
                self.runtime.spawn(exchange);
            }
            exchange => state.exchange = exchange,
        }
    }
}

impl Wake for Driver {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let mut state = self.state();
        state.woken = true;
        if state.polling {
            // The poll under way goes round again.
            return;
        }
        if let Some(caller) = state.caller.clone() {
            drop(state);
            caller.wake();
            return;
        }
        // Nobody waits for it: it goes on by itself.
        let exchange = state.exchange.take();
        drop(state);
        if let Some(exchange) = exchange {
            self.runtime.spawn(exchange);
        }
    }
}

/// The future of a driven request's result.
pub(super) struct Driven {
    driver: Arc<Driver>,
    waker: Waker,
    answer: ResponseFuture,
    /// Closes the request's stream, if it must, once the caller is done.
    guard: Option<RequestGuard>,
}

impl Driven {
    /// Polls `exchange` once, here, and returns the future that drives it
    /// on: `answer` is the engine's future of the request's result, and
    /// `driver` one made by [`Driver::new`] for this exchange.
    pub(super) fn start(
        driver: Arc<Driver>,
        exchange: Exchange,
        answer: ResponseFuture,
        guard: RequestGuard,
    ) -> Driven {
        let waker = Waker::from(driver.clone());
        let mut exchange = Some(exchange);
        {
            // The exchange may open a connection: in the runtime it was
            // built for, wherever the caller runs.
            let _entered = driver.runtime.enter();
            poll_exchange(&mut exchange, &waker);
        }
        let state = driver.state();
        // Woken while polled: it goes on by itself rather than wait for a
        // caller that may not come.
        let woken = state.woken;
        driver.park(state, exchange, woken);
        Driven {
            driver,
            waker,
            answer,
            guard: Some(guard),
        }
    }

    /// The caller is done: the stream is closed if it must be, and what is
    /// left of the exchange (an SSE stream read on after its answer, or
    /// one that ends as its stream closes) goes on by itself.
    fn finish(&mut self) {
        self.guard = None;
        let mut state = self.driver.state();
        state.caller = None;
        let exchange = state.exchange.take();
        drop(state);
        if let Some(exchange) = exchange {
            self.driver.runtime.spawn(exchange);
        }
    }
}

fn poll_exchange(exchange: &mut Option<Exchange>, waker: &Waker) {
    if let Some(e) = exchange
        && e.as_mut().poll(&mut Context::from_waker(waker)).is_ready()
    {
        *exchange = None;
    }
}

impl Future for Driven {
    type Output = Result<Value, TransportError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let mut exchange = {
            let mut state = this.driver.state();
            if !state
                .caller
                .as_ref()
                .is_some_and(|w| w.will_wake(cx.waker()))
            {
                state.caller = Some(cx.waker().clone());
            }
            state.polling = true;
            state.woken = false;
            state.exchange.take()
        };
        // The exchange's and the answer's timers, tasks and connections
        // belong to the runtime the transport was built on, whichever
        // runtime (or none) the caller polls from.
        let _entered = this.driver.runtime.enter();
        for _ in 0..MAX_ROUNDS {
            // The exchange first: an answer it delivers is then ready
            // below, in this same poll, with no wake of the caller's task.
            poll_exchange(&mut exchange, &this.waker);
            let answer = this
                .answer
                .as_mut()
                .poll(&mut Context::from_waker(&this.waker));
            let mut state = this.driver.state();
            if let Poll::Ready(result) = answer {
                this.driver.park(state, exchange, false);
                this.finish();
                return Poll::Ready(result);
            }
            if !std::mem::take(&mut state.woken) {
                this.driver.park(state, exchange, false);
                return Poll::Pending;
            }
        }
        // Still woken after a few rounds: let the runtime run others first.
        let state = this.driver.state();
        this.driver.park(state, exchange, false);
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl Drop for Driven {
    fn drop(&mut self) {
        if self.guard.is_some() {
            self.finish();
        }
    }
}

/// The future of a request the writer sends: the engine's answer, polled
/// in the transport's runtime wherever the caller runs, since its timers
/// (the request's timeout) are armed where it is polled.
pub(super) struct InRuntime {
    pub(super) runtime: tokio::runtime::Handle,
    pub(super) answer: ResponseFuture,
}

impl Future for InRuntime {
    type Output = Result<Value, TransportError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let _entered = self.runtime.enter();
        self.answer.as_mut().poll(cx)
    }
}
