//! The seam between an MCP client and a wire.
//!
//! The client (`mcp-client`) knows the protocol: eras, handshakes, caching,
//! multi round-trip requests, typed results. A transport knows how to get a
//! message to a server and an answer back. This crate is the contract
//! between the two: the [`Transport`] trait and the [`TransportProfile`]
//! in which a transport describes itself, the closed set of
//! [`TransportError`]s, per-request [`RequestOptions`], [`Listener`]s for
//! inbound notifications (and typed [`TransportEvent`]s about the wire
//! itself), and the [`Connector`] that makes fresh connections.
//!
//! It also holds the part every transport shares, so it is written once:
//! the [`Engine`], which turns "I can move messages" into a whole
//! [`Transport`] (id correlation, timeouts with progress resets and a hard
//! maximum, cancellation on drop, notification routing, server-request
//! handling).
//!
//! # Writing a transport
//!
//! Build an [`Engine`] with the [`ConnectionHandlers`] you were given, spawn
//! a writer that drains its [`OutboundReceiver`] onto your wire, and a
//! reader that hands each inbound message to [`Engine::receive`]. When the
//! wire ends, call [`Engine::peer_gone`]; the writer keeps the receiver
//! until then (dropping it ends the connection). Here the "wire" is a task
//! playing a server that answers `ping`:
//!
//! ```
//! use mcp_protocol::{Message, Request, Response};
//! use mcp_transport::{ConnectionHandlers, Engine, Outbound, RequestOptions, Transport};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), mcp_transport::TransportError> {
//! let (engine, mut outbound) = Engine::new(ConnectionHandlers::discard());
//! let server = engine.clone();
//! tokio::spawn(async move {
//!     while let Some(item) = outbound.recv().await {
//!         // A real transport writes `item.into_message()` to its wire and
//!         // feeds what it reads to `receive`.
//!         if let Outbound::Message(Message::Request(r)) = item {
//!             let result = serde_json::json!({});
//!             server.receive(Message::Response(Response { id: r.id, result }));
//!         }
//!     }
//! });
//!
//! let result = engine.request(Request::new(1, "ping", None), RequestOptions::new()).await?;
//! assert_eq!(result["resultType"], "complete"); // normalized
//! # Ok(())
//! # }
//! ```
//!
//! Then prove it: the contract suite of `mcp-transport-contract` runs any
//! transport through every rule of the contract and reports each by name.
//!
//! A wire of newline-delimited JSON (stdio, a socket) can leave the JSON
//! work to the tasks that make and await requests, so that its reader and
//! writer only move bytes: build the engine with [`Engine::with_lines`]
//! (its queue then holds [`Outbound::Line`]s, each request already encoded
//! by the task that sent it, with any [`SharedMeta`] spliced in), and hand
//! each success answer to [`Engine::receive_result`] as the text
//! `mcp_protocol::jsonrpc::answer_text` finds in the line, leaving other
//! lines to [`Engine::receive_inbound`]. `mcp-transport-stdio` is built
//! this way.
//!
//! Last, say what your transport does beyond moving messages, in
//! [`Transport::profile`]: whether it puts request headers on the wire,
//! whether its wire answers every request (so that silence is a fault, not
//! a legacy server keeping quiet), whether it puts the shared `_meta` on
//! the wire itself. The client reads the [`TransportProfile`] to decide.
//! The default says none of these; an HTTP transport says all three:
//!
//! ```
//! use mcp_transport::TransportProfile;
//!
//! let http = TransportProfile::new()
//!     .sends_headers(true)
//!     .answers_every_request(true)
//!     .takes_shared_meta(true);
//! assert!(http.answers_every_request);
//! assert_eq!(TransportProfile::new(), TransportProfile::default());
//! ```
//!
//! A transport that wraps another usually forwards the inner one's
//! profile, changing what its wrapping changes.
//!
//! # Recording
//!
//! [`record::Recorder`] wraps any [`Connector`] and writes the whole
//! exchange as JSON Lines, secrets redacted; `mcp-testkit`'s cassette
//! transport replays such a file as the server.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(doctest, doc = include_str!("../README.md"))]

mod correlation;
mod engine;
mod error;
mod event;
mod handler;
mod lines;
mod listener;
mod options;
mod outbound;
mod profile;
pub mod record;
mod shared_meta;
mod transport;

pub use correlation::TimerPause;
pub use engine::Engine;
pub use error::{ExitInfo, GoneInfo, TransportError};
pub use event::TransportEvent;
pub use handler::{ConnectionHandlers, ConnectionLimits, ServerRequestHandler};
pub use lines::{LineKind, LineSender, LineTap};
pub use listener::{DEFAULT_LISTENER_CAPACITY, Listener, ListenerStream, Tap};
pub use options::RequestOptions;
pub use outbound::{Outbound, OutboundReceiver};
pub use profile::TransportProfile;
pub use shared_meta::SharedMeta;
pub use transport::{Connector, ResponseFuture, Transport};

/// Re-exported so that transports and callers name one token type.
pub use tokio_util::sync::CancellationToken;
