//! The scripted transport: scripts that pass, mismatches reported side by
//! side, unused steps failing.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use mcp_protocol::{ErrorObject, Message, Notification, Request};
use mcp_testkit::scripted::{Script, ScriptedTransport};
use mcp_transport::{
    ConnectionHandlers, Connector, ExitInfo, GoneInfo, Listener, RequestOptions, Transport,
    TransportError,
};
use serde_json::{Value, json};

fn req(id: i64, method: &str, params: Option<Value>) -> Request {
    Request::new(id, method, params)
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[tokio::test(start_paused = true)]
async fn a_script_that_is_followed_passes() {
    let (listener, mut notifications) = Listener::channel(16);
    let roots = Arc::new(|r: Request| {
        async move {
            match r.method.as_str() {
                "roots/list" => Ok(json!({ "roots": [] })),
                _ => Err(ErrorObject::new(-32601, "no")),
            }
        }
        .boxed()
    });
    let handlers = ConnectionHandlers::new(listener).with_server_requests(roots);
    let script = Script::new()
        .send_notification("notifications/tools/list_changed", None)
        .expect_request("initialize")
        .with_id(1)
        .with_params_eq(json!({ "protocolVersion": "2025-06-18" }))
        .respond(json!({ "protocolVersion": "2025-06-18" }))
        .expect_notification("notifications/initialized")
        .send_request(req(90, "roots/list", None))
        .expect_result(json!({ "roots": [] }))
        .expect_request("tools/call")
        .with_params(|p| p["name"] == "slow")
        .notify_first(
            "notifications/progress",
            Some(json!({ "progressToken": "t", "progress": 1 })),
        )
        .after(Duration::from_secs(5))
        .respond(json!({ "content": [] }))
        .expect_request("tools/list")
        .never_respond()
        .expect_notification_with("notifications/cancelled", |p| p["requestId"] == 4)
        .expect_request("prompts/get")
        .respond_with(|r| Ok(json!({ "echo": r.params })));
    let t = ScriptedTransport::new(script, handlers);

    let started = tokio::time::Instant::now();
    let init = t.request(
        req(
            1,
            "initialize",
            Some(json!({ "protocolVersion": "2025-06-18" })),
        ),
        RequestOptions::new(),
    );
    assert_eq!(
        init.await.unwrap(),
        json!({ "protocolVersion": "2025-06-18", "resultType": "complete" })
    );
    t.notify(Notification::new("notifications/initialized", None))
        .unwrap();
    let (progress, mut progress_stream) = Listener::channel(4);
    let slow = t.request(
        req(
            3,
            "tools/call",
            Some(json!({ "name": "slow", "_meta": { "progressToken": "t" } })),
        ),
        RequestOptions::new().listener(progress),
    );
    assert_eq!(
        slow.await.unwrap(),
        json!({ "content": [], "resultType": "complete" })
    );
    assert!(started.elapsed() >= Duration::from_secs(5));
    assert_eq!(
        progress_stream.recv().await.unwrap().method,
        "notifications/progress"
    );
    let never = t.request(
        req(4, "tools/list", None),
        RequestOptions::new().timeout(Duration::from_secs(1)),
    );
    assert!(matches!(never.await, Err(TransportError::Timeout { .. })));
    let echo = t
        .request(
            req(5, "prompts/get", Some(json!({ "name": "p" }))),
            RequestOptions::new(),
        )
        .await
        .unwrap();
    assert_eq!(echo["echo"], json!({ "name": "p" }));

    t.finish().await.unwrap();
    assert_eq!(
        notifications.recv().await.unwrap().method,
        "notifications/tools/list_changed"
    );
    // The answer to the server request comes from a task of its own, so
    // its place among the client's own messages is not fixed.
    let sent: Vec<String> = t
        .sent()
        .iter()
        .map(|m| match m {
            Message::Response(r) => format!("answer {}", r.id),
            other => other.method().unwrap().to_owned(),
        })
        .collect();
    assert!(sent.contains(&"answer 90".to_owned()), "{sent:?}");
    let own: Vec<&String> = sent.iter().filter(|m| *m != "answer 90").collect();
    assert_eq!(
        own,
        [
            "initialize",
            "notifications/initialized",
            "tools/call",
            "tools/list",
            "notifications/cancelled",
            "prompts/get",
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_mismatch_shows_expected_and_actual_side_by_side() {
    let script = Script::new()
        .expect_request("tools/list")
        .respond(json!({ "tools": [] }));
    let t = ScriptedTransport::new(script, ConnectionHandlers::discard());
    let got = t
        .request(
            req(1, "prompts/list", Some(json!({ "cursor": "c" }))),
            RequestOptions::new(),
        )
        .await;
    // The client under test does not hang: the connection ends.
    let Err(TransportError::ServerGone(info)) = got else {
        panic!("expected ServerGone, got {got:?}");
    };
    assert!(info.reason.contains("prompts/list"), "{}", info.reason);
    let error = t.finish().await.unwrap_err();
    assert_eq!(error.mismatches.len(), 1);
    let text = error.to_string();
    assert!(
        text.contains("expected: expect request \"tools/list\", then answer it"),
        "{text}"
    );
    assert!(
        text.contains(
            r#"  actual: {"id":1,"jsonrpc":"2.0","method":"prompts/list","params":{"cursor":"c"}}"#
        ),
        "{text}"
    );
}

#[tokio::test(start_paused = true)]
async fn params_a_predicate_refuses_are_a_mismatch() {
    let script = Script::new()
        .expect_request("tools/call")
        .with_params_eq(json!({ "name": "a" }))
        .respond(json!({}));
    let t = ScriptedTransport::new(script, ConnectionHandlers::discard());
    let _ = t
        .request(
            req(1, "tools/call", Some(json!({ "name": "b" }))),
            RequestOptions::new(),
        )
        .await;
    let text = t.finish().await.unwrap_err().to_string();
    assert!(
        text.contains(r#"with params equal to {"name":"a"}"#),
        "{text}"
    );
    assert!(text.contains(r#""params":{"name":"b"}"#), "{text}");
}

#[tokio::test(start_paused = true)]
async fn a_message_after_the_end_is_a_mismatch() {
    let t = ScriptedTransport::new(Script::new(), ConnectionHandlers::discard());
    t.notify(Notification::new("notifications/initialized", None))
        .unwrap();
    let text = t.finish().await.unwrap_err().to_string();
    assert!(
        text.contains("after the script's 0 step(s), unexpected"),
        "{text}"
    );
}

#[tokio::test(start_paused = true)]
async fn ignored_notifications_pass_anywhere() {
    let script = Script::new()
        .ignore_notifications("notifications/cancelled")
        .expect_request("a")
        .never_respond()
        .expect_request("b")
        .respond(json!({}));
    let t = ScriptedTransport::new(script, ConnectionHandlers::discard());
    let a = t.request(req(1, "a", None), RequestOptions::new());
    // Let the script read it first: a request dropped while still queued
    // is taken out of the queue, and then no cancel goes out.
    tokio::time::sleep(Duration::from_millis(1)).await;
    drop(a);
    t.request(req(2, "b", None), RequestOptions::new())
        .await
        .unwrap();
    t.finish().await.unwrap();
    assert_eq!(t.sent().len(), 3);
}

#[tokio::test(start_paused = true)]
async fn unused_steps_fail_finish() {
    let script = Script::new()
        .expect_request("initialize")
        .respond(json!({}))
        .expect_notification("notifications/initialized")
        .expect_request("tools/list")
        .respond(json!({}));
    let t = ScriptedTransport::new(script, ConnectionHandlers::discard());
    t.request(req(1, "initialize", None), RequestOptions::new())
        .await
        .unwrap();
    let error = t.finish().await.unwrap_err();
    assert!(error.mismatches.is_empty());
    assert_eq!(
        error.unused,
        [
            "step 2 of 3: expect notification \"notifications/initialized\"",
            "step 3 of 3: expect request \"tools/list\", then answer it",
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn unused_steps_fail_the_test_on_drop() {
    let script = Script::new()
        .expect_request("initialize")
        .respond(json!({}));
    let t = ScriptedTransport::new(script, ConnectionHandlers::discard());
    let panic = catch_unwind(AssertUnwindSafe(|| drop(t))).unwrap_err();
    let text = panic_text(panic);
    assert!(text.contains("1 step(s) left unused"), "{text}");
    assert!(text.contains("expect request \"initialize\""), "{text}");
}

#[tokio::test(start_paused = true)]
async fn a_finished_script_checks_nothing_on_drop() {
    let t = ScriptedTransport::new(
        Script::new().expect_request("x").respond(json!({})),
        ConnectionHandlers::discard(),
    );
    t.request(req(1, "x", None), RequestOptions::new())
        .await
        .unwrap();
    t.assert_done().await;
    drop(t);
}

#[tokio::test(start_paused = true)]
async fn death_carries_exit_code_and_stderr() {
    let script = Script::new().expect_request("initialize").die(
        GoneInfo::new("the server exited")
            .with_exit(ExitInfo::code(1))
            .with_stderr_tail("panic: no initialize before discover\n"),
    );
    let t = ScriptedTransport::new(script, ConnectionHandlers::discard());
    let got = t
        .request(req(1, "initialize", None), RequestOptions::new())
        .await;
    let Err(TransportError::ServerGone(info)) = got else {
        panic!("expected ServerGone, got {got:?}");
    };
    assert_eq!(info.exit, Some(ExitInfo::code(1)));
    assert!(info.stderr_tail.unwrap().contains("no initialize"));
    assert!(!t.is_alive());
    t.finish().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn errors_and_delays_and_a_standalone_death() {
    let script = Script::new()
        .expect_request("server/discover")
        .respond_error(
            -32022,
            "Unsupported protocol version",
            Some(json!({ "supported": ["2025-06-18"] })),
        )
        .delay(Duration::from_secs(30))
        .die(GoneInfo::new("bye"));
    let t = ScriptedTransport::new(script, ConnectionHandlers::discard());
    let got = t
        .request(req(1, "server/discover", None), RequestOptions::new())
        .await;
    assert_eq!(
        got,
        Err(TransportError::Rpc {
            code: -32022,
            message: "Unsupported protocol version".into(),
            data: Some(json!({ "supported": ["2025-06-18"] })),
        })
    );
    let start = tokio::time::Instant::now();
    t.finish().await.unwrap();
    assert!(start.elapsed() >= Duration::from_secs(30));
    assert!(!t.is_alive());
}

#[tokio::test(start_paused = true)]
async fn a_wrong_answer_to_a_server_request_is_a_mismatch() {
    let handler = Arc::new(|_r: Request| async { Ok(json!({ "roots": ["x"] })) }.boxed());
    let script = Script::new()
        .send_request(req(7, "roots/list", None))
        .expect_result(json!({ "roots": [] }));
    let t = ScriptedTransport::new(
        script,
        ConnectionHandlers::discard().with_server_requests(handler),
    );
    let text = t.finish().await.unwrap_err().to_string();
    assert!(text.contains("expected: send server request 7"), "{text}");
    assert!(
        text.contains(r#"actual: {"id":7,"jsonrpc":"2.0","result":{"roots":["x"]}}"#),
        "{text}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_connector_hands_out_one_script_per_connection() {
    let connector = ScriptedTransport::connector([
        Script::new()
            .expect_request("server/discover")
            .die(GoneInfo::new("old server")),
        Script::new()
            .expect_request("initialize")
            .respond(json!({})),
    ]);
    let first = connector
        .connect(ConnectionHandlers::discard())
        .await
        .unwrap();
    let got = first
        .request(req(1, "server/discover", None), RequestOptions::new())
        .await;
    assert!(matches!(got, Err(TransportError::ServerGone(_))));
    let second = connector
        .connect(ConnectionHandlers::discard())
        .await
        .unwrap();
    second
        .request(req(1, "initialize", None), RequestOptions::new())
        .await
        .unwrap();
    assert!(
        connector
            .connect(ConnectionHandlers::discard())
            .await
            .is_err()
    );
    connector.finish().await.unwrap();
    assert_eq!(connector.transports().len(), 2);
}
