//! The fake server over HTTP (`fake::http`), spoken to by hand over real
//! sockets: sessions, the version header, the GET stream, resumption,
//! modern header checks, the HTTP+SSE transport, each knob, the binary.

mod http_common;

use std::time::Duration;

use http_common::{POST, WAIT, initialize, post, request, send, session};
use mcp_testkit::fake::http::{HttpFake, HttpKnob, HttpOptions};
use mcp_testkit::fake::{Content, FakeConfig, FakeTool, Methods, ToolBehavior};
use serde_json::{Value, json};

const MODERN: &str = "2026-07-28";

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": MODERN,
           "io.modelcontextprotocol/clientCapabilities": {}})
}

fn tools_call() -> Methods {
    Methods::Named("tools/call".into())
}

async fn legacy_with(options: HttpOptions) -> HttpFake {
    HttpFake::start_with(FakeConfig::legacy(), options)
        .await
        .unwrap()
}

/// `tools/call echo` on a session.
fn echo(id: i64) -> Value {
    request(
        id,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    )
}

mod legacy {
    use super::*;

    #[tokio::test]
    async fn initialize_makes_a_session_that_later_requests_must_name() {
        let server = HttpFake::start(FakeConfig::legacy()).await.unwrap();
        let addr = server.addr();
        let id = session(addr, "2025-11-25").await;
        assert_eq!(server.session_ids(), [id.clone()]);

        let list = request(1, "tools/list", json!({}));
        let missing = post(addr, &[], &list).await;
        assert_eq!(missing.status, 400);
        let unknown = post(addr, &[("mcp-session-id", "nope")], &list).await;
        assert_eq!(unknown.status, 404);

        let mut listed = post(addr, &[("mcp-session-id", &id)], &list).await;
        assert_eq!(listed.status, 200);
        assert_eq!(listed.header("content-type"), Some("text/event-stream"));
        listed.until("echo").await;
        listed.to_end().await;
        // Every event names its stream and place.
        assert!(listed.text().contains("id: "), "{}", listed.text());
    }

    #[tokio::test]
    async fn delete_ends_the_session_and_it_is_then_unknown() {
        let server = HttpFake::start(FakeConfig::legacy()).await.unwrap();
        let addr = server.addr();
        let id = session(addr, "2025-11-25").await;
        let deleted = send(addr, "DELETE", "/mcp", &[("mcp-session-id", &id)], "").await;
        assert_eq!(deleted.status, 200);
        assert!(server.session_ids().is_empty());
        let after = post(addr, &[("mcp-session-id", &id)], &echo(1)).await;
        assert_eq!(after.status, 404);
        assert_eq!(after.json()["error"]["code"], -32001);
    }

    #[tokio::test]
    async fn expiring_sessions_on_demand_makes_them_404() {
        let server = HttpFake::start(FakeConfig::legacy()).await.unwrap();
        let id = session(server.addr(), "2025-11-25").await;
        assert_eq!(server.expire_sessions(), 1);
        let after = post(server.addr(), &[("mcp-session-id", &id)], &echo(1)).await;
        assert_eq!(after.status, 404);
    }

    #[tokio::test]
    async fn a_wrong_version_header_is_400_from_2025_06_18_on() {
        let server = HttpFake::start(FakeConfig::legacy()).await.unwrap();
        let addr = server.addr();
        let id = session(addr, "2025-06-18").await;
        let headers = [
            ("mcp-session-id", id.as_str()),
            ("mcp-protocol-version", "2025-03-26"),
        ];
        let wrong = post(addr, &headers, &echo(1)).await;
        assert_eq!(wrong.status, 400);
        let headers = [
            ("mcp-session-id", id.as_str()),
            ("mcp-protocol-version", "2025-06-18"),
        ];
        let right = post(addr, &headers, &echo(2)).await;
        assert_eq!(right.status, 200);

        // 2025-03-26 had no such header: nothing is checked.
        let id = session(addr, "2025-03-26").await;
        let headers = [
            ("mcp-session-id", id.as_str()),
            ("mcp-protocol-version", "1999-01-01"),
        ];
        assert_eq!(post(addr, &headers, &echo(3)).await.status, 200);
    }

    #[tokio::test]
    async fn stateless_gives_no_session_and_no_get_stream() {
        let server = legacy_with(HttpOptions::new().stateless()).await;
        let addr = server.addr();
        let reply = initialize(addr, "2025-11-25").await;
        assert_eq!(reply.header("mcp-session-id"), None);
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(post(addr, &[], &initialized).await.status, 202);
        let mut called = post(addr, &[], &echo(1)).await;
        called.until("\"result\"").await;
        let get = send(addr, "GET", "/mcp", &[("accept", "text/event-stream")], "").await;
        assert_eq!(get.status, 405);
    }

