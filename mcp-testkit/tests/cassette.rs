//! The cassette transport on a committed fixture
//! (`tests/fixtures/legacy-session.jsonl`): answers under the client's
//! ids, progress under the client's token, a server request at its point
//! and the client's answer checked, a recorded HTTP failure, a
//! notification after the call it followed; and the reports of what went
//! wrong.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_protocol::{ErrorObject, Notification, Request};
use mcp_testkit::cassette::{Cassette, CassetteConnector, MISMATCH_CODE, MatchRules};
use mcp_transport::{
    ConnectionHandlers, Connector, Listener, ListenerStream, RequestOptions, Transport,
    TransportError,
};
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(10);
const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/legacy-session.jsonl"
);

async fn bounded<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("{what} took more than {LIMIT:?}"),
    }
}

/// A connection to the fixture whose sampling answers say `answer`.
async fn connect(
    rules: MatchRules,
    answer: &'static str,
) -> (CassetteConnector, Arc<dyn Transport>, ListenerStream) {
    let connector = Cassette::load(FIXTURE).unwrap().connector(rules);
    let (listener, stream) = Listener::channel(16);
    let handler = Arc::new(
        move |request: Request| -> BoxFuture<'static, Result<Value, ErrorObject>> {
            assert_eq!(request.method, "sampling/createMessage");
            Box::pin(async move {
                Ok(
                    json!({"role": "assistant", "content": {"type": "text", "text": answer}, "model": "echo"}),
                )
            })
        },
    );
    let handlers = ConnectionHandlers::new(listener).with_server_requests(handler);
    let transport = bounded("connect", connector.connect(handlers))
        .await
        .unwrap();
    (connector, transport, stream)
}

fn initialize(id: i64) -> Request {
    Request::new(
        id,
        "initialize",
        Some(json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"sampling": {}},
            "clientInfo": {"name": "mcp-cli", "version": "0.1.0"},
        })),
    )
}

#[tokio::test]
async fn the_fixture_replays_as_the_server_it_recorded() {
    let (connector, transport, mut notifications) = connect(MatchRules::default(), "Paris").await;
    assert!(!transport.profile().sends_headers, "as recorded");
    assert_eq!(Cassette::load(FIXTURE).unwrap().era(), Some("legacy"));

    // Other ids than recorded: the answers come under the client's.
    let init = bounded(
        "initialize",
        transport.request(initialize(100), RequestOptions::new()),
    )
    .await
    .unwrap();
    assert_eq!(init["serverInfo"]["name"], "fixture");
    transport
        .notify(Notification::new("notifications/initialized", None))
        .unwrap();

    // Progress comes with this run's token, to the request's listener.
    let (progress, mut seen) = Listener::channel(8);
    let call = Request::new(
        101,
        "tools/call",
        Some(
            json!({"name": "slow", "arguments": {"steps": 2}, "_meta": {"progressToken": "run-2"}}),
        ),
    );
    let slow = bounded(
        "slow",
        transport.request(call, RequestOptions::new().listener(progress)),
    )
    .await
    .unwrap();
    assert_eq!(slow["content"][0]["text"], "done after 2 steps");
    for step in 1..=2 {
        let n = seen
            .try_recv()
            .expect("a progress notification before the answer");
        assert_eq!(n.method, "notifications/progress");
        assert_eq!(n.params.as_ref().unwrap()["progressToken"], "run-2");
        assert_eq!(n.params.as_ref().unwrap()["progress"], step);
    }

    // The server's sampling request reaches the handler; its answer is
    // checked; then the call's answer.
    let call = Request::new(
        102,
        "tools/call",
        Some(json!({"name": "sample", "arguments": {}})),
    );
    let sample = bounded("sample", transport.request(call, RequestOptions::new()))
        .await
        .unwrap();
    assert_eq!(sample["content"][0]["text"], "the model said: Paris");

    // A failure without a JSON-RPC answer replays as the same error.
    let ping = bounded(
        "ping",
        transport.request(Request::new(103, "ping", None), RequestOptions::new()),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(ping, TransportError::RetryLater { status: 503, retry_after: Some(d), .. } if d == Duration::from_secs(2)),
        "{ping:?}"
    );

    // The list change came after the sampling call, as recorded.
    let changed = bounded("list_changed", notifications.recv()).await.unwrap();
    assert_eq!(changed.method, "notifications/tools/list_changed");

    bounded("close", transport.close()).await;
    if let Err(e) = bounded("finish", connector.finish()).await {
        panic!("{e}");
    }
}

