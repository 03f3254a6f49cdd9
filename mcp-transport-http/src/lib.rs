//! Streamable HTTP for MCP clients, on hyper: the 2026-07-28 POST-only
//! transport with its `Mcp-*` headers, legacy Streamable HTTP
//! (2025-03-26 to 2025-11-25) with its session, GET stream and
//! resumption, and the 2024-11-05 HTTP+SSE transport as a fallback when a
//! server refuses a legacy `initialize` POST.
//!
//! [`HttpTransport`] is built on [`mcp_transport::Engine`] (id correlation,
//! timeouts, cancellation, routing), like the stdio transport; what it adds
//! is the wire. Which era a message is sent in is decided by the message:
//! one whose `_meta` names a modern protocol version is sent the modern way,
//! anything else the legacy way, so the client's era probe (`server/discover`
//! first, then `initialize`) runs on one transport. See [`HttpTransport`]
//! for each era's headers and [`HttpTransportBuilder`] for the settings and
//! their defaults.
//!
//! Under the wire, the HTTP client is a `tower` stack: the transport's
//! [`HttpService`] (hyper-util's pooled client, or one handed in), and
//! over it [`SameOriginRedirects`], or, when the transport is given a
//! [`HeaderProvider`], the [`AuthorizationLayer`], which follows the same
//! redirects itself so that each hop is authorized for its own URL and no
//! hop leaves the server's origin. Both layers go on any `tower` HTTP
//! client too.
//!
//! ```no_run
//! use mcp_protocol::Request;
//! use mcp_transport::{ConnectionHandlers, RequestOptions, Transport};
//! use mcp_transport_http::HttpTransportBuilder;
//!
//! # #[tokio::main]
//! # async fn main() -> Result<(), mcp_transport::TransportError> {
//! let transport = HttpTransportBuilder::new("http://127.0.0.1:8000/mcp")
//!     .build(ConnectionHandlers::discard())?;
//! let tools = transport
//!     .request(Request::new(1, "tools/list", None), RequestOptions::new())
//!     .await?;
//! println!("{tools}");
//! transport.close().await;
//! # Ok(())
//! # }
//! ```
//!
//! # What HTTP says, typed
//!
//! | the server's answer | the request's outcome |
//! |---|---|
//! | 2xx JSON, or SSE ending with the answer | the result, or `Rpc` for a JSON-RPC error |
//! | a JSON-RPC error body with a 4xx status | [`Rpc`](TransportError::Rpc), code and data verbatim |
//! | 401, 403 | [`AuthorizationRequired`](TransportError::AuthorizationRequired) with `WWW-Authenticate` |
//! | 429, 503 | [`RetryLater`](TransportError::RetryLater) with `Retry-After` |
//! | 404, or a 400 whose JSON-RPC error is `-32001` or names the session (or the Python SDK's "No valid session ID" text), on a request with a session id | [`SessionExpired`](TransportError::SessionExpired); the id is forgotten |
//! | refused, DNS, TLS, connect timeout | [`Unreachable`](TransportError::Unreachable) |
//! | the [`HeaderProvider`] failed (an OAuth refresh that could not reach its token endpoint) | [`Credentials`](TransportError::Credentials); nothing sent, the connection kept |
//! | a reset, or a stream that ends before the answer | [`StreamBroken`](TransportError::StreamBroken) (`may_have_run`) |
//! | a redirect to another origin, not 307/308, or too many | [`RedirectRefused`](TransportError::RedirectRefused); nothing sent there |
//! | a body or event over the size limit | [`MessageTooLarge`](TransportError::MessageTooLarge) |
//! | anything else (a 5xx, an HTML page, a wrong `Content-Type`) | [`Http`](TransportError::Http) with the status and the start of the body |
//!
//! A server that never answers is the request's timeout
//! ([`RequestOptions::timeout`](mcp_transport::RequestOptions::timeout)),
//! after which its stream is closed.
//!
//! # Not yet
//!
//! Credentials for an `http` (not `https`) forward proxy. A request answered with 202 and no body (its
//! answer meant for the GET stream) fails with `StreamBroken` rather than
//! waiting for the answer there.
//!
//! # Dependencies, and why
//!
//! * `hyper` 1 and `hyper-util` (`client-legacy`, `client-proxy`): the
//!   pooled client, HTTP/1.1 and HTTP/2, connect timeout and TCP keepalive;
//!   the proxy matcher (`HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`) and the
//!   `CONNECT` tunnel.
//! * `hyper-rustls`, `rustls` (the `ring` provider, which needs no cmake or
//!   clang to build) and `webpki-roots`: TLS with the Mozilla roots by
//!   default, ALPN for HTTP/2.
//! * `rustls-native-certs`, only with the `platform-roots` feature: the
//!   operating system's trust store (for servers behind a corporate CA).
//! * `http`, `http-body`, `http-body-util`, `tower` (`util`): the types of
//!   the pluggable client ([`HttpService`]) and body limits.
//! * `sse-stream`: the SSE parser. Chosen because it is maintained, parses
//!   straight from an `http_body::Body`, follows the WHATWG rules for line
//!   ends, BOM, comments and multi-line `data`, and is what the official
//!   Rust SDK (rmcp) uses for the same job; `eventsource-stream`, the other
//!   common choice, has not been released since 2022. It keeps no bound on
//!   an event's size, so this crate wraps the body in one (an event over
//!   [`max_message_size`](HttpTransportBuilder::max_message_size) fails the
//!   request instead of growing without limit). It is stricter than the
//!   spec about unknown fields and repeated `event`/`id` lines, which fail
//!   the stream as [`Malformed`](TransportError::Malformed).
//! * `httpdate`: `Retry-After` given as a date.
//! * `futures`, `bytes`, `serde_json`, `tracing`: streams, buffers,
//!   bodies, and spans (`mcp_http` with the URL, `mcp_http_request` with
//!   the id and method).

#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(doctest, doc = include_str!("../README.md"))]

mod authorization;
mod builder;
mod error;
mod failure;
#[doc(hidden)]
pub mod fuzzing;
mod provider;
mod proxy;
mod record;
mod redirect;
mod service;
mod sse;
mod transport;
mod url;

pub use authorization::{AuthorizationLayer, Authorized, CredentialsFailed};
pub use builder::{
    Authorization, DEFAULT_CLOSE_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_MESSAGE_SIZE,
    DEFAULT_NOTIFICATION_TIMEOUT, DEFAULT_TCP_KEEPALIVE, HttpTransportBuilder,
};
pub use error::BoxError;
/// The `http` crate, whose header types the builder takes.
pub use http;
pub use provider::{AuthChallenge, HeaderProvider};
pub use proxy::ProxyConfig;
pub use record::RecordingHeaders;
pub use redirect::{
    DEFAULT_MAX_REDIRECTS, RedirectRefused, SameOriginRedirects, SameOriginRedirectsLayer,
};
pub use service::{HttpService, RequestBody, ResponseBody};
pub use transport::{
    ACCEPT_BOTH, HttpTransport, METHOD_HEADER, NAME_HEADER, PROTOCOL_VERSION_HEADER,
    SESSION_ID_HEADER,
};

#[cfg(doc)]
use mcp_transport::TransportError;
