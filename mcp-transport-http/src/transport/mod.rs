//! The transport: an [`Engine`] whose writer turns each outbound message
//! into a POST, and whose readers are the POSTs' answers.
//!
//! This file holds the transport's state and its [`Transport`] face; each
//! part of the wire has a file of its own: `writer` (the queue, in order),
//! `wire` (which of the three wires a request takes, and what each wire's
//! exchange is given), one file per wire's exchange (`modern`, 2026-07-28;
//! `session`, the session-based Streamable HTTP of 2025-03-26 to
//! 2025-11-25; `fallback`, 2024-11-05 HTTP+SSE), `send` (one HTTP request:
//! the headers of its era and session), `answer` (JSON and SSE answers,
//! resumption, error statuses) and `get_stream` (the legacy GET stream).
//! Redirects and authorization are layers of the HTTP service
//! (`crate::redirect`, `crate::authorization`).

mod answer;
mod driven;
mod fallback;
mod get_stream;
mod modern;
mod send;
mod session;
mod wire;
mod writer;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{HeaderMap, Method, Uri};
use mcp_protocol::meta::protocol_version_of;
use mcp_protocol::methods::INITIALIZE;
use mcp_protocol::version::Era;
use mcp_protocol::{Message, Notification, ProtocolVersion, Request, RequestId};
use mcp_transport::{
    CancellationToken, ConnectionHandlers, Engine, Outbound, RequestOptions, ResponseFuture,
    SharedMeta, Transport, TransportError, TransportProfile,
};
use serde_json::{Map, Value};
use tokio::task::AbortHandle;
use tracing::Instrument;

use crate::service::{HttpService, ResponseBody};
use crate::url::Origin;

use self::driven::{Driven, Driver, InRuntime};
use self::send::insert;
use self::writer::{InFlight, write_loop};

/// The `Mcp-Session-Id` header (legacy Streamable HTTP).
pub const SESSION_ID_HEADER: &str = "mcp-session-id";
/// The `MCP-Protocol-Version` header.
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";
/// The `Mcp-Method` header (2026-07-28).
pub const METHOD_HEADER: &str = "mcp-method";
/// The `Mcp-Name` header (2026-07-28).
pub const NAME_HEADER: &str = "mcp-name";
/// What every POST accepts: both answer forms the spec allows.
pub const ACCEPT_BOTH: &str = "application/json, text/event-stream";

/// Everything fixed when the transport is built.
pub(crate) struct Config {
    pub(crate) url: Uri,
    pub(crate) origin: Origin,
    /// The HTTP client with the redirect and authorization layers on.
    pub(crate) service: HttpService,
    pub(crate) headers: HeaderMap,
    /// Whether the service authorizes (a header provider was given).
    pub(crate) authorized: bool,
    pub(crate) max_message_size: usize,
    pub(crate) close_timeout: Duration,
    pub(crate) notification_timeout: Duration,
    pub(crate) get_stream: bool,
    pub(crate) idle_timeout: Option<Duration>,
    pub(crate) sse_fallback: bool,
}

struct Shared {
    engine: Engine,
    config: Arc<Config>,
    state: Mutex<State>,
    seq: AtomicU64,
    /// The session (`None`: a stateless server) whose GET stream was
    /// opened; a new session after an expiry gets a stream of its own.
    get_for: Mutex<Option<Option<String>>>,
    /// Requests started on their callers' calls while the writer waited
    /// (see [`HttpTransport::request`]), for the writer to keep later
    /// messages behind.
    started: Mutex<InFlight>,
    /// The runtime the transport was built on, where exchanges run.
    runtime: tokio::runtime::Handle,
}

#[derive(Default)]
struct State {
    /// Legacy: the session the server gave in its `initialize` response.
    session_id: Option<String>,
    /// `session_id` as a header value, made once and shared by every
    /// request of the session (see [`State::session_header`]).
    session_value: Option<http::HeaderValue>,
    /// Legacy: how many sessions were opened, so that an expiry is only
    /// believed of the session the request carried (an answer to a request
    /// sent before a renewal must not forget the new session).
    session_epoch: u64,
    /// Legacy: the version the `initialize` result named.
    legacy_version: Option<ProtocolVersion>,
    /// Legacy: the status with which the server said the session expired,
    /// until a new `initialize` opens another. Requests in between fail at
    /// once: sent with no session they would only be refused.
    expired: Option<u16>,
    /// 2024-11-05 HTTP+SSE: where messages are POSTed.
    old_endpoint: Option<Uri>,
    /// Modern: the version of the last modern message.
    modern_version: Option<ProtocolVersion>,
    /// Requests not yet answered, by id.
    requests: HashMap<RequestId, Pending>,
}

