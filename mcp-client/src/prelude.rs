//! What a program using the client names most, in one import:
//! `use mcp_client::prelude::*;`.
//!
//! The client and its builder, the options of a call, errors, events, the
//! handlers' context and error, the types a handler returns (with their
//! constructors for the common answers) and the results a call gives; the
//! connectors of the enabled features (`StdioCommand`, with `http`
//! `HttpTransportBuilder`, with `oauth` the OAuth provider and its
//! authorizers and token stores).
//!
//! ```
//! use mcp_client::prelude::*;
//!
//! let builder = Client::builder()
//!     .on_elicitation(|_request, _ctx| async { Ok(ElicitResult::decline()) })
//!     .on_sampling(|_request, _ctx| async {
//!         Ok(CreateMessageResult::text("Paris.", "a-model"))
//!     })
//!     .on_roots(|_ctx| async { Ok(vec![Root::new("file:///work")]) });
//! # let _ = builder;
//! ```

pub use crate::handlers::{CallContext, HandlerContext, HandlerError};
pub use crate::{
    CallOptions, Client, ClientBuilder, ClientError, EraMode, ErrorKind, RestartPolicy,
    ServerEvent, Verdict,
};
pub use mcp_protocol::Era;
pub use mcp_protocol::types::{
    CallToolResult, ContentBlock, CreateMessageRequestParams, CreateMessageResult, ElicitAction,
    ElicitRequestParams, ElicitResult, GetPromptResult, JsonObject, Prompt, ReadResourceResult,
    Resource, Root, Tool,
};
pub use mcp_transport::CancellationToken;

#[cfg(feature = "stdio")]
pub use crate::StdioCommand;

#[cfg(feature = "http")]
pub use crate::HttpTransportBuilder;

#[cfg(feature = "oauth")]
pub use mcp_auth::{FileStore, HeadlessAuthorizer, LoopbackAuthorizer, OAuthProvider};
