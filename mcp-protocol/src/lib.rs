//! The Model Context Protocol, as data: JSON-RPC messages, protocol
//! revisions, per-request `_meta`, typed params and results, result
//! normalization and error codes.
//!
//! This crate does no I/O and needs no async runtime: a server, a proxy or a
//! test can use it alone. Transports (the `mcp-steady-transport-*`
//! packages) move its messages; the client (`mcp_client`, package
//! `mcp-steady-client`) gives them meaning.
//!
//! - [`jsonrpc`]: the JSON-RPC 2.0 envelope and strict parsing of it.
//! - [`framing`]: newline-delimited JSON, as stdio frames messages.
//! - [`headers`]: the HTTP headers that mirror a request's body:
//!   `Mcp-Param-*` from a tool's `x-mcp-header` annotations, and the
//!   `=?base64?…?=` value encoding.
//! - [`version`]: protocol revisions and their eras.
//! - [`types`]: typed params and results of every method, 2024-11-05 to
//!   2026-07-28, tolerant of whatever a newer peer adds.
//! - [`methods`]: method names, and the traits tying each method's params to
//!   its result.
//! - [`meta`]: reserved `_meta` keys and a builder for a request's `_meta`.
//! - [`result`]: normalizing a result's `resultType` and classifying it
//!   (complete, input required, task).
//! - [`error_codes`]: JSON-RPC and MCP error codes, with typed `data`.
//! - [`unknown`]: listing what a parsed message held that this library does
//!   not know.
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

#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(doctest, doc = include_str!("../README.md"))]

#[macro_use]
mod macros;

pub mod error_codes;
pub mod framing;
pub mod headers;
pub mod jsonrpc;
pub mod meta;
pub mod methods;
pub mod result;
pub mod types;
pub mod unknown;
pub mod version;

pub use jsonrpc::{
    ErrorObject, ErrorResponse, Inbound, Message, Notification, ParseError, Request, RequestId,
    Response,
};
pub use methods::{NotificationMethod, RequestMethod};
pub use result::{ClassifiedResult, ClassifyError, RegisteredResultTypes, classify_result};
pub use unknown::UnknownFields;
pub use version::{Era, ProtocolVersion};
