//! The server behind the socket: its servers (one per legacy session, one
//! for modern requests, one per HTTP+SSE connection), what it recorded,
//! and the routing of each HTTP request by path, method and era.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use http::{HeaderMap, Method, Response};
use http_body_util::BodyExt;
use mcp_protocol::error_codes::{INVALID_REQUEST, PARSE_ERROR};
use mcp_protocol::meta::PROTOCOL_VERSION;
use mcp_protocol::{Era, Message, ProtocolVersion, RequestId, methods};
use serde_json::Value;

use super::knobs::{HttpKnob, HttpOptions};
use super::reply::{self, Body};
use super::streams::Hub;
use super::{legacy, modern, sse_old};
use crate::config::{EraChoice, FakeConfig};
use crate::session::Session;

/// One HTTP request the server received, as it came.
///
/// ```
/// # use mcp_reference_server::http::RecordedRequest;
/// fn initializes(seen: &[RecordedRequest]) -> usize {
///     seen.iter().filter(|r| r.rpc_method().as_deref() == Some("initialize")).count()
/// }
/// # let _ = initializes;
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RecordedRequest {
    /// `POST`, `GET`, `DELETE`…
    pub method: Method,
    /// The path and query.
    pub uri: String,
    /// Every header.
    pub headers: HeaderMap,
    /// The body.
    pub body: Bytes,
}

impl RecordedRequest {
    /// The path, without the query.
    pub fn path(&self) -> &str {
        self.uri.split('?').next().unwrap_or_default()
    }

    /// A header's value, if it is there and text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body as JSON (`Null` if it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The JSON-RPC method of the body, if it has one.
    pub fn rpc_method(&self) -> Option<String> {
        self.json()["method"].as_str().map(str::to_owned)
    }
}

/// A server and the streams its messages go to.
pub(super) struct Served {
    pub(super) session: Session,
    pub(super) hub: Arc<Hub>,
    /// Requests it was given (for [`HttpKnob::ExpireSessionsAfter`]).
    pub(super) requests: AtomicU32,
}

impl Served {
    pub(super) fn new(config: Arc<FakeConfig>, standalone: bool, ids: bool) -> Arc<Served> {
        let (session, out) = Session::new(config);
        let hub = Hub::new(standalone, ids);
        hub.spawn_router(out);
        Arc::new(Served {
            session,
            hub,
            requests: AtomicU32::new(0),
        })
    }

    /// Stops it: running requests end, streams close.
    pub(super) fn stop(&self) {
        self.session.stop();
        self.hub.close_all();
    }
}

/// Everything the HTTP server holds.
pub(super) struct Front {
    pub(super) config: Arc<FakeConfig>,
    pub(super) options: Arc<HttpOptions>,
    sessions: Mutex<HashMap<String, Arc<Served>>>,
    expired: Mutex<HashSet<String>>,
    modern: Mutex<Option<Arc<Served>>>,
    stateless: Mutex<Option<Arc<Served>>>,
    pub(super) old: Mutex<HashMap<String, Arc<Served>>>,
    seen: Mutex<Vec<RecordedRequest>>,
    /// Modern requests cancelled by their stream's closing.
    pub(super) cancelled: Arc<Mutex<Vec<RequestId>>>,
    counter: AtomicU64,
    /// The authorization server and gate of a protected fake.
    #[cfg(feature = "oauth")]
    pub(super) oauth: Option<Arc<super::oauth::Authority>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Front {
    pub(super) fn new(config: FakeConfig, options: HttpOptions) -> Front {
        Front {
            config: Arc::new(config),
            options: Arc::new(options),
            sessions: Mutex::default(),
            expired: Mutex::default(),
            modern: Mutex::default(),
            stateless: Mutex::default(),
            old: Mutex::default(),
            seen: Mutex::default(),
            cancelled: Arc::default(),
            counter: AtomicU64::new(0),
            #[cfg(feature = "oauth")]
            oauth: None,
        }
    }

    pub(super) fn seen(&self) -> Vec<RecordedRequest> {
        lock(&self.seen).clone()
    }

    /// A fresh id: visible ASCII, unguessable enough for a test.
    pub(super) fn fresh_id(&self) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        format!("fake-{n}-{nanos:08x}")
    }

