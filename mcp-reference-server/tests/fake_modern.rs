//! The fake as a modern (2026-07-28) server, driven by raw JSON-RPC lines.

mod fake_common;

use fake_common::{MODERN, Wire, code, meta, modern_params, text};
use mcp_reference_server::{CacheScope, FakeConfig};
use serde_json::{Value, json};

const SUB: &str = "io.modelcontextprotocol/subscriptionId";

#[tokio::test(start_paused = true)]
async fn discover_has_every_member_the_spec_lists() {
    let mut wire = Wire::start(FakeConfig::modern());
    let answer = wire
        .call(
            json!("discover-1"),
            "server/discover",
            json!({"_meta": meta(json!({}))}),
        )
        .await;
    let result = &answer["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["supportedVersions"], json!([MODERN]));
    assert!(result["capabilities"]["tools"].is_object());
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "mcp-testkit-fake"
    );
    assert!(result["instructions"].is_string());
    assert_eq!(result["ttlMs"], 60_000);
    assert_eq!(result["cacheScope"], "public");
}

#[tokio::test(start_paused = true)]
async fn meta_is_checked_on_every_request() {
    let mut wire = Wire::start(FakeConfig::modern());
    let none = wire.call(json!(1), "tools/list", json!({})).await;
    assert_eq!(code(&none), -32602);
    let no_caps = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}});
    assert_eq!(
        code(&wire.call(json!(2), "tools/list", no_caps).await),
        -32602
    );
    let no_version = json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}});
    assert_eq!(
        code(&wire.call(json!(3), "tools/list", no_version).await),
        -32602
    );

    let mut old = meta(json!({}));
    old["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let answer = wire
        .call(json!(4), "server/discover", json!({"_meta": old}))
        .await;
    assert_eq!(
        answer["error"],
        json!({"code": -32022, "message": "Unsupported protocol version",
               "data": {"supported": [MODERN], "requested": "1900-01-01"}})
    );
    // A request that works on its own after the failed ones: stateless.
    let ok = wire
        .call(json!(5), "tools/list", json!({"_meta": meta(json!({}))}))
        .await;
    assert_eq!(ok["result"]["resultType"], "complete");
}

#[tokio::test(start_paused = true)]
async fn dual_lists_every_supported_version_in_32022() {
    let mut wire = Wire::start(FakeConfig::dual().versions(["2026-07-28", "2025-11-25"]));
    let mut old = meta(json!({}));
    old["io.modelcontextprotocol/protocolVersion"] = json!("2027-01-01");
    let answer = wire
        .call(json!(1), "tools/list", json!({"_meta": old}))
        .await;
    assert_eq!(
        answer["error"]["data"],
        json!({"supported": [MODERN, "2025-11-25"], "requested": "2027-01-01"})
    );
}

#[tokio::test(start_paused = true)]
async fn legacy_only_methods_are_not_found_and_initialize_gets_32022() {
    let mut wire = Wire::start(FakeConfig::modern());
    let m = || json!({"_meta": meta(json!({}))});
    assert_eq!(code(&wire.call(json!(1), "ping", m()).await), -32601);
    assert_eq!(
        code(&wire.call(json!(2), "logging/setLevel", m()).await),
        -32601
    );
    assert_eq!(
        code(&wire.call(json!(3), "resources/subscribe", m()).await),
        -32601
    );
    let init = wire
        .call(
            json!(4),
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
        )
        .await;
    assert_eq!(init["error"]["code"], -32022);
    assert_eq!(
        init["error"]["data"],
        json!({"supported": [MODERN], "requested": "2025-11-25"})
    );
}

