//! Tasks, both flavours, behind one API.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};

use common::{FnConnector, FnServer, Reply, discover_result, initialize_result};
use mcp_client::handlers::elicitation_fn;
use mcp_client::tasks::TaskStart;
use mcp_client::{Client, EraMode};
use mcp_protocol::types::{CallToolRequestParams, ContentBlock, ElicitResult, TaskStatus};
use serde_json::{Map, Value, json};

fn text(result: &mcp_protocol::types::CallToolResult) -> String {
    match &result.content[0] {
        ContentBlock::Text(t) => t.text.clone(),
        other => panic!("{other:?}"),
    }
}

/// The params of every request of this method the server received.
fn requests_of(server: &FnServer, method: &str) -> Vec<Value> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.method == method)
        .map(|r| r.params.unwrap_or_default())
        .collect()
}

fn task_ids(params: &[Value]) -> Vec<&str> {
    params
        .iter()
        .map(|p| p["taskId"].as_str().unwrap_or("(none)"))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn the_extension_polls_answers_input_and_returns_the_result() {
    let gets = AtomicUsize::new(0);
    let server = FnServer::new(move |_, r| {
        match r.method.as_str() {
            "server/discover" => Reply::Ok(discover_result(&["2026-07-28"])),
            // The server only answers; the test checks what it received.
            "tools/call" => Reply::Ok(
                json!({"resultType": "task", "taskId": "t1", "status": "working",
                    "ttlMs": 60000, "pollIntervalMs": 500}),
            ),
            "tasks/get" => match gets.fetch_add(1, Ordering::SeqCst) {
                0 => Reply::Ok(json!({"taskId": "t1", "status": "working"})),
                1 => Reply::Ok(json!({"taskId": "t1", "status": "input_required",
                    "inputRequests": {"who": {"method": "elicitation/create", "params": {
                        "message": "Name?", "requestedSchema": {"type": "object",
                        "properties": {"name": {"type": "string"}}}}}}})),
                _ => Reply::Ok(json!({"taskId": "t1", "status": "completed",
                    "result": {"content": [{"type": "text", "text": "done"}]}})),
            },
            "tasks/update" | "tasks/cancel" => Reply::Ok(json!({})),
            _ => Reply::Err(-32601, "Method not found", None),
        }
    });
    let client = Client::builder()
        .tasks(true)
        .elicitation_handler(elicitation_fn(|_| async {
            let mut c = Map::new();
            c.insert("name".into(), json!("octocat"));
            Ok(ElicitResult::accept(c))
        }))
        .connect(FnConnector(server.clone()))
        .await
        .unwrap();
    let TaskStart::Task(task) = client
        .call_tool_as_task(CallToolRequestParams::new("long"), None)
        .await
        .unwrap()
    else {
        panic!("expected a task")
    };
    assert_eq!(task.id(), "t1");
    let result = task.result().await.unwrap();
    assert_eq!(text(&result), "done");
    task.cancel().await.unwrap();

    let call = &requests_of(&server, "tools/call")[0];
    let declared = &call["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"];
    assert!(
        declared.get("io.modelcontextprotocol/tasks").is_some(),
        "the call declares the tasks extension: {call}"
    );
    // Working, input required, completed: three polls, no more.
    let polls = requests_of(&server, "tasks/get");
    let polled = task_ids(&polls);
    assert_eq!(polled, ["t1"; 3], "the task ids of the polls");
    let updates = requests_of(&server, "tasks/update");
    assert_eq!(updates.len(), 1, "{updates:?}");
    assert_eq!(updates[0]["taskId"], "t1", "{}", updates[0]);
    assert_eq!(
        updates[0]["inputResponses"]["who"]["content"]["name"], "octocat",
        "{}",
        updates[0]
    );
    let cancels = requests_of(&server, "tasks/cancel");
    assert_eq!(
        cancels.len(),
        1,
        "task.cancel() goes on the wire: {cancels:?}"
    );
    assert_eq!(cancels[0]["taskId"], "t1", "{}", cancels[0]);
}

#[tokio::test(start_paused = true)]
async fn experimental_tasks_of_2025_11_25() {
    let server = FnServer::new(|_, r| match r.method.as_str() {
        "initialize" => {
            let mut result = initialize_result(r);
            result["capabilities"]["tasks"] = json!({"requests": {"tools": {"call": {}}}});
            Reply::Ok(result)
        }
        "tools/call" => Reply::Ok(json!({"task": {"taskId": "x", "status": "working",
                    "createdAt": "2025-11-25T00:00:00Z", "lastUpdatedAt": "2025-11-25T00:00:00Z",
                    "ttl": 30000, "pollInterval": 100}})),
        "tasks/get" => Reply::Ok(json!({"taskId": "x", "status": "working",
                "createdAt": "2025-11-25T00:00:00Z", "lastUpdatedAt": "2025-11-25T00:00:00Z"})),
        "tasks/result" => Reply::Ok(json!({"content": [{"type": "text", "text": "old style"}]})),
        _ => Reply::Err(-32601, "Method not found", None),
    });
    let client = Client::builder()
        .era(EraMode::Legacy)
        .connect(FnConnector(server.clone()))
        .await
        .unwrap();
    let TaskStart::Task(task) = client
        .call_tool_as_task(
            CallToolRequestParams::new("long"),
            Some(std::time::Duration::from_secs(30)),
        )
        .await
        .unwrap()
    else {
        panic!("expected a task")
    };
    assert_eq!(task.status().await.unwrap().status, TaskStatus::Working);
    assert_eq!(text(&task.result().await.unwrap()), "old style");

    let call = &requests_of(&server, "tools/call")[0];
    assert_eq!(call["task"]["ttl"], 30000, "{call}");
    let polls = requests_of(&server, "tasks/get");
    let polled = task_ids(&polls);
    assert_eq!(polled, ["x"], "the task ids of the polls");
    let results = requests_of(&server, "tasks/result");
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["taskId"], "x", "{}", results[0]);
}

#[tokio::test]
async fn tasks_need_a_flavour() {
    let server = FnServer::new(|_, r| match r.method.as_str() {
        "server/discover" => Reply::Ok(discover_result(&["2026-07-28"])),
        _ => Reply::Err(-32601, "Method not found", None),
    });
    let client = Client::builder()
        .connect(FnConnector(server))
        .await
        .unwrap();
    let e = client
        .call_tool_as_task(CallToolRequestParams::new("t"), None)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("tasks are not available"), "{e}");
}
