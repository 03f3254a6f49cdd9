//! The fake as a legacy server, driven by raw JSON-RPC lines.

mod fake_common;

use fake_common::{Wire, code, text};
use mcp_reference_server::FakeConfig;
use serde_json::{Value, json};

#[tokio::test(start_paused = true)]
async fn handshake_echoes_or_counter_offers_and_gates_requests() {
    let mut wire = Wire::start(FakeConfig::legacy());
    // Before initialize: refused, except ping.
    let early = wire.call(json!(1), "tools/list", json!({})).await;
    assert_eq!(code(&early), -32600);
    let ping = wire.call(json!(2), "ping", json!({})).await;
    assert_eq!(ping["result"], json!({}));

    let init = wire
        .call(json!(3), "initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}))
        .await;
    let result = &init["result"];
    assert_eq!(result["protocolVersion"], "2025-06-18");
    assert_eq!(result["serverInfo"]["name"], "mcp-testkit-fake");
    assert!(
        result["capabilities"]["tools"]["listChanged"]
            .as_bool()
            .unwrap()
    );
    assert!(result["instructions"].is_string());
    assert!(
        result.get("resultType").is_none(),
        "legacy results carry no resultType"
    );

    // After initialize, before initialized: still refused.
    let between = wire.call(json!(4), "tools/list", json!({})).await;
    assert_eq!(code(&between), -32600);
    wire.notify("notifications/initialized", json!({})).await;
    let tools = wire.call(json!(5), "tools/list", json!({})).await;
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"echo") && names.contains(&"mrtr_multi"));
    assert!(tools["result"].get("ttlMs").is_none());
    assert!(tools["result"].get("nextCursor").is_none());

    let again = wire
        .call(
            json!(6),
            "initialize",
            json!({"protocolVersion": "2025-06-18"}),
        )
        .await;
    assert_eq!(code(&again), -32600);
}

#[tokio::test(start_paused = true)]
async fn an_unknown_version_gets_the_newest_offered() {
    let mut wire = Wire::start(FakeConfig::legacy().versions(["2025-03-26", "2025-06-18"]));
    let result = wire.handshake("1900-01-01", json!({})).await;
    assert_eq!(result["protocolVersion"], "2025-06-18");
    let mut wire = Wire::start(FakeConfig::legacy());
    let missing = wire.call(json!(1), "initialize", json!({})).await;
    assert_eq!(code(&missing), -32602);
}

#[tokio::test(start_paused = true)]
async fn discover_and_unknown_methods_get_method_not_found() {
    let mut wire = Wire::start(FakeConfig::legacy());
    let discover = wire.call(json!("d"), "server/discover", json!({})).await;
    assert_eq!(code(&discover), -32601);
    wire.handshake("2025-11-25", json!({})).await;
    assert_eq!(
        code(&wire.call(json!(1), "no/such", json!({})).await),
        -32601
    );
    assert_eq!(
        code(&wire.call(json!(2), "subscriptions/listen", json!({})).await),
        -32601
    );
}

#[tokio::test(start_paused = true)]
async fn tools_echo_structured_fail_and_bad_calls() {
    let mut wire = Wire::start(FakeConfig::legacy());
    wire.handshake("2025-11-25", json!({})).await;
    let echo = wire
        .call(
            json!(1),
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        )
        .await;
    assert_eq!(text(&echo), "hi");
    let s = wire
        .call(
            json!(2),
            "tools/call",
            json!({"name": "structured", "arguments": {"a": 2, "b": 3}}),
        )
        .await;
    assert_eq!(
        s["result"]["structuredContent"],
        json!({"sum": 5.0, "product": 6.0})
    );
    let fail = wire
        .call(json!(3), "tools/call", json!({"name": "fail"}))
        .await;
    assert_eq!(fail["result"]["isError"], true);
    let unknown = wire
        .call(json!(4), "tools/call", json!({"name": "nope"}))
        .await;
    assert_eq!(code(&unknown), -32602);
    let bad = wire
        .call(
            json!(5),
            "tools/call",
            json!({"name": "echo", "arguments": {}}),
        )
        .await;
    assert_eq!(code(&bad), -32602);
}

