//! One downstream client and its own upstream session: the [`Link`] the
//! relay works on, what it knows of the client (its handshake, the tools'
//! schemas, the era each side speaks), and the client's side as the relay
//! sees it ([`Downstream`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use mcp_protocol::error_codes::INTERNAL_ERROR;
use mcp_protocol::methods::NOTIFICATION_TOOLS_LIST_CHANGED;
use mcp_protocol::{ErrorObject, Notification, Request, RequestId};
use mcp_transport::{RequestOptions, ResponseFuture, Transport, TransportError};
use serde_json::Value;

use crate::policy::{Applied, ToolPolicy};
use crate::relayed::{as_sent, relayed_error};
use crate::subscriptions::Subscriptions;
use crate::suspend::{Limits, Suspended};
use crate::tool_search::Catalog;
use crate::translate::Translation;

/// The client's side of a link, as the relay sees it: where what the
/// server sends goes. `during` names the client's request a message
/// belongs to, when the bridge knows it (a call's progress, a server
/// request that came on a call's own stream), so a client over HTTP gets
/// it on that request's stream.
pub(crate) trait Downstream: Send + Sync + 'static {
    /// Sends the client a notification.
    fn notify(
        &self,
        notification: Notification,
        during: Option<&RequestId>,
    ) -> Result<(), TransportError>;
    /// Sends the client a request (the server's, relayed) and waits for
    /// its answer.
    fn request(&self, request: Request, during: Option<&RequestId>) -> ResponseFuture;
    /// Where lines for the client go as they are, if it takes them.
    fn line_sender(&self) -> Option<mcp_transport::LineSender> {
        None
    }
}

/// A client over one byte stream: every message goes on it, whatever it
/// belongs to.
impl Downstream for mcp_transport_stdio::StreamTransport {
    fn notify(
        &self,
        notification: Notification,
        _: Option<&RequestId>,
    ) -> Result<(), TransportError> {
        Transport::notify(self, notification)
    }
    fn request(&self, request: Request, _: Option<&RequestId>) -> ResponseFuture {
        Transport::request(self, request, RequestOptions::new())
    }
    fn line_sender(&self) -> Option<mcp_transport::LineSender> {
        Transport::line_sender(self)
    }
}

/// Which era the bridge speaks to its server.
///
/// ```
/// assert_eq!(mcp_bridge::UpstreamEra::default(), mcp_bridge::UpstreamEra::AsTheClient);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpstreamEra {
    /// The client's own; a legacy client whose server refuses the
    /// handshake (it speaks 2026-07-28 only) is translated.
    #[default]
    AsTheClient,
    /// 2026-07-28: a legacy client's `initialize` is answered from
    /// `server/discover` and each of its requests translated, even when
    /// the server would take the handshake.
    Modern,
    /// The handshake era: a 2026-07-28 client's `server/discover` is
    /// answered from the server's `initialize` (which the bridge sends
    /// once), and each of its requests goes without the `_meta` only
    /// 2026-07-28 has. The server's own requests during a call (elicitation,
    /// sampling, roots) become an `input_required` result, and the call is
    /// held until the client retries with its answers (see
    /// [`Bridge::suspended_calls`](crate::Bridge::suspended_calls)).
    Legacy,
}

