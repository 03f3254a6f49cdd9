//! The HTTP server's requests: the checks every request passes, and the
//! routing of each by method, session and era.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request as HttpRequest, Response, StatusCode};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use mcp_protocol::error_codes::{INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR};
use mcp_protocol::methods::INITIALIZE;
use mcp_protocol::{Inbound, Message};
use mcp_transport::Transport;
use serde_json::Value;

use super::HttpOptions;
use super::guard::{self, Refusal};
use super::headers::{SESSION_HEADER, VERSION_HEADER};
use super::modern::Modern;
use super::reply::{self, Body};
use super::session::{GetRefused, Session};
use crate::link::LinkSettings;
use crate::relay::upstream_handlers;

/// How long a session whose server died waits for its last answers to be
/// read before it ends.
const LAST_WORDS: Duration = Duration::from_secs(2);
/// How long serving waits for the sessions to close once stopped.
const CLOSING: Duration = Duration::from_secs(4);

/// What every session and request shares.
pub(crate) struct Front {
    /// What each link to the server is made with.
    settings: LinkSettings,
    pub(crate) max_message_size: usize,
    pub(crate) options: HttpOptions,
    /// Whether the bridge listens on loopback only.
    loopback: bool,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// Sessions being opened (their server being reached), counted with
    /// `sessions` against the cap; changed under `sessions`' lock.
    opening: AtomicUsize,
    pub(crate) modern: Modern,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Front {
    pub(crate) fn new(
        settings: LinkSettings,
        max_message_size: usize,
        options: HttpOptions,
        loopback: bool,
    ) -> Front {
        Front {
            settings,
            max_message_size,
            options,
            loopback,
            sessions: Mutex::new(HashMap::new()),
            opening: AtomicUsize::new(0),
            modern: Modern::default(),
        }
    }

    pub(super) async fn serve(self: Arc<Front>, request: HttpRequest<Incoming>) -> Response<Body> {
        let header = |name: &str| request.headers().get(name);
        let text = |name: &str| header(name).and_then(|v| v.to_str().ok());
        // An `Origin` that is not text is no origin the bridge allows.
        let origin = header("origin").map(|v| v.to_str().unwrap_or("(not text)"));
        let checked = guard::check(
            text("host"),
            origin,
            header("authorization").map(|v| v.as_bytes()),
            self.loopback,
            &self.options.allowed_origins,
            self.options.token(),
        );
        match checked {
            Err(Refusal::Forbidden(why)) => {
                tracing::debug!("{why}");
                return reply::rpc_error(StatusCode::FORBIDDEN, Value::Null, INVALID_REQUEST, &why);
            }
            Err(Refusal::Unauthorized) => {
                let mut answer = reply::rpc_error(
                    StatusCode::UNAUTHORIZED,
                    Value::Null,
                    INVALID_REQUEST,
                    "this bridge requires its bearer token (Authorization: Bearer …)",
                );
                answer.headers_mut().insert(
                    http::header::WWW_AUTHENTICATE,
                    http::HeaderValue::from_static("Bearer"),
                );
                return answer;
            }
            Ok(()) => {}
        }
        if request.uri().path().trim_end_matches('/') != "/mcp" {
            return reply::status(StatusCode::NOT_FOUND);
        }
        let session = text(SESSION_HEADER).map(str::to_owned);
        match *request.method() {
            Method::POST => self.post(request, session).await,
            Method::GET => self.get(&request, session),
            Method::DELETE => self.delete(session).await,
            _ => reply::status(StatusCode::METHOD_NOT_ALLOWED),
        }
    }

    async fn post(
        self: &Arc<Front>,
        request: HttpRequest<Incoming>,
        session: Option<String>,
    ) -> Response<Body> {
        let (head, body) = request.into_parts();
        let read = tokio::time::timeout(
            self.options.request_timeout,
            Limited::new(body, self.max_message_size).collect(),
        );
        let Ok(read) = read.await else {
            let why = format!(
                "the request body was not sent within {:?}",
                self.options.request_timeout
            );
            return reply::rpc_error(
                StatusCode::REQUEST_TIMEOUT,
                Value::Null,
                INVALID_REQUEST,
                &why,
            );
        };
        let body = match read {
            Ok(collected) => collected.to_bytes(),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                let why = format!(
                    "the request body is over the bridge's limit of {} bytes",
                    self.max_message_size
                );
                return reply::rpc_error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    Value::Null,
                    INVALID_REQUEST,
                    &why,
                );
            }
            Err(e) => {
                tracing::debug!(error = %e, "a request body could not be read");
                return reply::status(StatusCode::BAD_REQUEST);
            }
        };
        let messages = match read_messages(&body) {
            Ok(messages) => messages,
            Err(answer) => return *answer,
        };
        let initialize = messages
            .iter()
            .any(|m| matches!(m, Message::Request(r) if r.method == INITIALIZE));
        match session {
            Some(id) => self.post_to_session(&id, &head, messages),
            None if initialize && !speaks_modern(&head.headers, &messages) => {
                self.open_session(messages).await
            }
            None => self.modern.post(&self.settings, &head, messages).await,
        }
    }

    fn post_to_session(
        &self,
        id: &str,
        head: &http::request::Parts,
        messages: Vec<Message>,
    ) -> Response<Body> {
        let Some(session) = self.session(id) else {
            return session_not_found();
        };
        if let Some(version) = head.headers.get(VERSION_HEADER)
            && !version
                .to_str()
                .ok()
                .map(mcp_protocol::ProtocolVersion::new)
                .is_some_and(|v| v.is_known() && v.era() == mcp_protocol::Era::Legacy)
        {
            let why = format!("unsupported MCP-Protocol-Version {version:?} for a session");
            return reply::rpc_error(StatusCode::BAD_REQUEST, Value::Null, INVALID_REQUEST, &why);
        }
        match session.post(messages) {
            Some(reader) => with_session(reply::sse(reader), &session.id),
            None => reply::status(StatusCode::ACCEPTED),
        }
    }

    async fn open_session(self: &Arc<Front>, messages: Vec<Message>) -> Response<Body> {
        let id_of_initialize = messages
            .iter()
            .find_map(|m| match m {
                Message::Request(r) if r.method == INITIALIZE => Some(r.id.to_value()),
                _ => None,
            })
            .unwrap_or(Value::Null);
        let Some(_opening) = self.reserve_session() else {
            let why = format!(
                "the bridge serves at most {} sessions at once; end one (DELETE) or try again later",
                self.options.max_sessions
            );
            return reply::rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                id_of_initialize,
                INTERNAL_ERROR,
                &why,
            );
        };
        let link = match self.settings.connect(upstream_handlers).await {
            Ok(link) => link,
            Err(e) => {
                tracing::warn!(error = %e, "could not reach the server for a new session");
                let why = format!("the bridge could not reach the server: {e}");
                return reply::rpc_error(
                    StatusCode::BAD_GATEWAY,
                    id_of_initialize,
                    INTERNAL_ERROR,
                    &why,
                );
            }
        };
        let (session, outbound) = Session::new(new_session_id(), link);
        lock(&self.sessions).insert(session.id.clone(), session.clone());
        tokio::spawn(session.clone().route(outbound));
        tokio::spawn(watch_upstream(self.clone(), session.clone()));
        tracing::info!(
            sessions = lock(&self.sessions).len(),
            "a client opened a session"
        );
        match session.post(messages) {
            Some(reader) => with_session(reply::sse(reader), &session.id),
            None => with_session(reply::status(StatusCode::ACCEPTED), &session.id),
        }
    }

    fn get(&self, request: &HttpRequest<Incoming>, session: Option<String>) -> Response<Body> {
        // A 2026-07-28 server has no GET stream; nor does a request
        // without a session.
        let Some(id) = session else {
            return reply::status(StatusCode::METHOD_NOT_ALLOWED);
        };
        let Some(session) = self.session(&id) else {
            return session_not_found();
        };
        let last = request
            .headers()
            .get("last-event-id")
            .and_then(|v| v.to_str().ok());
        match session.get(last) {
            Ok(reader) => reply::sse(reader),
            Err(GetRefused::AlreadyOpen) => reply::rpc_error(
                StatusCode::CONFLICT,
                Value::Null,
                INVALID_REQUEST,
                "this session's GET stream is open already",
            ),
            Err(GetRefused::UnknownEvent) => reply::rpc_error(
                StatusCode::BAD_REQUEST,
                Value::Null,
                INVALID_REQUEST,
                "the Last-Event-ID names no stream this session kept",
            ),
        }
    }

    async fn delete(&self, session: Option<String>) -> Response<Body> {
        let Some(id) = session else {
            return reply::status(StatusCode::METHOD_NOT_ALLOWED);
        };
        let Some(session) = lock(&self.sessions).remove(&id) else {
            return session_not_found();
        };
        tracing::info!("a client ended its session");
        session.end().await;
        reply::status(StatusCode::OK)
    }

    /// A place among the sessions, held while the new one's server is
    /// reached: sessions opened at once never pass the cap together.
    fn reserve_session(&self) -> Option<Opening<'_>> {
        let sessions = lock(&self.sessions);
        if sessions.len() + self.opening.load(Ordering::Relaxed) >= self.options.max_sessions {
            return None;
        }
        self.opening.fetch_add(1, Ordering::Relaxed);
        Some(Opening(self))
    }

    fn session(&self, id: &str) -> Option<Arc<Session>> {
        lock(&self.sessions)
            .get(id)
            .filter(|s| !s.is_ended())
            .cloned()
    }

    /// Ends the sessions idle past the timeout.
    pub(super) fn reap(&self) -> Vec<Arc<Session>> {
        let idle = self.options.idle_timeout;
        let mut sessions = lock(&self.sessions);
        let gone: Vec<String> = sessions
            .iter()
            .filter(|(_, s)| s.idle_for(idle))
            .map(|(id, _)| id.clone())
            .collect();
        gone.iter().filter_map(|id| sessions.remove(id)).collect()
    }

    /// Ends every session, and the connection of 2026-07-28 clients.
    pub(super) async fn close_all(&self) {
        let sessions: Vec<Arc<Session>> = lock(&self.sessions).drain().map(|(_, s)| s).collect();
        let ends = sessions.iter().map(|s| s.end());
        let _ = tokio::time::timeout(
            CLOSING,
            futures::future::join(futures::future::join_all(ends), self.modern.close()),
        )
        .await;
    }
}

