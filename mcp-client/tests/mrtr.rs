//! Multi round-trip requests: fulfilled through the same handlers that
//! answer legacy servers, with the wire rules checked message by message.

mod common;

use std::sync::Arc;

use common::{FnConnector, FnServer, Reply, discover_result};
use mcp_client::handlers::{HandlerError, elicitation_fn, sampling_fn};
use mcp_client::mrtr::{InputAnswer, Outcome};
use mcp_client::{CallOptions, Client, ClientBuilder, EraMode, ErrorKind};
use mcp_protocol::types::{
    CallToolRequestParams, ContentBlock, CreateMessageResult, ElicitResult, GetPromptRequestParams,
    InputResponses, ReadResourceRequestParams, TextContent,
};
use mcp_protocol::{Message, Request};
use mcp_reference_server::{FakeConfig, FakeServer};
use serde_json::{Map, Value, json};

fn with_handlers(builder: ClientBuilder) -> ClientBuilder {
    builder
        .elicitation_handler(elicitation_fn(|_| async {
            let mut content = Map::new();
            content.insert("name".into(), json!("octocat"));
            Ok(ElicitResult::accept(content))
        }))
        .sampling_handler(sampling_fn(|_| async {
            Ok(CreateMessageResult::new(
                ContentBlock::Text(TextContent::new("Paris")),
                "test-model",
            ))
        }))
}

fn tool_calls(messages: &[Message]) -> Vec<Request> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Request(r) if r.method == "tools/call" => Some(r.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn three_rounds_through_handlers_with_exact_wire_rules() {
    let server = FakeServer::new(FakeConfig::modern());
    let client = with_handlers(Client::builder())
        .connect(server.connector())
        .await
        .unwrap();
    // A concurrent call must see none of the exchange's state.
    let (multi, echo) = tokio::join!(
        client.call_tool("mrtr_multi", Value::Null),
        client.call_tool("echo", json!({"text": "parallel"})),
    );
    let multi = multi.unwrap();
    assert!(!multi.is_error(), "{multi:?}");
    let text = serde_json::to_string(&multi.content).unwrap();
    assert!(text.contains("octocat") && text.contains("Paris"), "{text}");
    echo.unwrap();

    let calls = tool_calls(&server.received(0));
    let rounds: Vec<&Request> = calls
        .iter()
        .filter(|r| r.params.as_ref().unwrap()["name"] == "mrtr_multi")
        .collect();
    // Elicitation, sampling, a state-only round, then the result.
    assert_eq!(rounds.len(), 4, "{rounds:#?}");
    // A new JSON-RPC id each round, none reused.
    let ids: std::collections::HashSet<_> = rounds.iter().map(|r| r.id.clone()).collect();
    assert_eq!(ids.len(), rounds.len(), "an id was reused: {rounds:#?}");
    // No state on the first round.
    let first = rounds[0].params.as_ref().unwrap();
    assert!(first.get("requestState").is_none(), "{first}");
    assert!(first.get("inputResponses").is_none(), "{first}");
    // Each later round echoes, byte for byte, the state the server sent in
    // its answer to the round before.
    let sent = server.sent(0);
    let answer_to = |id: &mcp_protocol::RequestId| -> Value {
        sent.iter()
            .find_map(|m| match m {
                Message::Response(r) if &r.id == id => Some(r.result.clone()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no answer to {id:?}"))
    };
    for pair in rounds.windows(2) {
        let answer = answer_to(&pair[0].id);
        assert_eq!(answer["resultType"], "input_required", "{answer}");
        let given = answer["requestState"].as_str().expect("a string state");
        let echoed = pair[1].params.as_ref().unwrap()["requestState"]
            .as_str()
            .expect("the state is echoed as a string");
        // String equality is byte equality.
        assert_eq!(echoed, given, "state not echoed exactly");
    }
    // No progress token on any round: none was asked for (no reset on
    // progress and no progress listener).
    let tokens: Vec<Value> = rounds
        .iter()
        .map(|r| r.params.as_ref().unwrap()["_meta"]["progressToken"].clone())
        .collect();
    assert!(
        tokens.iter().all(Value::is_null),
        "no token unless asked: {tokens:?}"
    );
    // Nothing leaked into the parallel call.
    let echo_call = calls
        .iter()
        .find(|r| r.params.as_ref().unwrap()["name"] == "echo")
        .unwrap();
    let p = echo_call.params.as_ref().unwrap();
    assert!(p.get("requestState").is_none() && p.get("inputResponses").is_none());
}

#[tokio::test]
async fn the_same_tool_in_legacy_uses_the_same_handlers() {
    let server = FakeServer::new(FakeConfig::legacy());
    let client = with_handlers(Client::builder())
        .connect(server.connector())
        .await
        .unwrap();
    let result = client.call_tool("mrtr_multi", Value::Null).await.unwrap();
    let text = serde_json::to_string(&result.content).unwrap();
    assert!(text.contains("octocat") && text.contains("Paris"), "{text}");
}

#[tokio::test]
async fn the_round_cap_gives_a_typed_error() {
    let server = FakeServer::new(FakeConfig::modern());
    let client = with_handlers(Client::builder().max_rounds(2))
        .connect(server.connector())
        .await
        .unwrap();
    let e = client
        .call_tool("mrtr_multi", Value::Null)
        .await
        .unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::TooManyRounds { rounds: 2 }),
        "{e}"
    );
    assert!(e.to_string().contains("2 rounds"), "{e}");
}

#[tokio::test]
async fn a_failing_handler_gives_a_typed_error() {
    let server = FakeServer::new(FakeConfig::modern());
    let client = Client::builder()
        .elicitation_handler(elicitation_fn(|_| async {
            Err(HandlerError::new("the user closed the window"))
        }))
        .connect(server.connector())
        .await
        .unwrap();
    let e = client.call_tool("elicit", Value::Null).await.unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Handler { detail } if detail.contains("closed the window")),
        "{e}"
    );
}

