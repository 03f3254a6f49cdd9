//! Recording an exchange as JSON Lines (a *cassette*), to replay it later
//! without the server (the testkit's `cassette` transport does).
//!
//! Wrap any [`Connector`](crate::Connector) with [`Recorder::connector`]
//! and connect through it: every message in both directions is written as
//! it passes — the client's requests and notifications, the answers, the
//! server's notifications and requests, and the client's answers to them —
//! with the headers of each HTTP request when the transport reports them.
//! Secrets never land in the file: the values of `Authorization` and the
//! other credential headers, and of any header or field named in the
//! [`Redaction`], are replaced by `"[REDACTED]"`, and so is any later
//! appearance of such a value. A recorded URL loses its userinfo and its
//! query values (but those [`Redaction::keep_query`] names), and a file
//! recording is created readable by its owner only.
//!
//! ```
//! use mcp_protocol::Request;
//! use mcp_transport::record::Recorder;
//! use mcp_transport::{ConnectionHandlers, Connector, Engine, Outbound, RequestOptions, Transport};
//! use mcp_protocol::{Message, Response};
//! use std::sync::Arc;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), mcp_transport::TransportError> {
//! // A connector to a "server" that answers every request with `{}`.
//! let connector = |handlers: ConnectionHandlers| async move {
//!     let (engine, mut outbound) = Engine::new(handlers);
//!     let server = engine.clone();
//!     tokio::spawn(async move {
//!         while let Some(Outbound::Message(Message::Request(r))) = outbound.recv().await {
//!             server.receive(Message::Response(Response { id: r.id, result: serde_json::json!({}) }));
//!         }
//!     });
//!     Ok(Arc::new(engine) as Arc<dyn Transport>)
//! };
//!
//! let recorder = Recorder::in_memory();
//! let transport = recorder.connector(connector).connect(ConnectionHandlers::discard()).await?;
//! transport.request(Request::new(1, "ping", None), RequestOptions::new()).await?;
//! recorder.set_header("era", "legacy");
//!
//! let lines = recorder.lines();
//! assert!(lines[0].contains(r#""cassette":"mcp-steady-cassette/1""#));
//! assert!(lines.iter().any(|l| l.contains(r#""dir":"send""#) && l.contains(r#""method":"ping""#)));
//! assert!(lines.iter().any(|l| l.contains(r#""dir":"recv""#) && l.contains(r#""result""#)));
//! # Ok(())
//! # }
//! ```
//!
//! # The file
//!
//! The first line is the header: `{"cassette": "mcp-steady-cassette/1",
//! "recordedAtUnix": …, "era": …, "verdict": …}` (era and verdict are
//! `null` until the client sets them with [`Recorder::set_header`]; the
//! `mcp` CLI does), with `"headers"`, the connection's configured headers
//! (redacted), when given ([`Recorder::connection_headers`]). Every other
//! line has `t` (seconds since the start) and `conn` (the connection,
//! from 1: a client that starts a server again opens a second one), and
//! is one of:
//!
//! | line | meaning |
//! |---|---|
//! | `{"event": "connect"}` | a connection is being opened |
//! | `{"event": "connected", "sendsHeaders", "answersEveryRequest"}` | it is open, and what its transport does |
//! | `{"event": "connectFailed", "failure"}` | it could not be opened |
//! | `{"dir": "send", "message", "headers"?}` | the client sent a JSON-RPC message (with a request's extra headers) |
//! | `{"dir": "recv", "message"}` | the server sent one (a result as the transport yields it, normalized) |
//! | `{"dir": "recv", "id", "failure"}` | a request failed without an answer ([`failure_value`]) |
//! | `{"dir": "send", "http": {"method", "uri", "headers"}}` | an HTTP request as sent |
//! | `{"event": "close"}` | the client closed the connection |
//!
//! A request that was dropped or cancelled before its answer has no
//! `recv` line; wire cancels the transport sends itself are not recorded.

mod failure;
mod recorder;
mod redact;
mod wrap;

pub use failure::{failure_from_value, failure_value};
pub use recorder::{FORMAT, Recorder};
pub use redact::{DEFAULT_REDACTED_HEADERS, REDACTED, Redaction, redact_url};
pub use wrap::{RecordingConnector, RecordingTransport};
