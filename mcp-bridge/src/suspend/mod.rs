//! Calls held between a 2026-07-28 client's retries, for a legacy server
//! that asks during a call: the server's elicitation, sampling or roots
//! request becomes an `input_required` result, and the call, still
//! running upstream, waits until the client retries with its answers
//! (or is given up).
//!
//! A held call is found again by its `requestState`: 256 random bits,
//! kept by the bridge, so it cannot be guessed, and any change to it
//! names no call. The store is the link's, so a state is good only on
//! the session it was given on (over stdio, the client's connection; for
//! 2026-07-28 clients over HTTP, which have no session, the bridge's one
//! connection to the server, shared by them all). A retry must be of the
//! same method and target (tool, prompt, resource) as the call.
//!
//! A server request is placed by the call it came during: the transport
//! says which when it can (HTTP); over stdio the legacy protocol does
//! not, and a request is placed only when one call is running (not held),
//! else refused saying why.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use mcp_protocol::error_codes::{
    INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY,
};
use mcp_protocol::meta::CLIENT_CAPABILITIES;
use mcp_protocol::methods::{
    ELICITATION_CREATE, PING, PROMPTS_GET, RESOURCES_READ, ROOTS_LIST, TOOLS_CALL,
};
use mcp_protocol::{ErrorObject, Request, RequestId};
use mcp_transport::{RequestOptions, ResponseFuture, Transport};
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};

mod capabilities;

use capabilities::{capability_of, declares};

use crate::downgrade;
use crate::relayed::relayed_error;

/// How long after a server request more are waited for, to ask the
/// client together.
const GATHER: Duration = Duration::from_millis(20);
/// How many calls a link holds at most, by default.
pub(crate) const DEFAULT_MAX_HELD: usize = 64;
/// How long a call is held for its client's retry, by default.
pub(crate) const DEFAULT_HELD_FOR: Duration = Duration::from_secs(600);

/// How many calls are held, and for how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    pub(crate) max: usize,
    pub(crate) ttl: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max: DEFAULT_MAX_HELD,
            ttl: DEFAULT_HELD_FOR,
        }
    }
}

/// Whether a method may answer `input_required` (SEP-2322).
pub(crate) fn may_suspend(method: &str) -> bool {
    matches!(method, TOOLS_CALL | PROMPTS_GET | RESOURCES_READ)
}

/// One server request during a call, and where its answer goes.
struct Asked {
    request: Request,
    answer: oneshot::Sender<Result<Value, ErrorObject>>,
}

impl Asked {
    fn fail(self, why: String) {
        let _ = self.answer.send(Err(ErrorObject::new(INTERNAL_ERROR, why)));
    }
}

/// Where a call's server requests go while it is in flight.
struct Route {
    to: mpsc::UnboundedSender<Asked>,
    /// Waiting for its client's retry (a server request with no call
    /// named is not placed on it).
    held: bool,
}

/// A call in flight upstream: its answer to come, and the server's
/// requests during it. Dropping it cancels it on the server.
struct Call {
    store: Weak<Suspended>,
    /// The id the bridge gave it upstream.
    id: RequestId,
    method: String,
    /// The tool or prompt name, or the resource's URI.
    target: Option<Value>,
    /// The capabilities the client's request declared, if it said.
    capabilities: Option<Value>,
    result: ResponseFuture,
    asked: mpsc::UnboundedReceiver<Asked>,
    /// Asked of the client and not answered yet, by key.
    open: Vec<(String, Asked)>,
    keys: usize,
}