    /// Whether legacy Streamable HTTP is spoken (a legacy revision from
    /// 2025-03-26 on).
    pub(super) fn streamable_legacy(&self) -> bool {
        self.config.era != EraChoice::Modern
            && self
                .config
                .legacy_versions
                .iter()
                .any(|v| ProtocolVersion::new(v.clone()) >= ProtocolVersion::V2025_03_26)
    }

    /// Whether the modern era is spoken.
    pub(super) fn speaks_modern(&self) -> bool {
        self.config.era != EraChoice::Legacy && !self.config.modern_versions.is_empty()
    }

    /// A new legacy session.
    pub(super) fn new_session(&self) -> (String, Arc<Served>) {
        let id = self.fresh_id();
        let served = Served::new(self.config.clone(), !self.options.no_get_stream, true);
        lock(&self.sessions).insert(id.clone(), served.clone());
        (id, served)
    }

    pub(super) fn session(&self, id: &str) -> Option<Arc<Served>> {
        lock(&self.sessions).get(id).cloned()
    }

    /// Ends a session: it is then unknown (404).
    pub(super) fn end_session(&self, id: &str) -> bool {
        let served = lock(&self.sessions).remove(id);
        lock(&self.expired).insert(id.to_owned());
        served.inspect(|s| s.stop()).is_some()
    }

    /// Ends every legacy session; returns how many.
    pub(super) fn expire_all(&self) -> usize {
        let ids: Vec<String> = lock(&self.sessions).keys().cloned().collect();
        ids.iter().filter(|id| self.end_session(id)).count()
    }

    pub(super) fn session_ids(&self) -> Vec<String> {
        lock(&self.sessions).keys().cloned().collect()
    }

    /// The one server of modern requests.
    pub(super) fn modern(&self) -> Arc<Served> {
        lock(&self.modern)
            .get_or_insert_with(|| Served::new(self.config.clone(), false, false))
            .clone()
    }

    /// The one server of a stateless legacy front.
    pub(super) fn stateless(&self) -> Arc<Served> {
        let get = !self.options.no_get_stream;
        lock(&self.stateless)
            .get_or_insert_with(|| Served::new(self.config.clone(), get, true))
            .clone()
    }

    /// Stops every server.
    pub(super) fn shutdown(&self) {
        self.expire_all();
        let others = [lock(&self.modern).take(), lock(&self.stateless).take()];
        for s in others.into_iter().flatten() {
            s.stop();
        }
        for (_, s) in lock(&self.old).drain() {
            s.stop();
        }
    }

    /// Answers one HTTP request.
    pub(super) async fn serve(
        self: Arc<Front>,
        request: http::Request<hyper::body::Incoming>,
    ) -> Response<Body> {
        let (parts, body) = request.into_parts();
        let body = body
            .collect()
            .await
            .map(|c| c.to_bytes())
            .unwrap_or_default();
        let seen = RecordedRequest {
            method: parts.method,
            uri: parts
                .uri
                .path_and_query()
                .map(|p| p.to_string())
                .unwrap_or_default(),
            headers: parts.headers,
            body,
        };
        lock(&self.seen).push(seen.clone());
        if self.options.loopback_only && !from_loopback(&seen) {
            let text = "the Host and Origin must name a loopback host (DNS-rebinding protection)";
            return reply::rpc_error(403, Value::Null, INVALID_REQUEST, text);
        }
        #[cfg(feature = "oauth")]
        if let Some(answer) = self.oauth.as_ref().and_then(|a| a.serve(&seen)) {
            return answer;
        }
        let old_only = !self.streamable_legacy() && !self.speaks_modern();
        match (seen.path(), &seen.method) {
            ("/sse", &Method::GET) => sse_old::open(&self, &seen),
            ("/mcp", &Method::GET) if old_only => sse_old::open(&self, &seen),
            ("/messages", &Method::POST) => sse_old::post(&self, &seen),
            // A server of the old transport alone has no POST endpoint here.
            ("/mcp", _) if old_only => reply::status(405),
            ("/mcp", &Method::POST) => self.post(&seen).await,
            ("/mcp", &Method::GET) => legacy::get(&self, &seen),
            ("/mcp", &Method::DELETE) => legacy::delete(&self, &seen),
            ("/mcp" | "/sse", _) => reply::status(405),
            _ => reply::status(404),
        }
    }