    #[tokio::test]
    async fn one_get_stream_at_a_time_carries_what_belongs_to_no_request() {
        let server = HttpFake::start(FakeConfig::legacy()).await.unwrap();
        let addr = server.addr();
        let id = session(addr, "2025-11-25").await;
        let headers = [
            ("accept", "text/event-stream"),
            ("mcp-session-id", id.as_str()),
        ];
        let mut stream = send(addr, "GET", "/mcp", &headers, "").await;
        assert_eq!(stream.status, 200);
        let second = send(addr, "GET", "/mcp", &headers, "").await;
        assert_eq!(second.status, 409);

        let add = request(
            1,
            "tools/call",
            json!({"name": "add_tool", "arguments": {}}),
        );
        let mut added = post(addr, &[("mcp-session-id", &id)], &add).await;
        added.until("\"result\"").await;
        stream.until("notifications/tools/list_changed").await;
    }

    #[tokio::test]
    async fn a_get_stream_can_be_refused() {
        let server = legacy_with(HttpOptions::new().no_get_stream()).await;
        let id = session(server.addr(), "2025-11-25").await;
        let headers = [
            ("accept", "text/event-stream"),
            ("mcp-session-id", id.as_str()),
        ];
        let get = send(server.addr(), "GET", "/mcp", &headers, "").await;
        assert_eq!(get.status, 405);
    }

    #[tokio::test]
    async fn a_server_request_goes_on_its_request_stream_and_its_answer_is_posted() {
        let server = HttpFake::start(FakeConfig::legacy()).await.unwrap();
        let addr = server.addr();
        let id = session(addr, "2025-11-25").await;
        let call = request(1, "tools/call", json!({"name": "roots", "arguments": {}}));
        let mut stream = post(addr, &[("mcp-session-id", &id)], &call).await;
        stream.until("roots/list").await;
        let asked = stream
            .events()
            .into_iter()
            .find(|e| e["method"] == "roots/list")
            .unwrap();
        let answer = json!({"jsonrpc": "2.0", "id": asked["id"],
                            "result": {"roots": [{"uri": "file:///tmp", "name": "tmp"}]}});
        let posted = post(addr, &[("mcp-session-id", &id)], &answer).await;
        assert_eq!(posted.status, 202);
        stream.until("file:///tmp").await;
        stream.to_end().await;
    }

    #[tokio::test]
    async fn json_answers_are_one_body() {
        let server = legacy_with(HttpOptions::new().json_answers()).await;
        let id = session(server.addr(), "2025-11-25").await;
        let mut reply = post(server.addr(), &[("mcp-session-id", &id)], &echo(1)).await;
        assert_eq!(reply.header("content-type"), Some("application/json"));
        reply.to_end().await;
        assert_eq!(reply.json()["result"]["content"][0]["text"], "hi");
    }

    #[tokio::test]
    async fn a_priming_event_carries_retry() {
        let options = HttpOptions::new().retry(Duration::from_millis(1500));
        let server = legacy_with(options).await;
        let id = session(server.addr(), "2025-11-25").await;
        let mut reply = post(server.addr(), &[("mcp-session-id", &id)], &echo(1)).await;
        reply.to_end().await;
        assert!(reply.text().starts_with("id: "), "{}", reply.text());
        assert!(reply.text().contains("retry: 1500\n"), "{}", reply.text());
    }
}

mod resumption {
    use super::*;

    /// The event ids of a body.
    fn ids(text: &str) -> Vec<String> {
        text.lines()
            .filter_map(|l| l.strip_prefix("id: "))
            .map(str::to_owned)
            .collect()
    }

    #[tokio::test]
    async fn a_dropped_stream_is_resumed_by_get_with_last_event_id() {
        let knob = HttpKnob::DropStream(tools_call(), Duration::from_millis(50));
        let server = legacy_with(HttpOptions::new().knob(knob)).await;
        let addr = server.addr();
        let id = session(addr, "2025-11-25").await;
        let slow = request(
            7,
            "tools/call",
            json!({"name": "slow", "arguments": {"steps": 2, "delayMs": 20},
                   "_meta": {"progressToken": "p"}}),
        );
        let mut dropped = post(addr, &[("mcp-session-id", &id)], &slow).await;
        dropped.to_end().await;
        assert!(dropped.text().contains("retry: 50\n"), "{}", dropped.text());
        assert!(
            !dropped.text().contains("\"result\""),
            "ended before the answer"
        );
        let last = ids(&dropped.text()).pop().expect("an event id");

        let headers = [
            ("accept", "text/event-stream"),
            ("mcp-session-id", id.as_str()),
            ("last-event-id", last.as_str()),
        ];
        let mut resumed = send(addr, "GET", "/mcp", &headers, "").await;
        assert_eq!(resumed.status, 200);
        resumed.until("done after 2 steps").await;
        resumed.to_end().await;
        let events = resumed.events();
        let progress = events
            .iter()
            .filter(|e| e["method"] == "notifications/progress")
            .count();
        assert_eq!(progress, 2, "{}", resumed.text());
        assert_eq!(events.last().unwrap()["id"], 7);

        // Resuming again from the first id replays the same events.
        let headers = [
            ("accept", "text/event-stream"),
            ("mcp-session-id", id.as_str()),
            ("last-event-id", last.as_str()),
        ];
        let mut again = send(addr, "GET", "/mcp", &headers, "").await;
        again.to_end().await;
        assert_eq!(again.events(), events);
    }