impl Call {
    /// Keeps a server request to ask the client, under a key of its own.
    /// One the client's request did not declare the capability for (down
    /// to its kind: see [`declares`]) is not asked. An elicitation is
    /// declined (no one can be shown it). A
    /// `roots/list` gets the error a client without roots gives
    /// (`-32601`) and the call goes on: legacy servers ask for roots on
    /// their own too, which over stdio looks like a request during the one
    /// call running. A sampling request ends the call with `-32021`, as a
    /// 2026-07-28 server needing it would answer.
    fn ask(&mut self, asked: Asked) -> Result<(), ErrorObject> {
        let capability = capability_of(&asked.request.method).unwrap_or("");
        let declared = self
            .capabilities
            .as_ref()
            .is_none_or(|c| declares(c, &asked.request));
        if declared {
            self.keys += 1;
            self.open.push((format!("r{}", self.keys), asked));
            return Ok(());
        }
        let method = asked.request.method.as_str();
        if method == ELICITATION_CREATE {
            let _ = asked.answer.send(Ok(json!({ "action": "decline" })));
        } else if method == ROOTS_LIST {
            let why = "the client did not declare the roots capability (through mcp bridge)";
            let _ = asked
                .answer
                .send(Err(ErrorObject::new(METHOD_NOT_FOUND, why)));
        } else {
            asked.fail(format!(
                "the client's request did not declare the {capability} capability"
            ));
            let why = format!("the server requires the {capability} capability for this request");
            let required = json!({ "requiredCapabilities": { capability: {} } });
            return Err(
                ErrorObject::new(MISSING_REQUIRED_CLIENT_CAPABILITY, why).with_data(required)
            );
        }
        Ok(())
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        if let Some(store) = self.store.upgrade() {
            store.state().routes.remove(&self.id);
        }
    }
}

struct Held {
    call: Call,
    expiry: tokio::task::JoinHandle<()>,
}

#[derive(Default)]
struct State {
    routes: HashMap<RequestId, Route>,
    held: HashMap<String, Held>,
}

/// A link's calls held for their clients' retries.
#[derive(Default)]
pub(crate) struct Suspended {
    limits: Limits,
    next: AtomicU64,
    state: Mutex<State>,
}

fn invalid(why: impl Into<String>) -> ErrorObject {
    ErrorObject::new(INVALID_PARAMS, why)
}

/// What a retry must name again: the tool or prompt, or the resource.
fn target_of(request: &Request) -> Option<Value> {
    let params = request.params.as_ref()?;
    params.get("name").or_else(|| params.get("uri")).cloned()
}