fn modern_server(call: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Arc<FnServer> {
    FnServer::new(move |_, r| match r.method.as_str() {
        "server/discover" => Reply::Ok(discover_result(&["2026-07-28"])),
        "tools/call" => call(r),
        _ => Reply::Err(-32601, "Method not found", None),
    })
}

#[tokio::test]
async fn unknown_result_types_are_refused() {
    for (result_type, expect) in [("weird", "unknown resultType"), ("task", "not in use")] {
        let server =
            modern_server(move |_| Reply::Ok(json!({"resultType": result_type, "content": []})));
        let client = Client::builder()
            .connect(FnConnector(server))
            .await
            .unwrap();
        let e = client.call_tool("t", Value::Null).await.unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::InvalidResponse { .. }), "{e}");
        assert!(e.to_string().contains(expect), "{e}");
    }
}

#[tokio::test]
async fn a_state_only_round_is_retried_at_once_and_state_is_echoed_exactly() {
    let state = "  opaque \u{e9}\\\"state\" ";
    let server = modern_server(move |r| {
        let p = r.params.as_ref().unwrap();
        match p.get("requestState").and_then(Value::as_str) {
            None => Reply::Ok(json!({"resultType": "input_required", "requestState": state})),
            Some(s) if s == state && p.get("inputResponses").is_none() => {
                Reply::Ok(json!({"content": [{"type": "text", "text": "done"}]}))
            }
            Some(_) => Reply::Err(-32602, "state mangled", None),
        }
    });
    let client = Client::builder()
        .connect(FnConnector(server))
        .await
        .unwrap();
    let result = client.call_tool("t", Value::Null).await.unwrap();
    assert!(matches!(&result.content[0], ContentBlock::Text(t) if t.text == "done"));
}

