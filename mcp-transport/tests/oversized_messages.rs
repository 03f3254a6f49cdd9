//! A message over the size limit is told apart by its start: a server
//! request (it names a method) is answered with a JSON-RPC error and never
//! fails our request with the same id; an answer fails its request with
//! `MessageTooLarge`.

use mcp_protocol::error_codes::INVALID_REQUEST;
use mcp_protocol::{Message, Request, Response};
use mcp_transport::{
    ConnectionHandlers, Engine, Outbound, OutboundReceiver, RequestOptions, Transport,
    TransportError,
};
use serde_json::json;

const LIMIT: usize = 1024;

fn drain(out: &mut OutboundReceiver) -> Vec<Message> {
    std::iter::from_fn(|| out.try_recv())
        .map(Outbound::into_message)
        .collect()
}

#[tokio::test]
async fn an_oversized_server_request_is_refused_and_spares_our_request_with_its_id() {
    let (engine, mut out) = Engine::new(ConnectionHandlers::discard());
    let ours = engine.request(Request::new(1, "tools/call", None), RequestOptions::new());
    drain(&mut out);
    let prefix = br#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"xxxxxxxx"#;
    engine.receive_oversized(prefix, 10 * LIMIT, LIMIT);
    match &drain(&mut out)[..] {
        [Message::Error(e)] => {
            assert_eq!(e.id, Some(1.into()));
            assert_eq!(e.error.code, INVALID_REQUEST);
        }
        other => panic!("expected one error answer to the server's request 1, got {other:?}"),
    }
    assert_eq!(engine.pending_count(), 1, "our request 1 was failed");
    engine.receive(Message::Response(Response {
        id: 1.into(),
        result: json!({ "mine": true }),
    }));
    assert_eq!(ours.await.unwrap()["mine"], true);
}

#[tokio::test]
async fn an_oversized_request_whose_params_come_before_its_method_is_still_a_request() {
    let (engine, mut out) = Engine::new(ConnectionHandlers::discard());
    let _ours = engine.request(Request::new("a", "tools/call", None), RequestOptions::new());
    drain(&mut out);
    engine.receive_oversized(
        br#"{"jsonrpc":"2.0","id":"a","params":{"x":"yyyy"#,
        4096,
        LIMIT,
    );
    assert!(matches!(&drain(&mut out)[..], [Message::Error(e)] if e.id == Some("a".into())));
    assert_eq!(engine.pending_count(), 1);
}

#[tokio::test]
async fn an_oversized_answer_still_fails_its_request() {
    let (engine, mut out) = Engine::new(ConnectionHandlers::discard());
    let ours = engine.request(
        Request::new(1, "resources/read", None),
        RequestOptions::new(),
    );
    drain(&mut out);
    engine.receive_oversized(
        br#"{"jsonrpc":"2.0","id":1,"result":{"contents":[{"#,
        4096,
        LIMIT,
    );
    assert_eq!(
        ours.await,
        Err(TransportError::MessageTooLarge {
            size: 4096,
            limit: LIMIT
        })
    );
    assert!(drain(&mut out).is_empty(), "nothing is sent for an answer");
}
