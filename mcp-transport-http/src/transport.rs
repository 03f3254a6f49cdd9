//! The transport: an [`Engine`] whose writer turns each outbound message
//! into a POST, and whose readers are the POSTs' answers.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use futures::future::BoxFuture;
use http::header::{ACCEPT, CONTENT_TYPE, LOCATION, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use http_body_util::BodyExt;
use mcp_protocol::headers::encode_header_value;
use mcp_protocol::meta::protocol_version_of;
use mcp_protocol::methods::{INITIALIZE, NOTIFICATION_INITIALIZED};
use mcp_protocol::version::Era;
use mcp_protocol::{
    ErrorResponse, Inbound, Message, Notification, ProtocolVersion, Request, RequestId,
};
use mcp_transport::{
    CancellationToken, ConnectionHandlers, Engine, Outbound, OutboundReceiver, RequestOptions,
    ResponseFuture, SharedMeta, Transport, TransportError,
};
use serde_json::{Map, Value};
use tokio::sync::oneshot;
use tokio::task::AbortHandle;
use tracing::Instrument;

use crate::service::{BoxError, HttpService, RequestBody, ResponseBody, classify};
use crate::sse::{self, ReadError};
use crate::url::{Origin, resolve};

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

/// How long the message after `notifications/initialized` waits for the
/// GET stream's response head.
const GET_HEAD_WAIT: Duration = Duration::from_secs(1);
/// How many times in a row the GET stream is reopened without receiving
/// a message before it is given up.
const GET_MAX_ATTEMPTS: u32 = 5;
/// The first reconnect delay of the GET stream (a server's `retry:` is a
/// floor above it); it doubles up to [`GET_MAX_DELAY`].
const GET_FIRST_DELAY: Duration = Duration::from_millis(500);
const GET_MAX_DELAY: Duration = Duration::from_secs(30);

/// How long the HTTP+SSE fallback waits for the `endpoint` event.
const ENDPOINT_WAIT: Duration = Duration::from_secs(10);

/// How many times a broken legacy stream is resumed.
const MAX_RESUMES: u32 = 3;
/// How long to wait before resuming when the server gave no `retry:`.
const DEFAULT_RESUME_DELAY: Duration = Duration::from_secs(1);

/// Where a stream got to, for resuming it.
#[derive(Default)]
struct Cursor {
    last_id: Option<String>,
    retry: Option<Duration>,
    /// Whether the last read delivered any message.
    delivered: bool,
}

/// How reading a request's events ended.
enum Read {
    Answered,
    Ended,
    Failed(TransportError),
}

/// How long a request's SSE stream is read on after its answer, for the
/// server to end it (see [`finish_stream`]).
const FINISH_WAIT: Duration = Duration::from_millis(250);

/// How long a notification waits for the response heads of the requests
/// that left before it (all of them together).
const ORDER_GRACE: Duration = Duration::from_millis(25);

/// How much of a non-JSON-RPC body an error keeps.
const EXCERPT_CHARS: usize = 512;
/// How much of an error body is read to find a JSON-RPC error in it.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// Adds headers to every HTTP request the transport sends, each time it
/// sends one (redirect hops and `DELETE` included): the seam for
/// authorization, which may refresh a token before answering.
///
/// Headers it returns replace configured ones of the same name. An error
/// fails the request with [`TransportError::Unreachable`] (nothing was
/// sent).
///
/// ```
/// use futures::future::BoxFuture;
/// use http::{HeaderMap, HeaderValue, header::AUTHORIZATION};
/// use mcp_transport_http::{BoxError, HeaderProvider};
///
/// struct Token(String);
///
/// impl HeaderProvider for Token {
///     fn headers(&self, _request: &http::request::Parts) -> BoxFuture<'static, Result<HeaderMap, BoxError>> {
///         let mut headers = HeaderMap::new();
///         let value = format!("Bearer {}", self.0);
///         Box::pin(async move {
///             let mut value = HeaderValue::from_str(&value)?;
///             value.set_sensitive(true);
///             headers.insert(AUTHORIZATION, value);
///             Ok(headers)
///         })
///     }
/// }
/// # let _ = Token("t".into());
/// ```
pub trait HeaderProvider: Send + Sync + 'static {
    /// The headers to add to `request` (its method, URI and the headers
    /// it already has).
    fn headers(
        &self,
        request: &http::request::Parts,
    ) -> BoxFuture<'static, Result<HeaderMap, BoxError>>;

    /// Called when the server answers a request with 401 or 403, before
    /// the transport gives up with [`TransportError::AuthorizationRequired`].
    /// Answering `true` (after refreshing a token, say) sends the same
    /// request once more, with fresh [`headers`](Self::headers); a second
    /// 401 or 403 to that is the request's outcome. One kind of 401 has a
    /// try of its own besides: `WWW-Authenticate: DPoP
    /// error="use_dpop_nonce"` (RFC 9449 §9), which asks for nothing but a
    /// new proof with the nonce it gives, so that a token obtained for the
    /// first 401 can still meet the server's nonce. The default answers
    /// `false`: the challenge goes to the caller.
    fn on_challenge(&self, challenge: &AuthChallenge) -> BoxFuture<'static, bool> {
        let _ = challenge;
        Box::pin(async { false })
    }

    /// Sees the head of every answer to a request it gave headers for,
    /// before anything else is done with it (a DPoP provider keeps the
    /// `DPoP-Nonce` a server may send on any answer, RFC 9449 §9). The
    /// default does nothing.
    ///
    /// ```
    /// use futures::future::BoxFuture;
    /// use http::{HeaderMap, StatusCode, Uri};
    /// use mcp_transport_http::{BoxError, HeaderProvider};
    ///
    /// struct Watch;
    ///
    /// impl HeaderProvider for Watch {
    ///     fn headers(&self, _: &http::request::Parts) -> BoxFuture<'static, Result<HeaderMap, BoxError>> {
    ///         Box::pin(async { Ok(HeaderMap::new()) })
    ///     }
    ///     fn on_response(&self, uri: &Uri, status: StatusCode, headers: &HeaderMap) {
    ///         if let Some(nonce) = headers.get("dpop-nonce") {
    ///             println!("{uri} answered {status} with a new nonce {nonce:?}");
    ///         }
    ///     }
    /// }
    /// # let _ = Watch;
    /// ```
    fn on_response(&self, uri: &Uri, status: StatusCode, headers: &HeaderMap) {
        let _ = (uri, status, headers);
    }
}