impl State {
    /// The `Mcp-Session-Id` value of the current session; `None` without
    /// one, or when HTTP cannot carry it (it is then left out, as before).
    fn session_header(&mut self) -> Option<http::HeaderValue> {
        let session = self.session_id.as_ref()?;
        match &self.session_value {
            Some(value) if value.as_bytes() == session.as_bytes() => Some(value.clone()),
            _ => {
                let Ok(value) = http::HeaderValue::try_from(session.as_str()) else {
                    tracing::warn!(
                        header = SESSION_ID_HEADER,
                        "skipped a header value that HTTP cannot carry"
                    );
                    return None;
                };
                self.session_value = Some(value.clone());
                Some(value)
            }
        }
    }

    /// Legacy: the server gave a session; later requests carry it.
    fn open_session(&mut self, id: String) {
        self.session_id = Some(id);
        self.session_epoch += 1;
    }
}

struct Pending {
    seq: u64,
    headers: Vec<(String, String)>,
    /// The connection's shared `_meta`, spliced into the body when it is
    /// encoded (see [`TransportProfile::takes_shared_meta`]).
    shared: Option<SharedMeta>,
    stream: CancellationToken,
    /// Whether giving the request up closes its stream: always, except
    /// for a modern request that must not be cancelled on the wire
    /// (closing a modern stream is the cancel); that one's stream stays
    /// open until its answer comes or the transport closes.
    close_on_drop: bool,
}

/// MCP over Streamable HTTP, either era, decided message by message.
///
/// * A message whose `_meta` (with the shared members it takes, see
///   [`TransportProfile::takes_shared_meta`]) names a modern protocol version
///   (2026-07-28 on) is sent the modern way: `MCP-Protocol-Version` equal
///   to that version, `Mcp-Method`, and `Mcp-Name` for `tools/call`,
///   `prompts/get` and `resources/read` (encoded by the spec's
///   `=?base64?…?=` rule), no session. Cancelling such a request closes
///   its response stream. After its answer, an SSE response stream is
///   read on until the server ends it, so that its connection serves the
///   next request, and closed if it has not ended about 250 ms on.
/// * Any other message is legacy Streamable HTTP: the `Mcp-Session-Id`
///   the server gave in its `initialize` response, and from 2025-06-18 the
///   `MCP-Protocol-Version` the `initialize` result named, both learned as
///   they pass through. Cancelling POSTs `notifications/cancelled`. Right
///   after `notifications/initialized` (before any later request) the GET
///   stream for server messages is opened; a 405 or a 4xx ends it for
///   good, a stream that ends is reopened with `Last-Event-ID` after the
///   server's `retry:` (or a doubling delay) and given up after 5
///   reopenings in a row that brought nothing. A request's SSE stream is
///   read on after its answer until the server ends it, for about 250 ms
///   at most (what comes meanwhile is delivered), then closed; one that breaks
///   before its answer after naming an event id is resumed by GET with
///   `Last-Event-ID` after the server's `retry:` (1 s without one), at most
///   3 times, and a resumption that ends with nothing fails the request. `close` ends the
///   session with `DELETE`, bounded by the close timeout.
///
/// Messages are taken from the queue in order, and each request's headers
/// (its session above all) are those of its place in the queue; a request
/// made while the writer waits with nothing queued starts at once, on the
/// caller's call, which is its place in the order too, and is then driven
/// by its caller's task while that task waits for its future: the fewest
/// hand-offs between tasks, as with a bare HTTP client. Such a request
/// needs no polling to leave or to be answered: one whose future was never
/// polled, or dropped, goes on in a task of its own, and so does one that
/// a later message waits for. A future polled and then set aside unpolled
/// (kept, not dropped) has its answer, and what its stream carries, read
/// when it is polled again. A request
/// does not wait for the requests before it: each is a POST of its own, on
/// a pooled connection of its own, so concurrent requests may reach the
/// server in any order (as a server may handle them in any order). A
/// notification waits until the HTTP client took the bodies of the
/// requests before it and, briefly (25 ms at most), for their response
/// heads; a notification's POST is answered (202) before the next message
/// leaves. An `initialize` also waits for the bodies of the requests
/// before it, and nothing leaves before its response head (the session
/// id); a request whose session is known to have expired by the time its
/// turn comes is not sent, and fails with `SessionExpired`. A cancel for a
/// request that never left (its POST was closed before the HTTP client
/// took its body) is not posted.
///
/// Every POST accepts JSON and SSE answers; a request's SSE stream carries
/// its notifications (routed by the engine to the request's listener, or
/// the connection's) and, for legacy servers, server requests (answered by
/// POST), then its answer. The extra headers in
/// [`RequestOptions::headers`] (the client's `Mcp-Param-*`) are added to
/// the request's POST.
///
/// HTTP outcomes are typed: see the crate docs for the table.
///
/// ```no_run
/// use mcp_protocol::Request;
/// use mcp_transport::{ConnectionHandlers, RequestOptions, Transport};
/// use mcp_transport_http::HttpTransport;
///
/// # #[tokio::main]
/// # async fn main() -> Result<(), mcp_transport::TransportError> {
/// let transport = HttpTransport::builder("https://mcp.example.com/mcp")
///     .build(ConnectionHandlers::discard())?;
/// let pong = transport
///     .request(Request::new(1, "ping", None), RequestOptions::new())
///     .await?;
/// println!("{pong}");
/// transport.close().await;
/// # Ok(())
/// # }
/// ```
pub struct HttpTransport {
    shared: Arc<Shared>,
    writer: AbortHandle,
}

