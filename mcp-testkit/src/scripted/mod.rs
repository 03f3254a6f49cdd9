//! The scripted transport: a server played from a script.
//!
//! A [`Script`] is a list of steps, played in order by a task at the other
//! end of an in-memory wire: expect a request (by method, optionally id and
//! a predicate on its params) and answer it with a result, an error,
//! notifications first, after a delay, never, or by dying; expect a
//! notification; send a notification unprompted; send a server request and
//! check the client's answer; wait; die. [`ScriptedTransport`] is an
//! [`Engine`] over that wire, so it keeps the whole transport contract
//! (`tests/contract_scripted.rs` runs the contract suite on the same wire),
//! and it records everything the client sent ([`ScriptedTransport::sent`]).
//!
//! Anything that does not match the script (a different method, params the
//! predicate refuses, a message after the script ended) is a mismatch: it
//! ends the connection (pending requests fail with
//! [`TransportError::ServerGone`] whose reason holds the mismatch, so the
//! client under test does not hang) and is reported, the expected step and
//! the actual message side by side, by [`ScriptedTransport::finish`].
//! Steps left unused fail `finish` too, and fail the test when the
//! transport is dropped without `finish` (unless the thread is already
//! panicking).
//!
//! ```
//! use mcp_protocol::{Notification, Request};
//! use mcp_testkit::scripted::{Script, ScriptedTransport};
//! use mcp_transport::{ConnectionHandlers, RequestOptions, Transport};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let script = Script::new()
//!     .expect_request("initialize")
//!     .respond(json!({ "protocolVersion": "2025-06-18", "capabilities": {} }))
//!     .expect_notification("notifications/initialized")
//!     .expect_request("tools/call")
//!     .with_params(|p| p["name"] == "echo")
//!     .respond_error(-32602, "unknown tool", Some(json!({ "tool": "echo" })));
//! let transport = ScriptedTransport::new(script, ConnectionHandlers::discard());
//!
//! let init = Request::new(1, "initialize", Some(json!({})));
//! let result = transport.request(init, RequestOptions::new()).await.unwrap();
//! assert_eq!(result["resultType"], "complete");
//! transport.notify(Notification::new("notifications/initialized", None)).unwrap();
//! let call = Request::new(2, "tools/call", Some(json!({ "name": "echo" })));
//! let error = transport.request(call, RequestOptions::new()).await.unwrap_err();
//! assert_eq!(error.rpc_code(), Some(-32602));
//!
//! transport.finish().await.unwrap();
//! assert_eq!(transport.sent().len(), 3);
//! # }
//! ```

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use mcp_protocol::{Message, Notification, Request};
use mcp_transport::{
    CancellationToken, ConnectionHandlers, Connector, Engine, GoneInfo, RequestOptions,
    ResponseFuture, Transport, TransportError,
};
use tokio::sync::Notify;

use crate::contract::memory_harness;

mod player;
mod script;

pub use player::ScriptError;
pub use script::{ExpectAnswer, ExpectRequest, Script};

use player::{Player, Shared, State};
use script::Step;

/// A transport whose server plays a [`Script`]; see the module docs.
pub struct ScriptedTransport {
    engine: Engine,
    shared: Arc<Shared>,
    stop: CancellationToken,
}

impl ScriptedTransport {
    /// Starts playing `script`; inbound traffic goes to `handlers`, as on
    /// every transport. Needs a tokio runtime.
    pub fn new(script: Script, handlers: ConnectionHandlers) -> Self {
        let (engine, peer) = memory_harness(handlers);
        let descriptions = script.steps.iter().map(Step::describe).collect();
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                descriptions,
                next: 0,
                mismatches: Vec::new(),
                waiting: false,
                delayed: 0,
                stopped: false,
                reported: false,
            }),
            changed: Notify::new(),
            tap: peer.tap(),
        });
        let stop = CancellationToken::new();
        let player = Player {
            engine: engine.clone(),
            pushback: Mutex::new(VecDeque::new()),
            shared: shared.clone(),
            ignored: script.ignored,
            total: script.steps.len(),
        };
        let steps: VecDeque<Step> = script.steps.into();
        let stopped = stop.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = stopped.cancelled() => {}
                _ = player.play(steps) => {}
            }
        });
        ScriptedTransport {
            engine,
            shared,
            stop,
        }
    }

    /// A connector handing out one scripted transport per script, in order.
    pub fn connector(scripts: impl IntoIterator<Item = Script>) -> ScriptedConnector {
        ScriptedConnector::new(scripts)
    }

    /// Everything the client sent so far, in order: requests,
    /// notifications, wire cancels (as `notifications/cancelled`), answers
    /// to server requests.
    pub fn sent(&self) -> Vec<Message> {
        self.shared.tap.log()
    }

    /// The engine underneath (its correlator, for instance).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Lets the script catch up with what the client sent (and with
    /// delayed answers), then reports mismatches and unused steps. After
    /// this, dropping the transport checks nothing more.
    pub async fn finish(&self) -> Result<(), ScriptError> {
        loop {
            let changed = self.shared.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let queued = self.shared.tap.drain();
            {
                let mut state = self.shared.lock();
                let idle = state.stopped || (state.waiting && !queued);
                if idle && state.delayed == 0 {
                    state.reported = true;
                    return match self.shared.error(&state) {
                        Some(e) => Err(e),
                        None => Ok(()),
                    };
                }
            }
            changed.await;
        }
    }

    /// [`finish`](Self::finish), panicking with the report on failure.
    #[track_caller]
    pub fn assert_done(&self) -> impl Future<Output = ()> + '_ {
        let caller = std::panic::Location::caller();
        async move {
            if let Err(e) = self.finish().await {
                panic!("{e}(checked at {caller})");
            }
        }
    }
}

