//! The dual era's per-connection choice, and every misbehaviour knob,
//! driven by raw JSON-RPC lines.

mod fake_common;

use std::time::Duration;

use fake_common::{Wire, code, meta, modern_params};
use mcp_reference_server::{DiscoverAnswer, Ending, FakeConfig, Knob, Methods};
use serde_json::json;
use tokio::time::Instant;

fn discover() -> serde_json::Value {
    json!({"_meta": meta(json!({}))})
}

#[tokio::test(start_paused = true)]
async fn dual_decides_per_connection() {
    // Modern first, then initialize: still allowed, and legacy from then on.
    let mut wire = Wire::start(FakeConfig::dual());
    let d = wire.call(json!(1), "server/discover", discover()).await;
    assert_eq!(d["result"]["resultType"], "complete");
    let init = wire.handshake("2025-11-25", json!({})).await;
    assert_eq!(init["protocolVersion"], "2025-11-25");
    let again = wire.call(json!(2), "server/discover", discover()).await;
    assert_eq!(
        code(&again),
        -32601,
        "a legacy connection does not know discover"
    );
    let tools = wire.call(json!(3), "tools/list", json!({})).await;
    assert!(tools["result"].get("resultType").is_none());

    // A request without _meta before initialize is a legacy request.
    let mut wire = Wire::start(FakeConfig::dual());
    assert_eq!(
        code(&wire.call(json!(1), "tools/list", json!({})).await),
        -32600
    );
}

#[tokio::test(start_paused = true)]
async fn fix_era_at_first_message_refuses_initialize_after_discover() {
    let mut wire = Wire::start(FakeConfig::dual().knob(Knob::FixEraAtFirstMessage));
    wire.call(json!(1), "server/discover", discover()).await;
    let init = wire
        .call(
            json!(2),
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
        )
        .await;
    assert_eq!(init["error"]["code"], -32022);
    assert_eq!(init["error"]["data"]["requested"], "2025-11-25");
    assert_eq!(init["error"]["data"]["supported"], json!(["2026-07-28"]));
}

#[tokio::test(start_paused = true)]
async fn discover_answers_of_real_legacy_servers() {
    for (answer, expected) in [
        (DiscoverAnswer::MethodNotFound, Some(-32601)),
        (DiscoverAnswer::InvalidParams, Some(-32602)),
        (DiscoverAnswer::ServerError, Some(-32000)),
        (DiscoverAnswer::Silent, None),
    ] {
        let mut wire = Wire::start(FakeConfig::legacy().knob(Knob::DiscoverAnswer(answer)));
        wire.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": discover()}),
        )
        .await;
        match expected {
            Some(c) => assert_eq!(code(&wire.next().await), c),
            None => wire.assert_silent(300).await,
        }
        // The connection is still good for the legacy handshake.
        assert_eq!(
            wire.handshake("2025-11-25", json!({})).await["protocolVersion"],
            "2025-11-25"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn exit_on_a_request_before_initialize() {
    let mut wire = Wire::start(FakeConfig::legacy().knob(Knob::ExitOnRequestBeforeInitialize));
    wire.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": discover()}),
    )
    .await;
    let ending = wire.server.await.unwrap().unwrap();
    let Ending::Exited { code, stderr } = ending else {
        panic!("expected an exit, got {ending:?}")
    };
    assert_eq!(code, 1);
    assert!(stderr.contains("server/discover"));

    // initialize first: no exit.
    let mut wire = Wire::start(FakeConfig::legacy().knob(Knob::ExitOnRequestBeforeInitialize));
    wire.handshake("2025-11-25", json!({})).await;
    assert_eq!(
        wire.call(json!(1), "ping", json!({})).await["result"],
        json!({})
    );
}

#[tokio::test(start_paused = true)]
async fn never_answer_one_method() {
    let knob = Knob::NeverAnswer(Methods::Named("tools/call".into()));
    let mut wire = Wire::start(FakeConfig::legacy().knob(knob));
    wire.handshake("2025-11-25", json!({})).await;
    wire.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}}))
        .await;
    wire.assert_silent(300).await;
    assert_eq!(
        wire.call(json!(2), "ping", json!({})).await["result"],
        json!({})
    );
}

