//! Per-request options.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::Listener;

/// How one request is to be waited for, cancelled and listened to.
///
/// The default waits without a limit, sends a wire cancel when the request
/// is cancelled or dropped, and routes no notifications to the request.
/// Clients normally set a timeout; the transport itself sets none so that a
/// caller who wants none can have it.
///
/// ```
/// use std::time::Duration;
/// use mcp_transport::RequestOptions;
///
/// let options = RequestOptions::new()
///     .timeout(Duration::from_secs(30))
///     .reset_timeout_on_progress(Duration::from_secs(600));
/// assert!(options.cancel_on_wire);
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RequestOptions {
    /// How long to wait for the answer. With
    /// [`reset_on_progress`](Self::reset_on_progress) the wait restarts at
    /// each progress notification for the request.
    pub timeout: Option<Duration>,
    /// Whether progress notifications restart the timeout.
    pub reset_on_progress: bool,
    /// A limit on the whole wait that progress never extends.
    pub max_total: Option<Duration>,
    /// Cancels the request when cancelled.
    pub cancellation: Option<CancellationToken>,
    /// Receives the notifications tied to this request: its progress, and
    /// the notifications of a subscription it opened.
    pub listener: Option<crate::Listener>,
    /// Whether cancelling (by token, timeout or drop) tells the server.
    /// Off for `initialize`, which the spec says is never cancelled, and for
    /// the era probe.
    pub cancel_on_wire: bool,
    /// Extra headers for the request's HTTP message (the `Mcp-Param-*`
    /// values of a `tools/call`, say), as name and value. Transports
    /// without headers ignore them.
    pub headers: Vec<(String, String)>,
    /// `_meta` members every request of the connection carries alike, for
    /// the transport to put on the wire; give them only to a transport
    /// whose [`profile`](crate::Transport::profile) says it
    /// [`takes_shared_meta`](crate::TransportProfile::takes_shared_meta), and merge them into the params otherwise.
    pub shared_meta: Option<crate::SharedMeta>,
}

impl Default for RequestOptions {
    fn default() -> Self {
        RequestOptions {
            timeout: None,
            reset_on_progress: false,
            max_total: None,
            cancellation: None,
            listener: None,
            cancel_on_wire: true,
            headers: Vec::new(),
            shared_meta: None,
        }
    }
}

impl RequestOptions {
    /// The defaults: no limit, wire cancel on, no listener.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Restarts the timeout at each progress notification, never waiting
    /// longer than `max_total` in all.
    pub fn reset_timeout_on_progress(mut self, max_total: Duration) -> Self {
        self.reset_on_progress = true;
        self.max_total = Some(max_total);
        self
    }

    /// Sets a limit on the whole wait.
    pub fn max_total(mut self, max_total: Duration) -> Self {
        self.max_total = Some(max_total);
        self
    }

    /// Cancels the request when `token` is cancelled.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// Routes the request's notifications to `listener`.
    pub fn listener(mut self, listener: Listener) -> Self {
        self.listener = Some(listener);
        self
    }

    /// Adds an extra header (see [`headers`](Self::headers)).
    ///
    /// ```
    /// let o = mcp_transport::RequestOptions::new().header("Mcp-Param-Region", "eu");
    /// assert_eq!(o.headers, [("Mcp-Param-Region".to_owned(), "eu".to_owned())]);
    /// ```
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// `_meta` members for the transport to put on the wire: see
    /// [`SharedMeta`](crate::SharedMeta).
    pub fn shared_meta(mut self, shared: crate::SharedMeta) -> Self {
        self.shared_meta = Some(shared);
        self
    }

    /// Never tells the server about a cancel.
    pub fn no_wire_cancel(mut self) -> Self {
        self.cancel_on_wire = false;
        self
    }
}