#[tokio::test(start_paused = true)]
async fn lists_carry_result_type_cache_hints_and_cursors() {
    let config = FakeConfig::modern()
        .page_size(3)
        .cache_hint(5_000, CacheScope::Private);
    let mut wire = Wire::start(config);
    let mut names = Vec::new();
    let mut cursor = Value::Null;
    for id in 1.. {
        let mut params = json!({"_meta": meta(json!({}))});
        if !cursor.is_null() {
            params["cursor"] = cursor.clone();
        }
        let page = wire.call(json!(id), "tools/list", params).await;
        let result = &page["result"];
        assert_eq!(result["resultType"], "complete");
        assert_eq!(result["ttlMs"], 5_000);
        assert_eq!(result["cacheScope"], "private");
        names.extend(
            result["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].clone()),
        );
        cursor = result["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(names.len(), 11);
    let read = wire
        .call(
            json!(50),
            "resources/read",
            modern_params(json!({"uri": "fake://json/config"}), json!({})),
        )
        .await;
    assert_eq!(read["result"]["contents"][0]["text"], "{\"answer\":42}");
    assert_eq!(read["result"]["ttlMs"], 5_000);
    let missing = wire
        .call(
            json!(51),
            "resources/read",
            modern_params(json!({"uri": "fake://none"}), json!({})),
        )
        .await;
    assert_eq!(
        code(&missing),
        -32602,
        "resource not found is -32602 in 2026"
    );
    let call = wire
        .call(
            json!(52),
            "tools/call",
            modern_params(
                json!({"name": "echo", "arguments": {"text": "x"}}),
                json!({}),
            ),
        )
        .await;
    assert_eq!(call["result"]["resultType"], "complete");
    assert!(
        call["result"].get("ttlMs").is_none(),
        "tool results are not cacheable"
    );
    let complete = wire
        .call(json!(53), "completion/complete", modern_params(json!({"ref": {"type": "ref/prompt", "name": "greeting"}, "argument": {"name": "name", "value": ""}}), json!({})))
        .await;
    assert_eq!(complete["result"]["resultType"], "complete");
    assert_eq!(
        complete["result"]["completion"]["values"],
        json!(["Alice", "Bob", "Carol"])
    );
}

#[tokio::test(start_paused = true)]
async fn a_tool_needing_an_undeclared_capability_gets_32021() {
    let mut wire = Wire::start(FakeConfig::modern());
    let answer = wire
        .call(
            json!(1),
            "tools/call",
            modern_params(json!({"name": "mrtr_multi"}), json!({"elicitation": {}})),
        )
        .await;
    assert_eq!(answer["error"]["code"], -32021);
    assert_eq!(
        answer["error"]["data"],
        json!({"requiredCapabilities": {"sampling": {}}})
    );
    let answer = wire
        .call(
            json!(2),
            "tools/call",
            modern_params(json!({"name": "elicit"}), json!({})),
        )
        .await;
    assert_eq!(
        answer["error"]["data"],
        json!({"requiredCapabilities": {"elicitation": {}}})
    );
}

#[tokio::test(start_paused = true)]
async fn mrtr_multi_runs_three_rounds_and_checks_the_echo() {
    let caps = json!({"elicitation": {}, "sampling": {}});
    let mut wire = Wire::start(FakeConfig::modern());
    let call = |extra: Value| {
        let mut params =
            modern_params(json!({"name": "mrtr_multi", "arguments": {}}), caps.clone());
        for (k, v) in extra.as_object().unwrap() {
            params[k] = v.clone();
        }
        params
    };

    let first = wire.call(json!(1), "tools/call", call(json!({}))).await["result"].clone();
    assert_eq!(first["resultType"], "input_required");
    assert_eq!(
        first["inputRequests"]["login"]["method"],
        "elicitation/create"
    );
    assert!(
        first.get("ttlMs").is_none(),
        "input_required results carry no cache hints"
    );
    let state1 = first["requestState"].clone();

    // A response missing: asked again. An extra key, a changed state, a
    // state for another tool: -32602.
    let again = wire
        .call(
            json!(2),
            "tools/call",
            call(json!({"requestState": state1, "inputResponses": {}})),
        )
        .await;
    assert_eq!(again["result"]["inputRequests"], first["inputRequests"]);
    let extra = json!({"requestState": state1, "inputResponses": {"login": {"action": "decline"}, "other": {}}});
    assert_eq!(
        code(&wire.call(json!(3), "tools/call", call(extra)).await),
        -32602
    );
    let mut changed = state1.as_str().unwrap().to_owned();
    changed.push(' ');
    let bad = json!({"requestState": changed, "inputResponses": {"login": {"action": "decline"}}});
    assert_eq!(
        code(&wire.call(json!(4), "tools/call", call(bad)).await),
        -32602
    );
    let stateless = json!({"inputResponses": {"login": {"action": "decline"}}});
    assert_eq!(
        code(&wire.call(json!(5), "tools/call", call(stateless)).await),
        -32602
    );
    let other_tool = modern_params(
        json!({"name": "elicit", "requestState": state1, "inputResponses": {"answer": {}}}),
        caps.clone(),
    );
    assert_eq!(
        code(&wire.call(json!(6), "tools/call", other_tool).await),
        -32602
    );

    let login = json!({"action": "accept", "content": {"name": "octocat"}});
    let second = wire
        .call(
            json!(7),
            "tools/call",
            call(json!({"requestState": state1, "inputResponses": {"login": login}})),
        )
        .await["result"]
        .clone();
    assert_eq!(second["resultType"], "input_required");
    assert_eq!(
        second["inputRequests"]["capital"]["method"],
        "sampling/createMessage"
    );
    let capital = json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m", "stopReason": "endTurn"});
    let third = wire
        .call(json!(8), "tools/call", call(json!({"requestState": second["requestState"], "inputResponses": {"capital": capital}})))
        .await["result"]
        .clone();
    assert_eq!(third["resultType"], "input_required");
    assert!(
        third.get("inputRequests").is_none(),
        "the load-shedding round has only requestState"
    );
    assert!(third["requestState"].is_string());
    let done = wire
        .call(
            json!(9),
            "tools/call",
            call(json!({"requestState": third["requestState"]})),
        )
        .await;
    assert_eq!(done["result"]["resultType"], "complete");
    let answers: Value = serde_json::from_str(text(&done)).unwrap();
    assert_eq!(answers, json!({"login": login, "capital": capital}));
}

#[tokio::test(start_paused = true)]
async fn listen_acknowledges_then_tags_notifications_and_ends_on_cancel() {
    let mut wire = Wire::start(FakeConfig::modern());
    let filter = json!({"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": ["fake://counter"]});
    wire.send(
        json!({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
        "params": modern_params(json!({"notifications": filter}), json!({}))}),
    )
    .await;
    let ack = wire.next().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"][SUB], "listen-1");
    assert_eq!(ack["params"]["notifications"], filter);

    let touch = modern_params(json!({"name": "touch_resource"}), json!({}));
    wire.call(json!(1), "tools/call", touch).await;
    let updated = wire.take_seen("notifications/resources/updated");
    assert_eq!(
        updated[0]["params"],
        json!({"uri": "fake://counter", "_meta": {SUB: "listen-1"}})
    );
    wire.call(
        json!(2),
        "tools/call",
        modern_params(json!({"name": "add_tool"}), json!({})),
    )
    .await;
    let changed = wire.take_seen("notifications/tools/list_changed");
    assert_eq!(changed[0]["params"]["_meta"][SUB], "listen-1");
    assert!(wire.seen.is_empty(), "nothing else: {:?}", wire.seen);

    wire.notify("notifications/cancelled", json!({"requestId": "listen-1"}))
        .await;
    let end = wire.next().await;
    assert_eq!(end["id"], "listen-1");
    assert_eq!(
        end["result"],
        json!({"resultType": "complete", "_meta": {SUB: "listen-1"}})
    );
    // No stream left: a change reaches nobody.
    wire.call(
        json!(3),
        "tools/call",
        modern_params(json!({"name": "add_tool"}), json!({})),
    )
    .await;
    assert!(wire.seen.is_empty());
}

#[tokio::test(start_paused = true)]
async fn log_level_in_meta_opts_in_to_log_messages() {
    let mut wire = Wire::start(FakeConfig::modern());
    let log = json!({"name": "log", "arguments": {"level": "warning", "message": "careful"}});
    wire.call(
        json!(1),
        "tools/call",
        modern_params(log.clone(), json!({})),
    )
    .await;
    assert!(wire.take_seen("notifications/message").is_empty());
    let mut params = modern_params(log, json!({}));
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("warning");
    wire.call(json!(2), "tools/call", params).await;
    let messages = wire.take_seen("notifications/message");
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0]["params"]["data"], "careful");
}

#[tokio::test(start_paused = true)]
async fn progress_and_cancel() {
    let mut wire = Wire::start(FakeConfig::modern());
    let mut params = modern_params(
        json!({"name": "slow", "arguments": {"steps": 100, "delayMs": 10}}),
        json!({}),
    );
    params["_meta"]["progressToken"] = json!("tok");
    wire.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}))
        .await;
    let progress = wire.next().await;
    assert_eq!(progress["method"], "notifications/progress");
    assert_eq!(progress["params"]["progressToken"], "tok");
    wire.notify("notifications/cancelled", json!({"requestId": 1}))
        .await;
    while let Some(m) = wire.next_within(150).await {
        assert_eq!(m["method"], "notifications/progress");
    }
    wire.assert_silent(200).await;
}