impl HttpTransport {
    /// A builder for a transport to `url`, with the defaults its docs give.
    ///
    /// ```
    /// let builder = mcp_transport_http::HttpTransport::builder("http://127.0.0.1:8000/mcp");
    /// # let _ = builder;
    /// ```
    pub fn builder(url: impl Into<String>) -> crate::HttpTransportBuilder {
        crate::HttpTransportBuilder::new(url)
    }

    pub(crate) fn start(config: Config, handlers: ConnectionHandlers) -> HttpTransport {
        let (engine, outbound) = Engine::new(handlers);
        // Userinfo and query values (an `?api_key=`) stay out of logs.
        let url = mcp_transport::record::redact_url(&config.url.to_string());
        let span = tracing::info_span!("mcp_http", url = %url);
        let shared = Arc::new(Shared {
            engine,
            config: Arc::new(config),
            state: Mutex::new(State::default()),
            seq: AtomicU64::new(0),
            get_for: Mutex::new(None),
            started: Mutex::new(InFlight::default()),
            runtime: tokio::runtime::Handle::current(),
        });
        let writer =
            tokio::spawn(write_loop(shared.clone(), outbound).instrument(span)).abort_handle();
        HttpTransport { shared, writer }
    }

    /// The legacy session id the server gave, if any.
    pub fn session_id(&self) -> Option<String> {
        self.shared.state().session_id.clone()
    }

    /// The legacy protocol version learned from the `initialize` result,
    /// if one passed through.
    pub fn legacy_protocol_version(&self) -> Option<ProtocolVersion> {
        self.shared.state().legacy_version.clone()
    }

    pub(crate) fn resume(&self, session: String, version: Option<ProtocolVersion>) {
        let mut state = self.shared.state();
        state.open_session(session);
        state.legacy_version = version;
    }

    /// Ends the legacy session now with `DELETE` (bounded by the close
    /// timeout; a 405 is fine) and forgets it; the transport stays open,
    /// and later requests carry no session. Does nothing without a session.
    ///
    /// ```no_run
    /// # async fn f(t: &mcp_transport_http::HttpTransport) {
    /// t.terminate_session().await;
    /// assert_eq!(t.session_id(), None);
    /// # }
    /// ```
    pub async fn terminate_session(&self) {
        let session = self.shared.state().session_id.take();
        if let Some(session) = session {
            self.shared.delete_session(session).await;
        }
    }

