//! The state a fanned-out session shares: its servers (members), where
//! each tool, prompt and resource of the merged lists lives, and the
//! client's side (where notifications go).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use mcp_protocol::error_codes::{INVALID_PARAMS, METHOD_NOT_FOUND};
use mcp_protocol::{Notification, Request, RequestId};
use mcp_transport::{Listener, RequestOptions, Transport, TransportError};
use serde_json::Value;
use tokio::sync::Notify;

/// How names are given to the tools and prompts of many servers: the
/// `(server, name)` pairs in, one distinct name each out, in order.
pub(crate) type Names = Arc<dyn Fn(&[(&str, &str)]) -> Vec<String> + Send + Sync>;

/// How long one server has to answer a request the bridge makes of every
/// server (`initialize`, a page of a list, `logging/setLevel`); one that
/// takes longer is left out of the answer.
pub(crate) const EACH: Duration = Duration::from_secs(60);

/// How long a request that comes before any `initialize` waits for one
/// to begin, before it is refused.
pub(crate) const BEFORE_INITIALIZE: Duration = Duration::from_millis(500);

/// One server of the session.
pub(crate) struct Member {
    /// Its name (the prefix of its tools and prompts).
    pub(crate) name: String,
    pub(crate) transport: Arc<dyn Transport>,
    /// Its answer to `initialize`, once it gave one.
    pub(crate) initialized: OnceLock<Value>,
    /// Set when it is gone (died, or failed its handshake): the client was
    /// told, and nothing more is sent to it.
    pub(crate) gone: AtomicBool,
    /// Whether it was told `notifications/initialized`.
    pub(crate) told: AtomicBool,
}

impl Member {
    pub(crate) fn new(name: String, transport: Arc<dyn Transport>) -> Member {
        Member {
            name,
            transport,
            initialized: OnceLock::new(),
            gone: AtomicBool::new(false),
            told: AtomicBool::new(false),
        }
    }

    /// Whether it can still be asked.
    pub(crate) fn is_live(&self) -> bool {
        !self.gone.load(Ordering::Acquire) && self.transport.is_alive()
    }

    /// Whether its `initialize` answer says it has `capability`; a server
    /// not yet initialized is asked anyway (it says itself that it has
    /// none).
    pub(crate) fn has(&self, capability: &str) -> bool {
        self.initialized.get().is_none_or(|result| {
            result
                .get("capabilities")
                .and_then(|c| c.get(capability))
                .is_some()
        })
    }
}

/// Where each entry of the merged lists lives: the member's index, and
/// for tools and prompts the name its server gave it.
#[derive(Default)]
pub(crate) struct Routes {
    pub(crate) tools: HashMap<String, (usize, String)>,
    pub(crate) prompts: HashMap<String, (usize, String)>,
    /// By URI (the first server that listed it).
    pub(crate) resources: HashMap<String, usize>,
    /// By URI template.
    pub(crate) templates: HashMap<String, usize>,
}

/// The session's shared state.
pub(crate) struct Shared {
    pub(crate) members: Vec<Member>,
    pub(crate) names: Names,
    pub(crate) routes: Mutex<Routes>,
    /// Where notifications for the client go (the handlers the connector
    /// was given).
    pub(crate) to_client: Listener,
    /// What the client is told the server is: `(name, version)`.
    pub(crate) info: (String, String),
    /// The client's `initialize` answer, once given.
    pub(crate) handshake: OnceLock<Value>,
    /// Whether an `initialize` is being answered (or was).
    pub(crate) begun: AtomicBool,
    /// Told when an `initialize` begins, is answered, or fails.
    pub(crate) settled: Notify,
    /// Whether the client sent `notifications/initialized`.
    pub(crate) client_initialized: AtomicBool,
    pub(crate) closed: AtomicBool,
    next_id: AtomicU64,
}

impl Shared {
    pub(crate) fn new(
        members: Vec<Member>,
        names: Names,
        to_client: Listener,
        info: (String, String),
    ) -> Shared {
        Shared {
            members,
            names,
            routes: Mutex::new(Routes::default()),
            to_client,
            info,
            handshake: OnceLock::new(),
            begun: AtomicBool::new(false),
            settled: Notify::new(),
            client_initialized: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            next_id: AtomicU64::new(0),
        }
    }

    /// Whether the client's session is open. A request that comes while
    /// its `initialize` is being answered (a client that does not wait for
    /// the answer) waits for it, and one that comes first waits
    /// [`BEFORE_INITIALIZE`] for an `initialize` to begin (each request is
    /// handled on a task of its own, so the one sent first may start
    /// later); false when none came, or it failed.
    pub(crate) async fn opened(&self) -> bool {
        let deadline = tokio::time::Instant::now() + BEFORE_INITIALIZE;
        loop {
            let settled = self.settled.notified();
            if self.handshake.get().is_some() {
                return true;
            }
            if self.begun.load(Ordering::Acquire) {
                settled.await;
            } else if tokio::time::timeout_at(deadline, settled).await.is_err() {
                return self.handshake.get().is_some();
            }
        }
    }

    /// The routes, for reading or replacing.
    pub(crate) fn routes(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The members that can still be asked, with their indexes.
    pub(crate) fn live(&self) -> impl Iterator<Item = (usize, &Member)> {
        self.members.iter().enumerate().filter(|(_, m)| m.is_live())
    }

    /// The names of the live members, for error messages.
    pub(crate) fn live_names(&self) -> String {
        let names: Vec<&str> = self.live().map(|(_, m)| m.name.as_str()).collect();
        names.join(", ")
    }

    /// A request of the bridge's own to one member, with an id of its own
    /// (`mcp-bridge-N`): the client's ids are the client's.
    pub(crate) async fn ask(
        &self,
        member: &Member,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, TransportError> {
        let n = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let id = RequestId::String(format!("mcp-bridge-{n}"));
        let options = RequestOptions::new().timeout(EACH);
        member
            .transport
            .request(Request::new(id, method, params), options)
            .await
    }

    /// Sends a notification to the client.
    pub(crate) fn notify_client(&self, method: &str) {
        self.to_client.push(Notification::new(method, None));
    }
}

/// A JSON-RPC error as the transport's error, which the bridge relays
/// verbatim.
pub(crate) fn rpc(code: i64, message: impl Into<String>) -> TransportError {
    TransportError::Rpc {
        code,
        message: message.into(),
        data: None,
    }
}

/// `-32602`: no server of the bridge has this entry.
pub(crate) fn unknown(kind: &str, name: &str, shared: &Shared) -> TransportError {
    rpc(
        INVALID_PARAMS,
        format!(
            "unknown {kind} {name:?}: none of the bridge's servers ({}) has it",
            shared.live_names()
        ),
    )
}

/// `-32601`: a method the bridge serving several servers does not route.
pub(crate) fn not_routed(method: &str) -> TransportError {
    rpc(
        METHOD_NOT_FOUND,
        format!("the bridge serving several servers does not route {method}"),
    )
}
