//! What the client does when a server asks it for something: elicitation,
//! sampling, roots.
//!
//! The same handlers serve both eras: a legacy server sends a JSON-RPC
//! request to the client; a modern server answers a call with
//! `input_required` and the client retries. User code does not see the
//! difference. The client declares a capability only when its handler is
//! set.
//!
//! A call may bring handlers of its own
//! ([`CallOptions::on_elicitation`](crate::CallOptions::on_elicitation) and
//! its siblings), which answer that call's input requests in place of the
//! client's; the client's still answer every kind the call does not set,
//! and still decide which capabilities are declared. A legacy server's
//! request reaches a call's handlers only when the transport ties it to
//! that call (over Streamable HTTP); others go to the client's handlers.
//! [`CallContext`] names the request and the caller's
//! [`on_behalf_of`](crate::CallOptions::on_behalf_of) tag, so one handler
//! can route requests for many callers.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use mcp_protocol::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, Root,
};
use mcp_protocol::{Era, ProtocolVersion, RequestId};
use mcp_transport::CancellationToken;

/// Why a handler could not answer. In legacy it becomes the JSON-RPC error
/// the server receives; in a multi round-trip request it fails the call.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct HandlerError {
    /// The JSON-RPC code to answer with (default `-32603`, internal error).
    pub code: i64,
    /// What went wrong.
    pub message: String,
}

impl HandlerError {
    /// An internal error with a message.
    pub fn new(message: impl Into<String>) -> Self {
        HandlerError {
            code: -32603,
            message: message.into(),
        }
    }

    /// An error with a specific JSON-RPC code.
    pub fn with_code(code: i64, message: impl Into<String>) -> Self {
        HandlerError {
            code,
            message: message.into(),
        }
    }
}

/// What a handler knows about the request it answers.
///
/// Built by the client for each request: the era it came through, the call
/// that caused it when that is known (always in a multi round-trip request
/// the client drives; for a legacy server's request, when the transport
/// ties it to one of the client's requests: over Streamable HTTP, one sent
/// on a `POST`'s answer stream; not for `Client::fulfil_input`, nor over
/// stdio or a GET stream), and a token that is cancelled
/// when the server cancels the request or the call ends, so a handler
/// waiting on a person can stop asking.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HandlerContext {
    /// The era the request came through.
    pub era: Era,
    /// The protocol revision in use.
    pub version: ProtocolVersion,
    /// The client call that caused the request, when known.
    pub call: Option<CallContext>,
    /// Cancelled when the server cancels the request or the call ends.
    pub cancellation: CancellationToken,
}

impl HandlerContext {
    pub(crate) fn new(version: ProtocolVersion, call: Option<CallContext>) -> Self {
        HandlerContext {
            era: version.era(),
            version,
            call,
            cancellation: CancellationToken::new(),
        }
    }

    /// A context for a request no call caused, for tests and for code that
    /// calls a handler itself.
    ///
    /// ```
    /// use mcp_client::handlers::HandlerContext;
    /// use mcp_protocol::ProtocolVersion;
    /// let ctx = HandlerContext::detached(ProtocolVersion::V2025_11_25);
    /// assert!(ctx.call.is_none() && !ctx.cancellation.is_cancelled());
    /// ```
    pub fn detached(version: ProtocolVersion) -> Self {
        Self::new(version, None)
    }
}