    async fn post(self: &Arc<Front>, seen: &RecordedRequest) -> Response<Body> {
        let message = match serde_json::from_slice::<Value>(&seen.body) {
            Err(e) => return reply::rpc_error(400, Value::Null, PARSE_ERROR, &e.to_string()),
            Ok(Value::Array(_)) => {
                let text = "batches are not supported by this server";
                return reply::rpc_error(400, Value::Null, INVALID_REQUEST, text);
            }
            Ok(value) => match Message::from_value(value) {
                Ok(m) => m,
                Err(e) => {
                    return reply::rpc_error(400, Value::Null, INVALID_REQUEST, &e.to_string());
                }
            },
        };
        let method = message.method().unwrap_or_default().to_owned();
        if let Message::Request(_) = &message
            && let Some(response) = misbehave(&self.options, &method).await
        {
            return response;
        }
        let session = seen.header(legacy::SESSION_HEADER).map(str::to_owned);
        let modern =
            self.config.era == EraChoice::Modern || (session.is_none() && looks_modern(&message));
        if modern && self.speaks_modern() {
            return modern::post(self, seen, message).await;
        }
        if !self.streamable_legacy() {
            return reply::status(405);
        }
        legacy::post(self, seen, message, session).await
    }
}

/// Whether the `Host` (required) and the `Origin` (when sent) name a
/// loopback host.
fn from_loopback(seen: &RecordedRequest) -> bool {
    let loopback = |authority: &str| {
        let host = match authority.strip_prefix('[') {
            Some(rest) => rest.split(']').next().map(|h| format!("[{h}]")),
            None => authority.split(':').next().map(str::to_owned),
        };
        host.is_some_and(|h| {
            matches!(
                h.to_ascii_lowercase().as_str(),
                "localhost" | "127.0.0.1" | "[::1]"
            )
        })
    };
    let host_ok = seen.header("host").is_some_and(loopback);
    let origin_ok = match seen.header("origin") {
        None => true,
        Some(origin) => origin
            .split_once("://")
            .is_some_and(|(_, rest)| loopback(rest.split('/').next().unwrap_or_default())),
    };
    host_ok && origin_ok
}

/// Whether a message is for the modern rules: `server/discover`,
/// `subscriptions/listen`, or a modern version in its `_meta`.
fn looks_modern(message: &Message) -> bool {
    let (method, meta) = match message {
        Message::Request(r) => (r.method.as_str(), r.meta()),
        Message::Notification(n) => (n.method.as_str(), n.meta()),
        _ => return false,
    };
    matches!(
        method,
        methods::SERVER_DISCOVER | methods::SUBSCRIPTIONS_LISTEN
    ) || meta
        .and_then(|m| m.get(PROTOCOL_VERSION))
        .and_then(Value::as_str)
        .is_some_and(|v| ProtocolVersion::new(v).era() == Era::Modern)
}

/// The knobs that answer a request in place of the server.
async fn misbehave(options: &HttpOptions, method: &str) -> Option<Response<Body>> {
    if options
        .find(method, |k| {
            matches!(k, HttpKnob::NeverRespond(_)).then_some(())
        })
        .is_some()
    {
        futures::future::pending::<()>().await;
    }
    if options
        .find(method, |k| {
            matches!(k, HttpKnob::BadGateway(_)).then_some(())
        })
        .is_some()
    {
        return Some(reply::bad_gateway());
    }
    options.find(method, |k| match k {
        HttpKnob::Redirect(_, to) => Some(reply::redirect(to)),
        _ => None,
    })
}
