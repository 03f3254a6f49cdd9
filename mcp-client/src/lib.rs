//! A Model Context Protocol client for every revision from 2024-11-05 to
//! 2026-07-28.
//!
//! Connect with a [`ClientBuilder`] through any transport's connector; the
//! client finds out which era the server is in (the era probe), speaks it,
//! and gives one typed API for both: tools, resources, prompts, completion,
//! logging, with elicitation, sampling and roots answered through the same
//! handlers whether a legacy server sends a request or a modern one answers
//! `input_required`.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_client::{Client, StdioCommand};
//! use serde_json::json;
//!
//! // Any stdio server: `StdioCommand::new("npx").args(["-y", "…"])`. Here,
//! // the workspace's reference server.
//! # let program = mcp_reference_server::binaries::server_path();
//! let server = StdioCommand::new(program).args(["--era", "dual"]);
//! let client = Client::builder().connect(server).await?;
//! println!("{} era, protocol {}", client.era(), client.protocol_version());
//!
//! let result = client.call_tool("echo", json!({"text": "hi"})).await?;
//! assert!(!result.is_error());
//! client.close().await;
//! # Ok(())
//! # }
//! ```
//!
//! The same code runs against a legacy server: `initialize` instead of
//! `server/discover`, server requests instead of `input_required`, the
//! client takes care of it. Without a server at all, connect to the
//! reference server of `mcp-reference-server` in process
//! (`FakeServer::new(FakeConfig::legacy()).connector()`) the same way.
//!
//! A server at a URL takes the `http` feature and an
//! `HttpTransportBuilder` as its connector; one behind OAuth takes the
//! `oauth` feature and one more builder call, which puts an OAuth
//! provider on the connection (discovery, registration, the person's
//! authorization, tokens kept and refreshed):
//!
//! ```no_run
//! # #[cfg(feature = "oauth")]
//! # async fn protected() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_client::prelude::*;
//!
//! let url = "https://mcp.example.com/mcp";
//! let person = LoopbackAuthorizer::bind(0).await?; // the browser comes back here
//! let oauth = OAuthProvider::builder(url)
//!     .redirect_uri(person.redirect_uri())
//!     .authorizer(person)
//!     .store(FileStore::new("tokens.json")); // owner-only, refreshed
//! let client = Client::builder()
//!     .connect(HttpTransportBuilder::new(url).authorization(oauth)?)
//!     .await?;
//! # let _ = client;
//! # Ok(())
//! # }
//! # fn main() {}
//! ```
//!
//! [`prelude`] brings what a program names most in one import; the
//! crate's `examples/` show each way to use it, one file each (the
//! README's table lists them).
//!
//! Everything era-specific lives in this crate; transports only move
//! messages (see [`transport`]). The stdio transport comes with the default
//! `stdio` feature (`mcp_client::stdio`, `StdioCommand`), so this crate alone is
//! enough for servers started as a command; with default features off, the
//! client depends on the transport trait only.
//!
//! Each request is an `mcp.request` span and each multi round-trip round an
//! `mcp.round` span, with the method, what it names, the era, the id and
//! its outcome. With the `otel` feature, the OpenTelemetry context of those
//! spans goes onto the wire as W3C `traceparent`, `tracestate` and
//! `baggage` in `params._meta`, so that the server's work joins the
//! caller's trace: see the `otel` module (`mcp_client::otel`), which has an
//! example. Without the feature no OpenTelemetry crate is built.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(doctest, doc = include_str!("../README.md"))]
#![cfg_attr(doctest, doc = include_str!("../../README.md"))]
#![cfg_attr(doctest, doc = include_str!("../../docs/coming-from-rmcp.md"))]

mod api;
mod builder;
mod cache;
mod call;
mod client;
mod config;
mod connect;
mod elicitation;
mod envelope;
mod error;
pub mod events;
mod gating;
pub mod handlers;
mod handshake;
pub mod host;
mod ids;
mod in_flight;
mod kept_params;
mod meta_cache;
mod modern_discover;
pub mod mrtr;
mod options;
mod page;
pub mod prelude;
mod probe;
mod renewal;
mod resend;
mod restart_policy;
mod server_requests;
mod session;
pub mod skills;
pub mod subscriptions;
mod supervision;
pub mod tasks;
mod tool_schemas;
mod trace;
mod verdict;

#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
pub mod otel;

pub use builder::ClientBuilder;
pub use client::{Client, Fetched, Source};
pub use config::EraMode;
pub use error::{ClientError, ErrorKind, Result};
pub use events::{EventStream, ServerEvent};
pub use options::{CallOptions, ProgressCallback};
pub use page::Page;
pub use restart_policy::{RestartAttempt, RestartPolicy};
pub use subscriptions::{Subscription, Watch};
pub use verdict::{Reached, Verdict};

pub use mcp_protocol as protocol;
pub use mcp_transport as transport;

/// The stdio transport: servers started as a command, and any byte stream
/// (the `mcp-transport-stdio` crate).
///
/// *Available on crate feature `stdio` only (on by default).*
#[cfg(feature = "stdio")]
pub use mcp_transport_stdio as stdio;
/// A server started as a command (from [`stdio`]): the usual way to connect.
///
/// *Available on crate feature `stdio` only (on by default).*
#[cfg(feature = "stdio")]
pub use mcp_transport_stdio::StdioCommand;

/// The Streamable HTTP transport of both eras, with the 2024-11-05
/// HTTP+SSE fallback (the `mcp-transport-http` crate).
///
/// *Available on crate feature `http` only.*
#[cfg(feature = "http")]
pub use mcp_transport_http as http;
/// A server at a URL (from [`http`]): a connector, like `StdioCommand`.
///
/// *Available on crate feature `http` only.*
#[cfg(feature = "http")]
pub use mcp_transport_http::HttpTransportBuilder;

/// The authorization crate, `mcp-steady-auth` (the `oauth` feature): OAuth
/// 2.1 for protected HTTP servers, put on a connection with
/// [`HttpTransportBuilder::authorization`].
///
/// *Available on crate feature `oauth` only.*
#[cfg(feature = "oauth")]
pub use mcp_auth as auth;