#[tokio::test(start_paused = true)]
async fn answer_late() {
    let knob = Knob::AnswerLate(Methods::Named("ping".into()), Duration::from_millis(300));
    let mut wire = Wire::start(FakeConfig::legacy().knob(knob));
    let start = Instant::now();
    wire.call(json!(1), "ping", json!({})).await;
    assert!(start.elapsed() >= Duration::from_millis(300));
}

#[tokio::test(start_paused = true)]
async fn answer_twice_and_with_a_wrong_id() {
    let mut wire = Wire::start(FakeConfig::legacy().knob(Knob::AnswerTwice(Methods::All)));
    wire.send(json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}))
        .await;
    assert_eq!(wire.next().await["id"], 5);
    assert_eq!(wire.next().await["id"], 5);

    let knob = Knob::AnswerWithWrongId(Methods::parse("ping"));
    let mut wire = Wire::start(FakeConfig::legacy().knob(knob));
    wire.send(json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}))
        .await;
    assert_eq!(wire.next().await["id"], 1_000_005);
    wire.send(json!({"jsonrpc": "2.0", "id": "s", "method": "ping"}))
        .await;
    assert_eq!(wire.next().await["id"], "s-wrong");
}

#[tokio::test(start_paused = true)]
async fn unsolicited_messages_right_after_initialized() {
    let mut wire = Wire::start(FakeConfig::legacy().knob(Knob::UnsolicitedAfterInitialized));
    wire.handshake("2025-11-25", json!({})).await;
    let mut methods = vec![
        wire.next().await["method"].as_str().unwrap().to_owned(),
        wire.next().await["method"].as_str().unwrap().to_owned(),
    ];
    methods.sort();
    assert_eq!(methods, ["notifications/tools/list_changed", "roots/list"]);
}

#[tokio::test(start_paused = true)]
async fn progress_after_cancel() {
    let mut wire = Wire::start(FakeConfig::modern().knob(Knob::ProgressAfterCancel));
    let mut params = modern_params(
        json!({"name": "slow", "arguments": {"steps": 6, "delayMs": 30}}),
        json!({}),
    );
    params["_meta"]["progressToken"] = json!(1);
    wire.send(json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params}))
        .await;
    assert_eq!(wire.next().await["params"]["progress"], 1);
    wire.notify("notifications/cancelled", json!({"requestId": 9}))
        .await;
    let mut last = 1;
    while let Some(m) = wire.next_within(300).await {
        assert_eq!(
            m["method"], "notifications/progress",
            "no answer after a cancel: {m}"
        );
        last = m["params"]["progress"].as_i64().unwrap();
    }
    assert_eq!(last, 6, "progress went on to the end");
}

#[tokio::test(start_paused = true)]
async fn never_read_input() {
    // Four times what the pipe holds: it all goes through only if the
    // server reads. Answers or not is another matter.
    let pings: Vec<u8> = (0..10_000)
        .flat_map(|i| {
            let mut line = json!({"jsonrpc": "2.0", "id": i, "method": "ping"})
                .to_string()
                .into_bytes();
            line.push(b'\n');
            line
        })
        .collect();
    assert!(pings.len() > 4 * (1 << 16), "{} bytes", pings.len());

    let mut wire = Wire::start(FakeConfig::legacy().knob(Knob::NeverReadInput));
    // On the paused clock the wait ends only once nothing else can run: the
    // server had every chance to read.
    assert!(
        !wire.send_raw_within(&pings, 300).await,
        "the server read its input"
    );
    wire.assert_silent(200).await;

    // A server that reads but never answers takes all of it.
    let mut wire = Wire::start(FakeConfig::legacy().knob(Knob::NeverAnswer(Methods::All)));
    assert!(
        wire.send_raw_within(&pings, 20_000).await,
        "a reading server takes the input"
    );
    wire.assert_silent(200).await;
}
