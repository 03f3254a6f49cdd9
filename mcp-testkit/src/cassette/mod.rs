//! The cassette transport: a recorded exchange replayed as a server.
//!
//! Record a session once against a real server (with
//! [`mcp_transport::record::Recorder`], or `mcp --record FILE …`), commit
//! the file, and replay it in tests with no server:
//! [`Cassette::connector`] hands out one [`CassetteTransport`] per
//! recorded connection, each an [`Engine`] over an in-memory wire whose
//! other end replays the recording:
//!
//! - each request the client sends is matched with a recorded request of
//!   the same method and params, ignoring what changes run to run (see
//!   [`MatchRules`]: ids always, progress tokens and trace context by
//!   default, any JSON pointer you name), and answered with the recorded
//!   answer under the client's id — or with the recorded failure (an HTTP
//!   status, a timeout, a dead server);
//! - the server's notifications and requests are played at the point they
//!   came: after the client message that preceded them, progress tokens
//!   and subscription ids rewritten to this run's;
//! - the client's answers to server requests are checked against the
//!   recorded ones;
//! - a request the cassette lacks is answered at once with a JSON-RPC
//!   error ([`MISMATCH_CODE`]) whose message is a readable diff against
//!   the closest recorded request, and is reported by
//!   [`CassetteTransport::finish`], with recorded messages the client never
//!   sent.
//!
//! Requests may come in another order than recorded (concurrent calls); a
//! server message waits only for the client message it followed. Nothing
//! is paced: the recorded timestamps are for people.
//!
//! ```
//! use mcp_protocol::Request;
//! use mcp_testkit::cassette::{Cassette, MatchRules};
//! use mcp_transport::{ConnectionHandlers, Connector, RequestOptions};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let cassette = Cassette::parse(concat!(
//!     r#"{"cassette":"mcp-steady-cassette/1","era":"legacy","verdict":null}"#, "\n",
//!     r#"{"t":0.1,"conn":1,"dir":"send","message":{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}}"#, "\n",
//!     r#"{"t":0.2,"conn":1,"dir":"recv","message":{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}}"#, "\n",
//! ))
//! .unwrap();
//! let connector = cassette.connector(MatchRules::default());
//! let transport = connector.connect(ConnectionHandlers::discard()).await.unwrap();
//!
//! // Another id, the same call: the recorded answer.
//! let call = Request::new(1, "tools/call", Some(json!({"name": "echo", "arguments": {"message": "hi"}})));
//! let result = transport.request(call, RequestOptions::new()).await.unwrap();
//! assert_eq!(result["content"][0]["text"], "Echo: hi");
//!
//! // A changed call: an error whose message says where it differs.
//! let call = Request::new(2, "tools/call", Some(json!({"name": "echo", "arguments": {"message": "bye"}})));
//! let error = transport.request(call, RequestOptions::new()).await.unwrap_err();
//! assert!(error.to_string().contains(r#"/arguments/message: recorded "hi", sent "bye""#));
//! assert!(connector.finish().await.is_err());
//! # }
//! ```

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use mcp_protocol::{Notification, Request};
use mcp_transport::record::failure_from_value;
use mcp_transport::{
    CancellationToken, ConnectionHandlers, Connector, Engine, GoneInfo, RequestOptions,
    ResponseFuture, Transport, TransportError, TransportProfile,
};
use tokio::sync::{Notify, oneshot};

use crate::contract::memory_harness;

mod diff;
mod file;
mod player;
mod rules;
mod timeline;

pub use file::{Cassette, CassetteError};
pub use rules::MatchRules;

use file::Connection;
use player::{Player, Shared, State};
use timeline::Timeline;

/// The JSON-RPC error code of the answer to a request the cassette does
/// not have (in the range JSON-RPC leaves to implementations).
pub const MISMATCH_CODE: i64 = -32099;

impl Cassette {
    /// A connector replaying this cassette's connections, one per connect,
    /// in order.
    pub fn connector(&self, rules: MatchRules) -> CassetteConnector {
        CassetteConnector {
            connections: Mutex::new(self.connections.iter().cloned().collect()),
            recorded: self.connections.len(),
            rules,
            made: Mutex::new(Vec::new()),
        }
    }
}

/// One recorded connection, replayed; see the module docs.
pub struct CassetteTransport {
    engine: Engine,
    shared: Arc<Shared>,
    stop: CancellationToken,
    profile: TransportProfile,
}

