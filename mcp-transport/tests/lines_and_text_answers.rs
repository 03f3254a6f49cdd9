//! An engine made with `Engine::with_lines` queues each message as its
//! line, and a request given up before its line left the queue is taken
//! out of it as a message would be; an answer delivered as text
//! (`Engine::receive_result`) reaches its caller as the same value the
//! parsed answer would, and one for no pending request is dropped. Shared
//! `_meta` members reach the wire whatever the engine queues.

use std::time::Duration;

use mcp_protocol::jsonrpc::answer_text;
use mcp_protocol::{Inbound, Message, Notification, Request};
use mcp_transport::{
    CancellationToken, ConnectionHandlers, Engine, Outbound, RequestOptions, SharedMeta, Transport,
    TransportError,
};
use serde_json::json;

#[tokio::test]
async fn messages_are_queued_as_their_lines() {
    let (engine, mut out) = Engine::with_lines(ConnectionHandlers::discard());
    let request = Request::new(
        7,
        "tools/call",
        Some(json!({ "name": "echo", "n": [1, "é"] })),
    );
    let _answer = engine.request(request.clone(), RequestOptions::new());
    engine
        .notify(Notification::new("notifications/initialized", None))
        .unwrap();
    let Some(Outbound::Line { id, line }) = out.try_recv() else {
        panic!("a line")
    };
    assert_eq!(id, Some(7.into()));
    assert_eq!(line.last(), Some(&b'\n'));
    let parsed = Inbound::parse(&line[..line.len() - 1]).unwrap();
    assert_eq!(parsed, Inbound::Single(Message::Request(request)));
    let Some(Outbound::Line { id: None, line }) = out.try_recv() else {
        panic!("a notification's line, with no id")
    };
    assert_eq!(
        line,
        b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
    );
    assert!(out.try_recv().is_none());
}

#[tokio::test]
async fn a_request_given_up_before_its_line_left_the_queue_is_taken_out() {
    let (engine, mut out) = Engine::with_lines(ConnectionHandlers::discard());
    let token = CancellationToken::new();
    let first = engine.request(
        Request::new(1, "test/slow", None),
        RequestOptions::new().cancellation(token.clone()),
    );
    let _second = engine.request(Request::new(2, "test/slow", None), RequestOptions::new());
    token.cancel();
    assert!(matches!(first.await, Err(TransportError::Cancelled)));
    // No cancel goes out for a request the server never saw.
    match out.try_recv() {
        Some(Outbound::Line { id, .. }) => assert_eq!(id, Some(2.into())),
        other => panic!("only the second request: {other:?}"),
    }
    assert!(out.try_recv().is_none());
}

#[tokio::test]
async fn a_text_answer_reads_as_the_parsed_answer_would() {
    let lines: [&[u8]; 4] = [
        br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a\nb"}]}}"#,
        br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required"}}"#,
        br#"{"jsonrpc":"2.0","id":1,"result":null}"#,
        br#"{"jsonrpc":"2.0","id":1,"result":[1,2.5,"x"]}"#,
    ];
    for line in lines {
        let (parsed, _a) = Engine::new(ConnectionHandlers::discard());
        let expected = parsed.request(Request::new(1, "m", None), RequestOptions::new());
        parsed.receive_inbound(Inbound::parse(line).unwrap());

        let (text, _b) = Engine::new(ConnectionHandlers::discard());
        let got = text.request(Request::new(1, "m", None), RequestOptions::new());
        let (id, result) = answer_text(line).unwrap();
        text.receive_result(&id, result);

        assert_eq!(got.await.unwrap(), expected.await.unwrap());
    }
}

#[tokio::test]
async fn a_text_answer_for_no_pending_request_is_dropped() {
    let (engine, _out) = Engine::new(ConnectionHandlers::discard());
    let answer = engine.request(
        Request::new(1, "m", None),
        RequestOptions::new().timeout(Duration::from_millis(50)),
    );
    let (_, result) = answer_text(br#"{"jsonrpc":"2.0","id":1,"result":{"n":1}}"#).unwrap();
    // Answered twice, and an id never sent: only the first counts.
    engine.receive_result(&1.into(), result);
    engine.receive_result(&1.into(), result);
    engine.receive_result(&99.into(), result);
    assert_eq!(answer.await.unwrap()["n"], 1);
    assert_eq!(engine.pending_count(), 0);
}

#[tokio::test]
async fn shared_meta_reaches_the_wire_spliced_or_merged() {
    let mut members = serde_json::Map::new();
    members.insert(
        "io.modelcontextprotocol/protocolVersion".into(),
        json!("2026-07-28"),
    );
    let shared = SharedMeta::new(members);
    let cases = [
        Some(json!({ "name": "echo", "_meta": { "progressToken": 4 } })),
        None,
        // An array has no `_meta`: it goes as it is.
        Some(json!([1])),
    ];
    for lines in [true, false] {
        for params in cases.clone() {
            let (engine, mut out) = if lines {
                Engine::with_lines(ConnectionHandlers::discard())
            } else {
                Engine::new(ConnectionHandlers::discard())
            };
            assert!(engine.profile().takes_shared_meta);
            let _answer = engine.request(
                Request::new(1, "tools/call", params.clone()),
                RequestOptions::new().shared_meta(shared.clone()),
            );
            let sent = out.try_recv().expect("queued").into_message();
            let Message::Request(sent) = sent else {
                panic!("a request")
            };
            assert_eq!(
                sent.params,
                shared.merge_into(params.clone()),
                "{lines} {params:?}"
            );
        }
    }
}
