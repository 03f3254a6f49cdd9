//! The Model Context Protocol, as data: JSON-RPC messages, protocol
//! revisions, per-request `_meta`, typed params and results, result
//! normalization and error codes.
//!
//! This crate does no I/O and needs no async runtime: a server, a proxy or a
//! test can use it alone. Transports (`mcp-transport-*`) move its messages;
//! the client (`mcp-client`) gives them meaning.
//!
//! ```
//! use mcp_protocol::jsonrpc::{Inbound, Message};
//!
//! let line = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#;
//! let Inbound::Single(Message::Response(response)) = Inbound::parse(line)? else {
//!     unreachable!()
//! };
//! let result = mcp_protocol::result::normalize_result(response.result);
//! assert_eq!(result["resultType"], "complete");
//! # Ok::<(), mcp_protocol::jsonrpc::ParseError>(())
//! ```

pub mod framing;
pub mod jsonrpc;
pub mod result;
pub mod version;

pub use jsonrpc::{
    ErrorObject, ErrorResponse, Inbound, Message, Notification, ParseError, Request, RequestId,
    Response,
};
pub use version::{Era, ProtocolVersion};