impl CassetteTransport {
    fn new(connection: Connection, rules: MatchRules, handlers: ConnectionHandlers) -> Self {
        let (engine, peer) = memory_harness(handlers);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                timeline: Timeline::new(connection.entries),
                mismatches: Vec::new(),
                idle: false,
                stopped: false,
            }),
            changed: Notify::new(),
            tap: peer.tap(),
            failures: Mutex::new(HashMap::new()),
            rules,
        });
        let player = Player {
            engine: engine.clone(),
            peer,
            shared: shared.clone(),
        };
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = stopped.cancelled() => {}
                _ = player.play() => {}
            }
        });
        CassetteTransport {
            engine,
            shared,
            stop,
            profile: connection.profile,
        }
    }

    /// Lets the replay catch up with what the client sent, then reports
    /// each mismatch, and (unless [`MatchRules::allow_unused`]) each
    /// recorded client message never sent.
    pub async fn finish(&self) -> Result<(), CassetteError> {
        loop {
            let changed = self.shared.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let queued = self.shared.tap.drain();
            {
                let state = self.shared.lock();
                if state.stopped || (state.idle && !queued) {
                    let unused = if self.shared.rules.allow_unused {
                        Vec::new()
                    } else {
                        state.timeline.unused(&self.shared.rules)
                    };
                    if state.mismatches.is_empty() && unused.is_empty() {
                        return Ok(());
                    }
                    return Err(CassetteError {
                        mismatches: state.mismatches.clone(),
                        unused,
                    });
                }
            }
            changed.await;
        }
    }
}

impl Transport for CassetteTransport {
    fn request(&self, request: Request, options: RequestOptions) -> ResponseFuture {
        // Registered before the request is queued, so that the player,
        // which sees it only after, always finds it.
        let (tx, rx) = oneshot::channel();
        let id = request.id.clone();
        self.shared.failures().insert(id.clone(), tx);
        let shared = self.shared.clone();
        let answer = self.engine.request(request, options);
        Box::pin(async move {
            let outcome = tokio::select! {
                biased;
                outcome = answer => outcome,
                Ok(failure) = rx => Err(failure),
            };
            shared.failures().remove(&id);
            outcome
        })
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

    /// As recorded.
    fn profile(&self) -> TransportProfile {
        self.profile
    }
}

impl Drop for CassetteTransport {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl std::fmt::Debug for CassetteTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.shared.lock();
        f.debug_struct("CassetteTransport")
            .field("entries", &state.timeline.entries.len())
            .field("mismatches", &state.mismatches.len())
            .finish_non_exhaustive()
    }
}

/// Hands out one [`CassetteTransport`] per recorded connection, in order;
/// see [`Cassette::connector`]. A connection that failed when recorded
/// fails the same way; a connect past the recorded ones fails with
/// [`TransportError::ServerGone`].
pub struct CassetteConnector {
    connections: Mutex<VecDeque<Connection>>,
    recorded: usize,
    rules: MatchRules,
    made: Mutex<Vec<Arc<CassetteTransport>>>,
}

impl CassetteConnector {
    /// The transports made so far, in order.
    pub fn transports(&self) -> Vec<Arc<CassetteTransport>> {
        self.made.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// [`CassetteTransport::finish`] on every connection made; recorded
    /// connections never opened count as unused.
    pub async fn finish(&self) -> Result<(), CassetteError> {
        let mut all = CassetteError {
            mismatches: Vec::new(),
            unused: Vec::new(),
        };
        for (i, t) in self.transports().iter().enumerate() {
            if let Err(e) = t.finish().await {
                let n = i + 1;
                all.mismatches.extend(
                    e.mismatches
                        .into_iter()
                        .map(|m| format!("connection {n}: {m}")),
                );
                all.unused
                    .extend(e.unused.into_iter().map(|u| format!("connection {n}: {u}")));
            }
        }
        let left = self
            .connections
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .len();
        if left > 0 && !self.rules.allow_unused {
            all.unused
                .push(format!("{left} recorded connection(s) never opened"));
        }
        if all.mismatches.is_empty() && all.unused.is_empty() {
            Ok(())
        } else {
            Err(all)
        }
    }
}

impl Connector for CassetteConnector {
    fn connect(
        &self,
        handlers: ConnectionHandlers,
    ) -> BoxFuture<'static, Result<Arc<dyn Transport>, TransportError>> {
        let next = self
            .connections
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop_front();
        let result = match next {
            Some(Connection {
                connect_failure: Some(failure),
                ..
            }) => Err(failure_from_value(&failure)),
            Some(connection) => {
                let t = Arc::new(CassetteTransport::new(
                    connection,
                    self.rules.clone(),
                    handlers,
                ));
                self.made
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(t.clone());
                Ok(t as Arc<dyn Transport>)
            }
            None => Err(TransportError::gone(GoneInfo::new(format!(
                "the cassette recorded {} connection(s) and the client opened another",
                self.recorded
            )))),
        };
        Box::pin(std::future::ready(result))
    }
}

impl std::fmt::Debug for CassetteConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CassetteConnector")
            .field("recorded", &self.recorded)
            .field("made", &self.transports().len())
            .finish_non_exhaustive()
    }
}
