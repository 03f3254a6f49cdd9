//! Handlers written as plain async closures, with their context: the same
//! closure answers a legacy server's request and a modern `input_required`;
//! the input requests of one round are answered at once; a cancel reaches
//! a round whose handlers are still running.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{FnConnector, FnServer, Reply, discover_result};
use mcp_client::handlers::HandlerContext;
use mcp_client::{CallOptions, Client, ErrorKind};
use mcp_protocol::Era;
use mcp_protocol::types::{
    CallToolRequestParams, ContentBlock, CreateMessageResult, ElicitResult, TextContent,
};
use mcp_reference_server::{FakeConfig, FakeServer};
use mcp_transport::{CancellationToken, TransportError};
use serde_json::{Map, json};

#[tokio::test(start_paused = true)]
async fn a_closure_answers_elicitation_in_both_eras_and_sees_its_context() {
    for config in [FakeConfig::legacy(), FakeConfig::modern()] {
        let server = FakeServer::new(config);
        let seen: Arc<Mutex<Vec<HandlerContext>>> = Arc::default();
        let record = seen.clone();
        let client = Client::builder()
            .on_elicitation(move |request, ctx| {
                record.lock().unwrap().push(ctx);
                async move {
                    assert_eq!(request.message(), Some("What is your name?"));
                    let mut content = Map::new();
                    content.insert("name".into(), json!("Ada"));
                    Ok(ElicitResult::accept(content))
                }
            })
            .connect(server.connector())
            .await
            .unwrap();
        let result = client.call_tool("elicit", json!({})).await.unwrap();
        assert!(!result.is_error(), "{result:?}");
        let era = client.era();
        let contexts = seen.lock().unwrap().clone();
        assert_eq!(contexts.len(), 1, "{era}: the handler ran once");
        let ctx = &contexts[0];
        assert_eq!(ctx.era, era);
        match era {
            // A legacy server's request names no call.
            Era::Legacy => assert!(ctx.call.is_none()),
            _ => {
                let call = ctx.call.as_ref().expect("a multi round-trip call is known");
                assert_eq!(call.method, "tools/call");
                assert_eq!(call.target.as_deref(), Some("elicit"));
                assert_eq!(call.round, 1);
            }
        }
        assert!(
            ctx.cancellation.is_cancelled(),
            "{era}: the token fires once the request is answered"
        );
    }
}

/// A modern server asking for elicitation and sampling in one round.
fn two_inputs_at_once() -> Arc<FnServer> {
    FnServer::new(|_, r| match r.method.as_str() {
        "server/discover" => Reply::Ok(discover_result(&["2026-07-28"])),
        "tools/call" if r.params.as_ref().unwrap().get("inputResponses").is_some() => {
            Reply::Ok(json!({"content": [{"type": "text", "text": "done"}]}))
        }
        "tools/call" => Reply::Ok(json!({
            "resultType": "input_required",
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

#[tokio::test(start_paused = true)]
async fn the_input_requests_of_one_round_are_answered_at_once() {
    // Each handler waits for the other to have started: answered one after
    // the other, neither would finish.
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let (b1, b2) = (barrier.clone(), barrier);
    let client = Client::builder()
        .enforce_server_capabilities(false)
        .on_elicitation(move |_, _| {
            let b = b1.clone();
            async move {
                b.wait().await;
                Ok(ElicitResult::accept(Map::new()))
            }
        })
        .on_sampling(move |_, _| {
            let b = b2.clone();
            async move {
                b.wait().await;
                Ok(CreateMessageResult::new(
                    ContentBlock::Text(TextContent::new("Paris")),
                    "m",
                ))
            }
        })
        .connect(FnConnector(two_inputs_at_once()))
        .await
        .unwrap();
    let result = tokio::time::timeout(Duration::from_secs(5), client.call_tool("t", json!({})))
        .await
        .expect("both handlers ran at once")
        .unwrap();
    assert!(!result.is_error());
}

#[tokio::test(start_paused = true)]
async fn a_cancel_reaches_a_round_whose_handlers_are_running() {
    let token = CancellationToken::new();
    let (started_tx, started) = tokio::sync::oneshot::channel::<HandlerContext>();
    let started_tx = Mutex::new(Some(started_tx));
    let client = Client::builder()
        .enforce_server_capabilities(false)
        .on_elicitation(move |_, ctx| {
            if let Some(tx) = started_tx.lock().unwrap().take() {
                let _ = tx.send(ctx);
            }
            // A person who never answers.
            std::future::pending()
        })
        .on_sampling(|_, _| std::future::pending())
        .connect(FnConnector(two_inputs_at_once()))
        .await
        .unwrap();
    let call = {
        let client = client.clone();
        let options = CallOptions::new().cancellation(token.clone());
        tokio::spawn(async move {
            client
                .call_tool_with(CallToolRequestParams::new("t"), &options)
                .await
        })
    };
    let ctx = started.await.unwrap();
    let start = tokio::time::Instant::now();
    token.cancel();
    let error = call.await.unwrap().unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Transport(TransportError::Cancelled)
        ),
        "{error}"
    );
    assert_eq!(start.elapsed(), Duration::ZERO, "at once, not at a timeout");
    assert!(ctx.cancellation.is_cancelled(), "the handler was told");
}