/// One downstream client and its upstream session.
#[derive(Default)]
pub(crate) struct Link {
    pub(crate) downstream: OnceLock<Arc<dyn Downstream>>,
    /// The server's session: replaced when the server is restarted.
    pub(crate) upstream: RwLock<Option<Arc<dyn Transport>>>,
    /// The client's `initialize` params, and whether it said
    /// `initialized`: what a restarted server is told again.
    pub(crate) handshake: Mutex<Handshake>,
    /// Ids of the requests the bridge sends the downstream client (the
    /// server's requests, relayed): the client's connection is ours, so
    /// the ids are ours to give.
    pub(crate) next_id: AtomicI64,
    /// The client's calls being relayed now.
    pub(crate) in_flight: AtomicUsize,
    /// Whether the session is of the legacy era (it began with
    /// `initialize`): its results carry no `resultType`.
    pub(crate) legacy: OnceLock<bool>,
    /// What to do when the server asks for authorization, added to the
    /// error the client gets.
    pub(crate) authorization_hint: Option<String>,
    /// Which tools the client sees and may call.
    pub(crate) tools: Applied,
    /// The tools' input schemas, from the lists relayed.
    pub(crate) schemas: Schemas,
    /// Under tool search, the server's tools as last listed; `None`: the
    /// client is served the server's own list.
    pub(crate) search: Option<Catalog>,
    /// Set when a legacy client is served by a 2026-07-28 server.
    pub(crate) translation: OnceLock<Arc<Translation>>,
    /// The era spoken to the server: a client of the other era is
    /// translated.
    pub(crate) upstream_era: UpstreamEra,
    /// Set when a 2026-07-28 client is served by a legacy server: the
    /// `server/discover` result made from its `initialize`.
    pub(crate) downgraded: tokio::sync::OnceCell<Value>,
    /// The calls of a 2026-07-28 client of a legacy server held between
    /// its retries.
    pub(crate) suspended: Arc<Suspended>,
    /// The `subscriptions/listen` of a 2026-07-28 client of a legacy
    /// server, served from its notifications.
    pub(crate) subscriptions: Subscriptions,
    /// The tap on the server's lines, when the client's calls may pass
    /// to it as lines (see `passthrough.rs`): every connection to the
    /// server, a restart's too, is made with it.
    pub(crate) server_lines: OnceLock<Arc<dyn mcp_transport::LineTap>>,
}

impl Link {
    /// `upstream_era`: the era spoken to the server, a client of the
    /// other era translated; `tool_search`: the client is served
    /// `search_tools` and `call_tool` in place of the server's tools;
    /// `held`: how many of its calls are held between a 2026-07-28
    /// client's retries, and for how long.
    pub(crate) fn new(
        authorization_hint: Option<String>,
        tools: ToolPolicy,
        upstream_era: UpstreamEra,
        tool_search: bool,
        held: Limits,
    ) -> Link {
        Link {
            authorization_hint,
            tools: Applied::new(tools),
            upstream_era,
            search: tool_search.then(Catalog::default),
            suspended: Arc::new(Suspended::new(held)),
            ..Link::default()
        }
    }

    pub(crate) fn set_upstream(&self, upstream: Arc<dyn Transport>) {
        *self.upstream.write().unwrap_or_else(|p| p.into_inner()) = Some(upstream);
    }

    /// The server's session now.
    pub(crate) fn upstream(&self) -> Option<Arc<dyn Transport>> {
        self.upstream
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The client's handshake so far.
    pub(crate) fn handshake(&self) -> Handshake {
        self.handshake
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Sends a notification to the client, if it is there.
    pub(crate) fn notify_client(&self, notification: Notification) {
        self.notify_client_during(notification, None);
    }

    /// Sends a notification that belongs to the client's request `during`.
    pub(crate) fn notify_client_during(
        &self,
        notification: Notification,
        during: Option<&RequestId>,
    ) {
        if let Some(catalog) = &self.search
            && notification.method == NOTIFICATION_TOOLS_LIST_CHANGED
        {
            // The client's two tools stay as they are; what changed is
            // what a search finds, so the list is fetched again.
            catalog.stale();
            return;
        }
        let Some(client) = self.downstream.get() else {
            tracing::debug!(method = %notification.method, "a notification before the client was connected");
            return;
        };
        if let Err(e) = client.notify(notification, during) {
            tracing::debug!(error = %e, "a notification for the client was not sent");
        }
    }

    pub(crate) fn set_downstream(&self, downstream: Arc<dyn Downstream>) {
        let _ = self.downstream.set(downstream);
    }

    /// How many of the client's calls are being relayed.
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// Marks the link as one of 2026-07-28 requests, whatever they send
    /// (an `initialize` among them is relayed, not a handshake).
    #[cfg(feature = "http")]
    pub(crate) fn set_modern(&self) {
        let _ = self.legacy.set(false);
    }

    /// Serves this legacy client by translating to 2026-07-28.
    pub(crate) fn translate(&self, translation: Translation) {
        let _ = self.translation.set(Arc::new(translation));
    }

    /// Asks the client a request of the server's (elicitation, sampling,
    /// roots, ping), under an id of the bridge's own; `during`: the
    /// client's request it belongs to.
    pub(crate) async fn ask_client(
        &self,
        request: Request,
        during: Option<&RequestId>,
    ) -> Result<Value, ErrorObject> {
        if self.downgraded.initialized() {
            return self.suspended.ask(request, during).await;
        }
        let Some(downstream) = self.downstream.get().cloned() else {
            return Err(ErrorObject::new(
                INTERNAL_ERROR,
                "the bridge has no client to ask yet",
            ));
        };
        let id = RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed) + 1);
        let method = request.method.clone();
        let relayed = Request { id, ..request };
        match downstream.request(relayed, during).await {
            Ok(result) => Ok(as_sent(result, self.legacy())),
            Err(error) => Err(relayed_error(&method, error, "client")),
        }
    }