    #[tokio::test]
    async fn a_resumed_stream_can_end_at_once_with_nothing() {
        let options = HttpOptions::new()
            .knob(HttpKnob::DropStream(
                tools_call(),
                Duration::from_millis(10),
            ))
            .knob(HttpKnob::ResumeEmpty);
        let server = legacy_with(options).await;
        let id = session(server.addr(), "2025-11-25").await;
        let mut dropped = post(server.addr(), &[("mcp-session-id", &id)], &echo(1)).await;
        dropped.to_end().await;
        let last = ids(&dropped.text()).pop().unwrap();
        let headers = [
            ("accept", "text/event-stream"),
            ("mcp-session-id", id.as_str()),
            ("last-event-id", last.as_str()),
        ];
        let mut resumed = send(server.addr(), "GET", "/mcp", &headers, "").await;
        assert_eq!(resumed.status, 200);
        resumed.to_end().await;
        assert!(resumed.body.is_empty());
    }
}

mod modern {
    use super::*;

    async fn modern_post(
        server: &HttpFake,
        body: &Value,
        headers: &[(&str, &str)],
    ) -> http_common::Reply {
        post(server.addr(), headers, body).await
    }

    fn call(tool: &str, arguments: Value) -> Value {
        request(
            1,
            "tools/call",
            json!({"name": tool, "arguments": arguments, "_meta": meta()}),
        )
    }

    #[tokio::test]
    async fn headers_equal_to_the_body_pass_and_are_recorded() {
        let server = HttpFake::start(FakeConfig::modern()).await.unwrap();
        let headers = [
            ("mcp-protocol-version", MODERN),
            ("mcp-method", "tools/call"),
            ("mcp-name", "echo"),
        ];
        let mut reply = modern_post(&server, &call("echo", json!({"text": "hi"})), &headers).await;
        assert_eq!(reply.status, 200);
        reply.until("\"result\"").await;
        assert!(!reply.text().contains("id: "), "no event ids in 2026-07-28");
        let seen = server.posts_of("tools/call");
        assert_eq!(seen[0].header("mcp-name"), Some("echo"));
        assert_eq!(seen[0].header("mcp-method"), Some("tools/call"));
    }

    async fn rejected(server: &HttpFake, body: &Value, headers: &[(&str, &str)]) {
        let mut reply = modern_post(server, body, headers).await;
        assert_eq!(reply.status, 400, "{headers:?}");
        reply.to_end().await;
        assert_eq!(
            reply.json()["error"]["code"],
            -32020,
            "{headers:?}: {}",
            reply.text()
        );
    }

    #[tokio::test]
    async fn a_header_missing_or_unlike_the_body_is_400_with_32020() {
        let server = HttpFake::start(FakeConfig::modern()).await.unwrap();
        let body = call("echo", json!({"text": "hi"}));
        let v = ("mcp-protocol-version", MODERN);
        let m = ("mcp-method", "tools/call");
        let n = ("mcp-name", "echo");
        rejected(&server, &body, &[m, n]).await;
        rejected(
            &server,
            &body,
            &[("mcp-protocol-version", "2025-11-25"), m, n],
        )
        .await;
        rejected(&server, &body, &[v, n]).await;
        rejected(&server, &body, &[v, ("mcp-method", "tools/list"), n]).await;
        rejected(&server, &body, &[v, m]).await;
        rejected(&server, &body, &[v, m, ("mcp-name", "fail")]).await;
        rejected(&server, &body, &[v, m, ("mcp-name", "=?base64?!!!?=")]).await;
        // The name base64-encoded is the same name.
        let encoded = [v, m, ("mcp-name", "=?base64?ZWNobw==?=")];
        assert_eq!(modern_post(&server, &body, &encoded).await.status, 200);
    }