/// Whether a `WWW-Authenticate` value is a DPoP challenge for a nonce
/// (RFC 9449 §9): the scheme `DPoP` and `error="use_dpop_nonce"`.
fn is_dpop_nonce_challenge(value: &str) -> bool {
    let value = value.trim_start();
    value
        .get(..5)
        .is_some_and(|s| s.eq_ignore_ascii_case("dpop "))
        && value.contains("use_dpop_nonce")
}

/// A 401 or 403 answer, as [`HeaderProvider::on_challenge`] sees it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AuthChallenge {
    /// 401 or 403.
    pub status: u16,
    /// The `WWW-Authenticate` header, if any (the first one).
    pub www_authenticate: Option<String>,
    /// The request's method.
    pub method: Method,
    /// The URL the request went to (the server's own origin: redirects to
    /// another are never followed).
    pub uri: Uri,
    /// All the answer's headers (`DPoP-Nonce` among them, RFC 9449 §9).
    pub headers: HeaderMap,
}

/// Everything fixed when the transport is built.
pub(crate) struct Config {
    pub(crate) url: Uri,
    pub(crate) origin: Origin,
    pub(crate) service: HttpService,
    pub(crate) headers: HeaderMap,
    pub(crate) provider: Option<Arc<dyn HeaderProvider>>,
    pub(crate) max_message_size: usize,
    pub(crate) max_redirects: usize,
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
}