    pub(crate) fn legacy(&self) -> bool {
        self.legacy.get().copied().unwrap_or(false)
    }
}

/// Tools' input schemas by name, learned from the `tools/list` results
/// the bridge relays: what a 2026-07-28 call's `Mcp-Param-*` headers are
/// made from.
#[derive(Default)]
pub(crate) struct Schemas(Mutex<HashMap<String, Value>>);

impl Schemas {
    /// Keeps the input schemas of a `tools/list` result.
    pub(crate) fn learn(&self, list: &Value) {
        let Some(tools) = list.get("tools").and_then(Value::as_array) else {
            return;
        };
        let mut schemas = self.0.lock().unwrap_or_else(|p| p.into_inner());
        for tool in tools {
            if let (Some(name), Some(schema)) = (
                tool.get("name").and_then(Value::as_str),
                tool.get("inputSchema"),
            ) {
                schemas.insert(name.to_owned(), schema.clone());
            }
        }
    }

    /// The schema of the tool `name`, if a list named it.
    pub(crate) fn get(&self, name: &str) -> Option<Value> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned()
    }

    /// The `Mcp-Param-*` headers of a `tools/call`'s params.
    pub(crate) fn param_headers(&self, params: Option<&Value>) -> Vec<(String, String)> {
        let name = params.and_then(|p| p.get("name")).and_then(Value::as_str);
        let Some(schema) = name.and_then(|n| self.get(n)) else {
            return Vec::new();
        };
        let empty = serde_json::Map::new();
        let arguments = params
            .and_then(|p| p.get("arguments"))
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        match schema.as_object() {
            Some(schema) => mcp_protocol::headers::param_headers(schema, arguments),
            None => Vec::new(),
        }
    }
}

/// What the client said to open its session, kept for a restarted server.
#[derive(Clone, Debug, Default)]
pub(crate) struct Handshake {
    /// The params of its `initialize`.
    pub(crate) initialize: Option<Value>,
    /// Whether it sent `notifications/initialized`.
    pub(crate) initialized: bool,
}

/// What every link of a bridge serving over HTTP is made with.
#[cfg(feature = "http")]
#[derive(Clone)]
pub(crate) struct LinkSettings {
    /// Connects to the server.
    pub(crate) upstream: Arc<dyn mcp_transport::Connector>,
    /// What to do when the server asks for authorization.
    pub(crate) authorization_hint: Option<String>,
    /// Which tools clients see and may call.
    pub(crate) tools: ToolPolicy,
    /// The era spoken to the server.
    pub(crate) upstream_era: UpstreamEra,
    /// Whether clients are served tool search.
    pub(crate) tool_search: bool,
    /// How many calls are held for a 2026-07-28 client's retries, and
    /// for how long.
    pub(crate) held: Limits,
}

#[cfg(feature = "http")]
impl LinkSettings {
    /// A fresh link to the server: its own session, connected with the
    /// relay's handlers.
    pub(crate) async fn connect(
        &self,
        handlers: impl FnOnce(&Arc<Link>) -> mcp_transport::ConnectionHandlers,
    ) -> Result<Arc<Link>, TransportError> {
        let link = Arc::new(Link::new(
            self.authorization_hint.clone(),
            self.tools.clone(),
            self.upstream_era,
            self.tool_search,
            self.held,
        ));
        let upstream = self.upstream.connect(handlers(&link)).await?;
        link.set_upstream(upstream);
        Ok(link)
    }
}
