//! A URL with credentials (userinfo, query values such as `?api_key=`)
//! never reaches a log line, a `Debug` output or a recording.

use std::sync::{Arc, Mutex};

use mcp_transport::ConnectionHandlers;
use mcp_transport::record::Recorder;
use mcp_transport_http::{HeaderProvider, HttpTransportBuilder, RecordingHeaders};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

const URL: &str = "http://ada:pa55word-1@127.0.0.1:9/mcp?api_key=K-0123456789&v=2";

fn leaks(text: &str) -> bool {
    text.contains("pa55word") || text.contains("K-0123456789")
}

/// Every span's name and fields, as text.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<String>>>);

struct Fields<'a>(&'a mut String);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={value:?}", field.name()));
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut line = span.metadata().name().to_owned();
        span.record(&mut Fields(&mut line));
        let mut spans = self.0.lock().unwrap();
        spans.push(line);
        Id::from_u64(spans.len() as u64)
    }
    fn record(&self, _: &Id, values: &Record<'_>) {
        let mut line = String::from("record");
        values.record(&mut Fields(&mut line));
        self.0.lock().unwrap().push(line);
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut line = String::from("event");
        event.record(&mut Fields(&mut line));
        self.0.lock().unwrap().push(line);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn the_span_and_debug_outputs_carry_no_url_credentials() {
    let capture = Capture::default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let builder = HttpTransportBuilder::new(URL);
    let builder_debug = format!("{builder:?}");
    let transport_debug = tracing::subscriber::with_default(capture.clone(), || {
        let _enter = runtime.enter();
        let transport = builder.build(ConnectionHandlers::discard()).unwrap();
        format!("{transport:?}")
    });
    let spans = capture.0.lock().unwrap().clone();
    let span = spans
        .iter()
        .find(|s| s.starts_with("mcp_http "))
        .unwrap_or_else(|| panic!("no mcp_http span: {spans:?}"));
    let leaked: Vec<String> = [
        ("HttpTransportBuilder's Debug", &builder_debug),
        ("HttpTransport's Debug", &transport_debug),
        ("the mcp_http span", span),
    ]
    .iter()
    .filter(|(_, text)| leaks(text))
    .map(|(what, text)| format!("{what}: {text}"))
    .collect();
    assert!(
        leaked.is_empty(),
        "credentials leak:\n{}",
        leaked.join("\n")
    );
    for text in [&builder_debug, &transport_debug, span] {
        assert!(
            text.contains("127.0.0.1:9/mcp"),
            "the URL is still shown: {text}"
        );
    }
    assert!(!spans.iter().any(|s| leaks(s)), "{spans:?}");
}

#[tokio::test]
async fn a_recorded_uri_has_its_query_values_and_userinfo_redacted() {
    let recorder = Recorder::in_memory();
    let provider = RecordingHeaders::new(recorder.clone());
    let (parts, ()) = mcp_transport_http::http::Request::post(URL)
        .body(())
        .unwrap()
        .into_parts();
    provider.headers(&parts).await.unwrap();
    let text = recorder.text();
    assert!(!leaks(&text), "{text}");
    assert!(
        text.contains("127.0.0.1:9/mcp?api_key=[REDACTED]&v=[REDACTED]"),
        "{text}"
    );
}

/// The 2024-11-05 endpoint carries the session id in its query
/// (`/messages?sessionId=…`): the log says which endpoint, not the id.
#[test]
fn the_http_sse_endpoint_is_logged_without_its_session_id() {
    use mcp_reference_server::FakeConfig;
    use mcp_reference_server::http::HttpFake;

    let capture = Capture::default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (server, lines) = tracing::subscriber::with_default(capture.clone(), || {
        runtime.block_on(async {
            let config = FakeConfig::legacy().versions(["2024-11-05"]);
            let server = HttpFake::start(config).await.unwrap();
            let client = mcp_client::Client::builder()
                .connect(HttpTransportBuilder::new(server.url()))
                .await
                .unwrap();
            client.list_tools().await.unwrap();
            client.close().await;
            (server, capture.0.lock().unwrap().clone())
        })
    });
    let posted = server
        .requests()
        .into_iter()
        .find(|r| r.path() == "/messages")
        .expect("the HTTP+SSE transport was used");
    let id = posted
        .uri
        .split("sessionId=")
        .nth(1)
        .expect("a session id in the endpoint")
        .to_owned();
    assert!(
        lines.iter().any(|l| l.contains("/messages")),
        "the endpoint is logged: {lines:?}"
    );
    let leaked: Vec<&String> = lines.iter().filter(|l| l.contains(&id)).collect();
    assert!(
        leaked.is_empty(),
        "the session id {id} is logged: {leaked:?}"
    );
}