/// The client call behind a handler's request: which request caused it,
/// and on whose behalf it was made, so that code serving several callers
/// (a bridge) can route the request to the one who made the call.
///
/// ```
/// use mcp_client::CallOptions;
/// use mcp_client::handlers::ElicitationHandler;
/// use mcp_protocol::types::{ElicitAction, ElicitResult};
///
/// // Each downstream caller's calls carry its tag; a handler shared by all
/// // of them reads `ctx.call.on_behalf_of` to know whom to ask.
/// let options = CallOptions::new()
///     .on_behalf_of("downstream-7")
///     .on_elicitation(|_, ctx| async move {
///         let call = ctx.call.expect("a call asked");
///         assert_eq!(call.on_behalf_of.as_deref(), Some("downstream-7"));
///         Ok(ElicitResult::new(ElicitAction::Decline))
///     });
/// # let _ = options;
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallContext {
    /// Its method (`tools/call`, `prompts/get`, `resources/read`, or any
    /// method sent with [`Client::request_once`](crate::Client::request_once)).
    pub method: String,
    /// What it names: the tool, the prompt or the resource URI.
    pub target: Option<String>,
    /// Which round of the exchange asked (1 for the first answer, and for a
    /// legacy server's request).
    pub round: u32,
    /// The key of this input request in the round's `inputRequests`; `None`
    /// for a legacy server's request, which has no key.
    pub key: Option<String>,
    /// The id of the request that caused it: the round's request that was
    /// answered `input_required`, or the request on whose answer stream a
    /// legacy server sent its request. `None` when the client does not know
    /// it (a task's input requests).
    pub request_id: Option<RequestId>,
    /// The tag the caller set with
    /// [`CallOptions::on_behalf_of`](crate::CallOptions::on_behalf_of).
    pub on_behalf_of: Option<String>,
}

/// Answers `elicitation/create`: asks the user for information.
///
/// Most handlers are closures given to
/// [`ClientBuilder::on_elicitation`](crate::ClientBuilder::on_elicitation);
/// implement the trait for a handler with state of its own, or one that
/// takes URL-mode elicitations.
///
/// ```
/// use futures::future::BoxFuture;
/// use mcp_client::handlers::{ElicitationHandler, HandlerContext, HandlerError};
/// use mcp_protocol::types::{ElicitAction, ElicitRequestParams, ElicitResult};
///
/// struct Decline;
/// impl ElicitationHandler for Decline {
///     fn elicit(
///         &self,
///         _: ElicitRequestParams,
///         _: HandlerContext,
///     ) -> BoxFuture<'static, Result<ElicitResult, HandlerError>> {
///         Box::pin(async { Ok(ElicitResult::new(ElicitAction::Decline)) })
///     }
/// }
/// ```
pub trait ElicitationHandler: Send + Sync + 'static {
    /// Answers one elicitation. For a form accepted with fields left out,
    /// the client fills in the schema's defaults.
    fn elicit(
        &self,
        params: ElicitRequestParams,
        context: HandlerContext,
    ) -> BoxFuture<'static, Result<ElicitResult, HandlerError>>;

    /// Whether the handler takes URL-mode elicitations (2025-11-25+); the
    /// client declares URL mode only then, and a URL-mode request never
    /// reaches a handler that does not.
    fn supports_url(&self) -> bool {
        false
    }
}

/// Answers `sampling/createMessage`: asks the client's language model.
pub trait SamplingHandler: Send + Sync + 'static {
    /// Answers one sampling request.
    fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: HandlerContext,
    ) -> BoxFuture<'static, Result<CreateMessageResult, HandlerError>>;

    /// Whether the handler takes `tools` and `toolChoice` (2025-11-25+);
    /// the client declares `sampling.tools` only then.
    fn supports_tools(&self) -> bool {
        false
    }
}

/// Answers `roots/list`: the directories and files the client offers.
pub trait RootsHandler: Send + Sync + 'static {
    /// The roots now.
    fn roots(&self, context: HandlerContext)
    -> BoxFuture<'static, Result<Vec<Root>, HandlerError>>;
}

struct FnElicit<F> {
    f: F,
    url: bool,
}

impl<F, Fut> ElicitationHandler for FnElicit<F>
where
    F: Fn(ElicitRequestParams, HandlerContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ElicitResult, HandlerError>> + Send + 'static,
{
    fn elicit(
        &self,
        params: ElicitRequestParams,
        context: HandlerContext,
    ) -> BoxFuture<'static, Result<ElicitResult, HandlerError>> {
        Box::pin((self.f)(params, context))
    }

    fn supports_url(&self) -> bool {
        self.url
    }
}

struct FnSample<F>(F);

impl<F, Fut> SamplingHandler for FnSample<F>
where
    F: Fn(CreateMessageRequestParams, HandlerContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CreateMessageResult, HandlerError>> + Send + 'static,
{
    fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: HandlerContext,
    ) -> BoxFuture<'static, Result<CreateMessageResult, HandlerError>> {
        Box::pin((self.0)(params, context))
    }
}