#[tokio::test(start_paused = true)]
async fn elicit_and_sample_ask_the_client_with_requests() {
    let mut wire = Wire::start(FakeConfig::legacy());
    wire.handshake("2025-11-25", json!({"elicitation": {}, "sampling": {}}))
        .await;
    wire.send(json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "mrtr_multi"}}))
        .await;
    let ask = wire.next().await;
    assert_eq!(ask["method"], "elicitation/create");
    assert!(ask["params"]["requestedSchema"].is_object());
    let login = json!({"action": "accept", "content": {"name": "octocat"}});
    wire.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": login}))
        .await;
    let ask = wire.next().await;
    assert_eq!(ask["method"], "sampling/createMessage");
    let capital =
        json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"});
    wire.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": capital}))
        .await;
    let done = wire.answer_to(&json!(10)).await;
    let answers: Value = serde_json::from_str(text(&done)).unwrap();
    assert_eq!(answers, json!({"login": login, "capital": capital}));

    // A client that answers with an error gets a tool error.
    wire.send(
        json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "sample"}}),
    )
    .await;
    let ask = wire.next().await;
    wire.send(json!({"jsonrpc": "2.0", "id": ask["id"], "error": {"code": -1, "message": "no"}}))
        .await;
    assert_eq!(wire.answer_to(&json!(11)).await["result"]["isError"], true);
}

#[tokio::test(start_paused = true)]
async fn a_tool_needing_an_undeclared_capability_is_a_tool_error() {
    let mut wire = Wire::start(FakeConfig::legacy());
    wire.handshake("2025-11-25", json!({})).await;
    let answer = wire
        .call(json!(1), "tools/call", json!({"name": "elicit"}))
        .await;
    assert_eq!(answer["result"]["isError"], true);
    assert!(text(&answer).contains("elicitation"));
}

#[tokio::test(start_paused = true)]
async fn lists_page_by_cursor() {
    let mut wire = Wire::start(FakeConfig::legacy().page_size(2));
    wire.handshake("2025-11-25", json!({})).await;
    let mut cursor = Value::Null;
    let mut uris = Vec::new();
    for id in 1.. {
        let params = if cursor.is_null() {
            json!({})
        } else {
            json!({"cursor": cursor})
        };
        let page = wire.call(json!(id), "resources/list", params).await;
        let items = page["result"]["resources"].as_array().unwrap();
        assert!(items.len() <= 2);
        uris.extend(items.iter().map(|r| r["uri"].as_str().unwrap().to_owned()));
        cursor = page["result"]["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(
        uris,
        [
            "fake://text/hello",
            "fake://blob/bytes",
            "fake://json/config",
            "fake://counter"
        ]
    );
    let bad = wire
        .call(json!(99), "tools/list", json!({"cursor": "garbage"}))
        .await;
    assert_eq!(code(&bad), -32602);
}

#[tokio::test(start_paused = true)]
async fn resources_read_subscribe_and_change() {
    let mut wire = Wire::start(FakeConfig::legacy());
    wire.handshake("2025-11-25", json!({})).await;
    let hello = wire
        .call(
            json!(1),
            "resources/read",
            json!({"uri": "fake://text/hello"}),
        )
        .await;
    assert_eq!(
        hello["result"]["contents"][0]["text"],
        "Hello from the fake MCP server.\n"
    );
    let blob = wire
        .call(
            json!(2),
            "resources/read",
            json!({"uri": "fake://blob/bytes"}),
        )
        .await;
    assert_eq!(blob["result"]["contents"][0]["blob"], "AAEC/v8=");
    let item = wire
        .call(json!(3), "resources/read", json!({"uri": "fake://items/7"}))
        .await;
    assert_eq!(item["result"]["contents"][0]["text"], "item 7");
    let missing = wire
        .call(json!(4), "resources/read", json!({"uri": "fake://none"}))
        .await;
    assert_eq!(code(&missing), -32002);
    let templates = wire
        .call(json!(5), "resources/templates/list", json!({}))
        .await;
    assert_eq!(
        templates["result"]["resourceTemplates"][0]["uriTemplate"],
        "fake://items/{id}"
    );

    wire.call(
        json!(6),
        "resources/subscribe",
        json!({"uri": "fake://counter"}),
    )
    .await;
    wire.call(json!(7), "tools/call", json!({"name": "touch_resource"}))
        .await;
    let updated = wire.take_seen("notifications/resources/updated");
    assert_eq!(updated[0]["params"], json!({"uri": "fake://counter"}));
    let counter = wire
        .call(json!(8), "resources/read", json!({"uri": "fake://counter"}))
        .await;
    assert_eq!(counter["result"]["contents"][0]["text"], "1");

    wire.call(
        json!(9),
        "tools/call",
        json!({"name": "add_tool", "arguments": {"name": "extra"}}),
    )
    .await;
    assert_eq!(wire.take_seen("notifications/tools/list_changed").len(), 1);
    let tools = wire.call(json!(10), "tools/list", json!({})).await;
    assert!(
        tools["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "extra")
    );
}

#[tokio::test(start_paused = true)]
async fn logging_follows_set_level() {
    let mut wire = Wire::start(FakeConfig::legacy());
    wire.handshake("2025-11-25", json!({})).await;
    let log = |level: &str| json!({"name": "log", "arguments": {"level": level, "message": "m"}});
    wire.call(json!(1), "tools/call", log("error")).await;
    assert!(
        wire.take_seen("notifications/message").is_empty(),
        "no level set, nothing sent"
    );
    let bad = wire
        .call(json!(2), "logging/setLevel", json!({"level": "loud"}))
        .await;
    assert_eq!(code(&bad), -32602);
    wire.call(json!(3), "logging/setLevel", json!({"level": "warning"}))
        .await;
    wire.call(json!(4), "tools/call", log("info")).await;
    assert!(wire.take_seen("notifications/message").is_empty());
    wire.call(json!(5), "tools/call", log("error")).await;
    let messages = wire.take_seen("notifications/message");
    assert_eq!(messages[0]["params"]["level"], "error");
    assert_eq!(messages[0]["params"]["data"], "m");
}

#[tokio::test(start_paused = true)]
async fn progress_then_cancel_stops_the_tool() {
    let mut wire = Wire::start(FakeConfig::legacy());
    wire.handshake("2025-11-25", json!({})).await;
    let params = json!({"name": "slow", "arguments": {"steps": 2, "delayMs": 10}, "_meta": {"progressToken": "p"}});
    let done = wire.call(json!(1), "tools/call", params).await;
    assert_eq!(text(&done), "done after 2 steps");
    let progress = wire.take_seen("notifications/progress");
    assert_eq!(progress.len(), 2);
    assert_eq!(progress[1]["params"]["progressToken"], "p");
    assert_eq!(progress[1]["params"]["progress"], 2);
    assert_eq!(progress[1]["params"]["total"], 2);

    let params = json!({"name": "slow", "arguments": {"steps": 50, "delayMs": 20}, "_meta": {"progressToken": 7}});
    wire.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}))
        .await;
    assert_eq!(wire.next().await["method"], "notifications/progress");
    wire.notify(
        "notifications/cancelled",
        json!({"requestId": 2, "reason": "test"}),
    )
    .await;
    // At most one progress already on its way; then nothing, and no answer.
    while let Some(m) = wire.next_within(200).await {
        assert_eq!(m["method"], "notifications/progress", "got {m}");
    }
    wire.assert_silent(300).await;
}

