//! A legacy client in front of a 2026-07-28 server: the client's
//! `initialize` is answered from `server/discover`, each of its requests
//! carries the `_meta` a 2026-07-28 request needs (the revision, the
//! client's capabilities and info, its log level), and an
//! `input_required` result becomes the client's own elicitation, sampling
//! and roots requests, whose answers go back in the retry with the
//! server's `requestState`; list changes and the updates of subscribed
//! resources come from a `subscriptions/listen` the bridge keeps. What
//! 2026-07-28 removed is answered by the bridge (`ping`,
//! `logging/setLevel`).

use std::sync::{Arc, Mutex};

use mcp_protocol::error_codes::{METHOD_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION};
use mcp_protocol::meta::{
    CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, PROTOCOL_VERSION, SERVER_INFO, SUBSCRIPTION_ID,
};
use mcp_protocol::methods::{
    LOGGING_SET_LEVEL, NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED, PING, RESOURCES_SUBSCRIBE,
    RESOURCES_UNSUBSCRIBE, SERVER_DISCOVER, SUBSCRIPTIONS_LISTEN,
};
use mcp_protocol::{ErrorObject, ProtocolVersion, Request, RequestId};
use mcp_transport::{RequestOptions, Transport, TransportError};
use serde_json::{Map, Value, json};

use futures::future::BoxFuture;
use mcp_protocol::Notification;

use crate::relayed::{passing, relayed_error};

/// The most rounds of input one call may ask for.
const MAX_ROUNDS: usize = 16;

/// What a translated session keeps: the `_meta` every request carries.
#[derive(Debug, Default)]
pub(crate) struct Translation {
    meta: Mutex<Map<String, Value>>,
    /// The list changes to listen for (`subscriptions/listen`'s
    /// `notifications`), from the capabilities discovered; none: no
    /// subscription.
    listen: Option<Value>,
    /// The subscription running now (dropping it ends it, which cancels
    /// it on the server), and the resources it watches.
    listening: Mutex<Listening>,
}

/// The client's notifications, as the subscription hands them on.
pub(crate) type Notify = Arc<dyn Fn(Notification) + Send + Sync>;

/// Asks the client one request of the server's (its answer, or why not).
pub(crate) type Ask<'a> =
    &'a (dyn Fn(Request) -> BoxFuture<'static, Result<Value, ErrorObject>> + Send + Sync);

#[derive(Default)]
struct Listening {
    /// The server and the client, once the subscription started.
    ends: Option<(Arc<dyn Transport>, Notify)>,
    task: Option<tokio::task::JoinHandle<()>>,
    resources: std::collections::BTreeSet<String>,
    /// Subscriptions started: each under an id of its own, since the one
    /// it replaces may not have left the server's pending table yet.
    started: u64,
}