    /// The server's URL.
    pub fn url(&self) -> &Uri {
        &self.shared.config.url
    }
}

impl Transport for HttpTransport {
    fn request(&self, mut request: Request, mut options: RequestOptions) -> ResponseFuture {
        let id = request.id.clone();
        let seq = self.shared.seq.fetch_add(1, Ordering::Relaxed);
        let stream = CancellationToken::new();
        let mut shared = options.shared_meta.take();
        if let Some(s) = &shared
            && !matches!(request.params, None | Some(Value::Object(_)))
        {
            // Params with no `_meta` to splice into: merged as they are.
            request.params = s.merge_into(request.params.take());
            shared = None;
        }
        let modern = modern_version_of(request.meta(), shared.as_ref()).is_some();
        let close_on_drop = options.cancel_on_wire || !modern;
        {
            let mut state = self.shared.state();
            // A duplicate id is refused by the engine; leave the live one be.
            state.requests.entry(id.clone()).or_insert(Pending {
                seq,
                headers: options.headers.clone(),
                shared,
                stream,
                close_on_drop,
            });
        }
        // When the writer waits with nothing queued, the request starts
        // here, on this call, in its place in the order, and its caller's
        // task drives it (see `driven`): no hand-off to the writer's task,
        // nor to a task of the request's own. An `initialize` always goes
        // to the writer, which holds later messages until its session id
        // comes.
        let mut driven = None;
        let answer = if request.method == INITIALIZE {
            self.shared.engine.request(request, options)
        } else {
            let shared = &self.shared;
            shared.engine.request_or_start(request, options, |request| {
                if let Some((started, exchange)) = shared.prepare_request(request) {
                    let driver = Driver::new(shared.runtime.clone());
                    shared
                        .started_lock()
                        .push(started.driven_by(driver.clone()));
                    driven = Some((driver, exchange));
                }
            })
        };
        let guard = RequestGuard {
            shared: Arc::downgrade(&self.shared),
            id,
            seq,
        };
        match driven {
            Some((driver, exchange)) => Box::pin(Driven::start(driver, exchange, answer, guard)),
            None => Box::pin(InRuntime {
                runtime: self.shared.runtime.clone(),
                answer: Box::pin(async move {
                    let _guard = guard;
                    answer.await
                }),
            }),
        }
    }

    fn notify(&self, notification: Notification) -> Result<(), TransportError> {
        self.shared.engine.notify(notification)
    }

    fn close(&self) -> BoxFuture<'static, ()> {
        // Closed before the session is forgotten: an exchange that finds
        // no session then also finds the transport closed, and sends
        // nothing (see `Shared::send_to`).
        let closed = self.shared.engine.close();
        let session = self.shared.state().session_id.take();
        self.writer.abort();
        let shared = self.shared.clone();
        Box::pin(async move {
            closed.await;
            if let Some(session) = session {
                shared.delete_session(session).await;
            }
        })
    }

    fn is_alive(&self) -> bool {
        self.shared.engine.is_alive()
    }

    /// `Mcp-Param-*` and the other per-request headers go on the wire;
    /// every POST gets a response, whatever the server's era; the shared
    /// `_meta` is spliced into each request's body as the text made once,
    /// rather than copied into its params; a server request sent on a
    /// POST's answer stream is tied to that POST's request.
    fn profile(&self) -> TransportProfile {
        TransportProfile::new()
            .sends_headers(true)
            .answers_every_request(true)
            .takes_shared_meta(true)
            .ties_server_requests(true)
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        drop(self.shared.engine.close());
        let session = self.shared.state().session_id.take();
        self.writer.abort();
        if let (Some(session), Ok(runtime)) = (session, tokio::runtime::Handle::try_current()) {
            let shared = self.shared.clone();
            runtime.spawn(async move { shared.delete_session(session).await });
        }
    }
}

impl std::fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpTransport")
            .field(
                "url",
                &mcp_transport::record::redact_url(&self.shared.config.url.to_string()),
            )
            .field("session", &self.session_id().is_some())
            .field("engine", &self.shared.engine)
            .finish()
    }
}

