//! Trace context on the wire: the OpenTelemetry context of the caller's
//! `tracing` span goes with every request (the `otel` feature).
//!
//! With a [`tracing-opentelemetry`] layer in the application's subscriber,
//! every request the client makes carries the W3C Trace Context of its
//! `mcp.request` span in `params._meta`: [`TRACEPARENT`] always,
//! [`TRACESTATE`] and [`BAGGAGE`] when the context has them. The server's
//! spans then join the caller's trace, under the client's own request
//! span. Those are the keys 2026-07-28 names; legacy servers get the same
//! keys, which they ignore unless they understand them.
//!
//! The handshake's requests (`server/discover`, `initialize`) are traced
//! the same way, so a connect made inside a span shows in its trace. With
//! the layer installed, a request made outside any span of the caller's
//! starts a trace of its own at the client's request span. When the
//! request's span is filtered out (it is at `DEBUG`), the caller's current
//! span gives the context instead. Nothing is added when no span has a
//! valid OpenTelemetry context (no layer), and the context never takes the
//! place of a key the caller set through [`CallOptions::meta`] or in the
//! params' own `_meta`, nor of the protocol's own keys.
//!
//! The spans themselves, with or without this feature: `mcp.request` for
//! each attempt and `mcp.round` for each round of a call that may answer
//! `input_required`, with the fields `method`, `tool`, `prompt` or
//! `resource` (its URI), `era`, `id`, and `outcome` when it ends (`ok`,
//! `rpc_error` with `error.code`, `timeout`, `cancelled`,
//! `transport_error`; for a round, `complete`, `input_required` or
//! `error`), plus the `otel.name`, `otel.kind` and `otel.status_code` that
//! `tracing-opentelemetry` reads.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_client::Client;
//! use mcp_protocol::Message;
//! use mcp_reference_server::{FakeConfig, FakeServer};
//! use opentelemetry::trace::TracerProvider as _;
//! use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
//! use serde_json::json;
//! use tracing::Instrument;
//! use tracing_subscriber::layer::SubscriberExt;
//!
//! // The application's tracing setup: any OpenTelemetry exporter will do.
//! let exporter = InMemorySpanExporter::default();
//! let provider = SdkTracerProvider::builder()
//!     .with_simple_exporter(exporter.clone())
//!     .build();
//! let subscriber = tracing_subscriber::registry()
//!     .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("app")));
//! let _guard = tracing::subscriber::set_default(subscriber);
//!
//! let server = FakeServer::new(FakeConfig::modern());
//! let client = Client::builder().connect(server.connector()).await?;
//! client
//!     .call_tool("echo", json!({"text": "hi"}))
//!     .instrument(tracing::info_span!("checkout"))
//!     .await?;
//!
//! // What the server received.
//! let call = server.received(0).into_iter().find_map(|m| match m {
//!     Message::Request(r) if r.method == "tools/call" => r.params,
//!     _ => None,
//! });
//! let traceparent = &call.unwrap()["_meta"][mcp_client::otel::TRACEPARENT];
//! assert!(traceparent.as_str().is_some_and(|t| t.starts_with("00-")));
//! # client.close().await;
//! # Ok(())
//! # }
//! ```
//!
//! [`tracing-opentelemetry`]: https://docs.rs/tracing-opentelemetry
//! [`CallOptions::meta`]: crate::CallOptions::meta

/// The `_meta` key of the W3C `traceparent` value: version, trace id,
/// parent span id and flags, such as
/// `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`.
pub const TRACEPARENT: &str = "traceparent";

/// The `_meta` key of the W3C `tracestate` value: vendors' entries, such as
/// `vendor=value`; sent only when not empty.
pub const TRACESTATE: &str = "tracestate";

/// The `_meta` key of the W3C `baggage` value: the context's entries,
/// percent-encoded, such as `user=a%20b`; sent only when not empty.
pub const BAGGAGE: &str = "baggage";
