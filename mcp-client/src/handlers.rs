//! What the client does when a server asks it for something: elicitation,
//! sampling, roots.
//!
//! The same handlers serve both eras: a legacy server sends a JSON-RPC
//! request to the client; a modern server answers a call with
//! `input_required` and the client retries. User code does not see the
//! difference. The client declares a capability only when its handler is
//! set.

use std::sync::Arc;

use futures::future::BoxFuture;
use mcp_protocol::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, Root,
};

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

/// Answers `elicitation/create`: asks the user for information.
///
/// ```
/// use futures::future::BoxFuture;
/// use mcp_client::handlers::{ElicitationHandler, HandlerError};
/// use mcp_protocol::types::{ElicitAction, ElicitRequestParams, ElicitResult};
///
/// struct Decline;
/// impl ElicitationHandler for Decline {
///     fn elicit(&self, _: ElicitRequestParams) -> BoxFuture<'static, Result<ElicitResult, HandlerError>> {
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
    ) -> BoxFuture<'static, Result<ElicitResult, HandlerError>>;

    /// Whether the handler takes URL-mode elicitations (2025-11-25+); the
    /// client declares URL mode only then.
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
    ) -> BoxFuture<'static, Result<CreateMessageResult, HandlerError>>;

    /// Whether the handler takes `tools` and `toolChoice` (2025-11-25+);
    /// the client declares `sampling.tools` only then.
    fn supports_tools(&self) -> bool {
        false
    }
}

/// Adapts a closure into an [`ElicitationHandler`] (form mode only).
pub fn elicitation_fn<F, Fut>(f: F) -> Arc<dyn ElicitationHandler>
where
    F: Fn(ElicitRequestParams) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<ElicitResult, HandlerError>> + Send + 'static,
{
    struct FnElicit<F>(F);
    impl<F, Fut> ElicitationHandler for FnElicit<F>
    where
        F: Fn(ElicitRequestParams) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<ElicitResult, HandlerError>> + Send + 'static,
    {
        fn elicit(
            &self,
            params: ElicitRequestParams,
        ) -> BoxFuture<'static, Result<ElicitResult, HandlerError>> {
            Box::pin((self.0)(params))
        }
    }
    Arc::new(FnElicit(f))
}

/// Adapts a closure into a [`SamplingHandler`] (without tools).
pub fn sampling_fn<F, Fut>(f: F) -> Arc<dyn SamplingHandler>
where
    F: Fn(CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<CreateMessageResult, HandlerError>> + Send + 'static,
{
    struct FnSample<F>(F);
    impl<F, Fut> SamplingHandler for FnSample<F>
    where
        F: Fn(CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<CreateMessageResult, HandlerError>>
            + Send
            + 'static,
    {
        fn create_message(
            &self,
            params: CreateMessageRequestParams,
        ) -> BoxFuture<'static, Result<CreateMessageResult, HandlerError>> {
            Box::pin((self.0)(params))
        }
    }
    Arc::new(FnSample(f))
}

/// The client's handlers, as configured.
#[derive(Clone, Default)]
pub(crate) struct Handlers {
    pub(crate) elicitation: Option<Arc<dyn ElicitationHandler>>,
    pub(crate) sampling: Option<Arc<dyn SamplingHandler>>,
    /// `Some` when the client offers roots (even an empty list).
    pub(crate) roots: Option<Arc<std::sync::RwLock<Vec<Root>>>>,
}

impl Handlers {
    pub(crate) fn roots(&self) -> Option<Vec<Root>> {
        self.roots
            .as_ref()
            .map(|r| r.read().unwrap_or_else(|p| p.into_inner()).clone())
    }
}
