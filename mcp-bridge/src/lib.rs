//! Serve any MCP server to any MCP client: the library under `mcp bridge`.
//!
//! Many clients can only start a local command, and many servers are
//! remote, behind OAuth, or of another era. A [`Bridge`] serves one server
//! to a client over a byte stream (the process's own stdio, as desktop and
//! editor clients expect), or to many clients of either era over
//! Streamable HTTP ([`Bridge::serve_http`]), relaying everything within the
//! era both speak:
//!
//! * the client's requests, with their ids, params and `_meta`, and the
//!   server's answers and errors verbatim (codes, messages, data);
//! * notifications both ways: progress, logging, list and resource
//!   changes, `initialized`, roots changes;
//! * the server's own requests (elicitation, sampling, roots, ping), to the
//!   client and back;
//!
//! and across the eras, when one side speaks 2026-07-28 and the other a
//! legacy revision ([`Bridge::upstream_era`]): a handshake answered from
//! `server/discover` or the other way round, the `_meta` added or taken
//! out, and the server's input asked for turned from `input_required`
//! into the client's requests, or from the server's requests during a
//! call into `input_required` (the call held until the client retries;
//! [`Bridge::suspended_calls`]);
//! * cancellation both ways: the client's `notifications/cancelled` stops
//!   the relayed call, which is cancelled upstream, and the server's stops
//!   the request relayed to the client.
//!
//! What cannot be relayed gets a JSON-RPC error that says why, never a
//! silent drop: a call in flight when the server dies is answered with an
//! error saying it may have run, and serving ends
//! ([`Ended::ServerGone`]). When the client leaves (stdin's end), the
//! server's session is closed (a child process is shut down).
//!
//! From a byte stream to a command, with no tool policy, tool search or
//! translation between them, a call and its answer pass as the very lines
//! the client and the server wrote once the handshake is done: the bridge
//! reads only their envelope (id, method, progress token), so a call
//! costs little more than a pipe between them would.
//!
//! The server is reached through any [`mcp_transport::Connector`]: a
//! [`StdioCommand`](mcp_transport_stdio::StdioCommand), the HTTP transport,
//! a server of a servers file.
//!
//! Many servers are served as one through [`Servers`], a connector that
//! connects to each and answers as one server of the legacy era, their
//! tools and prompts named apart (`server__tool`) and each call sent to
//! its server. [`Bridge::tool_search`] serves a client two tools in
//! place of the server's many, `search_tools` and `call_tool`, so that
//! an agent in front of many servers is not handed every tool's schema.
//!
//! ```no_run
//! use mcp_bridge::{Bridge, Ended};
//! use mcp_transport_stdio::StdioCommand;
//!
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = StdioCommand::new("uvx").arg("mcp-server-time");
//! match Bridge::new(server).serve_stdio().await? {
//!     Ended::ClientLeft => Ok(()),
//!     gone => Err(gone.into()),
//! }
//! # }
//! ```
//!
//! # Dependencies, and why
//!
//! * `mcp-steady-transport-stdio`: the client's side is a
//!   [`StreamTransport`](mcp_transport_stdio::StreamTransport) over the
//!   byte stream, whose engine correlates, cancels and bounds messages for
//!   a peer of either role.
//! * `globset`: the allow and deny lists of tool names
//!   ([`ToolPolicy`]), as globs.
//! * `bm25` (without its default tokenizer): the ranking of
//!   [`Bridge::tool_search`].
//! * `hyper` (its HTTP/1 server), `hyper-util`, `http`, `http-body-util`,
//!   `bytes` (feature `http`): [`Bridge::serve_http`]; `subtle`: its
//!   bearer token compared in constant time.
//! * `getrandom`: the random `requestState` of a call held for a
//!   2026-07-28 client's retry ([`Bridge::suspended_calls`]), and the
//!   random session ids of [`Bridge::serve_http`].
//! * `serde` (derive) and `memchr`: the envelope of a line passed through
//!   unparsed (its id, method and progress token), read in place.
//! * `tokio`, `futures`, `serde_json`, `tracing`, `thiserror`: the runtime,
//!   futures, messages, logs (span `mcp_bridge`) and errors.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(doctest, doc = include_str!("../README.md"))]

mod bridge;
mod downgrade;
mod fanout;
#[cfg(feature = "http")]
#[doc(hidden)]
pub mod fuzzing;
#[cfg(feature = "http")]
mod http;
mod link;
mod listen;
mod passthrough;
mod policy;
mod relay;
mod relayed;
mod restart;
mod subscriptions;
mod suspend;
mod tool_search;
mod translate;
mod watched;

pub use bridge::{Bridge, BridgeError};
pub use fanout::Servers;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use http::HttpOptions;
pub use link::UpstreamEra;
pub use policy::{PolicyError, ToolPolicy};
pub use restart::Restarts;
pub use watched::Ended;