/// Whether a request says it is of 2026-07-28 or later (its
/// `MCP-Protocol-Version` header or its `_meta`): then even an
/// `initialize` is relayed as such (and refused, as that revision has
/// none), not taken as a legacy client's handshake.
fn speaks_modern(headers: &http::HeaderMap, messages: &[Message]) -> bool {
    let modern = |v: &str| mcp_protocol::ProtocolVersion::new(v).era() == mcp_protocol::Era::Modern;
    let by_header = headers
        .get(VERSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| modern(v.trim()));
    by_header
        || messages.iter().any(|m| match m {
            Message::Request(r) => r
                .meta()
                .and_then(|m| m.get(mcp_protocol::meta::PROTOCOL_VERSION))
                .and_then(serde_json::Value::as_str)
                .is_some_and(modern),
            _ => false,
        })
}

/// A random session id: 128 bits from the system's generator, as hex
/// (visible ASCII, as the spec asks).
fn new_session_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No system generator: fall back on what the hasher seeds from.
        use std::hash::{BuildHasher, RandomState};
        for (i, chunk) in bytes.chunks_mut(8).enumerate() {
            let n = RandomState::new().hash_one(i);
            chunk.copy_from_slice(&n.to_le_bytes());
        }
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn with_session(mut response: Response<Body>, id: &str) -> Response<Body> {
    if let Ok(value) = http::HeaderValue::from_str(id) {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}

fn session_not_found() -> Response<Body> {
    reply::rpc_error(
        StatusCode::NOT_FOUND,
        Value::Null,
        -32001,
        "session not found (it ended or expired): start a new one with initialize",
    )
}

/// A body's messages, or the answer that refuses it.
fn read_messages(body: &Bytes) -> Result<Vec<Message>, Box<Response<Body>>> {
    let inbound = Inbound::parse(body).map_err(|e| {
        let why = format!("the body is not JSON-RPC: {e}");
        let (status, code) = match e.id {
            Some(_) => (StatusCode::BAD_REQUEST, INVALID_REQUEST),
            None => (StatusCode::BAD_REQUEST, PARSE_ERROR),
        };
        Box::new(reply::rpc_error(
            status,
            e.id.map(|id| id.to_value()).unwrap_or(Value::Null),
            code,
            &why,
        ))
    })?;
    let mut faults = Vec::new();
    let messages = inbound.into_messages(|e| faults.push(e));
    if let Some(fault) = faults.into_iter().next() {
        let why = format!("a message of the batch is not JSON-RPC: {fault}");
        return Err(Box::new(reply::rpc_error(
            StatusCode::BAD_REQUEST,
            Value::Null,
            INVALID_REQUEST,
            &why,
        )));
    }
    if messages.is_empty() {
        return Err(Box::new(reply::rpc_error(
            StatusCode::BAD_REQUEST,
            Value::Null,
            INVALID_REQUEST,
            "an empty batch",
        )));
    }
    Ok(messages)
}

/// A session being opened; its place is given back when dropped (by
/// then the session is in `sessions`, or failed).
struct Opening<'a>(&'a Front);

impl Drop for Opening<'_> {
    fn drop(&mut self) {
        let _sessions = lock(&self.0.sessions);
        self.0.opening.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Ends a session once its server is gone, after its last answers (each
/// saying the call may have run) were read: the client's next request
/// gets `404` and it starts a new session, with a new server.
async fn watch_upstream(front: Arc<Front>, session: Arc<Session>) {
    let Some(upstream) = session.link.upstream() else {
        return;
    };
    while upstream.is_alive() {
        if session.is_ended() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let deadline = tokio::time::Instant::now() + LAST_WORDS;
    while session.link.in_flight() > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tracing::warn!("the server of a session is gone; the session ends");
    lock(&front.sessions).remove(&session.id);
    session.end().await;
}
