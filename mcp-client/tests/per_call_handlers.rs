//! What a bridge needs of the client: a call's own handlers answer its
//! input requests (the client's answer what the call does not set); the
//! handler's context names the request that caused it and the caller's
//! tag; one round of any method hands `input_required` back untouched.

mod common;

use std::sync::{Arc, Mutex};

use common::{FnConnector, FnServer, Reply, discover_result};
use mcp_client::handlers::HandlerContext;
use mcp_client::mrtr::Outcome;
use mcp_client::{CallOptions, Client, ErrorKind};
use mcp_protocol::types::{
    CallToolRequestParams, ContentBlock, CreateMessageResult, ElicitResult, TextContent,
};
use mcp_reference_server::{FakeConfig, FakeServer};
use serde_json::{Map, json};

/// Who answered, and the context they were given.
type Seen = Arc<Mutex<Vec<(&'static str, HandlerContext)>>>;

/// An elicitation handler, named `who`, that accepts `{name: who}`.
fn accepting(
    who: &'static str,
    seen: &Seen,
) -> impl Fn(
    mcp_protocol::types::ElicitRequestParams,
    HandlerContext,
) -> std::future::Ready<Result<ElicitResult, mcp_client::handlers::HandlerError>>
+ Send
+ Sync
+ 'static {
    let seen = seen.clone();
    move |_, ctx| {
        seen.lock().unwrap().push((who, ctx));
        let content = Map::from_iter([("name".into(), json!(who))]);
        std::future::ready(Ok(ElicitResult::accept(content)))
    }
}

fn text_of(result: &mcp_protocol::types::CallToolResult) -> String {
    serde_json::to_string(&result.content).unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_calls_own_elicitation_handler_answers_its_rounds_with_its_tag() {
    let seen = Seen::default();
    let client = Client::builder()
        .on_elicitation(accepting("client", &seen))
        .connect(FakeServer::new(FakeConfig::modern()).connector())
        .await
        .unwrap();
    let options = CallOptions::new()
        .on_behalf_of("downstream-1")
        .on_elicitation(accepting("call", &seen));
    let params = CallToolRequestParams::new("elicit").with_arguments(Map::new());
    let result = client.call_tool_with(params, &options).await.unwrap();
    assert!(!result.is_error(), "{result:?}");
    assert!(text_of(&result).contains("call"), "{result:?}");
    // A call without handlers of its own is answered by the client's.
    let result = client.call_tool("elicit", json!({})).await.unwrap();
    assert!(text_of(&result).contains("client"), "{result:?}");

    let seen = seen.lock().unwrap().clone();
    let who: Vec<_> = seen.iter().map(|(who, _)| *who).collect();
    assert_eq!(who, ["call", "client"]);
    let own = seen[0].1.call.as_ref().expect("the call is known");
    assert_eq!(own.method, "tools/call");
    assert_eq!(own.target.as_deref(), Some("elicit"));
    assert_eq!(own.on_behalf_of.as_deref(), Some("downstream-1"));
    assert!(own.key.is_some() && own.request_id.is_some(), "{own:?}");
    let default = seen[1].1.call.as_ref().expect("the call is known");
    assert_eq!(default.on_behalf_of, None);
    assert_ne!(default.request_id, own.request_id, "each round has its id");
}

/// A modern server asking for elicitation and sampling in one round.
fn two_inputs_at_once() -> Arc<FnServer> {
    FnServer::new(|_, r| match r.method.as_str() {
        "server/discover" => Reply::Ok(discover_result(&["2026-07-28"])),
        "tools/call" | "x/custom" if r.params.as_ref().unwrap().get("inputResponses").is_some() => {
            let responses = r.params.as_ref().unwrap()["inputResponses"].clone();
            Reply::Ok(json!({"content": [{"type": "text", "text": responses.to_string()}]}))
        }
        "tools/call" | "x/custom" => Reply::Ok(json!({
            "resultType": "input_required",
            "requestState": "s1",
            "inputRequests": {
                "who": {"method": "elicitation/create", "params": {
                    "message": "Who?", "requestedSchema": {"type": "object", "properties": {}}}},
                "what": {"method": "sampling/createMessage", "params": {
                    "messages": [{"role": "user", "content": {"type": "text", "text": "What?"}}],
                    "maxTokens": 5}}
            }
        })),
        _ => Reply::Err(-32601, "Method not found", None),
    })
}

fn answer(text: &'static str) -> CreateMessageResult {
    CreateMessageResult::new(ContentBlock::Text(TextContent::new(text)), "m")
}

#[tokio::test(start_paused = true)]
async fn each_kind_the_call_does_not_set_is_answered_by_the_clients_handler() {
    let seen = Seen::default();
    let client = Client::builder()
        .enforce_server_capabilities(false)
        .on_elicitation(accepting("client", &seen))
        .on_sampling(|_, _| async { Ok(answer("client model")) })
        .connect(FnConnector(two_inputs_at_once()))
        .await
        .unwrap();
    let options = CallOptions::new().on_sampling(|_, ctx| async move {
        let call = ctx.call.expect("the call is known");
        assert_eq!(call.key.as_deref(), Some("what"));
        Ok(answer("call model"))
    });
    let params = CallToolRequestParams::new("t");
    let result = client.call_tool_with(params, &options).await.unwrap();
    let text = text_of(&result);
    assert!(
        text.contains("call model") && !text.contains("client model"),
        "{text}"
    );
    assert!(
        text.contains("client"),
        "the client's elicitation answered: {text}"
    );
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn one_round_of_any_method_hands_input_required_back_untouched() {
    let server = two_inputs_at_once();
    let client = Client::builder()
        .enforce_server_capabilities(false)
        .on_elicitation(|_, _| async { unreachable!("answered by hand") })
        .connect(FnConnector(server.clone()))
        .await
        .unwrap();
    let options = CallOptions::new();
    let asked = match client
        .request_once("x/custom", json!({"a": 1}), &options)
        .await
        .unwrap()
    {
        Outcome::InputRequired(asked) => asked,
        other => panic!("{other:?}"),
    };
    assert_eq!(asked.request_state.as_deref(), Some("s1"));
    let keys: Vec<_> = asked
        .input_requests
        .iter()
        .flatten()
        .map(|(k, _)| k.clone())
        .collect();
    assert_eq!(keys.len(), 2, "{keys:?}");
    // Nothing was fulfilled: one request went out, with no answers.
    let sent: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.method == "x/custom")
        .collect();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].params.as_ref().unwrap()["a"], 1);
    // The next round, by hand, completes.
    let next = json!({"a": 1, "requestState": "s1", "inputResponses": {}});
    match client
        .request_once("x/custom", next, &options)
        .await
        .unwrap()
    {
        Outcome::Complete(value) => assert!(value["content"].is_array(), "{value}"),
        other => panic!("{other:?}"),
    }
    // The automatic raw request refuses a method that may not ask.
    let err = client
        .request_raw("x/custom", json!({"a": 1}), &options)
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::InvalidResponse { .. }),
        "{err:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn one_round_is_gated_like_every_call() {
    let server = two_inputs_at_once();
    let client = Client::builder()
        .connect(FnConnector(server.clone()))
        .await
        .unwrap();
    // `logging/setLevel` is not in 2026-07-28: refused before anything is
    // sent, as the automatic call is.
    let options = CallOptions::new();
    let params = json!({"level": "info"});
    let once = client.request_once("logging/setLevel", params.clone(), &options);
    let err = once.await.unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::NotInRevision { .. }),
        "{err:?}"
    );
    let raw = client
        .request_raw("logging/setLevel", params, &options)
        .await;
    assert_eq!(raw.unwrap_err().kind(), err.kind());
    let methods: Vec<_> = server.methods().into_iter().map(|(_, m)| m).collect();
    assert!(
        !methods.iter().any(|m| m == "logging/setLevel"),
        "{methods:?}"
    );
}