impl Transport for ScriptedTransport {
    fn request(&self, request: Request, options: RequestOptions) -> ResponseFuture {
        self.engine.request(request, options)
    }

    fn notify(&self, notification: Notification) -> Result<(), TransportError> {
        self.engine.notify(notification)
    }

    fn close(&self) -> BoxFuture<'static, ()> {
        self.engine.close()
    }

    fn is_alive(&self) -> bool {
        self.engine.is_alive()
    }
}

impl Drop for ScriptedTransport {
    fn drop(&mut self) {
        self.stop.cancel();
        if std::thread::panicking() {
            return;
        }
        let state = self.shared.lock();
        if state.reported {
            return;
        }
        if let Some(e) = self.shared.error(&state) {
            drop(state);
            panic!(
                "{e}(the scripted transport was dropped without `finish().await`, \
                 which lets the script catch up before judging)"
            );
        }
    }
}

impl fmt::Debug for ScriptedTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.lock();
        f.debug_struct("ScriptedTransport")
            .field("engine", &self.engine)
            .field("next_step", &state.next)
            .field("steps", &state.descriptions.len())
            .field("mismatches", &state.mismatches.len())
            .finish()
    }
}

/// Hands out one [`ScriptedTransport`] per script, in order, and keeps
/// them for inspection. When the scripts run out, a connect fails with
/// [`TransportError::ServerGone`].
pub struct ScriptedConnector {
    scripts: Mutex<VecDeque<Script>>,
    made: Mutex<Vec<Arc<ScriptedTransport>>>,
}

impl ScriptedConnector {
    /// A connector for these scripts.
    pub fn new(scripts: impl IntoIterator<Item = Script>) -> Self {
        ScriptedConnector {
            scripts: Mutex::new(scripts.into_iter().collect()),
            made: Mutex::new(Vec::new()),
        }
    }

    /// The transports made so far, in order.
    pub fn transports(&self) -> Vec<Arc<ScriptedTransport>> {
        self.made.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// How many scripts are not used yet.
    pub fn scripts_left(&self) -> usize {
        self.scripts.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// [`ScriptedTransport::finish`] on every transport made, and fails
    /// when scripts were left unused.
    pub async fn finish(&self) -> Result<(), ScriptError> {
        let mut all = ScriptError {
            mismatches: Vec::new(),
            unused: Vec::new(),
        };
        for (i, t) in self.transports().iter().enumerate() {
            if let Err(e) = t.finish().await {
                all.mismatches.extend(
                    e.mismatches
                        .into_iter()
                        .map(|m| format!("connection {}: {m}", i + 1)),
                );
                all.unused.extend(
                    e.unused
                        .into_iter()
                        .map(|u| format!("connection {}: {u}", i + 1)),
                );
            }
        }
        let left = self.scripts_left();
        if left > 0 {
            all.unused.push(format!("{left} script(s) never connected"));
        }
        if all.mismatches.is_empty() && all.unused.is_empty() {
            Ok(())
        } else {
            Err(all)
        }
    }
}

impl Connector for ScriptedConnector {
    fn connect(
        &self,
        handlers: ConnectionHandlers,
    ) -> BoxFuture<'static, Result<Arc<dyn Transport>, TransportError>> {
        let script = self
            .scripts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop_front();
        let result = match script {
            Some(script) => {
                let t = Arc::new(ScriptedTransport::new(script, handlers));
                self.made
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(t.clone());
                Ok(t as Arc<dyn Transport>)
            }
            None => Err(TransportError::gone(GoneInfo::new(
                "the scripted connector has no script left",
            ))),
        };
        Box::pin(std::future::ready(result))
    }
}

impl fmt::Debug for ScriptedConnector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptedConnector")
            .field("scripts_left", &self.scripts_left())
            .field("made", &self.transports().len())
            .finish()
    }
}
