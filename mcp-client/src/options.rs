//! Per-call options.

use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::types::ProgressNotificationParams;
use mcp_transport::CancellationToken;
use serde_json::{Map, Value};

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
            .finish()
    }
}
