//! The relay between one downstream client and its own upstream session:
//! what each side sends unasked goes to the other, requests carry their
//! ids, params and `_meta` through, answers and errors come back verbatim.
//!
//! Both sides are [`Transport`]s built on the engine, which already does
//! what a peer of either role needs: the downstream client's requests
//! reach this relay as the "server requests" of the downstream connection
//! (each on a task of its own, aborted by the client's
//! `notifications/cancelled`), and the upstream server's requests reach it
//! as those of the upstream connection. Dropping a relayed call's future
//! cancels it on the far side, so a cancel crosses the bridge both ways.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use futures::future::BoxFuture;
use mcp_protocol::error_codes::INTERNAL_ERROR;
use mcp_protocol::meta::PROGRESS_TOKEN;
use mcp_protocol::methods::{
    INITIALIZE, NOTIFICATION_CANCELLED, NOTIFICATION_INITIALIZED, SUBSCRIPTIONS_LISTEN, TOOLS_CALL,
    TOOLS_LIST,
};
use mcp_protocol::{ErrorObject, Notification, Request, RequestId};
use mcp_transport::{
    ConnectionHandlers, Listener, RequestOptions, ResponseFuture, ServerRequestHandler, Transport,
    TransportError,
};
use serde_json::Value;

use crate::policy::{Applied, ToolPolicy};
use crate::translate::{self, Translation};

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
}

/// One downstream client and its upstream session.
#[derive(Default)]
pub(crate) struct Link {
    downstream: OnceLock<Arc<dyn Downstream>>,
    /// The server's session: replaced when the server is restarted.
    upstream: RwLock<Option<Arc<dyn Transport>>>,
    /// The client's `initialize` params, and whether it said
    /// `initialized`: what a restarted server is told again.
    handshake: Mutex<Handshake>,
    /// Ids of the requests the bridge sends the downstream client (the
    /// server's requests, relayed): the client's connection is ours, so
    /// the ids are ours to give.
    next_id: AtomicI64,
    /// The client's calls being relayed now.
    in_flight: AtomicUsize,
    /// Whether the session is of the legacy era (it began with
    /// `initialize`): its results carry no `resultType`.
    legacy: OnceLock<bool>,
    /// What to do when the server asks for authorization, added to the
    /// error the client gets.
    authorization_hint: Option<String>,
    /// Which tools the client sees and may call.
    tools: Applied,
    /// The tools' input schemas, from the lists relayed.
    pub(crate) schemas: Schemas,
    /// Set when a legacy client is served by a 2026-07-28 server.
    translation: OnceLock<Arc<Translation>>,
    /// Whether a legacy client's `initialize` goes straight to
    /// translation, without trying the server's handshake.
    modern_upstream: bool,
}

