//! The conformance suite's fixtures (`FakeConfig::conformance`, the
//! binary's `--conformance`), driven by raw JSON-RPC lines: what the
//! suite's server scenarios call, in either era, and that the default
//! content does not change.

mod fake_common;
#[cfg(feature = "http")]
mod http_common;

use fake_common::{Wire, code, modern_params, text};
use mcp_reference_server::FakeConfig;
use serde_json::{Value, json};

const LEGACY: &str = "2025-11-25";

fn all_caps() -> Value {
    json!({"sampling": {}, "elicitation": {}, "roots": {"listChanged": true}})
}

fn call(name: &str, extra: Value, caps: Value) -> Value {
    let mut params = json!({"name": name, "arguments": {}});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    modern_params(params, caps)
}

#[tokio::test(start_paused = true)]
async fn the_default_content_has_no_fixture_and_the_option_has_them_all() {
    let mut wire = Wire::start(FakeConfig::dual());
    let tools = wire
        .call(json!(1), "tools/list", modern_params(json!({}), json!({})))
        .await;
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"echo"));
    assert!(!names.iter().any(|n| n.starts_with("test_")), "{names:?}");

    let mut wire = Wire::start(FakeConfig::dual().conformance());
    let tools = wire
        .call(json!(1), "tools/list", modern_params(json!({}), json!({})))
        .await;
    let tools = tools["result"]["tools"].as_array().unwrap().clone();
    for tool in &tools {
        let name = tool["name"].as_str().unwrap();
        assert!(
            name.starts_with("test_") || name == "json_schema_2020_12_tool",
            "{name}"
        );
        assert!(tool["description"].is_string() && tool["inputSchema"].is_object());
    }
    assert_eq!(tools.len(), 27);
    let resources = wire
        .call(
            json!(2),
            "resources/list",
            modern_params(json!({}), json!({})),
        )
        .await;
    for resource in resources["result"]["resources"].as_array().unwrap() {
        assert!(resource["description"].is_string(), "{resource}");
    }
}

#[tokio::test(start_paused = true)]
async fn content_fixtures_read_as_the_suite_describes_them() {
    let mut wire = Wire::start(FakeConfig::modern().conformance());
    let none = json!({});
    let simple = wire
        .call(
            json!(1),
            "tools/call",
            call("test_simple_text", json!({}), none.clone()),
        )
        .await;
    assert_eq!(text(&simple), "This is a simple text response for testing.");
    let image = wire
        .call(
            json!(2),
            "tools/call",
            call("test_image_content", json!({}), none.clone()),
        )
        .await;
    assert_eq!(image["result"]["content"][0]["mimeType"], "image/png");
    assert!(
        image["result"]["content"][0]["data"]
            .as_str()
            .unwrap()
            .starts_with("iVBORw0KGgo")
    );
    let audio = wire
        .call(
            json!(3),
            "tools/call",
            call("test_audio_content", json!({}), none.clone()),
        )
        .await;
    assert!(
        audio["result"]["content"][0]["data"]
            .as_str()
            .unwrap()
            .starts_with("UklGR"),
        "a RIFF header"
    );

    let read = |id: i64, uri: &str| (json!(id), modern_params(json!({"uri": uri}), json!({})));
    let (id, params) = read(4, "test://template/123/data");
    let template = wire.call(id, "resources/read", params).await;
    let entry = &template["result"]["contents"][0];
    assert_eq!(entry["mimeType"], "application/json");
    let data: Value = serde_json::from_str(entry["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        data,
        json!({"id": "123", "templateTest": true, "data": "Data for ID: 123"})
    );
    let (id, params) = read(5, "test://nowhere");
    let missing = wire.call(id, "resources/read", params).await;
    assert_eq!(code(&missing), -32602);
    assert_eq!(missing["error"]["data"]["uri"], "test://nowhere");

    let prompt = wire
        .call(
            json!(6),
            "prompts/get",
            modern_params(
                json!({"name": "test_prompt_with_embedded_resource",
                       "arguments": {"resourceUri": "test://example-resource"}}),
                json!({}),
            ),
        )
        .await;
    let messages = prompt["result"]["messages"].as_array().unwrap();
    assert_eq!(messages[0]["content"]["type"], "resource");
    assert_eq!(
        messages[0]["content"]["resource"]["uri"],
        "test://example-resource"
    );
    assert_eq!(messages[1]["content"]["type"], "text");
}

#[tokio::test(start_paused = true)]
async fn input_responses_are_read_as_sep_2322_has_a_server_read_them() {
    let mut wire = Wire::start(FakeConfig::modern().conformance());
    let name = "test_input_required_result_elicitation";
    let alice = json!({"action": "accept", "content": {"name": "Alice"}});
    // Answers without a requestState, extra keys among them: taken.
    let extra =
        json!({"inputResponses": {"user_name": alice, "unknown_extra_key": {"action": "accept"}}});
    let done = wire
        .call(json!(1), "tools/call", call(name, extra, all_caps()))
        .await;
    assert_eq!(done["result"]["resultType"], "complete");
    assert!(text(&done).contains("Alice"));
    // Only a key it did not ask for: asked again.
    let wrong = json!({"inputResponses": {"wrong_key": alice}});
    let again = wire
        .call(json!(2), "tools/call", call(name, wrong, all_caps()))
        .await;
    assert_eq!(again["result"]["resultType"], "input_required");
    assert!(again["result"]["inputRequests"]["user_name"].is_object());
    // An answer that is no result: -32602.
    let number = json!({"inputResponses": {"user_name": 12345}});
    let bad = wire
        .call(json!(3), "tools/call", call(name, number, all_caps()))
        .await;
    assert_eq!(code(&bad), -32602);
    // A changed state: -32602.
    let state = again["result"]["requestState"].as_str().unwrap().to_owned();
    let tampered = json!({"requestState": format!("{state}-TAMPERED"), "inputResponses": {"user_name": alice}});
    let refused = wire
        .call(json!(4), "tools/call", call(name, tampered, all_caps()))
        .await;
    assert_eq!(code(&refused), -32602);
}

#[tokio::test(start_paused = true)]
async fn input_is_asked_only_of_a_capable_client_unless_required() {
    let mut wire = Wire::start(FakeConfig::modern().conformance());
    let sampling_only = json!({"sampling": {}});
    let asked = wire
        .call(
            json!(1),
            "tools/call",
            call(
                "test_input_required_result_capabilities",
                json!({}),
                sampling_only.clone(),
            ),
        )
        .await;
    let requests = asked["result"]["inputRequests"].as_object().unwrap();
    let methods: Vec<&str> = requests
        .values()
        .map(|r| r["method"].as_str().unwrap())
        .collect();
    assert_eq!(methods, ["sampling/createMessage"]);

    let refused = wire
        .call(
            json!(2),
            "tools/call",
            call("test_missing_capability", json!({}), json!({})),
        )
        .await;
    assert_eq!(code(&refused), -32021);
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
}

#[tokio::test(start_paused = true)]
async fn a_prompt_can_ask_for_input_first() {
    let mut wire = Wire::start(FakeConfig::modern().conformance());
    let get = |extra: Value| {
        let mut params = json!({"name": "test_input_required_result_prompt"});
        for (k, v) in extra.as_object().unwrap() {
            params[k] = v.clone();
        }
        modern_params(params, all_caps())
    };
    let first = wire.call(json!(1), "prompts/get", get(json!({}))).await;
    assert_eq!(first["result"]["resultType"], "input_required");
    let answer = json!({"action": "accept", "content": {"context": "test context"}});
    let retry = json!({"inputResponses": {"user_context": answer},
                       "requestState": first["result"]["requestState"]});
    let done = wire.call(json!(2), "prompts/get", get(retry)).await;
    assert_eq!(done["result"]["resultType"], "complete");
    let messages = done["result"]["messages"].as_array().unwrap();
    assert!(
        messages.last().unwrap()["content"]["text"]
            .as_str()
            .unwrap()
            .contains("test context")
    );
}

#[tokio::test(start_paused = true)]
async fn a_modern_initialize_is_a_method_not_found_and_a_legacy_one_is_served() {
    let mut wire = Wire::start(FakeConfig::dual().conformance());
    let modern = wire
        .call(json!(1), "initialize", modern_params(json!({}), json!({})))
        .await;
    assert_eq!(code(&modern), -32601);
    let mut old = json!({});
    old["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "v999.0.0",
                          "io.modelcontextprotocol/clientCapabilities": {}});
    let unknown = wire.call(json!(2), "server/discover", old).await;
    assert_eq!(code(&unknown), -32022);
    assert_eq!(unknown["error"]["data"]["supported"], json!(["2026-07-28"]));
    let result = wire.handshake(LEGACY, json!({})).await;
    assert_eq!(result["protocolVersion"], LEGACY);
}

