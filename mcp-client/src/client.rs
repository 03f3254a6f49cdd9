//! `Client`: a connected, cloneable handle.

use std::sync::Arc;

use mcp_protocol::methods::RequestMethod;
use mcp_protocol::types::{DiscoverResult, Implementation, LoggingLevel, Root, ServerCapabilities};
use mcp_protocol::{Era, Notification, ProtocolVersion, methods};
use mcp_transport::Connector;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::builder::ClientBuilder;
use crate::cache::{Key, Lookup};
use crate::call;
use crate::error::{ClientError, ErrorKind, Result};
use crate::events::EventStream;
use crate::handlers::RootsSource;
use crate::mrtr::Outcome;
use crate::options::CallOptions;
use crate::session::Session;
use crate::verdict::Verdict;

/// A connection to one MCP server, of whatever era.
///
/// Cheap to clone; every clone uses the same connection, and many tasks may
/// call at once. The connection closes when [`close`](Self::close) is
/// called or the last clone is dropped.
#[derive(Clone)]
pub struct Client {
    pub(crate) session: Arc<Session>,
    connector: Arc<dyn Connector>,
}

impl Client {
    /// A builder with safe defaults.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::new()
    }

    pub(crate) fn new(session: Arc<Session>, connector: Arc<dyn Connector>) -> Self {
        Client { session, connector }
    }

    /// What the client learned when it connected; save it to skip the
    /// probe next time ([`ClientBuilder::saved_verdict`]).
    pub fn verdict(&self) -> Verdict {
        self.session.verdict()
    }

    /// The era in use.
    pub fn era(&self) -> Era {
        self.session.era()
    }

    /// The protocol revision in use.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.session.version()
    }

    /// What the server can do.
    pub fn server_capabilities(&self) -> ServerCapabilities {
        self.session.read_verdict(|v| v.capabilities.clone())
    }

    /// Who the server is, when it said.
    pub fn server_info(&self) -> Option<Implementation> {
        self.session.read_verdict(|v| v.server_info.clone())
    }

    /// The server's instructions, when it gave any.
    pub fn instructions(&self) -> Option<String> {
        self.session.read_verdict(|v| v.instructions.clone())
    }

    /// The connector this client was made with, to start the same server
    /// again.
    pub fn connector(&self) -> Arc<dyn Connector> {
        self.connector.clone()
    }

    /// A stream of what the server sends unasked, from now on.
    pub fn events(&self) -> EventStream {
        EventStream::new(self.session.events.subscribe())
    }

    /// Whether the connection can still carry calls. A supervised client
    /// ([`ClientBuilder::supervise`]) whose connection ended connects again
    /// at the next call.
    pub fn is_alive(&self) -> bool {
        self.session.transport().is_alive()
    }

    /// Closes the connection (for a child process: stdin closed, then
    /// SIGTERM, then SIGKILL). Calls in flight fail with `Closed`.
    pub async fn close(&self) {
        if let Some(supervisor) = &self.session.supervisor {
            // A restart under way ends first: otherwise it could put a new
            // connection in place after this one is closed.
            supervisor.stop_and_settle().await;
        }
        self.session.transport().close().await;
    }

    /// Any request, typed by its method marker, with the era's envelope and
    /// the client's gating. `input_required` answers are fulfilled through
    /// the handlers for the methods that may ask for input.
    ///
    /// ```no_run
    /// # async fn run(client: mcp_client::Client) -> mcp_client::Result<()> {
    /// use mcp_protocol::methods::ListTools;
    /// use mcp_protocol::types::PaginatedRequestParams;
    ///
    /// let page = client.request::<ListTools>(PaginatedRequestParams::new()).await?;
    /// println!("{} tools", page.items.len());
    /// # Ok(()) }
    /// ```
    pub async fn request<M: RequestMethod>(&self, params: M::Params) -> Result<M::Result> {
        self.request_with::<M>(params, &CallOptions::new()).await
    }

    /// [`request`](Self::request) with per-call options.
    pub async fn request_with<M: RequestMethod>(
        &self,
        params: M::Params,
        options: &CallOptions,
    ) -> Result<M::Result> {
        let value = to_params(M::METHOD, &params)?;
        // The typed params are no longer needed: free them before waiting,
        // which matters for large arguments.
        drop(params);
        let value = call::complete(&self.session, M::METHOD, value, options).await?;
        parse_result::<M>(value)
    }

    /// Any request by name, untyped: params and result as JSON. Gated like
    /// the typed calls for the methods the client knows; others go out as
    /// they are.
    pub async fn request_raw(
        &self,
        method: &str,
        params: Value,
        options: &CallOptions,
    ) -> Result<Value> {
        call::complete(&self.session, method, params, options).await
    }

    /// One round of any request by name, in manual mode: gated and traced
    /// like every call, but an `input_required` answer is handed back
    /// untouched rather than fulfilled, and nothing is cached. For code that
    /// relays requests it does not know (a bridge); the typed `*_once`
    /// calls ([`call_tool_once`](Self::call_tool_once)) do the same for
    /// their methods. Send the next round with
    /// [`retry_params`](crate::mrtr::retry_params).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> mcp_client::Result<()> {
    /// # let fake = mcp_reference_server::FakeServer::new(mcp_reference_server::FakeConfig::modern());
    /// use mcp_client::{CallOptions, Client};
    /// use mcp_client::mrtr::{Outcome, retry_params};
    /// use mcp_client::protocol::types::{ElicitResult, InputResponse, InputResponses};
    /// use serde_json::json;
    ///
    /// // A handler declares elicitation; the rounds are answered by hand.
    /// let client = Client::builder()
    ///     .on_elicitation(|_, _| async { unreachable!("answered by hand") })
    ///     .connect(fake.connector())
    ///     .await?;
    /// let params = json!({"name": "elicit", "arguments": {}});
    /// let options = CallOptions::new();
    /// let Outcome::InputRequired(asked) =
    ///     client.request_once("tools/call", params.clone(), &options).await?
    /// else {
    ///     panic!("the tool asks first");
    /// };
    /// let mut responses = InputResponses::new();
    /// for key in asked.input_requests.iter().flatten().map(|(k, _)| k) {
    ///     let content = serde_json::Map::from_iter([("name".into(), "Ada".into())]);
    ///     responses.insert(key.clone(), InputResponse::Elicitation(ElicitResult::accept(content)));
    /// }
    /// let next = retry_params(&params, &responses, asked.request_state.as_deref());
    /// let Outcome::Complete(result) = client.request_once("tools/call", next, &options).await?
    /// else {
    ///     panic!("one round of input is enough");
    /// };
    /// assert!(result["content"].is_array(), "{result}");
    /// # Ok(())
    /// # }
    /// ```
    pub async fn request_once(
        &self,
        method: &str,
        params: Value,
        options: &CallOptions,
    ) -> Result<Outcome<Value>> {
        call::one_round(&self.session, method, params, options).await
    }

    /// Sends a notification as it is: no envelope, no gating. The caller
    /// writes its params, `_meta` included (in the modern era a server may
    /// expect the protocol version there); the typed calls do that for the
    /// notifications the client sends itself.
    pub fn notify_raw(&self, method: &str, params: Option<Value>) -> Result<()> {
        self.session
            .transport()
            .notify(Notification::new(method, params))
            .map_err(|e| ClientError::from(e).with_method(method))
    }

    /// Like [`request_with`](Self::request_with), for the cacheable methods
    /// (`server/discover`, the lists, `resources/read`), saying where the
    /// answer came from; when the server cannot be reached and a stale
    /// cached answer exists, that answer is served and marked so.
    pub async fn fetch<M: RequestMethod>(
        &self,
        params: M::Params,
        options: &CallOptions,
    ) -> Result<Fetched<M::Result>> {
        let params = to_params(M::METHOD, &params)?;
        let key = Key::of(M::METHOD, &params);
        if !options.bypass_cache
            && let Lookup::Fresh(v) = self.session.cache.lookup(&key)
        {
            return Ok(Fetched {
                value: parse_result::<M>(v)?,
                source: Source::Cache,
            });
        }
        // The cache was just asked; the call itself need not ask again.
        let mut fetch_options = options.clone();
        fetch_options.bypass_cache = true;
        match call::complete(&self.session, M::METHOD, params, &fetch_options).await {
            Ok(v) => Ok(Fetched {
                value: parse_result::<M>(v)?,
                source: Source::Server,
            }),
            Err(error) => match self.session.cache.lookup(&key) {
                Lookup::Fresh(v) | Lookup::Stale(v) if is_unreachable(&error) => Ok(Fetched {
                    value: parse_result::<M>(v)?,
                    source: Source::StaleCache(error),
                }),
                _ => Err(error),
            },
        }
    }

    /// `server/discover` (modern): what the server supports now. The
    /// answer read when connecting is cached by its `ttlMs`, so this asks
    /// the server again only once that has passed.
    pub async fn discover(&self) -> Result<DiscoverResult> {
        self.request::<mcp_protocol::methods::Discover>(Default::default())
            .await
    }

    /// `ping` (legacy; modern servers have no ping).
    pub async fn ping(&self) -> Result<()> {
        self.request::<mcp_protocol::methods::Ping>(Default::default())
            .await
            .map(drop)
    }

    /// Sets the log level of the server's `notifications/message`:
    /// `logging/setLevel` in legacy; in modern, the level goes on every
    /// later request's `_meta`.
    pub async fn set_log_level(&self, level: LoggingLevel) -> Result<()> {
        match self.era() {
            Era::Modern => {
                self.session.set_log_level(Some(level));
                Ok(())
            }
            Era::Legacy => {
                let params = serde_json::json!({ "level": level.as_str() });
                call::complete(
                    &self.session,
                    methods::LOGGING_SET_LEVEL,
                    params,
                    &CallOptions::new(),
                )
                .await?;
                // Set again if the session has to be renewed.
                self.session.set_log_level(Some(level));
                Ok(())
            }
        }
    }

    pub(crate) async fn apply_initial_log_level(&self) {
        if self.era() != Era::Legacy {
            return;
        }
        if let Some(level) = self.session.config.log_level.clone()
            && let Err(e) = self.set_log_level(level).await
        {
            tracing::warn!(error = %e, "could not set the server's log level");
        }
    }

    /// Replaces the roots the client offers and tells a legacy server
    /// (`notifications/roots/list_changed`); modern servers ask again when
    /// they need them.
    pub fn set_roots(&self, roots: Vec<Root>) -> Result<()> {
        let Some(RootsSource::List(shared)) = &self.session.config.handlers.roots else {
            return Err(ClientError::usage(
                "the client offers no list of roots to replace; declare one with \
                 ClientBuilder::roots (a roots handler answers for itself)",
            ));
        };
        *shared.write().unwrap_or_else(|p| p.into_inner()) = roots;
        if self.era() == Era::Legacy {
            self.notify_raw(methods::NOTIFICATION_ROOTS_LIST_CHANGED, None)?;
        }
        Ok(())
    }
}