    #[tokio::test]
    async fn param_headers_must_match_the_annotated_arguments() {
        let tool = FakeTool::new("regional", "echoes", ToolBehavior::Echo).input_schema(json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "region": {"type": "string", "x-mcp-header": "Region"}
            }
        }));
        let config = FakeConfig::modern().content(Content::default().with_tool(tool));
        let server = HttpFake::start(config).await.unwrap();
        let body = call("regional", json!({"text": "hi", "region": "eu-west"}));
        let base = [
            ("mcp-protocol-version", MODERN),
            ("mcp-method", "tools/call"),
            ("mcp-name", "regional"),
        ];
        let with = |region: Option<&'static str>| {
            let mut h = base.to_vec();
            if let Some(r) = region {
                h.push(("mcp-param-region", r));
            }
            h
        };
        rejected(&server, &body, &with(None)).await;
        rejected(&server, &body, &with(Some("us-east"))).await;
        assert_eq!(
            modern_post(&server, &body, &with(Some("eu-west")))
                .await
                .status,
            200
        );
        let plain = call("regional", json!({"text": "hi"}));
        rejected(&server, &plain, &with(Some("eu-west"))).await;
        assert_eq!(modern_post(&server, &plain, &with(None)).await.status, 200);
    }

    #[tokio::test]
    async fn errors_the_spec_gives_a_status_get_it() {
        let server = HttpFake::start(FakeConfig::modern()).await.unwrap();
        let headers = [
            ("mcp-protocol-version", MODERN),
            ("mcp-method", "nope/nope"),
        ];
        let body = request(1, "nope/nope", json!({"_meta": meta()}));
        let mut reply = post(server.addr(), &headers, &body).await;
        assert_eq!(reply.status, 404);
        reply.to_end().await;
        assert_eq!(reply.json()["error"]["code"], -32601);
        let get = send(server.addr(), "GET", "/mcp", &[], "").await;
        assert_eq!(get.status, 405);
    }

    #[tokio::test]
    async fn a_listen_stream_carries_its_notifications_and_closing_a_stream_cancels() {
        let server = HttpFake::start(FakeConfig::modern()).await.unwrap();
        let listen = request(
            5,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}, "_meta": meta()}),
        );
        let h = [
            ("mcp-protocol-version", MODERN),
            ("mcp-method", "subscriptions/listen"),
        ];
        let mut stream = post(server.addr(), &h, &listen).await;
        assert_eq!(stream.status, 200);
        let headers = [
            ("mcp-protocol-version", MODERN),
            ("mcp-method", "tools/call"),
            ("mcp-name", "add_tool"),
        ];
        let mut added = post(server.addr(), &headers, &call("add_tool", json!({}))).await;
        added.until("\"result\"").await;
        stream.until("notifications/tools/list_changed").await;

        let headers = [
            ("mcp-protocol-version", MODERN),
            ("mcp-method", "tools/call"),
            ("mcp-name", "slow"),
        ];
        let slow = request(
            9,
            "tools/call",
            json!({"name": "slow",
            "arguments": {"steps": 1000, "delayMs": 10}, "_meta": meta()}),
        );
        let reply = post(server.addr(), &headers, &slow).await;
        drop(reply);
        let start = tokio::time::Instant::now();
        while server.cancelled_by_close().is_empty() {
            assert!(start.elapsed() < WAIT, "the close was never seen");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(
            server.cancelled_by_close()[0],
            mcp_protocol::RequestId::Number(9)
        );
    }
}

mod http_sse {
    use super::*;

    #[tokio::test]
    async fn get_sse_names_an_endpoint_whose_answers_come_on_the_stream() {
        let config = FakeConfig::legacy().versions(["2024-11-05"]);
        let server = HttpFake::start(config).await.unwrap();
        let addr = server.addr();
        let refused = initialize_post(addr).await;
        assert_eq!(refused, 405, "an old server has no POST here");

        let mut stream = send(addr, "GET", "/sse", &[("accept", "text/event-stream")], "").await;
        stream.until("event: endpoint").await;
        let text = stream.text();
        let endpoint = text
            .lines()
            .find_map(|l| l.strip_prefix("data: /messages"))
            .map(|rest| format!("/messages{rest}"))
            .expect("a same-origin endpoint");
        let init = request(
            0,
            "initialize",
            json!({"protocolVersion": "2024-11-05",
            "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}),
        );
        let posted = send(addr, "POST", &endpoint, &POST, &init.to_string()).await;
        assert_eq!(posted.status, 202);
        stream.until("\"protocolVersion\":\"2024-11-05\"").await;
        assert!(stream.text().contains("event: message"));
    }

    async fn initialize_post(addr: std::net::SocketAddr) -> u16 {
        let body = request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25",
            "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}),
        );
        post(addr, &[], &body).await.status
    }
}

#[path = "fake_http/binary.rs"]
mod binary;
#[path = "fake_http/knobs.rs"]
mod knobs;
