//! Per-call options.

use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ProgressNotificationParams, Root,
};
use mcp_transport::CancellationToken;
use serde_json::{Map, Value};

#[cfg(doc)]
use crate::handlers::CallContext;
use crate::handlers::{
    ElicitationHandler, HandlerContext, HandlerError, Handlers, RootsHandler, RootsSource,
    SamplingHandler, elicitation_closure, roots_closure, sampling_closure,
};

/// A callback for a call's progress notifications.
pub type ProgressCallback = Arc<dyn Fn(ProgressNotificationParams) + Send + Sync>;

/// How one call is made. The defaults come from the [`crate::ClientBuilder`].
///
/// ```
/// use std::time::Duration;
/// use mcp_client::CallOptions;
///
/// let options = CallOptions::new()
///     .timeout(Duration::from_secs(5))
///     .reset_timeout_on_progress()
///     .on_progress(|p| println!("{} of {:?}", p.progress, p.total));
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct CallOptions {
    /// How long to wait for the answer (default: the client's request
    /// timeout).
    pub timeout: Option<Duration>,
    /// Whether progress notifications restart the timeout. Asking for this
    /// alone makes the client send a progress token.
    pub reset_on_progress: bool,
    /// The hard maximum for the whole call, which progress never extends
    /// (default: the client's maximum total timeout).
    pub max_total: Option<Duration>,
    /// Called with each progress notification for the call.
    pub on_progress: Option<ProgressCallback>,
    /// Cancels the call (on the wire too) when cancelled.
    pub cancellation: Option<CancellationToken>,
    /// Extra `_meta` for the request, such as trace context.
    pub meta: Map<String, Value>,
    /// Skip the cache for this call and store the fresh answer.
    pub bypass_cache: bool,
    /// An opaque tag for whom the call is made, handed to the handlers its
    /// input requests reach ([`CallContext::on_behalf_of`]).
    pub on_behalf_of: Option<String>,
    /// The call's own handlers, over the client's ([`Handlers::over`]).
    pub(crate) handlers: Handlers,
    /// Where a listen request's notifications go (its subscription's own).
    pub(crate) listener: Option<mcp_transport::Listener>,
    /// Extra headers for the request (a call's `Mcp-Param-*`).
    pub(crate) headers: Vec<(String, String)>,
}

impl CallOptions {
    /// The client's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Restarts the timeout at each progress notification.
    pub fn reset_timeout_on_progress(mut self) -> Self {
        self.reset_on_progress = true;
        self
    }

    /// Sets the hard maximum for the whole call.
    pub fn max_total(mut self, max_total: Duration) -> Self {
        self.max_total = Some(max_total);
        self
    }

    /// Calls `f` with each progress notification for the call.
    pub fn on_progress(
        mut self,
        f: impl Fn(ProgressNotificationParams) + Send + Sync + 'static,
    ) -> Self {
        self.on_progress = Some(Arc::new(f));
        self
    }

    /// Cancels the call when `token` is cancelled.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// Adds a `_meta` entry to the request.
    pub fn meta(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.meta.insert(key.into(), value.into());
        self
    }

    /// Skips the cache for this call.
    pub fn bypass_cache(mut self) -> Self {
        self.bypass_cache = true;
        self
    }

    /// Tags the call with whom it is made for: every handler its input
    /// requests reach sees the tag in [`CallContext::on_behalf_of`].
    pub fn on_behalf_of(mut self, tag: impl Into<String>) -> Self {
        self.on_behalf_of = Some(tag.into());
        self
    }

    /// Answers this call's elicitations (form mode) with `f` instead of the
    /// client's handler. The client declares capabilities from its own
    /// handlers: a legacy server asks only for what the client declared.
    ///
    /// ```
    /// use mcp_client::CallOptions;
    /// use mcp_protocol::types::{ElicitAction, ElicitResult};
    ///
    /// let options = CallOptions::new()
    ///     .on_elicitation(|_, _| async { Ok(ElicitResult::new(ElicitAction::Decline)) });
    /// # let _ = options;
    /// ```
    pub fn on_elicitation<F, Fut>(self, f: F) -> Self
    where
        F: Fn(ElicitRequestParams, HandlerContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, HandlerError>> + Send + 'static,
    {
        self.elicitation_handler(elicitation_closure(f, false))
    }

    /// Answers this call's elicitations with `handler` (which may take URL
    /// mode) instead of the client's.
    pub fn elicitation_handler(mut self, handler: Arc<dyn ElicitationHandler>) -> Self {
        self.handlers.elicitation = Some(handler);
        self
    }

    /// Answers this call's sampling requests with `f` instead of the
    /// client's handler.
    pub fn on_sampling<F, Fut>(self, f: F) -> Self
    where
        F: Fn(CreateMessageRequestParams, HandlerContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, HandlerError>> + Send + 'static,
    {
        self.sampling_handler(sampling_closure(f))
    }

    /// Answers this call's sampling requests with `handler` instead of the
    /// client's.
    pub fn sampling_handler(mut self, handler: Arc<dyn SamplingHandler>) -> Self {
        self.handlers.sampling = Some(handler);
        self
    }

    /// Answers this call's `roots/list` requests with `f` instead of the
    /// client's roots.
    pub fn on_roots<F, Fut>(self, f: F) -> Self
    where
        F: Fn(HandlerContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Root>, HandlerError>> + Send + 'static,
    {
        self.roots_handler(roots_closure(f))
    }

    /// Answers this call's `roots/list` requests with `handler` instead of
    /// the client's roots.
    pub fn roots_handler(mut self, handler: Arc<dyn RootsHandler>) -> Self {
        self.handlers.roots = Some(RootsSource::Handler(handler));
        self
    }

    pub(crate) fn listener(mut self, listener: mcp_transport::Listener) -> Self {
        self.listener = Some(listener);
        self
    }

    pub(crate) fn wants_progress(&self) -> bool {
        self.reset_on_progress || self.on_progress.is_some()
    }
}

impl std::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("reset_on_progress", &self.reset_on_progress)
            .field("max_total", &self.max_total)
            .field("on_progress", &self.on_progress.is_some())
            .field("cancellation", &self.cancellation.is_some())
            .field("meta", &self.meta)
            .field("bypass_cache", &self.bypass_cache)
            .field("on_behalf_of", &self.on_behalf_of)
            .field("own_handlers", &self.handlers.any())
            .finish()
    }
}