#[tokio::test(start_paused = true)]
async fn prompts_and_completion() {
    let mut wire = Wire::start(FakeConfig::legacy());
    wire.handshake("2025-11-25", json!({})).await;
    let prompts = wire.call(json!(1), "prompts/list", json!({})).await;
    assert_eq!(prompts["result"]["prompts"][0]["name"], "greeting");
    let got = wire
        .call(
            json!(2),
            "prompts/get",
            json!({"name": "greeting", "arguments": {"name": "Ada"}}),
        )
        .await;
    assert_eq!(
        got["result"]["messages"][0]["content"]["text"],
        "Please greet Ada warmly."
    );
    let missing = wire
        .call(json!(3), "prompts/get", json!({"name": "greeting"}))
        .await;
    assert_eq!(code(&missing), -32602);
    let complete = wire
        .call(json!(4), "completion/complete", json!({"ref": {"type": "ref/prompt", "name": "greeting"}, "argument": {"name": "name", "value": "B"}}))
        .await;
    assert_eq!(complete["result"]["completion"]["values"], json!(["Bob"]));
    let complete = wire
        .call(json!(5), "completion/complete", json!({"ref": {"type": "ref/resource", "uri": "fake://items/{id}"}, "argument": {"name": "id", "value": "4"}}))
        .await;
    assert_eq!(complete["result"]["completion"]["values"], json!(["42"]));
}

#[tokio::test(start_paused = true)]
async fn malformed_lines_get_json_rpc_errors_and_eof_ends_serving() {
    let mut wire = Wire::start(FakeConfig::legacy());
    wire.send_raw(b"this is not json\n").await;
    let parse = wire.next().await;
    assert_eq!(parse["error"]["code"], -32700);
    assert_eq!(parse["id"], Value::Null);
    wire.send_raw(b"{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"ping\"}\n")
        .await;
    assert_eq!(wire.next().await["error"]["code"], -32600);
    wire.close().await;
    let ending = wire.server.await.unwrap().unwrap();
    assert_eq!(ending, mcp_reference_server::Ending::InputClosed);
}