impl Link {
    /// `modern_upstream`: the server is spoken to in 2026-07-28 whatever
    /// the client speaks (a legacy client's requests translated).
    pub(crate) fn new(
        authorization_hint: Option<String>,
        tools: ToolPolicy,
        modern_upstream: bool,
    ) -> Link {
        Link {
            authorization_hint,
            tools: Applied::new(tools),
            modern_upstream,
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
    fn notify_client_during(&self, notification: Notification, during: Option<&RequestId>) {
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
    fn param_headers(&self, params: Option<&Value>) -> Vec<(String, String)> {
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

/// What the upstream connection does with what the server sends unasked:
/// notifications go to the client, requests to the client and back.
pub(crate) fn upstream_handlers(link: &Arc<Link>) -> ConnectionHandlers {
    let to_client = link.clone();
    let listener = passing(move |n| to_client.notify_client(n.clone()));
    ConnectionHandlers::new(listener).with_server_requests(Arc::new(ToClient(link.clone())))
}

/// What the downstream connection does with what the client sends: its
/// requests go upstream and back, its notifications upstream.
pub(crate) fn downstream_handlers(link: &Arc<Link>) -> ConnectionHandlers {
    let to_server = link.clone();
    let listener = passing(move |n| {
        // The engine acts on a cancel itself (it aborts the relayed call,
        // which cancels it upstream); passing it on would say it twice.
        if n.method == NOTIFICATION_INITIALIZED {
            to_server
                .handshake
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .initialized = true;
        }
        if let Some(translation) = to_server.translation.get() {
            // A 2026-07-28 server takes no notifications; the handshake's
            // end starts the subscription that brings its list changes.
            if n.method == NOTIFICATION_INITIALIZED {
                translate::listen(&to_server, translation);
            } else {
                tracing::debug!(method = %n.method, "a notification a 2026-07-28 server has no use for");
            }
        } else if n.method != NOTIFICATION_CANCELLED {
            forward_to(to_server.upstream(), n.clone(), "server");
        }
    });
    ConnectionHandlers::new(listener).with_server_requests(Arc::new(ToServer(link.clone())))
}

/// A listener that hands each notification on as it is read, on the read
/// loop (sending only queues it, so this never blocks): the far side gets
/// a call's progress before its answer, as the server sent them.
pub(crate) fn passing(f: impl Fn(&Notification) + Send + Sync + 'static) -> Listener {
    let (listener, queue) = Listener::tapped("relayed notifications", 1, Arc::new(f));
    // Nothing reads the queue: the tap has done the work.
    drop(queue);
    listener
}

/// Sends a notification to the server, if it is there.
fn forward_to(to: Option<Arc<dyn Transport>>, notification: Notification, side: &str) {
    let Some(transport) = to else {
        tracing::debug!(method = %notification.method, "a notification before the {side} was connected");
        return;
    };
    if let Err(e) = transport.notify(notification) {
        tracing::debug!(error = %e, "a notification for the {side} was not sent");
    }
}

/// The client's requests, relayed to the server.
struct ToServer(Arc<Link>);

impl ServerRequestHandler for ToServer {
    fn handle(&self, request: Request) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        Box::pin(relay_to_server(self.0.clone(), request, Vec::new()))
    }
}

/// Relays one of the client's requests to the server, with these HTTP
/// headers (the `Mcp-Param-*` a client over HTTP sent), and gives back
/// the server's answer as the client should get it.
pub(crate) async fn relay_to_server(
    link: Arc<Link>,
    request: Request,
    headers: Vec<(String, String)>,
) -> Result<Value, ErrorObject> {
    let Some(upstream) = link.upstream() else {
        return Err(ErrorObject::new(
            INTERNAL_ERROR,
            "the bridge is not connected to the server yet",
        ));
    };
    let initialize = request.method == INITIALIZE;
    if initialize {
        let _ = link.legacy.set(true);
        link.handshake
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .initialize = request.params.clone();
    }
    let _counted = Counted::new(&link.in_flight);
    // Progress reaches a call only through a listener of its own
    // (anything else tied to a call goes on to the connection's); it goes
    // to the client as it comes. So do a subscription's notifications.
    let tied = (request.method == SUBSCRIPTIONS_LISTEN
        || request
            .meta()
            .is_some_and(|m| m.contains_key(PROGRESS_TOKEN)))
    .then(|| (link.clone(), request.id.clone()));
    let listened = move || {
        let options = RequestOptions::new();
        match &tied {
            Some((link, during)) => {
                let (link, during) = (link.clone(), during.clone());
                options.listener(passing(move |n| {
                    link.notify_client_during(n.clone(), Some(&during))
                }))
            }
            None => options,
        }
    };
    if let Some(translation) = link.translation.get().cloned() {
        return translate::request(&link, &translation, &upstream, request, listened)
            .await
            .map(|result| as_sent(result, true));
    }
    // A legacy client's handshake (a 2026-07-28 client's `initialize` is
    // relayed, and refused, as the request it is).
    let handshake = initialize && link.legacy();
    if handshake && link.modern_upstream {
        return translate::initialize(&link, &upstream, &request).await;
    }
    let mut options = listened();
    let handshake = handshake.then(|| request.clone());
    let method = request.method.clone();
    options.headers = if headers.is_empty() && method == TOOLS_CALL && !link.legacy() {
        // A 2026-07-28 call mirrors its annotated arguments in headers,
        // which a client that did not come over HTTP never wrote.
        link.schemas.param_headers(request.params.as_ref())
    } else {
        headers
    };
    if initialize {
        // The spec says initialize is never cancelled.
        options = options.no_wire_cancel();
    }
    let policed = !link.tools.is_open();
    if policed && method == TOOLS_CALL {
        link.tools.check_call(request.params.as_ref())?;
    }
    match upstream.request(request, options).await {
        Ok(mut result) => {
            if method == TOOLS_LIST {
                link.schemas.learn(&result);
                if policed {
                    link.tools.filter_list(&mut result);
                }
            }
            Ok(as_sent(result, link.legacy()))
        }
        Err(error) if handshake.is_some() && translate::refuses_handshake(&error) => {
            let request = handshake.expect("checked");
            translate::initialize(&link, &upstream, &request).await
        }
        Err(error) => {
            let mut object = relayed_error(&method, error.clone(), "server");
            if let (TransportError::AuthorizationRequired { .. }, Some(hint)) =
                (&error, &link.authorization_hint)
            {
                object.message = format!("{}; {hint}", object.message);
            }
            Err(object)
        }
    }
}

/// The server's requests (elicitation, sampling, roots, ping), relayed to
/// the client.
struct ToClient(Arc<Link>);

impl ServerRequestHandler for ToClient {
    fn handle(&self, request: Request) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        Box::pin(relay_to_client(self.0.clone(), request, None))
    }

    fn handle_during(
        &self,
        request: Request,
        during: &RequestId,
    ) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        Box::pin(relay_to_client(
            self.0.clone(),
            request,
            Some(during.clone()),
        ))
    }
}

/// Relays one of the server's requests to the client; `during`: the
/// client's request it came with.
pub(crate) async fn relay_to_client(
    link: Arc<Link>,
    request: Request,
    during: Option<RequestId>,
) -> Result<Value, ErrorObject> {
    {
        {
            let Some(downstream) = link.downstream.get().cloned() else {
                return Err(ErrorObject::new(
                    INTERNAL_ERROR,
                    "the bridge has no client to ask yet",
                ));
            };
            let id = RequestId::Number(link.next_id.fetch_add(1, Ordering::Relaxed) + 1);
            let method = request.method.clone();
            let relayed = Request { id, ..request };
            match downstream.request(relayed, during.as_ref()).await {
                Ok(result) => Ok(as_sent(result, link.legacy())),
                Err(error) => Err(relayed_error(&method, error, "client")),
            }
        }
    }
}

/// A result as its sender wrote it: the transport adds
/// `resultType: "complete"` where it is missing, which legacy revisions do
/// not have.
fn as_sent(mut result: Value, legacy: bool) -> Value {
    if legacy
        && let Some(object) = result.as_object_mut()
        && object.get("resultType").and_then(Value::as_str) == Some("complete")
    {
        object.remove("resultType");
    }
    result
}

/// The JSON-RPC error a relayed call's failure becomes: the far side's
/// own error verbatim, else one that says what happened on the far side
/// and whether the call may have run there.
pub(crate) fn relayed_error(method: &str, error: TransportError, side: &str) -> ErrorObject {
    match error {
        TransportError::Rpc {
            code,
            message,
            data,
        } => {
            let mut object = ErrorObject::new(code, message);
            object.data = data;
            object
        }
        TransportError::ServerGone(info) => ErrorObject::new(
            INTERNAL_ERROR,
            format!(
                "the bridge lost the {side} during {method} ({}); it may have run",
                info.reason
            ),
        ),
        other => ErrorObject::new(
            INTERNAL_ERROR,
            format!("the bridge could not relay {method} to the {side}: {other}"),
        ),
    }
}

/// Counts itself in while it lives.
struct Counted<'a>(&'a AtomicUsize);

impl<'a> Counted<'a> {
    fn new(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::AcqRel);
        Counted(count)
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_legacy_result_loses_only_the_result_type_the_transport_added() {
        let added = json!({"tools": [], "resultType": "complete"});
        assert_eq!(as_sent(added.clone(), true), json!({"tools": []}));
        assert_eq!(as_sent(added.clone(), false), added);
        let other = json!({"resultType": "input_required"});
        assert_eq!(as_sent(other.clone(), true), other);
    }

    #[test]
    fn an_error_of_the_far_side_is_relayed_verbatim() {
        let error = TransportError::Rpc {
            code: -32602,
            message: "bad".into(),
            data: Some(json!({"field": "x"})),
        };
        let object = relayed_error("tools/call", error, "server");
        assert_eq!(
            (object.code, object.message.as_str(), object.data),
            (-32602, "bad", Some(json!({"field": "x"})))
        );
    }

    #[test]
    fn a_lost_server_says_the_call_may_have_run() {
        let gone = TransportError::gone(mcp_transport::GoneInfo::new("exit status 1"));
        let object = relayed_error("tools/call", gone, "server");
        assert_eq!(object.code, INTERNAL_ERROR);
        assert!(
            object.message.contains("may have run"),
            "{}",
            object.message
        );
        assert!(
            object.message.contains("exit status 1"),
            "{}",
            object.message
        );
    }
}
