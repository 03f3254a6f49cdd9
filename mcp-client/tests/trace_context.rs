//! Trace context on the wire (the `otel` feature): one trace from the
//! caller's span through the client's request span to what the server
//! received, with spans taken by an in-memory exporter.

use std::future::Future;
use std::time::Duration;

use mcp_client::otel::{BAGGAGE, TRACEPARENT, TRACESTATE};
use mcp_client::{CallOptions, Client};
use mcp_protocol::Message;
use mcp_protocol::types::CallToolRequestParams;
use mcp_reference_server::{FakeConfig, FakeServer};
use opentelemetry::baggage::BaggageExt;
use opentelemetry::trace::{
    SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState, TracerProvider as _,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;

/// Every wait in these tests ends within this.
const BOUND: Duration = Duration::from_secs(20);

async fn bounded<T>(f: impl Future<Output = T>) -> T {
    match tokio::time::timeout(BOUND, f).await {
        Ok(v) => v,
        Err(_) => panic!("did not finish within {BOUND:?}"),
    }
}

/// A subscriber exporting every span to memory, made the default for this
/// thread (the tests run on a current-thread runtime).
struct Tracing {
    exporter: InMemorySpanExporter,
    provider: SdkTracerProvider,
    _guard: tracing::subscriber::DefaultGuard,
}

impl Tracing {
    fn install() -> Tracing {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
        let guard = tracing::subscriber::set_default(subscriber);
        Tracing {
            exporter,
            provider,
            _guard: guard,
        }
    }

    fn spans(&self) -> Vec<SpanData> {
        self.provider.force_flush().expect("flushed");
        self.exporter.get_finished_spans().expect("spans")
    }
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    spans
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no span {name:?} in {:?}", names(spans)))
}

fn names(spans: &[SpanData]) -> Vec<String> {
    spans.iter().map(|s| s.name.to_string()).collect()
}

fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

/// The `_meta` of every `tools/call` the server received, in order.
fn tool_call_metas(server: &FakeServer) -> Vec<Value> {
    server
        .received(0)
        .into_iter()
        .filter_map(|m| match m {
            Message::Request(r) if r.method == "tools/call" => {
                Some(r.params.unwrap_or_default()["_meta"].clone())
            }
            _ => None,
        })
        .collect()
}

/// `00-<trace id>-<parent id>-<flags>`, split.
fn parse_traceparent(value: &Value) -> (String, String, String) {
    let text = value.as_str().expect("traceparent is a string");
    let parts: Vec<&str> = text.split('-').collect();
    assert_eq!(parts.len(), 4, "{text}");
    assert_eq!(parts[0], "00", "{text}");
    assert_eq!(parts[1].len(), 32, "{text}");
    assert_eq!(parts[2].len(), 16, "{text}");
    (parts[1].into(), parts[2].into(), parts[3].into())
}

#[tokio::test(flavor = "current_thread")]
async fn one_trace_from_the_callers_span_to_the_server() {
    let tracing = Tracing::install();
    let server = FakeServer::new(FakeConfig::modern());
    let client = bounded(Client::builder().connect(server.connector()))
        .await
        .unwrap();
    let result = bounded(
        client
            .call_tool("echo", json!({"text": "traced"}))
            .instrument(tracing::info_span!("checkout")),
    )
    .await
    .unwrap();
    assert!(!result.is_error());

    let metas = tool_call_metas(&server);
    assert_eq!(metas.len(), 1, "{metas:?}");
    let meta = &metas[0];
    // The protocol's keys are all there beside the trace context.
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    let (trace_id, parent_id, flags) = parse_traceparent(&meta[TRACEPARENT]);
    assert_eq!(flags, "01", "the sampled flag is kept");
    assert!(meta.get(TRACESTATE).is_none() && meta.get(BAGGAGE).is_none());

    let spans = tracing.spans();
    let caller = named(&spans, "checkout");
    let request = named(&spans, "tools/call echo");
    let round = named(&spans, "tools/call echo round 1");
    // One trace: the caller's span, the round, the request, the server.
    for span in [caller, round, request] {
        assert_eq!(span.span_context.trace_id().to_string(), trace_id);
    }
    assert_eq!(round.parent_span_id, caller.span_context.span_id());
    assert_eq!(request.parent_span_id, round.span_context.span_id());
    // The server's work is a child of the client's request span.
    assert_eq!(request.span_context.span_id().to_string(), parent_id);
    assert_eq!(request.span_kind, opentelemetry::trace::SpanKind::Client);

    assert_eq!(attribute(request, "method").as_deref(), Some("tools/call"));
    assert_eq!(attribute(request, "tool").as_deref(), Some("echo"));
    assert_eq!(attribute(request, "era").as_deref(), Some("modern"));
    assert_eq!(attribute(request, "outcome").as_deref(), Some("ok"));
    let id = attribute(request, "id").expect("the request span has its id");
    assert_eq!(attribute(round, "id"), Some(id));
    assert_eq!(attribute(round, "outcome").as_deref(), Some("complete"));
    assert_eq!(attribute(round, "round").as_deref(), Some("1"));
    bounded(client.close()).await;
}

#[tokio::test(flavor = "current_thread")]
async fn legacy_servers_get_the_same_keys() {
    let tracing = Tracing::install();
    let server = FakeServer::new(FakeConfig::legacy());
    let client = bounded(Client::builder().connect(server.connector()))
        .await
        .unwrap();
    bounded(
        client
            .call_tool("echo", json!({"text": "traced"}))
            .instrument(tracing::info_span!("checkout")),
    )
    .await
    .unwrap();
    let metas = tool_call_metas(&server);
    let (trace_id, parent_id, _) = parse_traceparent(&metas[0][TRACEPARENT]);
    // Legacy has no protocol keys of its own in `_meta`.
    assert!(
        metas[0]
            .get("io.modelcontextprotocol/protocolVersion")
            .is_none()
    );
    let spans = tracing.spans();
    let request = named(&spans, "tools/call echo");
    assert_eq!(request.span_context.trace_id().to_string(), trace_id);
    assert_eq!(request.span_context.span_id().to_string(), parent_id);
    assert_eq!(attribute(request, "era").as_deref(), Some("legacy"));
    bounded(client.close()).await;
}

#[tokio::test(flavor = "current_thread")]
async fn tracestate_and_baggage_of_the_callers_context_go_along() {
    let _tracing = Tracing::install();
    let server = FakeServer::new(FakeConfig::modern());
    let client = bounded(Client::builder().connect(server.connector()))
        .await
        .unwrap();
    // A context that came from upstream, with vendor state and baggage.
    let upstream = SpanContext::new(
        TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap(),
        SpanId::from_hex("00f067aa0ba902b7").unwrap(),
        TraceFlags::SAMPLED,
        true,
        TraceState::from_key_value([("vendor", "value")]).unwrap(),
    );
    let cx = Context::new()
        .with_remote_span_context(upstream)
        .with_baggage([KeyValue::new("tenant", "acme corp")]);
    let span = tracing::info_span!("handler");
    let _ = span.set_parent(cx);
    bounded(
        client
            .call_tool("echo", json!({"text": "traced"}))
            .instrument(span),
    )
    .await
    .unwrap();
    let meta = &tool_call_metas(&server)[0];
    let (trace_id, _, _) = parse_traceparent(&meta[TRACEPARENT]);
    assert_eq!(trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(meta[TRACESTATE], "vendor=value");
    assert_eq!(meta[BAGGAGE], "tenant=acme%20corp");
    bounded(client.close()).await;
}

#[tokio::test(flavor = "current_thread")]
async fn the_callers_own_meta_is_never_overridden() {
    let _tracing = Tracing::install();
    let server = FakeServer::new(FakeConfig::modern());
    let client = bounded(Client::builder().connect(server.connector()))
        .await
        .unwrap();
    let options = CallOptions::new().meta(TRACEPARENT, "00-set-by-the-caller");
    let mut params = CallToolRequestParams::new("echo");
    params.arguments = Some(
        json!({"text": "a"})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    );
    bounded(
        client
            .call_tool_with(params, &options)
            .instrument(tracing::info_span!("checkout")),
    )
    .await
    .unwrap();
    let meta = &tool_call_metas(&server)[0];
    assert_eq!(meta[TRACEPARENT], "00-set-by-the-caller");
    bounded(client.close()).await;
}

#[tokio::test(flavor = "current_thread")]
async fn without_an_opentelemetry_context_nothing_is_added() {
    // A subscriber, but no OpenTelemetry layer in it.
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry());
    let server = FakeServer::new(FakeConfig::legacy());
    let client = bounded(Client::builder().connect(server.connector()))
        .await
        .unwrap();
    bounded(
        client
            .call_tool("echo", json!({"text": "untraced"}))
            .instrument(tracing::info_span!("checkout")),
    )
    .await
    .unwrap();
    let meta = &tool_call_metas(&server)[0];
    for key in [TRACEPARENT, TRACESTATE, BAGGAGE] {
        assert!(meta.get(key).is_none(), "{meta}");
    }
    bounded(client.close()).await;
}

#[tokio::test(flavor = "current_thread")]
async fn with_the_clients_spans_filtered_out_the_callers_span_is_the_parent() {
    use tracing_subscriber::filter::LevelFilter;

    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    // `mcp.request` and `mcp.round` are DEBUG spans.
    let subscriber = tracing_subscriber::registry()
        .with(LevelFilter::INFO)
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    let _guard = tracing::subscriber::set_default(subscriber);
    let server = FakeServer::new(FakeConfig::modern());
    let client = bounded(Client::builder().connect(server.connector()))
        .await
        .unwrap();
    bounded(
        client
            .call_tool("echo", json!({"text": "traced"}))
            .instrument(tracing::info_span!("checkout")),
    )
    .await
    .unwrap();
    let (trace_id, parent_id, _) = parse_traceparent(&tool_call_metas(&server)[0][TRACEPARENT]);
    provider.force_flush().expect("flushed");
    let spans = exporter.get_finished_spans().expect("spans");
    assert_eq!(names(&spans), vec!["checkout".to_owned()]);
    assert_eq!(spans[0].span_context.trace_id().to_string(), trace_id);
    assert_eq!(spans[0].span_context.span_id().to_string(), parent_id);
    bounded(client.close()).await;
}

#[tokio::test(flavor = "current_thread")]
async fn the_handshake_is_traced_too() {
    let tracing = Tracing::install();
    let server = FakeServer::new(FakeConfig::legacy());
    // The probe (`server/discover`) and then `initialize`, inside the
    // caller's span.
    let client = bounded(
        Client::builder()
            .connect(server.connector())
            .instrument(tracing::info_span!("startup")),
    )
    .await
    .unwrap();
    let spans = tracing.spans();
    let startup = named(&spans, "startup").span_context.trace_id().to_string();
    let mut methods = Vec::new();
    for connection in 0..server.connection_count() {
        for message in server.received(connection) {
            if let Message::Request(r) = message {
                let meta = &r.params.unwrap_or_default()["_meta"];
                let (trace_id, parent_id, _) = parse_traceparent(&meta[TRACEPARENT]);
                assert_eq!(trace_id, startup, "{}", r.method);
                let span = spans
                    .iter()
                    .find(|s| s.span_context.span_id().to_string() == parent_id)
                    .expect("the parent is a span of the client's");
                assert_eq!(attribute(span, "id"), Some(r.id.to_string()));
                methods.push(r.method);
            }
        }
    }
    assert!(methods.iter().any(|m| m == "initialize"), "{methods:?}");
    let initialize = named(&spans, "initialize");
    assert_eq!(attribute(initialize, "outcome").as_deref(), Some("ok"));
    bounded(client.close()).await;
}

/// Over a real socket: the fake server over Streamable HTTP records each
/// POST's body, for both eras of its dual configuration.
#[cfg(feature = "http")]
#[tokio::test(flavor = "current_thread")]
async fn over_http_the_server_receives_the_request_spans_context() {
    use mcp_client::EraMode;
    use mcp_reference_server::http::HttpFake;

    for mode in [EraMode::Modern, EraMode::Legacy] {
        let tracing = Tracing::install();
        let server = bounded(HttpFake::start(FakeConfig::dual())).await.unwrap();
        let client = bounded(
            Client::builder()
                .era(mode)
                .connect(mcp_client::HttpTransportBuilder::new(server.url())),
        )
        .await
        .unwrap();
        bounded(
            client
                .call_tool("echo", json!({"text": "over http"}))
                .instrument(tracing::info_span!("checkout")),
        )
        .await
        .unwrap();
        let posts = server.posts_of("tools/call");
        assert_eq!(posts.len(), 1, "{mode:?}");
        let body = posts[0].json();
        let (trace_id, parent_id, _) = parse_traceparent(&body["params"]["_meta"][TRACEPARENT]);
        // A span is exported once it closes, and the caller's closes with
        // its last descendant: the exchange's, which reads the response
        // stream on to its end after the answer, in a task of its own.
        let spans = bounded(async {
            loop {
                let spans = tracing.spans();
                if spans.iter().any(|s| s.name == "checkout") {
                    break spans;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await;
        let caller = named(&spans, "checkout");
        let request = named(&spans, "tools/call echo");
        assert_eq!(caller.span_context.trace_id().to_string(), trace_id);
        assert_eq!(request.span_context.span_id().to_string(), parent_id);
        bounded(client.close()).await;
    }
}