pub(crate) fn to_params<T: Serialize>(method: &str, params: &T) -> Result<Value> {
    let value = serde_json::to_value(params).map_err(|e| {
        ClientError::usage(format!("params do not serialize: {e}")).with_method(method)
    })?;
    Ok(match value {
        Value::Null => Value::Object(Default::default()),
        v => v,
    })
}

pub(crate) fn parse<T: DeserializeOwned>(method: &str, value: Value) -> Result<T> {
    serde_json::from_value(value).map_err(|e| shape_error(method, e))
}

/// A method's complete result, typed as the method types it (moving the
/// members that are JSON as it is, where the type can).
pub(crate) fn parse_result<M: RequestMethod>(value: Value) -> Result<M::Result> {
    M::result_from_value(value).map_err(|e| shape_error(M::METHOD, e))
}

/// A result that does not have its method's shape.
pub(crate) fn shape_error(method: &str, e: serde_json::Error) -> ClientError {
    ClientError::new(ErrorKind::InvalidResponse {
        detail: format!("the result does not have the shape the spec gives: {e}"),
    })
    .with_method(method)
}

/// An answer and where it came from; see [`Client::fetch`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Fetched<T> {
    /// The answer.
    pub value: T,
    /// Where it came from.
    pub source: Source,
}

/// Where an answer came from.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Source {
    /// The server, just now.
    Server,
    /// The cache, still fresh.
    Cache,
    /// The cache, stale: the server could not be asked, for this reason.
    StaleCache(ClientError),
}

/// Whether an error means the server could not be asked (as opposed to an
/// answer it gave).
fn is_unreachable(error: &ClientError) -> bool {
    matches!(error.kind(), ErrorKind::Transport(_))
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = self.session.verdict();
        f.debug_struct("Client")
            .field("era", &v.era)
            .field("version", &v.version)
            .field("server", &v.server_info.map(|i| i.name))
            .finish_non_exhaustive()
    }
}