#[tokio::test]
async fn a_changed_answer_and_unsent_messages_are_reported() {
    let (connector, transport, _notifications) = connect(MatchRules::default(), "Lyon").await;
    bounded(
        "initialize",
        transport.request(initialize(1), RequestOptions::new()),
    )
    .await
    .unwrap();
    let call = Request::new(
        2,
        "tools/call",
        Some(json!({"name": "sample", "arguments": {}})),
    );
    bounded("sample", transport.request(call, RequestOptions::new()))
        .await
        .unwrap();
    let error = bounded("finish", connector.finish()).await.unwrap_err();
    let report = error.to_string();
    assert_eq!(error.mismatches.len(), 1, "{report}");
    assert!(
        report.contains(r#"/content/text: recorded "Paris", sent "Lyon""#),
        "{report}"
    );
    // Neither the initialized notification, the slow call nor the ping
    // was sent.
    assert_eq!(error.unused.len(), 3, "{report}");
    assert!(report.contains(r#""method":"ping""#), "{report}");
}

#[tokio::test]
async fn a_request_the_cassette_lacks_is_answered_with_a_diff() {
    let (connector, transport, _n) =
        connect(MatchRules::default().allow_unused(true), "Paris").await;
    // A changed version: the closest recorded initialize, and where.
    let mut changed = initialize(1);
    changed.params.as_mut().unwrap()["clientInfo"]["version"] = json!("9.9.9");
    let error = bounded(
        "initialize",
        transport.request(changed, RequestOptions::new()),
    )
    .await
    .unwrap_err();
    assert_eq!(error.rpc_code(), Some(MISMATCH_CODE));
    let text = error.to_string();
    assert!(
        text.contains("closest recorded: line 4, initialize"),
        "{text}"
    );
    assert!(
        text.contains(r#"/clientInfo/version: recorded "0.1.0", sent "9.9.9""#),
        "{text}"
    );
    // A method never recorded names what the cassette still expects.
    let error = bounded(
        "resources/list",
        transport.request(
            Request::new(2, "resources/list", None),
            RequestOptions::new(),
        ),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("recorded no resources/list request"),
        "{error}"
    );
    assert!(error.contains("initialize (line 4)"), "{error}");
    assert_eq!(
        bounded("finish", connector.finish())
            .await
            .unwrap_err()
            .mismatches
            .len(),
        2
    );
}

#[tokio::test]
async fn rules_can_ignore_what_changes_run_to_run() {
    let rules = MatchRules::default().ignore("initialize", "/clientInfo/version");
    let (_connector, transport, _n) = connect(rules.allow_unused(true), "Paris").await;
    let mut changed = initialize(1);
    changed.params.as_mut().unwrap()["clientInfo"]["version"] = json!("9.9.9");
    let init = bounded(
        "initialize",
        transport.request(changed, RequestOptions::new()),
    )
    .await
    .unwrap();
    assert_eq!(init["serverInfo"]["name"], "fixture");
}

#[tokio::test]
async fn a_recorded_dead_server_ends_the_connection_and_extra_connects_fail() {
    let cassette = Cassette::parse(concat!(
        r#"{"cassette":"mcp-steady-cassette/1","era":null,"verdict":null}"#, "\n",
        r#"{"t":0,"conn":1,"dir":"send","message":{"jsonrpc":"2.0","id":1,"method":"server/discover"}}"#, "\n",
        r#"{"t":0.1,"conn":1,"dir":"recv","id":1,"failure":{"kind":"gone","reason":"the server exited (code 1)"}}"#, "\n",
    ))
    .unwrap();
    let connector = cassette.connector(MatchRules::default());
    let transport = bounded("connect", connector.connect(ConnectionHandlers::discard()))
        .await
        .unwrap();
    let error = bounded(
        "discover",
        transport.request(
            Request::new(7, "server/discover", None),
            RequestOptions::new(),
        ),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&error, TransportError::ServerGone(info) if info.reason.contains("code 1")),
        "{error:?}"
    );
    assert!(!transport.is_alive());
    let again = bounded("connect", connector.connect(ConnectionHandlers::discard())).await;
    assert!(matches!(again, Err(TransportError::ServerGone(_))));
}

#[tokio::test]
async fn a_transport_built_by_hand_is_recorded_through_its_handlers() {
    use mcp_testkit::scripted::{Script, ScriptedTransport};
    use mcp_transport::record::Recorder;

    let recorder = Recorder::in_memory();
    recorder.redact_field("password");
    let script = Script::new()
        .expect_request("tools/call")
        .notify_first(
            "notifications/message",
            Some(json!({"level": "info", "data": "hi"})),
        )
        .respond(json!({"content": []}));
    let (listener, mut notifications) = Listener::channel(4);
    let handlers = recorder.handlers(ConnectionHandlers::new(listener));
    let scripted = Arc::new(ScriptedTransport::new(script, handlers));
    let transport = recorder.transport(scripted.clone());
    let call = Request::new(
        1,
        "tools/call",
        Some(json!({"name": "login", "arguments": {"password": "correct horse battery"}})),
    );
    bounded("call", transport.request(call, RequestOptions::new()))
        .await
        .unwrap();
    bounded("finish", scripted.finish()).await.unwrap();
    assert_eq!(
        bounded("notification", notifications.recv())
            .await
            .unwrap()
            .method,
        "notifications/message",
        "the notification still reaches the client"
    );
    let text = recorder.text();
    assert!(!text.contains("correct horse"), "{text}");
    let cassette = Cassette::parse(&text).unwrap();
    assert_eq!(cassette.requests(), ["tools/call"]);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<String> = lines[1..]
        .iter()
        .map(|l| match (&l["event"], &l["dir"]) {
            (Value::String(e), _) => e.clone(),
            (_, Value::String(d)) => format!(
                "{d} {}",
                l["message"]["method"].as_str().unwrap_or("answer")
            ),
            _ => "?".into(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "connect",
            "connected",
            "send tools/call",
            "recv notifications/message",
            "recv answer"
        ]
    );
}

/// A line's `conn` is bounded by the file's own lines: a wild number is
/// refused with the line it is on, not honoured by growing a list.
#[test]
fn a_connection_number_past_the_file_is_refused() {
    let header = r#"{"cassette":"mcp-steady-cassette/1","era":null,"verdict":null}"#;
    let text = |conn: u64| format!("{header}\n{{\"t\":0,\"conn\":{conn},\"event\":\"connect\"}}\n");
    // Small enough to be harmless had it been honoured.
    let Err(refused) = Cassette::parse(&text(200_000)) else {
        panic!("a conn of 200000 in a 2-line file was accepted (and 200000 connections made)");
    };
    let why = refused.mismatches.join("; ");
    assert!(why.contains("line 2") && why.contains("200000"), "{why}");
    let Err(refused) = Cassette::parse(&text(u64::MAX)) else {
        panic!("a conn of u64::MAX was accepted");
    };
    assert!(
        refused.mismatches.join("; ").contains("conn"),
        "{refused:?}"
    );
    // Numbers a file can hold still read.
    assert!(Cassette::parse(&text(2)).is_ok());
}