#[derive(Default)]
struct State {
    /// Legacy: the session the server gave in its `initialize` response.
    session_id: Option<String>,
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
    /// encoded (see [`Transport::takes_shared_meta`]).
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
///   [`Transport::takes_shared_meta`]) names a modern protocol version
///   (2026-07-28 on) is sent the modern way: `MCP-Protocol-Version` equal
///   to that version, `Mcp-Method`, and `Mcp-Name` for `tools/call`,
///   `prompts/get` and `resources/read` (encoded by the spec's
///   `=?base64?…?=` rule), no session. Cancelling such a request closes
///   its response stream.
/// * Any other message is legacy Streamable HTTP: the `Mcp-Session-Id`
///   the server gave in its `initialize` response, and from 2025-06-18 the
///   `MCP-Protocol-Version` the `initialize` result named, both learned as
///   they pass through. Cancelling POSTs `notifications/cancelled`. Right
///   after `notifications/initialized` (before any later request) the GET
///   stream for server messages is opened; a 405 or a 4xx ends it for
///   good, a stream that ends is reopened with `Last-Event-ID` after the
///   server's `retry:` (or a doubling delay) and given up after 5
///   reopenings in a row that brought nothing. A request's SSE stream is
///   read on after its answer until the server ends it; one that breaks
///   before its answer after naming an event id is resumed by GET with
///   `Last-Event-ID` after the server's `retry:` (1 s without one), at most
///   3 times, and a resumption that ends with nothing fails the request. `close` ends the
///   session with `DELETE`, bounded by the close timeout.
///
/// Messages are taken from the queue in order, and each request's headers
/// (its session above all) are those of its place in the queue. A request
/// does not wait for the requests before it: each is a POST of its own, on
/// a pooled connection of its own, so concurrent requests may reach the
/// server in any order (as a server may handle them in any order). A
/// notification waits until the HTTP client took the bodies of the
/// requests before it and, briefly (25 ms at most), for their response
/// heads; a notification's POST is answered (202) before the next message
/// leaves.
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
        let span = tracing::info_span!("mcp_http", url = %config.url);
        let shared = Arc::new(Shared {
            engine,
            config: Arc::new(config),
            state: Mutex::new(State::default()),
            seq: AtomicU64::new(0),
            get_for: Mutex::new(None),
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
        let answer = self.shared.engine.request(request, options);
        let guard = RequestGuard {
            shared: Arc::downgrade(&self.shared),
            id,
            seq,
        };
        Box::pin(async move {
            let _guard = guard;
            answer.await
        })
    }

    fn notify(&self, notification: Notification) -> Result<(), TransportError> {
        self.shared.engine.notify(notification)
    }

    fn close(&self) -> BoxFuture<'static, ()> {
        let session = self.shared.state().session_id.take();
        let closed = self.shared.engine.close();
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

    /// `Mcp-Param-*` and the other per-request headers go on the wire.
    fn sends_headers(&self) -> bool {
        true
    }

    /// Every POST gets a response, whatever the server's era.
    fn answers_every_request(&self) -> bool {
        true
    }

    /// The shared `_meta` is spliced into each request's body as the text
    /// made once, rather than copied into its params.
    fn takes_shared_meta(&self) -> bool {
        true
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        let session = self.shared.state().session_id.take();
        drop(self.shared.engine.close());
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
            .field("url", &self.shared.config.url)
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

async fn write_loop(shared: Arc<Shared>, mut outbound: OutboundReceiver) {
    let shutdown = shared.engine.shutdown_token();
    let mut in_flight = InFlight::default();
    loop {
        let item = tokio::select! {
            item = outbound.recv() => item,
            _ = shutdown.cancelled() => None,
        };
        match item {
            None => break,
            Some(Outbound::Message(Message::Request(request))) => {
                if let Some(started) = shared.start_request(request).await {
                    in_flight.push(started);
                }
            }
            Some(Outbound::Message(message)) => {
                let initialized = message.method() == Some(NOTIFICATION_INITIALIZED);
                if matches!(message, Message::Notification(_)) {
                    in_flight.settle().await;
                }
                shared.post_one_way(message).await;
                if initialized
                    && shared.config.get_stream
                    && shared.is_legacy()
                    && shared.old_endpoint().is_none()
                {
                    // Opened before any later request leaves, as servers
                    // that time their resumption expect.
                    let head = shared.open_get_stream();
                    let _ = tokio::time::timeout(GET_HEAD_WAIT, head).await;
                }
            }
            Some(Outbound::Cancel { id, reason }) => {
                if let Some(cancelled) = shared.cancel(id, reason) {
                    // Never ahead of the request it names.
                    in_flight.settle().await;
                    shared.post_one_way(cancelled).await;
                }
            }
            Some(other) => {
                let message = other.into_message();
                if matches!(message, Message::Notification(_)) {
                    in_flight.settle().await;
                }
                shared.post_one_way(message).await;
            }
        }
    }
}

/// A request's exchange, as far as the order of later messages cares.
struct Started {
    /// Ends once the HTTP client took its body (or the exchange ended).
    taken: oneshot::Receiver<()>,
    /// Ends once its response head came (or the exchange ended).
    head: oneshot::Receiver<()>,
}

/// The requests started whose response head has not come yet, oldest
/// first.
///
/// A request waits for nothing before it: each is a POST of its own, on a
/// pooled connection of its own, and its answer never depends on another's
/// (only `initialize`'s session id does, which `start_request` waits for).
/// Waiting even for the bytes of the one before would put a hand-off
/// between tasks (the exchange's, then the connection's) between every two
/// requests, one after the other, which bounds the throughput of
/// concurrent calls; and a server handles the POSTs of separate
/// connections in whatever order it likes anyway. A notification is
/// different: one sent after requests (`notifications/cancelled` above
/// all) is about them, and should not reach the server before them.
#[derive(Default)]
struct InFlight(Vec<Started>);

impl InFlight {
    fn push(&mut self, started: Started) {
        // Answered ones are dropped here, so that the list stays as long
        // as the requests in flight, not as the connection's history.
        self.0
            .retain_mut(|s| matches!(s.head.try_recv(), Err(oneshot::error::TryRecvError::Empty)));
        self.0.push(started);
    }

    /// Waits until the HTTP client took the bodies of the requests in
    /// flight (a new connection's handshake included), then a moment
    /// ([`ORDER_GRACE`], for them all) for their response heads: servers
    /// that stream send their head at once, so the notification reaches
    /// them after the requests; a slow JSON server costs the notification
    /// at most this. Forgets them after: later messages do not wait again.
    async fn settle(&mut self) {
        if self.0.is_empty() {
            return;
        }
        let (taken, heads): (Vec<_>, Vec<_>) = std::mem::take(&mut self.0)
            .into_iter()
            .map(|s| (s.taken, s.head))
            .unzip();
        futures::future::join_all(taken).await;
        let _ = tokio::time::timeout(ORDER_GRACE, futures::future::join_all(heads)).await;
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

    /// The headers of one message's POST, and the epoch of the session
    /// they carry, if any.
    fn message_headers(
        &self,
        message: &Message,
        shared: Option<&SharedMeta>,
        extra: &[(String, String)],
    ) -> (HeaderMap, Option<u64>) {
        let mut headers = self.config.headers.clone();
        headers.insert(ACCEPT, HeaderValue::from_static(ACCEPT_BOTH));
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let mut state = self.state();
        let modern = modern_version_of(message_meta(message), shared)
            .inspect(|v| state.modern_version = Some(v.clone()));
        let legacy = state.session_id.is_some() || state.legacy_version.is_some();
        let modern = modern.or_else(|| {
            // A notification without `_meta` follows the connection's era.
            (!legacy && matches!(message, Message::Notification(_)))
                .then(|| state.modern_version.clone())
                .flatten()
        });
        let mut sent_under = None;
        if let Some(version) = modern {
            insert(&mut headers, PROTOCOL_VERSION_HEADER, version.as_str());
            if let Some(method) = message.method() {
                insert(&mut headers, METHOD_HEADER, &encode_header_value(method));
            }
            if let Some(name) = mcp_name(message) {
                insert(&mut headers, NAME_HEADER, &encode_header_value(name));
            }
        } else {
            if let Some(version) = &state.legacy_version
                && *version >= ProtocolVersion::V2025_06_18
            {
                insert(&mut headers, PROTOCOL_VERSION_HEADER, version.as_str());
            }
            if let Some(session) = &state.session_id {
                insert(&mut headers, SESSION_ID_HEADER, session);
                sent_under = Some(state.session_epoch);
            }
        }
        drop(state);
        for (name, value) in extra {
            match (
                HeaderName::try_from(name.as_str()),
                HeaderValue::try_from(value.as_str()),
            ) {
                (Ok(n), Ok(v)) => {
                    headers.append(n, v);
                }
                _ => {
                    tracing::warn!(%name, "skipped an extra header that is not a valid HTTP header")
                }
            }
        }
        (headers, sent_under)
    }

    /// Sends one HTTP request to the server's URL: see [`send_to`](Self::send_to).
    async fn send(
        &self,
        method: Method,
        headers: &HeaderMap,
        body: Bytes,
        taken: Option<oneshot::Sender<()>>,
    ) -> Result<http::Response<ResponseBody>, TransportError> {
        let url = self.config.url.clone();
        self.send_to(url, method, headers, body, taken).await
    }

    /// Sends one HTTP request, following same-origin 307/308 redirects
    /// only, adding the provider's headers at each hop.
    async fn send_to(
        &self,
        url: Uri,
        method: Method,
        headers: &HeaderMap,
        body: Bytes,
        mut taken: Option<oneshot::Sender<()>>,
    ) -> Result<http::Response<ResponseBody>, TransportError> {
        let mut uri = url;
        let mut hops = 0;
        let mut challenged = false;
        let mut nonce_challenged = false;
        loop {
            let body = match taken.take() {
                Some(t) => RequestBody::signalling(body.clone(), t),
                None => RequestBody::new(body.clone()),
            };
            let mut request = http::Request::new(body);
            *request.method_mut() = method.clone();
            *request.uri_mut() = uri.clone();
            *request.headers_mut() = headers.clone();
            if let Some(provider) = &self.config.provider {
                let (mut parts, body) = request.into_parts();
                let added =
                    provider
                        .headers(&parts)
                        .await
                        .map_err(|e| TransportError::Unreachable {
                            cause: format!(
                                "the header provider failed: {}",
                                crate::service::chain(e.as_ref())
                            ),
                        })?;
                let mut last = None;
                for (name, value) in added {
                    let name = match name {
                        Some(n) => {
                            last = Some(n.clone());
                            n
                        }
                        None => match &last {
                            Some(n) => n.clone(),
                            None => continue,
                        },
                    };
                    parts.headers.insert(name, value);
                }
                request = http::Request::from_parts(parts, body);
            }
            let response = self
                .config
                .service
                .call(request)
                .await
                .map_err(|e| classify(&e))?;
            let status = response.status();
            if let Some(provider) = &self.config.provider {
                provider.on_response(&uri, status, response.headers());
            }
            let www_authenticate = response
                .headers()
                .get(WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            // A nonce challenge has its own try (see `on_challenge`).
            let for_nonce = status == StatusCode::UNAUTHORIZED
                && www_authenticate
                    .as_deref()
                    .is_some_and(is_dpop_nonce_challenge);
            let spent = if for_nonce {
                &mut nonce_challenged
            } else {
                &mut challenged
            };
            if (status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN)
                && !*spent
                && let Some(provider) = &self.config.provider
            {
                *spent = true;
                let challenge = AuthChallenge {
                    status: status.as_u16(),
                    www_authenticate,
                    method: method.clone(),
                    uri: uri.clone(),
                    headers: response.headers().clone(),
                };
                if provider.on_challenge(&challenge).await {
                    tracing::debug!(status = status.as_u16(), "sending again after a challenge");
                    continue;
                }
                return Ok(response);
            }
            if !status.is_redirection() {
                return Ok(response);
            }
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            let refuse = |reason: String| TransportError::RedirectRefused {
                status: status.as_u16(),
                location: location.clone(),
                reason,
            };
            if status != StatusCode::TEMPORARY_REDIRECT && status != StatusCode::PERMANENT_REDIRECT
            {
                return Err(refuse(
                    "only 307 and 308 keep the method and body, and only they are followed".into(),
                ));
            }
            let Some(next) = resolve(&uri, &location) else {
                return Err(refuse("its Location is not a valid URL".into()));
            };
            if Origin::of(&next).as_ref() != Some(&self.config.origin) {
                tracing::warn!(%location, "refused a redirect to another origin");
                return Err(refuse(
                    "it leads to another origin, where nothing was sent".into(),
                ));
            }
            hops += 1;
            if hops > self.config.max_redirects {
                return Err(refuse(format!(
                    "more than {} redirects",
                    self.config.max_redirects
                )));
            }
            tracing::debug!(%next, "following a same-origin redirect");
            uri = next;
        }
    }

    /// Starts a request's exchange on a task of its own, and hands back
    /// what a later notification waits for (see [`InFlight`]). For
    /// `initialize`, waits for the response head instead, so the session
    /// id is known before the next message leaves. `None` when nothing is
    /// left to wait for.
    async fn start_request(self: &Arc<Self>, request: Request) -> Option<Started> {
        let id = request.id.clone();
        let (headers, shared_meta, stream) = {
            let mut state = self.state();
            match state.requests.get_mut(&id) {
                Some(p) => (
                    std::mem::take(&mut p.headers),
                    p.shared.take(),
                    p.stream.clone(),
                ),
                // Given up between the queue and here.
                None => return None,
            }
        };
        let initialize = request.method == INITIALIZE;
        let expired = self.state().expired;
        if let (Some(status), false) = (expired, initialize) {
            tracing::debug!("not sent: the session expired and no new one was opened yet");
            self.engine
                .fail_request(&id, TransportError::SessionExpired { status });
            return None;
        }
        let (head_tx, head_rx) = oneshot::channel();
        let (taken_tx, taken_rx) = oneshot::channel();
        let shared = self.clone();
        let shutdown = self.engine.shutdown_token();
        let span = tracing::debug_span!("mcp_http_request", id = %id, method = %request.method);
        // The headers are taken here, in queue order, not on the task: a
        // session closed or replaced after this request was queued does
        // not change what it carries.
        let message = Message::Request(request);
        let prepared = self.message_headers(&message, shared_meta.as_ref(), &headers);
        let exchange = async move {
            shared
                .exchange(message, shared_meta, headers, prepared, head_tx, taken_tx)
                .await;
        };
        let closed = stream.clone();
        tokio::spawn(
            async move {
                tokio::select! {
                    _ = exchange => {}
                    _ = closed.cancelled_owned() => tracing::debug!("the request's stream was closed"),
                    _ = shutdown.cancelled_owned() => {}
                }
            }
            .instrument(span),
        );
        // The next request does not wait for this one: see `InFlight`.
        // Both waits end early if the exchange is dropped.
        if initialize {
            // Nothing leaves before `initialize`'s response head: it
            // carries the session id.
            let _ = taken_rx.await;
            let _ = head_rx.await;
            return None;
        }
        Some(Started {
            taken: taken_rx,
            head: head_rx,
        })
    }

    async fn exchange(
        self: &Arc<Self>,
        message: Message,
        shared: Option<SharedMeta>,
        extra: Vec<(String, String)>,
        (headers, sent_under): (HeaderMap, Option<u64>),
        head: oneshot::Sender<()>,
        taken: oneshot::Sender<()>,
    ) {
        let Message::Request(request) = &message else {
            return;
        };
        let id = request.id.clone();
        let initialize = request.method == INITIALIZE;
        let legacy = modern_version_of(request.meta(), shared.as_ref()).is_none();
        if self.old_endpoint().is_some() {
            // HTTP+SSE: the answer comes on the GET stream.
            let merged;
            let message = match &shared {
                Some(s) => {
                    let mut request = request.clone();
                    request.params = s.merge_into(request.params.take());
                    merged = Message::Request(request);
                    &merged
                }
                None => &message,
            };
            let posted = self.post_old(message, &extra, Some(taken)).await;
            let _ = head.send(());
            if let Err(e) = posted {
                self.engine.fail_request(&id, e);
            }
            return;
        }
        let body = match &shared {
            Some(s) => {
                let mut body = Vec::new();
                s.encode_request_line(request, &mut body);
                // A body, not a line.
                body.pop();
                body
            }
            None => serde_json::to_vec(&message).unwrap_or_default(),
        };
        let response = match self
            .send(Method::POST, &headers, Bytes::from(body), Some(taken))
            .await
        {
            Ok(r) => r,
            Err(e) => {
                self.engine.fail_request(&id, e);
                return;
            }
        };
        if initialize
            && response.status().is_success()
            && let Some(session) = response
                .headers()
                .get(SESSION_ID_HEADER)
                .and_then(|v| v.to_str().ok())
        {
            tracing::debug!("the server opened a session");
            self.state().open_session(session.to_owned());
        }
        if initialize && response.status().is_success() {
            // A new session (or a stateless server's none) replaces the
            // expired one.
            self.state().expired = None;
        }
        let _ = head.send(());
        if let Err(e) = self
            .read_answer(&id, response, sent_under, initialize, legacy)
            .await
        {
            let refused = matches!(
                e,
                TransportError::Http {
                    status: 400 | 404 | 405,
                    ..
                }
            );
            if initialize && legacy && refused && self.config.sse_fallback {
                match self.fallback_to_sse(request).await {
                    Ok(()) => return,
                    Err(Some(other)) => {
                        self.engine.fail_request(&id, other);
                        return;
                    }
                    Err(None) => {}
                }
            }
            self.engine.fail_request(&id, e);
        }
    }

    fn old_endpoint(&self) -> Option<Uri> {
        self.state().old_endpoint.clone()
    }

    /// POSTs a message to the HTTP+SSE endpoint; any 2xx takes it.
    async fn post_old(
        &self,
        message: &Message,
        extra: &[(String, String)],
        taken: Option<oneshot::Sender<()>>,
    ) -> Result<(), TransportError> {
        let endpoint = self
            .old_endpoint()
            .unwrap_or_else(|| self.config.url.clone());
        let (headers, _) = self.message_headers(message, None, extra);
        let body = Bytes::from(serde_json::to_vec(message).unwrap_or_default());
        let response = self
            .send_to(endpoint, Method::POST, &headers, body, taken)
            .await?;
        if response.status().is_success() {
            Ok(())
        } else {
            Err(self.status_error(response, None).await)
        }
    }

    /// The 2024-11-05 HTTP+SSE transport, after an `initialize` POST was
    /// refused with 400/404/405 and no JSON-RPC body: GET the URL, expect
    /// an `endpoint` event (a URL on the same origin) within
    /// [`ENDPOINT_WAIT`], then POST every message there and read every
    /// answer from the GET stream. `Err(None)`: the server offers no such
    /// stream either, and the `initialize` error stands.
    async fn fallback_to_sse(
        self: &Arc<Self>,
        request: &Request,
    ) -> Result<(), Option<TransportError>> {
        let mut headers = self.config.headers.clone();
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        let response = self
            .send(Method::GET, &headers, Bytes::new(), None)
            .await
            .map_err(|_| None)?;
        let sse = content_type(response.headers()).as_deref() == Some("text/event-stream");
        if !response.status().is_success() || !sse {
            return Err(None);
        }
        let max = self.config.max_message_size;
        let (mut events, _) = sse::events(response.into_body(), max);
        let endpoint = tokio::time::timeout(ENDPOINT_WAIT, async {
            while let Some(Ok(event)) = events.next().await {
                if event.event.as_deref() == Some("endpoint") {
                    return event.data;
                }
            }
            None
        })
        .await;
        let Ok(Some(location)) = endpoint else {
            return Err(Some(TransportError::Http {
                status: 200,
                body: format!(
                    "the server's event stream sent no endpoint event within {ENDPOINT_WAIT:?}"
                ),
            }));
        };
        let location = location.trim().to_owned();
        let refuse = |reason: &str| {
            Some(TransportError::RedirectRefused {
                status: 200,
                location: location.clone(),
                reason: reason.to_owned(),
            })
        };
        let Some(endpoint) = resolve(&self.config.url, &location) else {
            return Err(refuse("the HTTP+SSE endpoint is not a valid URL"));
        };
        if Origin::of(&endpoint).as_ref() != Some(&self.config.origin) {
            tracing::warn!(%location, "refused an HTTP+SSE endpoint on another origin");
            return Err(refuse(
                "the HTTP+SSE endpoint is on another origin, where nothing was sent",
            ));
        }
        tracing::info!(%endpoint, "speaking the 2024-11-05 HTTP+SSE transport");
        self.state().old_endpoint = Some(endpoint);
        let engine = self.engine.clone();
        let shared_state = Arc::downgrade(self);
        let init_id = request.id.clone();
        let shutdown = self.engine.shutdown_token();
        tokio::spawn(async move {
            let reading = async {
                while let Some(event) = events.next().await {
                    let Ok(event) = event else { break };
                    if event.event.as_deref().is_some_and(|e| e != "message") {
                        continue;
                    }
                    let Some(data) = event.data.filter(|d| !d.trim().is_empty()) else {
                        continue;
                    };
                    let inbound = match Inbound::parse(data.as_bytes()) {
                        Ok(inbound) => inbound,
                        Err(error) => {
                            engine.receive_malformed(error);
                            continue;
                        }
                    };
                    for message in inbound.into_messages(|e| engine.receive_malformed(e)) {
                        if let Message::Response(r) = &message
                            && r.id == init_id
                            && let Some(v) = r.result.get("protocolVersion").and_then(Value::as_str)
                            && let Some(shared) = shared_state.upgrade()
                        {
                            shared.state().legacy_version = Some(ProtocolVersion::new(v));
                        }
                        engine.receive(message);
                    }
                }
            };
            tokio::select! {
                _ = reading => {
                    // The old transport has no resumption: a lost stream
                    // is a lost session.
                    engine.peer_gone(mcp_transport::GoneInfo::new("the HTTP+SSE event stream ended"));
                }
                _ = shutdown.cancelled_owned() => {}
            }
        });
        self.post_old(&Message::Request(request.clone()), &[], None)
            .await
            .map_err(Some)
    }

    /// Reads a request's answer from its response.
    async fn read_answer(
        &self,
        id: &RequestId,
        response: http::Response<ResponseBody>,
        sent_under: Option<u64>,
        initialize: bool,
        legacy: bool,
    ) -> Result<(), TransportError> {
        let status = response.status();
        if !status.is_success() {
            return Err(self.status_error(response, sent_under).await);
        }
        let content_type = content_type(response.headers());
        let max = self.config.max_message_size;
        match content_type.as_deref() {
            Some("text/event-stream") => {
                let events = sse::events(response.into_body(), max);
                let mut cursor = Cursor::default();
                let mut outcome = self
                    .read_events(events, id, initialize, legacy, &mut cursor)
                    .await;
                let mut resumes = 0;
                loop {
                    let broken = match outcome {
                        Read::Answered => return Ok(()),
                        Read::Failed(e) => e,
                        Read::Ended => TransportError::StreamBroken {
                            may_have_run: true,
                            cause: "the response stream ended before the answer".into(),
                        },
                    };
                    // Only a legacy stream that named an event can be
                    // resumed, and only boundedly.
                    let resumable = legacy
                        && matches!(broken, TransportError::StreamBroken { .. })
                        && cursor.last_id.is_some()
                        && resumes < MAX_RESUMES;
                    if !resumable {
                        return Err(broken);
                    }
                    resumes += 1;
                    let before = cursor.last_id.clone();
                    let delay = cursor.retry.unwrap_or(DEFAULT_RESUME_DELAY);
                    tracing::debug!(?delay, last_event_id = ?before, "resuming a broken stream by GET");
                    tokio::time::sleep(delay).await;
                    let events = match self.resume(before.as_deref().unwrap_or_default()).await {
                        Ok(events) => events,
                        Err(e) => return Err(e),
                    };
                    outcome = self
                        .read_events(events, id, initialize, false, &mut cursor)
                        .await;
                    if matches!(outcome, Read::Ended)
                        && cursor.last_id == before
                        && !cursor.delivered
                    {
                        return Err(TransportError::StreamBroken {
                            may_have_run: true,
                            cause: "the resumed stream ended with nothing".into(),
                        });
                    }
                }
            }
            Some("application/json") | None => {
                let body = read_limited(response.into_body(), max).await?;
                if body.iter().all(u8::is_ascii_whitespace) {
                    return Err(TransportError::StreamBroken {
                        may_have_run: true,
                        cause: format!(
                            "the server accepted the request (HTTP {}) without answering it",
                            status.as_u16()
                        ),
                    });
                }
                if self.deliver(&body, id, initialize, false) {
                    return Ok(());
                }
                Err(TransportError::Malformed {
                    detail: "the response body held no answer to the request".into(),
                })
            }
            Some(other) => {
                let body = read_excerpt(response.into_body()).await;
                Err(TransportError::Http {
                    status: status.as_u16(),
                    body: format!("(Content-Type {other}) {}", excerpt(&body)),
                })
            }
        }
    }

    /// Reads a request's events until its answer, and on: when `keep`,
    /// until the server ends the stream; otherwise for a moment, for the
    /// stream's end ([`finish_stream`]). Notes the event id and `retry:`
    /// for resumption.
    async fn read_events(
        &self,
        (mut events, activity): (sse_stream::SseStream<sse::Bounded>, sse::Activity),
        id: &RequestId,
        initialize: bool,
        keep: bool,
        cursor: &mut Cursor,
    ) -> Read {
        let max = self.config.max_message_size;
        let mut answered = false;
        cursor.delivered = false;
        loop {
            let event = match next_within(&mut events, &activity, self.config.idle_timeout).await {
                Next::Event(Some(event)) => event,
                Next::Event(None) => break,
                Next::Idle(idle) => {
                    return Read::Failed(TransportError::StreamBroken {
                        may_have_run: true,
                        cause: format!("the response stream brought nothing for {idle:?}"),
                    });
                }
            };
            match event {
                Ok(event) => {
                    if let Some(event_id) = event.id {
                        cursor.last_id = Some(event_id);
                    }
                    if let Some(ms) = event.retry {
                        cursor.retry = Some(Duration::from_millis(ms));
                    }
                    if event.event.as_deref().is_some_and(|e| e != "message") {
                        tracing::debug!(event = ?event.event, "skipped an event that is not a message");
                        continue;
                    }
                    let Some(data) = event.data.filter(|d| !d.trim().is_empty()) else {
                        continue;
                    };
                    cursor.delivered = true;
                    // Read on after the answer either way (see below), so
                    // the caller's going must not close the stream.
                    if self.deliver(data.as_bytes(), id, initialize, true) {
                        if !keep {
                            finish_stream(&mut events).await;
                            return Read::Answered;
                        }
                        answered = true;
                    }
                }
                Err(_) if answered => return Read::Answered,
                Err(sse_stream::Error::Body(e)) => {
                    return Read::Failed(match e.downcast_ref::<ReadError>() {
                        Some(ReadError::TooLarge(t)) => {
                            self.engine.receive_oversized(&t.prefix, t.size, max);
                            TransportError::MessageTooLarge {
                                size: t.size,
                                limit: max,
                            }
                        }
                        _ => TransportError::StreamBroken {
                            may_have_run: true,
                            cause: format!("the response stream failed: {e}"),
                        },
                    });
                }
                Err(e) => {
                    return Read::Failed(TransportError::Malformed {
                        detail: format!("the response stream is not valid SSE ({e})"),
                    });
                }
            }
        }
        if answered {
            Read::Answered
        } else {
            Read::Ended
        }
    }

    /// Reopens a broken legacy stream: GET with `Last-Event-ID`.
    async fn resume(
        &self,
        last_id: &str,
    ) -> Result<(sse_stream::SseStream<sse::Bounded>, sse::Activity), TransportError> {
        let mut headers = self.legacy_headers("text/event-stream");
        if let Ok(v) = HeaderValue::try_from(last_id) {
            headers.insert(HeaderName::from_static("last-event-id"), v);
        }
        let response = self.send(Method::GET, &headers, Bytes::new(), None).await?;
        let status = response.status();
        if !status.is_success() {
            let cause = format!("resuming the stream failed with HTTP {}", status.as_u16());
            return Err(TransportError::StreamBroken {
                may_have_run: true,
                cause,
            });
        }
        if content_type(response.headers()).as_deref() != Some("text/event-stream") {
            return Err(TransportError::StreamBroken {
                may_have_run: true,
                cause: "the resumed stream is not SSE".into(),
            });
        }
        Ok(sse::events(
            response.into_body(),
            self.config.max_message_size,
        ))
    }

    /// Gives one body or event's messages to the engine; true when the
    /// request's answer was among them.
    fn deliver(&self, bytes: &[u8], id: &RequestId, initialize: bool, keep: bool) -> bool {
        let inbound = match Inbound::parse(bytes) {
            Ok(inbound) => inbound,
            Err(error) => {
                let ours = error.id.as_ref() == Some(id) && !error.request;
                self.engine.receive_malformed(error);
                return ours;
            }
        };
        let mut answered = false;
        for message in inbound.into_messages(|e| self.engine.receive_malformed(e)) {
            match &message {
                Message::Response(r) if &r.id == id => {
                    if initialize
                        && let Some(version) =
                            r.result.get("protocolVersion").and_then(Value::as_str)
                    {
                        self.state().legacy_version = Some(ProtocolVersion::new(version));
                    }
                    answered = true;
                }
                Message::Error(ErrorResponse { id: Some(e), .. }) if e == id => answered = true,
                Message::Error(ErrorResponse { id: None, error }) => {
                    // On a request's own response, a null id can only
                    // mean this request.
                    self.engine
                        .fail_request(id, TransportError::from_rpc(error.clone()));
                    answered = true;
                    continue;
                }
                _ => {}
            }
            if answered && keep {
                // Before the answer wakes the caller, whose dropping the
                // future would otherwise close the stream.
                if let Some(p) = self.state().requests.get_mut(id) {
                    p.close_on_drop = false;
                }
            }
            // A server request on this stream belongs to this request.
            self.engine.receive_for(id, message);
        }
        answered
    }

    /// The error a non-2xx answer is.
    async fn status_error(
        &self,
        response: http::Response<ResponseBody>,
        sent_under: Option<u64>,
    ) -> TransportError {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = read_excerpt(response.into_body()).await;
        match status {
            401 | 403 => {
                return TransportError::AuthorizationRequired {
                    status,
                    challenge: headers
                        .get(WWW_AUTHENTICATE)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned),
                };
            }
            429 | 503 => {
                return TransportError::RetryLater {
                    status,
                    retry_after: headers.get(RETRY_AFTER).and_then(retry_after),
                    body: excerpt(&body),
                };
            }
            _ => {}
        }
        let rpc = match Message::from_value(serde_json::from_slice(&body).unwrap_or(Value::Null)) {
            Ok(Message::Error(e)) => Some(e.error),
            _ => None,
        };
        if let Some(epoch) = sent_under {
            let names_session = rpc.as_ref().is_some_and(|e| {
                e.code == -32001 || e.message.to_ascii_lowercase().contains("session")
            }) || String::from_utf8_lossy(&body)
                .to_ascii_lowercase()
                .contains("session");
            if status == 404 || (status == 400 && names_session) {
                let mut state = self.state();
                // Only the session the request carried: one opened since
                // (a renewal that another request's expiry started) stays.
                if state.session_epoch == epoch {
                    tracing::info!(status, "the server's session expired; forgetting it");
                    state.session_id = None;
                    state.expired = Some(status);
                }
                drop(state);
                return TransportError::SessionExpired { status };
            }
        }
        match rpc {
            Some(error) if status < 500 => TransportError::from_rpc(error),
            _ => TransportError::Http {
                status,
                body: excerpt(&body),
            },
        }
    }

    /// POSTs a notification or an answer, waiting (boundedly) for the
    /// server to take it before the next message leaves.
    async fn post_one_way(&self, message: Message) {
        let method = message.method().unwrap_or("(answer)").to_owned();
        if self.old_endpoint().is_some() {
            let posted = tokio::time::timeout(
                self.config.notification_timeout,
                self.post_old(&message, &[], None),
            )
            .await;
            match posted {
                Ok(Ok(())) => {}
                Ok(Err(error)) => tracing::warn!(%method, %error, "the server refused a message"),
                Err(_) => tracing::warn!(%method, "the server did not take a message in time"),
            }
            return;
        }
        let (headers, sent_under) = self.message_headers(&message, None, &[]);
        let body = Bytes::from(serde_json::to_vec(&message).unwrap_or_default());
        let sent = tokio::time::timeout(
            self.config.notification_timeout,
            self.send(Method::POST, &headers, body, None),
        )
        .await;
        match sent {
            Ok(Ok(response)) if response.status().is_success() => {}
            Ok(Ok(response)) => {
                let error = self.status_error(response, sent_under).await;
                tracing::warn!(%method, %error, "the server refused a message");
            }
            Ok(Err(error)) => tracing::warn!(%method, %error, "a message could not be sent"),
            Err(_) => tracing::warn!(
                %method,
                after = ?self.config.notification_timeout,
                "the server did not take a message in time"
            ),
        }
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

    fn is_legacy(&self) -> bool {
        let state = self.state();
        state.session_id.is_some() || state.legacy_version.is_some()
    }

    fn legacy_headers(&self, accept: &'static str) -> HeaderMap {
        let mut headers = self.config.headers.clone();
        headers.insert(ACCEPT, HeaderValue::from_static(accept));
        let state = self.state();
        if let Some(session) = &state.session_id {
            insert(&mut headers, SESSION_ID_HEADER, session);
        }
        if let Some(v) = &state.legacy_version
            && *v >= ProtocolVersion::V2025_06_18
        {
            insert(&mut headers, PROTOCOL_VERSION_HEADER, v.as_str());
        }
        headers
    }

    /// Opens the legacy GET stream once; the receiver ends when its first
    /// response head came (or it failed).
    fn open_get_stream(self: &Arc<Self>) -> oneshot::Receiver<()> {
        let (head_tx, head_rx) = oneshot::channel();
        let session = self.state().session_id.clone();
        {
            let mut get_for = self.get_for.lock().unwrap_or_else(|p| p.into_inner());
            if get_for.as_ref() == Some(&session) {
                return head_rx;
            }
            *get_for = Some(session.clone());
        }
        let shared = self.clone();
        let shutdown = self.engine.shutdown_token();
        let span = tracing::debug_span!("mcp_http_get");
        tokio::spawn(
            async move {
                tokio::select! {
                    _ = shared.get_loop(head_tx, session) => {}
                    _ = shutdown.cancelled_owned() => {}
                }
            }
            .instrument(span),
        );
        head_rx
    }

    /// The legacy GET stream: server messages outside any request. A 405,
    /// another 4xx or a 200 that is not SSE means the server offers none,
    /// and it is never asked again; a stream that ends or fails is
    /// reopened with `Last-Event-ID`, after the server's `retry:` or a
    /// doubling delay, and given up after [`GET_MAX_ATTEMPTS`] reopenings
    /// in a row that brought no message (a clean close counts). It belongs
    /// to `session`: once that session expired it is not reopened (the
    /// next session opens a stream of its own).
    async fn get_loop(&self, head: oneshot::Sender<()>, session: Option<String>) {
        let mut head = Some(head);
        let mut last_id: Option<String> = None;
        let mut retry_floor = Duration::ZERO;
        let mut attempts = 0u32;
        let max = self.config.max_message_size;
        loop {
            if self.state().session_id != session {
                tracing::debug!("the GET stream's session ended");
                return;
            }
            let mut headers = self.legacy_headers("text/event-stream");
            if let Some(id) = &last_id
                && let Ok(v) = HeaderValue::try_from(id.as_str())
            {
                headers.insert(HeaderName::from_static("last-event-id"), v);
            }
            let sent = self.send(Method::GET, &headers, Bytes::new(), None).await;
            if let Some(h) = head.take() {
                let _ = h.send(());
            }
            match sent {
                Err(error) => tracing::debug!(%error, "the GET stream could not be opened"),
                Ok(response) => {
                    let status = response.status();
                    let sse =
                        content_type(response.headers()).as_deref() == Some("text/event-stream");
                    if status.is_client_error() || (status.is_success() && !sse) {
                        tracing::debug!(
                            status = status.as_u16(),
                            "the server offers no GET stream"
                        );
                        return;
                    }
                    if status.is_success() {
                        let (mut events, activity) = sse::events(response.into_body(), max);
                        loop {
                            let event =
                                match next_within(&mut events, &activity, self.config.idle_timeout)
                                    .await
                                {
                                    Next::Event(Some(event)) => event,
                                    Next::Event(None) => break,
                                    Next::Idle(idle) => {
                                        tracing::debug!(
                                            ?idle,
                                            "the GET stream went quiet; reopening it"
                                        );
                                        break;
                                    }
                                };
                            match event {
                                Ok(event) => {
                                    if let Some(id) = event.id {
                                        last_id = Some(id);
                                    }
                                    if let Some(ms) = event.retry {
                                        retry_floor = Duration::from_millis(ms);
                                    }
                                    if event.event.as_deref().is_some_and(|e| e != "message") {
                                        continue;
                                    }
                                    let Some(data) = event.data.filter(|d| !d.trim().is_empty())
                                    else {
                                        continue;
                                    };
                                    attempts = 0;
                                    match Inbound::parse(data.as_bytes()) {
                                        Ok(inbound) => self.engine.receive_inbound(inbound),
                                        Err(error) => self.engine.receive_malformed(error),
                                    }
                                }
                                Err(sse_stream::Error::Body(e)) => {
                                    if let Some(ReadError::TooLarge(t)) =
                                        e.downcast_ref::<ReadError>()
                                    {
                                        self.engine.receive_oversized(&t.prefix, t.size, max);
                                    }
                                    break;
                                }
                                Err(error) => {
                                    tracing::warn!(%error, "the GET stream is not valid SSE");
                                    break;
                                }
                            }
                        }
                    } else {
                        tracing::debug!(
                            status = status.as_u16(),
                            "the GET stream was refused for now"
                        );
                    }
                }
            }
            attempts += 1;
            if attempts > GET_MAX_ATTEMPTS {
                tracing::warn!(attempts, "gave up reopening the GET stream");
                return;
            }
            let backoff = GET_FIRST_DELAY
                .saturating_mul(1 << (attempts - 1).min(10))
                .min(GET_MAX_DELAY);
            tokio::time::sleep(backoff.max(retry_floor)).await;
        }
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
            self.send(Method::DELETE, &headers, Bytes::new(), None),
        )
        .await
        {
            Ok(Ok(r)) => tracing::debug!(status = r.status().as_u16(), "ended the session"),
            Ok(Err(error)) => tracing::debug!(%error, "ending the session failed"),
            Err(_) => tracing::debug!("ending the session took too long"),
        }
    }
}

/// What waiting for the next event gave.
enum Next {
    Event(Option<Result<sse_stream::Sse, sse_stream::Error>>),
    /// No bytes at all (not even a keep-alive) for this long.
    Idle(Duration),
}

/// The next event, or `Idle` once the body brought no bytes for `idle`.
async fn next_within(
    events: &mut sse_stream::SseStream<sse::Bounded>,
    activity: &sse::Activity,
    idle: Option<Duration>,
) -> Next {
    let Some(idle) = idle else {
        return Next::Event(events.next().await);
    };
    let next = events.next();
    tokio::pin!(next);
    loop {
        let deadline = activity.last() + idle;
        tokio::select! {
            event = &mut next => return Next::Event(event),
            _ = tokio::time::sleep_until(deadline) => {
                if activity.last() + idle <= tokio::time::Instant::now() {
                    return Next::Idle(idle);
                }
            }
        }
    }
}

/// Reads what is left of a stream whose answer came, for at most
/// [`FINISH_WAIT`]: the server ends it right after the answer, and a
/// response read to its end lets the HTTP client keep the connection for
/// the next request (one dropped before its end is closed, and the next
/// request pays for a new connection, TLS included). What comes after the
/// answer is no one's any more and is skipped.
async fn finish_stream(events: &mut sse_stream::SseStream<sse::Bounded>) {
    let rest = async {
        let mut skipped = 0usize;
        while let Some(Ok(_)) = events.next().await {
            skipped += 1;
        }
        skipped
    };
    match tokio::time::timeout(FINISH_WAIT, rest).await {
        Ok(0) => {}
        Ok(skipped) => tracing::debug!(skipped, "skipped events after the answer"),
        Err(_) => tracing::debug!("the stream stayed open after the answer; it is closed"),
    }
}

fn insert(headers: &mut HeaderMap, name: &'static str, value: &str) {
    match HeaderValue::try_from(value) {
        Ok(v) => {
            headers.insert(HeaderName::from_static(name), v);
        }
        Err(_) => tracing::warn!(
            header = name,
            "skipped a header value that HTTP cannot carry"
        ),
    }
}

fn content_type(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(CONTENT_TYPE)?.to_str().ok()?;
    Some(
        value
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase(),
    )
}

/// `Retry-After` as a delay: seconds, or an HTTP date.
fn retry_after(value: &HeaderValue) -> Option<Duration> {
    let text = value.to_str().ok()?.trim();
    if let Ok(seconds) = text.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let when = httpdate::parse_http_date(text).ok()?;
    Some(
        when.duration_since(std::time::SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// A whole body of at most `max` bytes.
fn read_limited(
    body: ResponseBody,
    max: usize,
) -> BoxFuture<'static, Result<Bytes, TransportError>> {
    Box::pin(async move {
        let mut body = body;
        let mut kept = Vec::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| TransportError::StreamBroken {
                may_have_run: true,
                cause: format!(
                    "the response body failed: {}",
                    crate::service::chain(e.as_ref())
                ),
            })?;
            if let Some(data) = frame.data_ref() {
                if kept.len() + data.len() > max {
                    return Err(TransportError::MessageTooLarge {
                        size: kept.len() + data.len(),
                        limit: max,
                    });
                }
                kept.extend_from_slice(data);
            }
        }
        Ok(Bytes::from(kept))
    })
}

/// The start of a body, for an error.
fn read_excerpt(body: ResponseBody) -> BoxFuture<'static, Bytes> {
    Box::pin(async move {
        let mut body = body;
        let mut kept = Vec::new();
        let reading = async {
            while kept.len() < ERROR_BODY_LIMIT {
                match body.frame().await {
                    Some(Ok(frame)) => {
                        if let Some(data) = frame.data_ref() {
                            kept.extend_from_slice(data);
                        }
                    }
                    _ => break,
                }
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(5), reading).await;
        Bytes::from(kept)
    })
}

fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    let mut cut: String = text.chars().take(EXCERPT_CHARS).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}

#[cfg(test)]
mod nonce_challenge_tests {
    use super::is_dpop_nonce_challenge;

    #[test]
    fn only_a_dpop_nonce_challenge_has_a_try_of_its_own() {
        assert!(is_dpop_nonce_challenge(
            r#"DPoP error="use_dpop_nonce", resource_metadata="https://h/p""#
        ));
        assert!(is_dpop_nonce_challenge(r#"dpop error="use_dpop_nonce""#));
        assert!(!is_dpop_nonce_challenge(
            r#"DPoP resource_metadata="https://h/p""#
        ));
        assert!(!is_dpop_nonce_challenge(r#"Bearer error="invalid_token""#));
        assert!(!is_dpop_nonce_challenge(r#"Bearer error="use_dpop_nonce""#));
    }
}