#[tokio::test]
async fn manual_mode_hands_back_the_request_for_input() {
    let server = FakeServer::new(FakeConfig::modern());
    let client = Client::builder()
        .era(EraMode::Modern)
        .elicitation_handler(elicitation_fn(|_| async { unreachable!("manual mode") }))
        .connect(server.connector())
        .await
        .unwrap();
    let params = CallToolRequestParams::new("elicit");
    let options = CallOptions::new();
    let Outcome::InputRequired(input) = client
        .call_tool_once(&params, None, &options)
        .await
        .unwrap()
    else {
        panic!("expected input_required");
    };
    let requests = input.input_requests.clone().unwrap();
    let mut responses = InputResponses::new();
    for key in requests.keys() {
        let mut content = Map::new();
        content.insert("name".into(), json!("by hand"));
        responses.insert(key.clone(), ElicitResult::accept(content).into());
    }
    let answer = InputAnswer::to(&input, responses);
    let Outcome::Complete(result) = client
        .call_tool_once(&params, Some(&answer), &options)
        .await
        .unwrap()
    else {
        panic!("expected a result");
    };
    assert!(
        serde_json::to_string(&result.content)
            .unwrap()
            .contains("by hand")
    );
}

/// A modern server whose prompts/get and resources/read ask for roots
/// before answering.
fn asks_for_roots_first() -> Arc<FnServer> {
    FnServer::new(|_, r| {
        let answered = r.params.as_ref().unwrap().get("inputResponses").is_some();
        let ask = json!({
            "resultType": "input_required",
            "inputRequests": {"where": {"method": "roots/list", "params": {}}},
            "requestState": "s-1"
        });
        match r.method.as_str() {
            "server/discover" => Reply::Ok(discover_result(&["2026-07-28"])),
            "prompts/get" if !answered => Reply::Ok(ask),
            "prompts/get" => Reply::Ok(json!({"messages": [{"role": "user",
                "content": {"type": "text", "text": "from roots"}}]})),
            "resources/read" if !answered => Reply::Ok(ask),
            "resources/read" => Reply::Ok(json!({"contents": [{"uri": "x://r", "text": "ok"}]})),
            _ => Reply::Err(-32601, "Method not found", None),
        }
    })
}

#[tokio::test(start_paused = true)]
async fn prompts_and_reads_have_the_same_three_forms() {
    let server = asks_for_roots_first();
    let client = Client::builder()
        .enforce_server_capabilities(false)
        .roots(vec![mcp_protocol::types::Root::new("file:///work")])
        .connect(FnConnector(server.clone()))
        .await
        .unwrap();
    // Automatic: the roots handler answers, the call completes.
    let prompt = client.get_prompt("p", [("k", "v")]).await.unwrap();
    assert_eq!(prompt.messages.len(), 1);
    let read = client.read_resource("x://r").await.unwrap();
    assert_eq!(read.contents.len(), 1);
    // Manual: the typed input_required comes back, answered by the
    // client's handlers on request, then the second round completes.
    let options = CallOptions::new();
    let params = GetPromptRequestParams::new("p");
    let Outcome::InputRequired(asked) = client
        .get_prompt_once(&params, None, &options)
        .await
        .unwrap()
    else {
        panic!("expected input_required");
    };
    let answer = client.fulfil_input(&asked).await.unwrap();
    assert_eq!(answer.request_state.as_deref(), Some("s-1"));
    assert!(matches!(
        client.get_prompt_once(&params, Some(&answer), &options).await.unwrap(),
        Outcome::Complete(p) if p.messages.len() == 1
    ));
    let params = ReadResourceRequestParams::new("x://r");
    let Outcome::InputRequired(asked) = client
        .read_resource_once(&params, None, &options)
        .await
        .unwrap()
    else {
        panic!("expected input_required");
    };
    let answer = client.fulfil_input(&asked).await.unwrap();
    assert!(matches!(
        client.read_resource_once(&params, Some(&answer), &options).await.unwrap(),
        Outcome::Complete(r) if r.contents.len() == 1
    ));
    // Each retry echoed the state and carried the roots.
    let retries: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.params.as_ref().unwrap().get("inputResponses").is_some())
        .collect();
    assert_eq!(retries.len(), 4);
    for r in retries {
        let p = r.params.unwrap();
        assert_eq!(p["requestState"], "s-1");
        assert_eq!(
            p["inputResponses"]["where"]["roots"][0]["uri"],
            "file:///work"
        );
    }
}