/// 256 random bits, as hex.
fn fresh_state() -> Result<String, ErrorObject> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| {
        ErrorObject::new(
            INTERNAL_ERROR,
            format!("the bridge could not draw a random requestState: {e}"),
        )
    })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl Suspended {
    pub(crate) fn new(limits: Limits) -> Suspended {
        Suspended {
            limits,
            ..Suspended::default()
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Relays a 2026-07-28 client's `tools/call`, `prompts/get` or
    /// `resources/read` to a legacy server: a fresh call is started, a
    /// retry (with `requestState`) resumes the call it names with the
    /// client's `inputResponses`; either way the answer is the call's
    /// result, or `input_required` when the server asks for input.
    pub(crate) async fn relay(
        self: &Arc<Self>,
        upstream: &Arc<dyn Transport>,
        mut request: Request,
        options: RequestOptions,
    ) -> Result<Value, ErrorObject> {
        let params = request
            .params
            .as_mut()
            .and_then(Value::as_object_mut)
            .map(|p| (p.remove("requestState"), p.remove("inputResponses")));
        let (state, responses) = params.unwrap_or((None, None));
        let responses = match responses {
            None => Map::new(),
            Some(Value::Object(answers)) => answers,
            Some(_) => {
                return Err(invalid(
                    "inputResponses must be an object of answers by key",
                ));
            }
        };
        let call = match state {
            Some(Value::String(state)) => self.resume(&state, &request, responses)?,
            Some(_) => return Err(invalid("requestState must be a string")),
            // Answers without a state answer nothing the bridge asked.
            None => self.start(upstream, request, options),
        };
        self.drive(call).await
    }

    /// Starts a call upstream, under an id of the bridge's own: the
    /// client's id is free again once the call is held.
    fn start(
        self: &Arc<Self>,
        upstream: &Arc<dyn Transport>,
        request: Request,
        options: RequestOptions,
    ) -> Call {
        let capabilities = request
            .meta()
            .and_then(|m| m.get(CLIENT_CAPABILITIES))
            .cloned();
        let target = target_of(&request);
        let mut request = downgrade::strip(request);
        let id = RequestId::String(format!(
            "mcp-bridge-call-{}",
            self.next.fetch_add(1, Ordering::Relaxed) + 1
        ));
        request.id = id.clone();
        let method = request.method.clone();
        let (to, asked) = mpsc::unbounded_channel();
        self.state()
            .routes
            .insert(id.clone(), Route { to, held: false });
        Call {
            store: Arc::downgrade(self),
            id,
            method,
            target,
            capabilities,
            result: upstream.request(request, options),
            asked,
            open: Vec::new(),
            keys: 0,
        }
    }

    /// The held call `state` names, given the client's answers.
    fn resume(
        &self,
        state: &str,
        request: &Request,
        mut responses: Map<String, Value>,
    ) -> Result<Call, ErrorObject> {
        let unknown = || invalid("the requestState is unknown, expired or not this session's");
        let mut guard = self.state();
        let held = guard.held.remove(state).ok_or_else(unknown)?;
        if held.call.method != request.method || held.call.target != target_of(request) {
            let why = format!(
                "the requestState belongs to a {} of {}, not to this {}",
                held.call.method,
                held.call.target.clone().unwrap_or(Value::Null),
                request.method
            );
            guard.held.insert(state.to_owned(), held);
            return Err(invalid(why));
        }
        held.expiry.abort();
        let mut call = held.call;
        if let Some(route) = guard.routes.get_mut(&call.id) {
            route.held = false;
        }
        drop(guard);
        // An answer missing (or not an object) is asked again.
        let open = std::mem::take(&mut call.open);
        for (key, asked) in open {
            match responses.remove(&key) {
                Some(answer @ Value::Object(_)) => {
                    let _ = asked.answer.send(Ok(answer));
                }
                _ => call.open.push((key, asked)),
            }
        }
        Ok(call)
    }

    /// Waits for the call's result, or holds it when the server asks.
    async fn drive(self: &Arc<Self>, mut call: Call) -> Result<Value, ErrorObject> {
        // Until there is something to ask (declined elicitations are not).
        while call.open.is_empty() {
            tokio::select! {
                biased;
                result = &mut call.result => {
                    return result.map_err(|e| relayed_error(&call.method, e, "server"));
                }
                Some(first) = call.asked.recv() => call.ask(first)?,
            }
            // What the server asks at once goes in one result: requests
            // sent together arrive a moment apart.
            while let Ok(Some(more)) = tokio::time::timeout(GATHER, call.asked.recv()).await {
                call.ask(more)?;
            }
        }
        self.hold(call)
    }

    /// Holds the call, and answers the client `input_required`.
    fn hold(self: &Arc<Self>, mut call: Call) -> Result<Value, ErrorObject> {
        let state = fresh_state()?;
        let mut requests = Map::new();
        for (key, asked) in &call.open {
            let mut input = json!({ "method": asked.request.method });
            if let Some(params) = &asked.request.params {
                input["params"] = params.clone();
            }
            requests.insert(key.clone(), input);
        }
        let mut guard = self.state();
        if guard.held.len() >= self.limits.max {
            drop(guard);
            let why = format!(
                "the bridge already holds {} calls waiting for their clients' answers",
                self.limits.max
            );
            for (_, asked) in std::mem::take(&mut call.open) {
                asked.fail(why.clone());
            }
            drop(call);
            return Err(ErrorObject::new(
                INTERNAL_ERROR,
                format!("{why}; the server's request for input was refused and the call ended"),
            ));
        }
        if let Some(route) = guard.routes.get_mut(&call.id) {
            route.held = true;
        }
        let store = Arc::downgrade(self);
        let (expired, ttl) = (state.clone(), self.limits.ttl);
        let expiry = tokio::spawn(async move {
            tokio::time::sleep(ttl).await;
            if let Some(store) = store.upgrade() {
                store.expire(&expired);
            }
        });
        guard.held.insert(state.clone(), Held { call, expiry });
        Ok(json!({
            "resultType": "input_required",
            "inputRequests": requests,
            "requestState": state,
        }))
    }

    /// Gives up a call its client did not retry in time: the server's
    /// requests are answered with an error and the call is cancelled.
    fn expire(&self, state: &str) {
        let Some(held) = self.state().held.remove(state) else {
            return;
        };
        let mut call = held.call;
        let why = format!(
            "the client did not answer within {:?}; the bridge gave up the call",
            self.limits.ttl
        );
        tracing::debug!(method = %call.method, "a held call expired");
        for (_, asked) in std::mem::take(&mut call.open) {
            asked.fail(why.clone());
        }
        while let Ok(asked) = call.asked.try_recv() {
            asked.fail(why.clone());
        }
    }

    /// A server request (`during`: the call it came during, when the
    /// transport says), asked of the 2026-07-28 client through its call's
    /// `input_required`; its answer when the client retries.
    pub(crate) async fn ask(
        &self,
        request: Request,
        during: Option<&RequestId>,
    ) -> Result<Value, ErrorObject> {
        if request.method == PING {
            // The client's liveness is the bridge's to vouch for.
            return Ok(json!({}));
        }
        if capability_of(&request.method).is_none() {
            return Err(ErrorObject::new(
                METHOD_NOT_FOUND,
                format!(
                    "the bridge's client speaks 2026-07-28, which has no {} from a server",
                    request.method
                ),
            ));
        }
        let (answer, answered) = oneshot::channel();
        {
            let state = self.state();
            // A request the transport names a call for goes to that call
            // or to none: never to another (on HTTP, maybe another
            // client's). Only an unnamed one may be placed on the one call
            // running.
            let route = match during {
                Some(id) => state.routes.get(id).ok_or_else(|| {
                    invalid(format!(
                        "{} came during a request that cannot ask the client (only tools/call, prompts/get and resources/read can, in 2026-07-28)",
                        request.method
                    ))
                })?,
                None => only_running(&state.routes, &request.method)?,
            };
            if route.to.send(Asked { request, answer }).is_err() {
                return Err(ErrorObject::new(
                    INTERNAL_ERROR,
                    "the call this request came during has ended",
                ));
            }
        }
        answered.await.unwrap_or_else(|_| {
            Err(ErrorObject::new(
                INTERNAL_ERROR,
                "the call this request came during ended before the client answered",
            ))
        })
    }
}

/// The one call running (not held) that a server request naming no call
/// can belong to; SEP-2260 has elicitation, sampling and roots only
/// during a call.
fn only_running<'a>(
    routes: &'a HashMap<RequestId, Route>,
    method: &str,
) -> Result<&'a Route, ErrorObject> {
    let mut running = routes.values().filter(|r| !r.held);
    match (running.next(), running.next()) {
        (Some(route), None) => Ok(route),
        (None, _) => Err(invalid(format!(
            "the bridge's client speaks 2026-07-28, where a server's {method} comes only during a call, and none is running"
        ))),
        (Some(_), Some(_)) => Err(invalid(format!(
            "the server's {method} names no call, and several are running: the bridge cannot tell which client to ask"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_is_256_random_bits() {
        let (a, b) = (fresh_state().unwrap(), fresh_state().unwrap());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
    }

    #[tokio::test]
    async fn a_server_request_outside_any_call_is_refused() {
        let store = Suspended::default();
        let error = store
            .ask(Request::new(1, ELICITATION_CREATE, Some(json!({}))), None)
            .await
            .unwrap_err();
        assert_eq!(error.code, INVALID_PARAMS);
        assert!(
            error.message.contains("none is running"),
            "{}",
            error.message
        );
        assert_eq!(
            store.ask(Request::new(2, PING, None), None).await.unwrap(),
            json!({})
        );
    }

    #[test]
    fn only_three_methods_may_ask_for_input() {
        assert!(may_suspend(TOOLS_CALL) && may_suspend(PROMPTS_GET) && may_suspend(RESOURCES_READ));
        assert!(!may_suspend("tools/list"));
    }
}