/// A legacy server's elicitation, asked during a call with handlers of
/// its own: over Streamable HTTP it comes on the call's answer stream, so
/// the call's handler answers and its context names the call; over a
/// stream shared by every request (stdio, here in process) nothing ties it
/// to a call, so the client's handler answers, with no call.
#[cfg(feature = "http")]
#[tokio::test(flavor = "current_thread")]
async fn a_legacy_servers_request_reaches_the_call_its_stream_belongs_to() {
    use mcp_reference_server::http::HttpFake;

    let bound = |f| async move {
        tokio::time::timeout(std::time::Duration::from_secs(20), f)
            .await
            .expect("in time")
    };
    let http = bound(Box::pin(HttpFake::start(FakeConfig::legacy())))
        .await
        .unwrap();
    let in_process = FakeServer::new(FakeConfig::legacy());
    for over_http in [true, false] {
        let seen = Seen::default();
        let builder = Client::builder().on_elicitation(accepting("client", &seen));
        let client = if over_http {
            builder
                .connect(mcp_client::HttpTransportBuilder::new(http.url()))
                .await
        } else {
            builder.connect(in_process.connector()).await
        }
        .unwrap();
        assert_eq!(client.era(), mcp_protocol::Era::Legacy);
        let options = CallOptions::new()
            .on_behalf_of("downstream-2")
            .on_elicitation(accepting("call", &seen));
        let params = CallToolRequestParams::new("elicit").with_arguments(Map::new());
        let result = client.call_tool_with(params, &options).await.unwrap();
        assert!(!result.is_error(), "{result:?}");
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 1, "over http: {over_http}");
        let (who, ctx) = &seen[0];
        if over_http {
            assert_eq!(*who, "call");
            let call = ctx.call.as_ref().expect("the stream names the call");
            assert_eq!(call.method, "tools/call");
            assert_eq!(call.target.as_deref(), Some("elicit"));
            assert_eq!(call.on_behalf_of.as_deref(), Some("downstream-2"));
            assert!(call.request_id.is_some() && call.key.is_none(), "{call:?}");
        } else {
            assert_eq!(*who, "client");
            assert!(ctx.call.is_none());
        }
        client.close().await;
    }
}
