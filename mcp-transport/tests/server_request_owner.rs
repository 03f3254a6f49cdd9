//! A server request that arrived on a client request's answer stream
//! (`Engine::receive_for`) reaches the handler's `handle_during` with that
//! request's id; one that arrived anywhere else reaches `handle`; a handler
//! that does not tell them apart answers both through `handle`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_protocol::methods::ROOTS_LIST;
use mcp_protocol::{ErrorObject, Message, Request, RequestId};
use mcp_transport::{
    ConnectionHandlers, Engine, Outbound, OutboundReceiver, RequestOptions, ServerRequestHandler,
    Transport,
};
use serde_json::{Value, json};

/// Notes, for each server request, the client request it was said to
/// belong to.
#[derive(Default)]
struct Owners(Mutex<Vec<(RequestId, Option<RequestId>)>>);

impl ServerRequestHandler for Owners {
    fn handle(&self, request: Request) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        self.0.lock().unwrap().push((request.id, None));
        Box::pin(async { Ok(json!({"roots": []})) })
    }

    fn handle_during(
        &self,
        request: Request,
        during: &RequestId,
    ) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        self.0
            .lock()
            .unwrap()
            .push((request.id, Some(during.clone())));
        Box::pin(async { Ok(json!({"roots": []})) })
    }
}

fn answers(out: &mut OutboundReceiver) -> Vec<RequestId> {
    std::iter::from_fn(|| out.try_recv())
        .map(Outbound::into_message)
        .filter_map(|m| match m {
            Message::Response(r) => Some(r.id),
            _ => None,
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_request_on_a_requests_stream_is_handled_as_part_of_it() {
    let owners = Arc::new(Owners::default());
    let handlers = ConnectionHandlers::discard().with_server_requests(owners.clone());
    let (engine, mut out) = Engine::new(handlers);
    let _ours = engine.request(
        Request::new(7, "tools/call", None),
        RequestOptions::new().timeout(Duration::from_secs(60)),
    );
    let ours = RequestId::from(7);
    engine.receive_for(
        &ours,
        Message::Request(Request::new("s-1", ROOTS_LIST, None)),
    );
    engine.receive(Message::Request(Request::new("s-2", ROOTS_LIST, None)));
    tokio::task::yield_now().await;
    assert_eq!(
        *owners.0.lock().unwrap(),
        [
            (RequestId::from("s-1"), Some(ours)),
            (RequestId::from("s-2"), None)
        ]
    );
    let mut answered = answers(&mut out);
    answered.sort_by_key(|id| id.to_string());
    assert_eq!(answered, [RequestId::from("s-1"), RequestId::from("s-2")]);
}

#[tokio::test(start_paused = true)]
async fn a_handler_that_does_not_ask_answers_a_tied_request_through_handle() {
    let handler = |request: Request| -> BoxFuture<'static, Result<Value, ErrorObject>> {
        Box::pin(async move { Ok(json!({"echo": request.id.to_value()})) })
    };
    let handlers = ConnectionHandlers::discard().with_server_requests(Arc::new(handler));
    let (engine, mut out) = Engine::new(handlers);
    let _ours = engine.request(
        Request::new(1, "tools/call", None),
        RequestOptions::new().timeout(Duration::from_secs(60)),
    );
    engine.receive_for(
        &RequestId::from(1),
        Message::Request(Request::new("s-1", ROOTS_LIST, None)),
    );
    tokio::task::yield_now().await;
    assert_eq!(answers(&mut out), [RequestId::from("s-1")]);
}

#[tokio::test(start_paused = true)]
async fn a_recorded_connection_still_tells_the_handler_which_request() {
    let path = std::env::temp_dir().join(format!("owner-{}.jsonl", std::process::id()));
    let recorder = mcp_transport::record::Recorder::create(&path).unwrap();
    let owners = Arc::new(Owners::default());
    let handlers =
        recorder.handlers(ConnectionHandlers::discard().with_server_requests(owners.clone()));
    let (engine, mut out) = Engine::new(handlers);
    let _ours = engine.request(
        Request::new(3, "tools/call", None),
        RequestOptions::new().timeout(Duration::from_secs(60)),
    );
    let ours = RequestId::from(3);
    engine.receive_for(
        &ours,
        Message::Request(Request::new("s-1", ROOTS_LIST, None)),
    );
    engine.receive(Message::Request(Request::new("s-2", ROOTS_LIST, None)));
    tokio::task::yield_now().await;
    assert_eq!(
        *owners.0.lock().unwrap(),
        [
            (RequestId::from("s-1"), Some(ours)),
            (RequestId::from("s-2"), None)
        ]
    );
    assert_eq!(answers(&mut out).len(), 2);
    recorder.finish().unwrap();
    let recorded = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(
        recorded.contains("\"s-1\"") && recorded.contains("\"s-2\""),
        "{recorded}"
    );
}
