//! `ClientBuilder`: one builder, safe defaults, every option documented.

use std::future::Future;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use mcp_protocol::Notification;
use mcp_protocol::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    Implementation, LoggingLevel, Root,
};
use mcp_protocol::{Era, ProtocolVersion};
use mcp_transport::{
    ConnectionHandlers, ConnectionLimits, Connector, Listener, Tap, Transport, TransportError,
    TransportEvent,
};

use crate::cache::{Cache, Group, Key};
use crate::client::Client;
use crate::config::{Config, EraMode};
use crate::connect::Connecting;
use crate::error::{ClientError, Result};
use crate::events::{Events, ServerEvent, dispatch_events, invalidate};
use crate::handlers::{
    ElicitationHandler, HandlerContext, HandlerError, Handlers, RootsHandler, RootsSource,
    SamplingHandler, elicitation_closure, roots_closure, sampling_closure,
};
use crate::ids::Ids;
use crate::in_flight::InFlight;
use crate::server_requests::{NegotiatedRevision, ServerRequests};
use crate::session::{Session, SessionParts};
use crate::supervision::Supervisor;
use crate::verdict::Verdict;

/// Builds a [`Client`] and connects it.
///
/// Every default is chosen not to hang and not to surprise: a 10 s era
/// probe, a 60 s request timeout, a 10 minute hard maximum per call (also
/// with progress resets), every known protocol revision offered, and no
/// capability declared that has no handler.
///
/// ```no_run
/// # async fn run(connector: impl mcp_transport::Connector + 'static) -> mcp_client::Result<()> {
/// use std::time::Duration;
/// use mcp_client::{Client, EraMode};
///
/// let client = Client::builder()
///     .client_info("my-agent", "1.0.0")
///     .era(EraMode::Auto)
///     .request_timeout(Duration::from_secs(30))
///     .connect(connector)
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ClientBuilder {
    config: Config,
    saved: Option<Verdict>,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ClientBuilder {
    /// A builder with the defaults.
    pub fn new() -> Self {
        let mut versions = ProtocolVersion::KNOWN.to_vec();
        versions.reverse();
        ClientBuilder {
            config: Config {
                client_info: Implementation::new("mcp-client-rs", env!("CARGO_PKG_VERSION")),
                mode: EraMode::Auto,
                versions,
                probe_timeout: Duration::from_secs(10),
                request_timeout: Duration::from_secs(60),
                max_total_timeout: Duration::from_secs(600),
                handler_timeout: Duration::from_secs(600),
                enforce_server_capabilities: true,
                reject_unassociated_server_requests: false,
                log_level: None,
                max_list_pages: 64,
                max_rounds: 10,
                restart: None,
                tasks: false,
                validate_structured_output: true,
                cache_capacity: 512,
                cache_max_entry_bytes: crate::cache::MAX_ENTRY_BYTES,
                legacy_cache_max_age: Duration::from_secs(300),
                cache_partition: None,
                handlers: Handlers::default(),
                limits: ConnectionLimits::default(),
                event_callback: None,
                name: None,
                modern_meta: Default::default(),
            },
            saved: None,
        }
    }

    /// Who the client is, as servers see it (`clientInfo`).
    pub fn client_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.config.client_info = Implementation::new(name, version);
        self
    }

    /// The whole `clientInfo`, with title, description, icons….
    pub fn implementation(mut self, info: Implementation) -> Self {
        self.config.client_info = info;
        self
    }

    /// A name for the server in errors and logs (default: the name the
    /// server gives).
    pub fn server_name(mut self, name: impl Into<String>) -> Self {
        self.config.name = Some(name.into());
        self
    }

    /// How to find the server's era (default [`EraMode::Auto`]).
    pub fn era(mut self, mode: EraMode) -> Self {
        self.config.mode = mode;
        self
    }

    /// The protocol revisions the client offers (default: all it knows).
    pub fn protocol_versions(
        mut self,
        versions: impl IntoIterator<Item = ProtocolVersion>,
    ) -> Self {
        let mut versions: Vec<ProtocolVersion> = versions.into_iter().collect();
        versions.sort();
        versions.dedup();
        versions.reverse();
        self.config.versions = versions;
        self
    }

    /// How long the era probe waits for `server/discover` before taking
    /// the server for legacy (default 10 s; servers can start slowly).
    pub fn probe_timeout(mut self, timeout: Duration) -> Self {
        self.config.probe_timeout = timeout;
        self
    }

    /// The default time a call waits for its answer (default 60 s).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.config.request_timeout = timeout;
        self
    }

    /// The hard maximum of one call, all rounds and progress resets
    /// included (default 10 minutes).
    pub fn max_total_timeout(mut self, timeout: Duration) -> Self {
        self.config.max_total_timeout = timeout;
        self
    }

    /// How long a handler (elicitation, sampling) may take (default 10
    /// minutes: a person may be typing). While a legacy server's request is
    /// being handled, the base timers of the client's calls are paused.
    pub fn handler_timeout(mut self, timeout: Duration) -> Self {
        self.config.handler_timeout = timeout;
        self
    }

    /// Whether a call the server did not advertise a capability for fails
    /// before anything is sent (default on; turn off for servers that
    /// under-advertise).
    pub fn enforce_server_capabilities(mut self, on: bool) -> Self {
        self.config.enforce_server_capabilities = on;
        self
    }

    /// Answers a legacy server's sampling or elicitation request with
    /// `-32602` when no client request is in flight, as SEP-2260 allows
    /// (default off).
    pub fn reject_unassociated_server_requests(mut self, on: bool) -> Self {
        self.config.reject_unassociated_server_requests = on;
        self
    }

    /// The log level to ask for: per request in modern (`_meta`), by
    /// `logging/setLevel` after connecting in legacy.
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.config.log_level = Some(level);
        self
    }

    /// The most pages a `list_all_*` call follows (default 64).
    pub fn max_list_pages(mut self, pages: usize) -> Self {
        self.config.max_list_pages = pages;
        self
    }

    /// The most rounds of a multi round-trip request (default 10).
    pub fn max_rounds(mut self, rounds: u32) -> Self {
        self.config.max_rounds = rounds.max(1);
        self
    }

    /// Declares the tasks extension (modern) so that servers may run calls
    /// as tasks (default off).
    pub fn tasks(mut self, on: bool) -> Self {
        self.config.tasks = on;
        self
    }

    /// Whether a tool result's `structuredContent` is checked against the
    /// tool's `outputSchema` (default on; results with `isError` are never
    /// checked, and a schema that cannot be compiled is skipped).
    pub fn validate_structured_output(mut self, on: bool) -> Self {
        self.config.validate_structured_output = on;
        self
    }

    /// How many answers the cache keeps (default 512; 0 turns caching off).
    pub fn cache_capacity(mut self, entries: usize) -> Self {
        self.config.cache_capacity = entries;
        self
    }

    /// The largest answer the cache keeps, as JSON text (default 4 MiB).
    /// A larger one (a big `resources/read`, say) is refetched each time
    /// rather than held twice, once in the cache and once by the caller.
    ///
    /// ```
    /// let builder = mcp_client::Client::builder().cache_max_entry_bytes(16 * 1024 * 1024);
    /// # let _ = builder;
    /// ```
    pub fn cache_max_entry_bytes(mut self, bytes: usize) -> Self {
        self.config.cache_max_entry_bytes = bytes;
        self
    }

    /// How long a legacy list answer is kept when the server advertised
    /// `listChanged` for it (default 5 minutes; legacy results carry no TTL).
    pub fn legacy_cache_max_age(mut self, age: Duration) -> Self {
        self.config.legacy_cache_max_age = age;
        self
    }

    /// The auth context this client's `private` cache entries belong to
    /// (an account or token identity).
    pub fn cache_partition(mut self, partition: impl Into<String>) -> Self {
        self.config.cache_partition = Some(partition.into());
        self
    }

    /// At most this many server requests (legacy: sampling, elicitation,
    /// roots, ping) are handled at once; one more is answered with an error
    /// at once and never reaches a handler (default 64).
    pub fn max_concurrent_server_requests(mut self, handlers: usize) -> Self {
        self.config.limits = self.config.limits.max_concurrent_server_requests(handlers);
        self
    }

    /// At most this many bytes of messages wait to be written to a server
    /// that is not reading; a call past it fails at once with
    /// `TransportError::QueueFull` (default 64 MiB; one message alone always
    /// fits).
    pub fn max_outbound_bytes(mut self, bytes: usize) -> Self {
        self.config.limits = self.config.limits.max_outbound_bytes(bytes);
        self
    }

    /// Answers elicitation with an async closure of the request and its
    /// [`HandlerContext`] (declares the `elicitation` capability, form
    /// mode). The same closure answers a legacy server's request and a
    /// modern server's `input_required`.
    ///
    /// ```
    /// use mcp_client::Client;
    /// use mcp_client::protocol::types::{ElicitAction, ElicitResult};
    ///
    /// let builder = Client::builder().on_elicitation(|request, ctx| async move {
    ///     println!("{:?} (asked in the {} era)", request.message(), ctx.era);
    ///     Ok(ElicitResult::new(ElicitAction::Decline))
    /// });
    /// # let _ = builder;
    /// ```
    pub fn on_elicitation<F, Fut>(self, f: F) -> Self
    where
        F: Fn(ElicitRequestParams, HandlerContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = std::result::Result<ElicitResult, HandlerError>> + Send + 'static,
    {
        self.elicitation_handler(elicitation_closure(f, false))
    }

    /// Like [`on_elicitation`](Self::on_elicitation), declaring URL mode
    /// too: the closure also gets URL-mode requests (2025-11-25+).
    pub fn on_elicitation_with_url<F, Fut>(self, f: F) -> Self
    where
        F: Fn(ElicitRequestParams, HandlerContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = std::result::Result<ElicitResult, HandlerError>> + Send + 'static,
    {
        self.elicitation_handler(elicitation_closure(f, true))
    }

    /// Answers sampling with an async closure of the request and its
    /// [`HandlerContext`] (declares the `sampling` capability).
    ///
    /// ```
    /// use mcp_client::Client;
    /// use mcp_client::handlers::HandlerError;
    ///
    /// let builder = Client::builder().on_sampling(|request, _ctx| async move {
    ///     Err(HandlerError::new(format!("no model for {} messages", request.messages.len())))
    /// });
    /// # let _ = builder;
    /// ```
    pub fn on_sampling<F, Fut>(self, f: F) -> Self
    where
        F: Fn(CreateMessageRequestParams, HandlerContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = std::result::Result<CreateMessageResult, HandlerError>>
            + Send
            + 'static,
    {
        self.sampling_handler(sampling_closure(f))
    }

    /// Offers roots computed by an async closure each time the server asks
    /// (declares the `roots` capability).
    ///
    /// ```
    /// use mcp_client::Client;
    /// use mcp_client::protocol::types::Root;
    ///
    /// let builder = Client::builder().on_roots(|_ctx| async {
    ///     Ok(vec![Root::new("file:///work")])
    /// });
    /// # let _ = builder;
    /// ```
    pub fn on_roots<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(HandlerContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = std::result::Result<Vec<Root>, HandlerError>> + Send + 'static,
    {
        self.config.handlers.roots = Some(RootsSource::Handler(roots_closure(f)));
        self
    }

    /// Answers elicitation with a handler object (declares the
    /// `elicitation` capability, and URL mode when the handler says so).
    pub fn elicitation_handler(mut self, handler: Arc<dyn ElicitationHandler>) -> Self {
        self.config.handlers.elicitation = Some(handler);
        self
    }

    /// Answers sampling with a handler object (declares the `sampling`
    /// capability).
    pub fn sampling_handler(mut self, handler: Arc<dyn SamplingHandler>) -> Self {
        self.config.handlers.sampling = Some(handler);
        self
    }

    /// Answers `roots/list` with a handler object.
    pub fn roots_handler(mut self, handler: Arc<dyn RootsHandler>) -> Self {
        self.config.handlers.roots = Some(RootsSource::Handler(handler));
        self
    }

    /// Offers a list of roots (declares the `roots` capability); change it
    /// later with [`Client::set_roots`].
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        self.config.handlers.roots = Some(RootsSource::List(Arc::new(RwLock::new(roots))));
        self
    }

    /// Calls `f` for every event the server sends, from the first message
    /// on (events that arrive while connecting included).
    pub fn on_event(mut self, f: impl Fn(&ServerEvent) + Send + Sync + 'static) -> Self {
        self.config.event_callback = Some(Arc::new(f));
        self
    }

    /// A verdict saved from an earlier connection ([`Client::verdict`]):
    /// skips the era probe; if it no longer holds, the client probes again.
    pub fn saved_verdict(mut self, verdict: Verdict) -> Self {
        self.saved = Some(verdict);
        self
    }

    /// Supervises the connection: when the server dies (stdio) or the
    /// connection breaks (HTTP), the client connects again through its
    /// connector by `policy`, and the same `Client` goes on.
    ///
    /// Calls made while it reconnects wait (within their timeouts: one
    /// whose timeout runs out first fails with
    /// [`ErrorKind::Restarting`](crate::ErrorKind::Restarting)); a call
    /// in flight when the server died is sent again only when that is
    /// harmless (reads, lists, listens, tools marked read-only or
    /// idempotent), and otherwise fails with
    /// [`ErrorKind::MayHaveRun`](crate::ErrorKind::MayHaveRun). An HTTP
    /// 503 is waited out (its `Retry-After` honoured up to
    /// [`RestartPolicy::max_retry_after`](crate::RestartPolicy::max_retry_after))
    /// like a connection that ended; since a gateway may answer 503 after
    /// forwarding the request, a call met by one is sent again only when
    /// that is harmless, and otherwise fails with `MayHaveRun` at once
    /// (the next call restarts the connection). Each
    /// attempt is told as [`ServerEvent::Restarted`]; when the
    /// budget is spent (by restarts after a server that was reached, see
    /// [`RestartPolicy`](crate::RestartPolicy)), calls fail with
    /// [`ErrorKind::RestartsExhausted`](crate::ErrorKind::RestartsExhausted).
    /// [`Client::close`](crate::Client::close) stops it for good, a
    /// restart under way included.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> mcp_client::Result<()> {
    /// # let fake = mcp_reference_server::FakeServer::new(Default::default());
    /// use mcp_client::{Client, RestartPolicy};
    ///
    /// let client = Client::builder()
    ///     .supervise(RestartPolicy::new())
    ///     .connect(fake.connector())
    ///     .await?;
    /// # client.close().await;
    /// # Ok(())
    /// # }
    /// ```
    pub fn supervise(mut self, policy: crate::RestartPolicy) -> Self {
        self.config.restart = Some(policy);
        self
    }

    /// Connects through `connector`, which can open fresh connections to
    /// the same server (the probe may need a second one).
    pub async fn connect(self, connector: impl Connector + 'static) -> Result<Client> {
        self.connect_shared(Arc::new(connector)).await
    }

    /// Connects over one transport that `make` builds with the client's
    /// handlers. With a single connection, a server that dies on the era
    /// probe cannot be started again: pin the era for such servers.
    pub async fn connect_with(
        self,
        make: impl FnOnce(ConnectionHandlers) -> Arc<dyn Transport> + Send + 'static,
    ) -> Result<Client> {
        let make = std::sync::Mutex::new(Some(make));
        let connector = move |handlers: ConnectionHandlers| {
            let make = make.lock().unwrap_or_else(|p| p.into_inner()).take();
            async move {
                match make {
                    Some(make) => Ok(make(handlers)),
                    None => Err(TransportError::Closed),
                }
            }
        };
        self.connect_shared(Arc::new(connector)).await
    }

    async fn connect_shared(self, connector: Arc<dyn Connector>) -> Result<Client> {
        let config = Arc::new(self.config);
        let events = Events::default();
        let cache = new_cache(&config);
        let Wiring {
            listener,
            invalidation,
            handlers,
            negotiated,
            in_flight,
        } = wire(&config, &events, &cache);
        let ids = Arc::new(Ids::default());
        let late_discover = Arc::new(AtomicBool::new(false));
        let supervisor = config.restart.clone().map(|policy| {
            Supervisor::new(
                policy,
                connector.clone(),
                handlers.clone(),
                negotiated.clone(),
            )
        });
        let established = Connecting {
            config: &config,
            connector: connector.as_ref(),
            handlers,
            ids: ids.clone(),
            late_discover: late_discover.clone(),
            negotiated,
        }
        .run(self.saved)
        .await
        .map_err(|e: ClientError| e.with_server(config.name.as_deref()))?;
        tracing::info!(
            era = %established.verdict.era,
            version = %established.verdict.version,
            reached = ?established.verdict.reached,
            "connected"
        );
        if let Some(discover) = &established.discover {
            store_discover(&cache, discover);
        }
        let parts = SessionParts {
            config,
            ids,
            in_flight,
            late_discover,
            events,
            cache,
            listener,
            invalidation,
            supervisor,
        };
        let session = Arc::new(Session::new(
            parts,
            established.transport,
            established.verdict,
        ));
        let client = Client::new(session, connector);
        client.apply_initial_log_level().await;
        Ok(client)
    }
}

/// Where a connection delivers what it hears, made before it exists (a
/// server may speak first): the client's events, with the cache
/// invalidated on the way; the transport's own events; the server's
/// requests, with what they share with the session.
struct Wiring {
    listener: Listener,
    invalidation: Tap<Notification>,
    handlers: ConnectionHandlers,
    negotiated: Arc<NegotiatedRevision>,
    in_flight: Arc<InFlight>,
}

/// The [`Wiring`] of a client's connections, its events dispatched on a
/// task of their own.
fn wire(config: &Arc<Config>, events: &Events, cache: &Arc<Cache>) -> Wiring {
    let invalidation: Tap<Notification> = {
        let cache = cache.clone();
        Arc::new(move |n: &Notification| invalidate(&cache, n))
    };
    let (listener, stream) = Listener::tapped("client events", 4096, invalidation.clone());
    let (transport_events, transport_stream) =
        Listener::<TransportEvent>::bounded("transport events", 256);
    tokio::spawn(dispatch_events(
        stream,
        transport_stream,
        config.event_callback.clone(),
        events.clone(),
    ));
    let negotiated = Arc::new(NegotiatedRevision::default());
    let in_flight = Arc::new(InFlight::default());
    let server_requests = Arc::new(ServerRequests {
        config: config.clone(),
        in_flight: in_flight.clone(),
        negotiated: negotiated.clone(),
    });
    let handlers = ConnectionHandlers::new(listener.clone())
        .with_server_requests(server_requests)
        .with_events(transport_events)
        .with_limits(config.limits);
    Wiring {
        listener,
        invalidation,
        handlers,
        negotiated,
        in_flight,
    }
}

/// The client's response cache, as configured.
fn new_cache(config: &Config) -> Arc<Cache> {
    Arc::new(
        Cache::new(
            config.cache_capacity,
            config.legacy_cache_max_age,
            config.cache_partition.clone(),
        )
        .with_max_entry_bytes(config.cache_max_entry_bytes),
    )
}

/// The `server/discover` answer read when connecting, cached so that
/// `Client::discover` need not ask again within its `ttlMs`.
fn store_discover(cache: &Cache, discover: &serde_json::Value) {
    let key = Key::of(
        mcp_protocol::methods::SERVER_DISCOVER,
        &serde_json::Value::Null,
    );
    let generation = cache.generation(Group::Discover);
    cache.store(
        key,
        Group::Discover,
        generation,
        discover,
        Era::Modern,
        false,
    );
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("mode", &self.config.mode)
            .field("versions", &self.config.versions)
            .field("request_timeout", &self.config.request_timeout)
            .finish_non_exhaustive()
    }
}