/// Closes a request's stream when its future is done or dropped: nobody
/// reads the answer any more.
struct RequestGuard {
    shared: Weak<Shared>,
    id: RequestId,
    seq: u64,
}

impl Drop for RequestGuard {
    fn drop(&mut self) {
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        let mut state = shared.state();
        if state
            .requests
            .get(&self.id)
            .is_some_and(|p| p.seq == self.seq)
            && let Some(pending) = state.requests.remove(&self.id)
            && pending.close_on_drop
        {
            pending.stream.cancel();
        }
    }
}

/// A message's own `_meta`.
fn message_meta(message: &Message) -> Option<&Map<String, Value>> {
    match message {
        Message::Request(r) => r.meta(),
        Message::Notification(n) => n.meta(),
        _ => None,
    }
}

/// Whether a `_meta` names a modern protocol version, and which.
fn modern_version_in(meta: Option<&Map<String, Value>>) -> Option<ProtocolVersion> {
    protocol_version_of(meta?).filter(|v| v.era() == Era::Modern)
}

/// [`modern_version_in`] of a request's `_meta` as it goes on the wire:
/// its own members, and the shared ones it takes (those win).
fn modern_version_of(
    own: Option<&Map<String, Value>>,
    shared: Option<&SharedMeta>,
) -> Option<ProtocolVersion> {
    shared
        .and_then(|s| modern_version_in(Some(s.members())))
        .or_else(|| modern_version_in(own))
}

/// The `Mcp-Name` of a request, by `mcp-protocol`'s rule.
fn mcp_name(message: &Message) -> Option<&str> {
    let Message::Request(r) = message else {
        return None;
    };
    mcp_protocol::headers::name_value(&r.method, r.params.as_ref())
}

impl Shared {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A request given up: modern closes its stream; legacy also tells
    /// the server with `notifications/cancelled`, which this hands back
    /// for the writer to post.
    fn cancel(&self, id: RequestId, reason: &'static str) -> Option<Message> {
        let legacy = {
            let mut state = self.state();
            if let Some(pending) = state.requests.remove(&id) {
                pending.stream.cancel();
            }
            // A connection that never sent a modern message is legacy.
            state.session_id.is_some()
                || state.legacy_version.is_some()
                || state.modern_version.is_none()
        };
        legacy.then(|| Outbound::Cancel { id, reason }.into_message())
    }

    fn started_lock(&self) -> std::sync::MutexGuard<'_, InFlight> {
        self.started.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The requests started on their callers' calls since the last look.
    fn take_started(&self) -> InFlight {
        std::mem::take(&mut *self.started_lock())
    }

    /// What a successful `initialize` answer says, whatever its wire: the
    /// session the server opened (or a stateless server's none) replaces
    /// an expired one.
    fn note_initialize_answer(&self, response: &http::Response<ResponseBody>, initialize: bool) {
        if !initialize || !response.status().is_success() {
            return;
        }
        let session = response
            .headers()
            .get(SESSION_ID_HEADER)
            .and_then(|v| v.to_str().ok());
        let mut state = self.state();
        if let Some(session) = session {
            tracing::debug!("the server opened a session");
            state.open_session(session.to_owned());
        }
        state.expired = None;
    }

    fn is_legacy(&self) -> bool {
        let state = self.state();
        state.session_id.is_some() || state.legacy_version.is_some()
    }

    /// Ends a legacy session with `DELETE`, bounded in time (a 405 is fine).
    async fn delete_session(&self, session: String) {
        let mut headers = self.config.headers.clone();
        insert(&mut headers, SESSION_ID_HEADER, &session);
        if let Some(v) = self.state().legacy_version.clone()
            && v >= ProtocolVersion::V2025_06_18
        {
            insert(&mut headers, PROTOCOL_VERSION_HEADER, v.as_str());
        }
        match tokio::time::timeout(
            self.config.close_timeout,
            self.send(Method::DELETE, headers, Bytes::new(), None),
        )
        .await
        {
            Ok(Ok(r)) => tracing::debug!(status = r.status().as_u16(), "ended the session"),
            Ok(Err(error)) => tracing::debug!(%error, "ending the session failed"),
            Err(_) => tracing::debug!("ending the session took too long"),
        }
    }
}