impl std::fmt::Debug for Listening {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listening")
            .field("started", &self.ends.is_some())
            .field("resources", &self.resources)
            .finish()
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

impl Translation {
    fn meta(&self) -> Map<String, Value> {
        self.meta.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn set_log_level(&self, level: Value) {
        self.meta
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(LOG_LEVEL.to_owned(), level);
    }
}

/// Whether a server's answer to `initialize` says it speaks 2026-07-28
/// only: `-32601`, or `-32022` listing no legacy revision.
pub(crate) fn refuses_handshake(error: &TransportError) -> bool {
    let TransportError::Rpc { code, data, .. } = error else {
        return false;
    };
    match *code {
        METHOD_NOT_FOUND => true,
        UNSUPPORTED_PROTOCOL_VERSION => {
            let supported = data
                .as_ref()
                .and_then(|d| d.get("supported"))
                .and_then(Value::as_array);
            supported.is_some_and(|versions| {
                versions
                    .iter()
                    .filter_map(Value::as_str)
                    .all(|v| ProtocolVersion::new(v).era() == mcp_protocol::Era::Modern)
            })
        }
        _ => false,
    }
}

/// Answers the client's `initialize` from the server's `server/discover`,
/// and turns the link into a translated one.
pub(crate) async fn initialize(
    upstream: &Arc<dyn Transport>,
    request: &Request,
) -> Result<(Value, Translation), ErrorObject> {
    let params = request.params.clone().unwrap_or_else(|| json!({}));
    let mut meta = Map::new();
    meta.insert(
        PROTOCOL_VERSION.to_owned(),
        json!(ProtocolVersion::LATEST.as_str()),
    );
    meta.insert(
        CLIENT_CAPABILITIES.to_owned(),
        params.get("capabilities").cloned().unwrap_or(json!({})),
    );
    if let Some(info) = params.get("clientInfo") {
        meta.insert(CLIENT_INFO.to_owned(), info.clone());
    }
    let discover = Request::new(
        request.id.clone(),
        SERVER_DISCOVER,
        Some(json!({ "_meta": meta })),
    );
    let found = upstream
        .request(discover, RequestOptions::new())
        .await
        .map_err(|e| {
            ErrorObject::new(
                mcp_protocol::error_codes::INTERNAL_ERROR,
                format!(
                    "the server speaks only 2026-07-28, and the bridge could not discover it to translate: {e}"
                ),
            )
        })?;
    let capabilities = found.get("capabilities").cloned().unwrap_or(json!({}));
    let translation = Translation {
        meta: Mutex::new(meta),
        listen: list_changes(&capabilities),
        listening: Mutex::default(),
    };
    let requested = params
        .get("protocolVersion")
        .and_then(Value::as_str)
        .map(ProtocolVersion::new)
        .filter(|v| v.is_known() && v.era() == mcp_protocol::Era::Legacy)
        .unwrap_or(ProtocolVersion::LATEST_LEGACY);
    let server_info = found
        .get("_meta")
        .and_then(|m| m.get(SERVER_INFO))
        .cloned()
        .unwrap_or_else(|| json!({"name": "mcp-bridge", "version": env!("CARGO_PKG_VERSION")}));
    let mut result = json!({
        "protocolVersion": requested.as_str(),
        "capabilities": found.get("capabilities").cloned().unwrap_or(json!({})),
        "serverInfo": server_info,
    });
    if let Some(instructions) = found.get("instructions") {
        result["instructions"] = instructions.clone();
    }
    tracing::info!("the server speaks 2026-07-28; the legacy client's requests are translated");
    Ok((result, translation))
}

/// The `notifications` filter of a subscription to the list changes the
/// server's capabilities announce, if any.
fn list_changes(capabilities: &Value) -> Option<Value> {
    let changes = |list: &str| capabilities[list]["listChanged"].as_bool() == Some(true);
    let filter = json!({
        "toolsListChanged": changes("tools"),
        "promptsListChanged": changes("prompts"),
        "resourcesListChanged": changes("resources"),
    });
    filter
        .as_object()
        .is_some_and(|f| f.values().any(|v| v == &json!(true)))
        .then_some(filter)
}

/// Starts the subscription that brings the server's list changes (and
/// the updates of the resources the client subscribed to) to the client,
/// as the legacy notifications they are, without the subscription's
/// `_meta`; called again, it replaces the subscription with one of the
/// resources subscribed now.
pub(crate) fn listen(translation: &Translation, upstream: Arc<dyn Transport>, notify: Notify) {
    let mut listening = translation
        .listening
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    listening.ends = Some((upstream, notify));
    relisten(translation, &mut listening);
}

/// (Re)starts the subscription with the filter and resources of now.
fn relisten(translation: &Translation, listening: &mut Listening) {
    if let Some(old) = listening.task.take() {
        old.abort();
    }
    let Some((upstream, notify)) = listening.ends.clone() else {
        return;
    };
    let mut filter = translation.listen.clone().unwrap_or_else(|| json!({}));
    if !listening.resources.is_empty() {
        filter["resourceSubscriptions"] = json!(listening.resources);
    }
    if filter
        .as_object()
        .is_none_or(|f| !f.values().any(|v| v != &json!(false)))
    {
        return;
    }
    listening.started += 1;
    let id = RequestId::String(format!("mcp-bridge-listen-{}", listening.started));
    let mut params = json!({ "notifications": filter });
    params["_meta"] = Value::Object(translation.meta());
    let listener = passing(move |n| {
        if n.method == NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED {
            return;
        }
        let mut n = n.clone();
        if let Some(meta) = n
            .params
            .as_mut()
            .and_then(|p| p.get_mut("_meta"))
            .and_then(Value::as_object_mut)
        {
            meta.remove(SUBSCRIPTION_ID);
        }
        notify(n);
    });
    let running = upstream.request(
        Request::new(id, SUBSCRIPTIONS_LISTEN, Some(params)),
        RequestOptions::new().listener(listener),
    );
    listening.task = Some(tokio::spawn(async move {
        if let Err(e) = running.await {
            tracing::debug!(error = %e, "the subscription to the server's changes ended");
        }
    }));
}

/// `resources/subscribe` and `resources/unsubscribe`, which 2026-07-28
/// carries in `subscriptions/listen`: the subscription is made again
/// with the resources watched now.
fn subscribe(translation: &Translation, request: &Request) -> Result<Value, ErrorObject> {
    let Some(uri) = request
        .params
        .as_ref()
        .and_then(|p| p.get("uri"))
        .and_then(Value::as_str)
    else {
        return Err(ErrorObject::new(
            mcp_protocol::error_codes::INVALID_PARAMS,
            format!("{} needs a uri", request.method),
        ));
    };
    let mut listening = translation
        .listening
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if request.method == RESOURCES_SUBSCRIBE {
        listening.resources.insert(uri.to_owned());
    } else {
        listening.resources.remove(uri);
    }
    relisten(translation, &mut listening);
    Ok(json!({}))
}

/// Relays one of the client's requests to a 2026-07-28 server: what
/// that revision removed is answered here, everything else goes with the
/// session's `_meta`, and input the server asks for is asked of the
/// client.
pub(crate) async fn request(
    translation: &Translation,
    upstream: &Arc<dyn Transport>,
    mut request: Request,
    options: impl Fn() -> RequestOptions,
    ask: Ask<'_>,
) -> Result<Value, ErrorObject> {
    match request.method.as_str() {
        PING => return Ok(json!({})),
        LOGGING_SET_LEVEL => {
            let level = request
                .params
                .as_ref()
                .and_then(|p| p.get("level"))
                .cloned();
            if let Some(level) = level {
                translation.set_log_level(level);
            }
            return Ok(json!({}));
        }
        RESOURCES_SUBSCRIBE | RESOURCES_UNSUBSCRIBE => {
            return subscribe(translation, &request);
        }
        _ => {}
    }
    add_meta(&mut request, &translation.meta());
    for _ in 0..MAX_ROUNDS {
        let result = upstream
            .request(request.clone(), options())
            .await
            .map_err(|e| relayed_error(&request.method, e, "server"))?;
        if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
            return Ok(result);
        }
        let responses = ask_the_client(ask, &result).await?;
        let params = request.params.get_or_insert_with(|| json!({}));
        params["inputResponses"] = Value::Object(responses);
        match result.get("requestState") {
            Some(state) => params["requestState"] = state.clone(),
            None => {
                if let Some(p) = params.as_object_mut() {
                    p.remove("requestState");
                }
            }
        }
    }
    Err(ErrorObject::new(
        mcp_protocol::error_codes::INTERNAL_ERROR,
        format!(
            "{} asked for input more than {MAX_ROUNDS} times; the bridge gave up",
            request.method
        ),
    ))
}

/// Puts the session's `_meta` under the request's own (the client's
/// progress token kept).
fn add_meta(request: &mut Request, meta: &Map<String, Value>) {
    let params = request.params.get_or_insert_with(|| json!({}));
    let Some(params) = params.as_object_mut() else {
        return;
    };
    let own = params
        .entry("_meta")
        .or_insert_with(|| json!({}))
        .as_object_mut();
    if let Some(own) = own {
        for (key, value) in meta {
            own.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
}

/// Asks the client each input request of an `input_required` result, as
/// its own request; their answers by key.
async fn ask_the_client(ask: Ask<'_>, result: &Value) -> Result<Map<String, Value>, ErrorObject> {
    let mut responses = Map::new();
    let Some(asked) = result.get("inputRequests").and_then(Value::as_object) else {
        return Ok(responses);
    };
    for (key, input) in asked {
        let Some(method) = input.get("method").and_then(Value::as_str) else {
            return Err(ErrorObject::new(
                mcp_protocol::error_codes::INTERNAL_ERROR,
                format!("the server's input request {key:?} names no method"),
            ));
        };
        let question = Request::new(0, method, input.get("params").cloned());
        let answer = ask(question).await.map_err(|e| {
            ErrorObject::new(
                e.code,
                format!(
                    "the client did not answer the server's {method} ({key}): {}",
                    e.message
                ),
            )
        })?;
        responses.insert(key.clone(), answer);
    }
    Ok(responses)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_handshake_is_one_of_a_modern_only_server() {
        let rpc = |code, data| TransportError::Rpc {
            code,
            message: "no".into(),
            data,
        };
        assert!(refuses_handshake(&rpc(METHOD_NOT_FOUND, None)));
        let modern = json!({"supported": ["2026-07-28"], "requested": "2025-11-25"});
        assert!(refuses_handshake(&rpc(
            UNSUPPORTED_PROTOCOL_VERSION,
            Some(modern)
        )));
        let legacy = json!({"supported": ["2025-06-18"]});
        assert!(!refuses_handshake(&rpc(
            UNSUPPORTED_PROTOCOL_VERSION,
            Some(legacy)
        )));
        assert!(!refuses_handshake(&rpc(-32603, None)));
    }

    #[test]
    fn the_sessions_meta_goes_under_the_requests_own() {
        let mut request = Request::new(
            1,
            "tools/call",
            Some(json!({"name": "x", "_meta": {"progressToken": 7}})),
        );
        let mut meta = Map::new();
        meta.insert(PROTOCOL_VERSION.into(), json!("2026-07-28"));
        add_meta(&mut request, &meta);
        let own = &request.params.unwrap()["_meta"];
        assert_eq!(own["progressToken"], 7);
        assert_eq!(own[PROTOCOL_VERSION], "2026-07-28");
    }
}