struct FnRoots<F>(F);

impl<F, Fut> RootsHandler for FnRoots<F>
where
    F: Fn(HandlerContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<Root>, HandlerError>> + Send + 'static,
{
    fn roots(
        &self,
        context: HandlerContext,
    ) -> BoxFuture<'static, Result<Vec<Root>, HandlerError>> {
        Box::pin((self.0)(context))
    }
}

pub(crate) fn elicitation_closure<F, Fut>(f: F, url: bool) -> Arc<dyn ElicitationHandler>
where
    F: Fn(ElicitRequestParams, HandlerContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ElicitResult, HandlerError>> + Send + 'static,
{
    Arc::new(FnElicit { f, url })
}

pub(crate) fn sampling_closure<F, Fut>(f: F) -> Arc<dyn SamplingHandler>
where
    F: Fn(CreateMessageRequestParams, HandlerContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CreateMessageResult, HandlerError>> + Send + 'static,
{
    Arc::new(FnSample(f))
}

pub(crate) fn roots_closure<F, Fut>(f: F) -> Arc<dyn RootsHandler>
where
    F: Fn(HandlerContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<Root>, HandlerError>> + Send + 'static,
{
    Arc::new(FnRoots(f))
}

/// Adapts a closure of the params alone into an [`ElicitationHandler`]
/// (form mode only), for code that needs a trait object; with the builder,
/// [`ClientBuilder::on_elicitation`](crate::ClientBuilder::on_elicitation)
/// is shorter and gives the context too.
pub fn elicitation_fn<F, Fut>(f: F) -> Arc<dyn ElicitationHandler>
where
    F: Fn(ElicitRequestParams) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ElicitResult, HandlerError>> + Send + 'static,
{
    elicitation_closure(move |params, _| f(params), false)
}

/// Adapts a closure of the params alone into a [`SamplingHandler`]
/// (without tools); see [`elicitation_fn`].
pub fn sampling_fn<F, Fut>(f: F) -> Arc<dyn SamplingHandler>
where
    F: Fn(CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CreateMessageResult, HandlerError>> + Send + 'static,
{
    sampling_closure(move |params, _| f(params))
}

/// Where the client's roots come from.
#[derive(Clone)]
pub(crate) enum RootsSource {
    /// A list, replaced by `Client::set_roots`.
    List(Arc<std::sync::RwLock<Vec<Root>>>),
    /// A handler asked each time.
    Handler(Arc<dyn RootsHandler>),
}

/// The client's handlers, as configured.
#[derive(Clone, Default)]
pub(crate) struct Handlers {
    pub(crate) elicitation: Option<Arc<dyn ElicitationHandler>>,
    pub(crate) sampling: Option<Arc<dyn SamplingHandler>>,
    /// `Some` when the client offers roots (even an empty list).
    pub(crate) roots: Option<RootsSource>,
}

impl Handlers {
    /// Whether any input can be asked of the client: without a handler it
    /// declares no capability, so no server may answer `input_required`.
    pub(crate) fn any(&self) -> bool {
        self.elicitation.is_some() || self.sampling.is_some() || self.roots.is_some()
    }

    /// A call's own handlers over the client's: each kind the call does not
    /// set is answered by the client's handler for it.
    pub(crate) fn over(&self, default: &Handlers) -> Handlers {
        Handlers {
            elicitation: self.elicitation.clone().or(default.elicitation.clone()),
            sampling: self.sampling.clone().or(default.sampling.clone()),
            roots: self.roots.clone().or(default.roots.clone()),
        }
    }

    /// The roots the client offers now, through its list or its handler.
    pub(crate) async fn roots(
        &self,
        context: HandlerContext,
    ) -> Option<Result<Vec<Root>, HandlerError>> {
        match self.roots.as_ref()? {
            RootsSource::List(list) => {
                Some(Ok(list.read().unwrap_or_else(|p| p.into_inner()).clone()))
            }
            RootsSource::Handler(h) => Some(h.roots(context).await),
        }
    }
}