#[tokio::test(start_paused = true)]
async fn legacy_progress_logging_and_elicitation_go_with_the_request() {
    let mut wire = Wire::start(FakeConfig::legacy().conformance());
    wire.handshake(LEGACY, all_caps()).await;
    let progress = json!({"name": "test_tool_with_progress", "arguments": {},
                          "_meta": {"progressToken": "p-1"}});
    wire.call(json!(1), "tools/call", progress).await;
    let values: Vec<i64> = wire
        .take_seen("notifications/progress")
        .iter()
        .map(|n| n["params"]["progress"].as_i64().unwrap())
        .collect();
    assert_eq!(values, [0, 50, 100]);

    wire.call(json!(2), "logging/setLevel", json!({"level": "debug"}))
        .await;
    wire.call(
        json!(3),
        "tools/call",
        json!({"name": "test_tool_with_logging", "arguments": {}}),
    )
    .await;
    let logged: Vec<Value> = wire
        .take_seen("notifications/message")
        .into_iter()
        .map(|n| n["params"]["data"].clone())
        .collect();
    assert!(
        logged.contains(&json!("Tool processing data")),
        "{logged:?}"
    );

    let params = json!({"name": "test_elicitation", "arguments": {"message": "Who?"}});
    wire.send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": params}))
        .await;
    let ask = loop {
        let message = wire.next().await;
        if message["method"] != "notifications/message" {
            break message;
        }
    };
    assert_eq!(ask["method"], "elicitation/create");
    assert_eq!(ask["params"]["message"], "Who?");
    let content = json!({"username": "testuser", "email": "test@example.com"});
    wire.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": content}}))
        .await;
    let done = wire.answer_to(&json!(4)).await;
    assert!(text(&done).starts_with("User response:"));
    assert!(text(&done).contains("testuser"));
}

#[cfg(feature = "http")]
#[tokio::test]
async fn loopback_only_refuses_another_origin() {
    use mcp_reference_server::http::{HttpFake, HttpOptions};

    let options = HttpOptions::new().loopback_only();
    let server = HttpFake::start_with(FakeConfig::dual().conformance(), options)
        .await
        .unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                      "params": modern_params(json!({}), json!({}))});
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "server/discover"),
    ];
    let mut evil = headers.to_vec();
    evil.push(("origin", "http://evil.example.com"));
    let refused = http_common::post(server.addr(), &evil, &body).await;
    assert_eq!(refused.status, 403);
    let mut local = headers.to_vec();
    local.push(("origin", "http://localhost:1234"));
    let served = http_common::post(server.addr(), &local, &body).await;
    assert_eq!(served.status, 200);
}
