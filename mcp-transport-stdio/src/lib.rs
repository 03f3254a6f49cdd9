//! MCP over newline-delimited JSON: servers run as child processes, and
//! any byte stream.
//!
//! Two transports, both built on [`mcp_transport::Engine`] (which does the
//! id correlation, timeouts, cancellation and routing every transport
//! shares):
//!
//! * [`StreamTransport`] speaks MCP over any `AsyncRead` + `AsyncWrite`
//!   pair (pipes, TCP, Unix sockets, an in-memory duplex), one JSON-RPC
//!   message per line as the spec's stdio transport frames them, hardened
//!   against what real servers do: noise on stdout, invalid UTF-8, huge
//!   messages (skipped without being buffered, up to a configurable
//!   [maximum](DEFAULT_MAX_MESSAGE_SIZE)), a peer that stops reading.
//! * [`ChildTransport`], made by the [`StdioCommand`] builder, runs a
//!   server as a child process: it drains and keeps the server's stderr,
//!   notices its death at once (every pending request fails with
//!   [`ServerGone`](mcp_transport::TransportError::ServerGone), exit status
//!   and last stderr lines included), shuts it down as the spec says
//!   (stdin closed, grace, `SIGTERM`, grace, `SIGKILL`, to the whole
//!   process group), and leaves neither orphans nor zombies, even when
//!   dropped without `close`. [`StdioCommand`] is also a
//!   [`Connector`](mcp_transport::Connector) that starts the command again.
//!
//! ```no_run
//! use mcp_protocol::Request;
//! use mcp_transport::{ConnectionHandlers, RequestOptions, Transport};
//! use mcp_transport_stdio::StdioCommand;
//!
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = StdioCommand::new("npx")
//!     .args(["-y", "@modelcontextprotocol/server-everything"])
//!     .name("everything")
//!     .spawn(ConnectionHandlers::discard())?;
//! let pong = server
//!     .request(Request::new(1, "ping", None), RequestOptions::new())
//!     .await?;
//! println!("{pong}");
//! server.close().await;
//! # Ok(())
//! # }
//! ```
//!
//! # Dependencies, and why
//!
//! * `tokio` (`process`, `io-util`): the child process, its pipes, the
//!   tasks that read and write them.
//! * `tokio-util` (`codec`): `FramedRead` with this crate's
//!   [`codec::LineDecoder`], which never ends the stream on a bad line.
//! * `bytes`: the decoder's buffers.
//! * `libc` (Unix only): signals to a whole process group
//!   (`kill(-pgid, sig)`), and the blocking `waitpid` of the thread that
//!   reaps a server whose runtime is gone; tokio offers neither.
//! * `futures`, `serde_json`, `tracing`: streams, the events' params, logs
//!   and spans (`mcp_stream` / `mcp_stdio`, with the server's name; stderr
//!   lines under the target [`STDERR_TARGET`]).

#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(doctest, doc = include_str!("../README.md"))]
// Child processes are Unix-only for now: elsewhere spawning refuses early,
// which leaves parts unused.
#![cfg_attr(not(unix), allow(dead_code, unused_imports, unused_variables))]

mod child;
pub mod codec;
mod stderr;
mod stream;
mod wire;

pub use child::{
    ChildTransport, DEFAULT_CLOSE_GRACE, DEFAULT_EXIT_LINGER, DEFAULT_STDERR_TAIL_BYTES,
    DEFAULT_STDERR_TAIL_LINES, DEFAULT_TERM_GRACE, EnvPolicy, MINIMAL_ENV_VARS, StdioCommand,
};
pub use stderr::STDERR_TARGET;
pub use stream::{StreamBuilder, StreamTransport};

/// The default maximum message size: 128 MiB, room for a 64 MiB resource
/// sent as base64 with its envelope.
///
/// ```
/// let resource = 64 * 1024 * 1024;
/// let base64 = resource / 3 * 4;
/// assert!(base64 < mcp_transport_stdio::DEFAULT_MAX_MESSAGE_SIZE);
/// ```
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 128 * 1024 * 1024;
