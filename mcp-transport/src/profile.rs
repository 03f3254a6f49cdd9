//! What a transport does beyond moving messages, which the client reads
//! to choose its behaviour.

/// What a [`Transport`](crate::Transport) does beyond moving messages:
/// the facts about its wire that change what the client does.
///
/// [`new`](Self::new) says "none of these", which is right for a
/// transport that only moves messages (stdio, an in-memory pipe); turn on
/// what yours does with the methods of the same names. The struct is
/// `#[non_exhaustive]`, so a fact added later defaults to off and your
/// transport keeps compiling.
///
/// ```
/// use futures::future::BoxFuture;
/// use mcp_protocol::{Notification, Request};
/// use mcp_transport::{
///     RequestOptions, ResponseFuture, Transport, TransportError, TransportProfile,
/// };
///
/// /// A wire where every request gets an answer and may carry headers.
/// struct Posting;
///
/// impl Transport for Posting {
///     fn request(&self, _: Request, _: RequestOptions) -> ResponseFuture {
///         Box::pin(std::future::ready(Err(TransportError::Closed)))
///     }
///     fn notify(&self, _: Notification) -> Result<(), TransportError> {
///         Ok(())
///     }
///     fn close(&self) -> BoxFuture<'static, ()> {
///         Box::pin(std::future::ready(()))
///     }
///     fn is_alive(&self) -> bool {
///         false
///     }
///     fn profile(&self) -> TransportProfile {
///         TransportProfile::new()
///             .sends_headers(true)
///             .answers_every_request(true)
///     }
/// }
///
/// let profile = Posting.profile();
/// assert!(profile.sends_headers && profile.answers_every_request);
/// assert!(!profile.takes_shared_meta);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct TransportProfile {
    /// Whether the transport puts
    /// [`RequestOptions::headers`](crate::RequestOptions::headers) on the
    /// wire (HTTP does; stdio does not). The client computes per-request
    /// headers (`Mcp-Param-*`), and lists tools to learn them, only when it
    /// does.
    pub sends_headers: bool,
    /// Whether the wire itself answers every request (HTTP: each POST gets
    /// a response, from a server of any era). The era probe then reads a
    /// probe that stays unanswered as a fault of the connection, not as a
    /// legacy server keeping quiet, as it does over stdio.
    pub answers_every_request: bool,
    /// Whether the transport puts
    /// [`RequestOptions::shared_meta`](crate::RequestOptions::shared_meta)
    /// on the wire itself (the [`Engine`](crate::Engine) does). When false,
    /// a caller merges the members into the params with
    /// [`SharedMeta::merge_into`](crate::SharedMeta::merge_into) and gives
    /// the transport none.
    pub takes_shared_meta: bool,
    /// Whether the transport tells the server-request handler which client
    /// request a server request arrived during
    /// ([`ServerRequestHandler::handle_during`](crate::ServerRequestHandler::handle_during);
    /// Streamable HTTP does, for a request sent on a `POST`'s answer
    /// stream). Only then does a client keep, for each request in flight,
    /// the call it was sent for.
    pub ties_server_requests: bool,
}

impl TransportProfile {
    /// A transport that only moves messages: every fact off.
    pub const fn new() -> Self {
        TransportProfile {
            sends_headers: false,
            answers_every_request: false,
            takes_shared_meta: false,
            ties_server_requests: false,
        }
    }

    /// The same, saying whether request headers go on the wire.
    pub const fn sends_headers(mut self, yes: bool) -> Self {
        self.sends_headers = yes;
        self
    }

    /// The same, saying whether the wire answers every request.
    pub const fn answers_every_request(mut self, yes: bool) -> Self {
        self.answers_every_request = yes;
        self
    }

    /// The same, saying whether the transport puts the shared `_meta` on
    /// the wire itself.
    pub const fn takes_shared_meta(mut self, yes: bool) -> Self {
        self.takes_shared_meta = yes;
        self
    }

    /// The same, saying whether the transport ties a server request to the
    /// client request it arrived during.
    pub const fn ties_server_requests(mut self, yes: bool) -> Self {
        self.ties_server_requests = yes;
        self
    }
}
