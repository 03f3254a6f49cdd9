//! The server over HTTP (`mcp_reference_server::http`), spoken to by hand
//! over real sockets: sessions, the version header, the GET stream,
//! resumption, modern header checks, the HTTP+SSE transport, each knob, the
//! binary.

#![cfg(feature = "http")]

mod http_common;

use std::time::Duration;

use http_common::{POST, WAIT, initialize, post, request, send, session};
use mcp_reference_server::http::{HttpFake, HttpKnob, HttpOptions};
use mcp_reference_server::{Content, FakeConfig, FakeTool, Methods, ToolBehavior};
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
        assert_eq!(server.session_ids(), std::slice::from_ref(&id));

        let list = request(1, "tools/list", json!({}));
        let missing = post(addr, &[], &list).await;
        assert_eq!(missing.status, 400);
        let unknown = post(addr, &[("mcp-session-id", "nope")], &list).await;
        assert_eq!(unknown.status, 404);

        let mut listed = post(addr, &[("mcp-session-id", &id)], &list).await;
        assert_eq!(listed.status, 200);
        assert_eq!(listed.header("content-type"), Some("text/event-stream"));
        listed.until("echo").await;
        listed.read_to_end().await;
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
        stream.read_to_end().await;
    }

    #[tokio::test]
    async fn json_answers_are_one_body() {
        let server = legacy_with(HttpOptions::new().json_answers()).await;
        let id = session(server.addr(), "2025-11-25").await;
        let mut reply = post(server.addr(), &[("mcp-session-id", &id)], &echo(1)).await;
        assert_eq!(reply.header("content-type"), Some("application/json"));
        reply.read_to_end().await;
        assert_eq!(reply.json()["result"]["content"][0]["text"], "hi");
    }

    #[tokio::test]
    async fn a_priming_event_carries_retry() {
        let options = HttpOptions::new().retry(Duration::from_millis(1500));
        let server = legacy_with(options).await;
        let id = session(server.addr(), "2025-11-25").await;
        let mut reply = post(server.addr(), &[("mcp-session-id", &id)], &echo(1)).await;
        reply.read_to_end().await;
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
        dropped.read_to_end().await;
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
        resumed.read_to_end().await;
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
        again.read_to_end().await;
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
        dropped.read_to_end().await;
        let last = ids(&dropped.text()).pop().unwrap();
        let headers = [
            ("accept", "text/event-stream"),
            ("mcp-session-id", id.as_str()),
            ("last-event-id", last.as_str()),
        ];
        let mut resumed = send(server.addr(), "GET", "/mcp", &headers, "").await;
        assert_eq!(resumed.status, 200);
        resumed.read_to_end().await;
        assert!(resumed.body.is_empty());
    }
}

#[path = "fake_http/binary.rs"]
mod binary;
#[path = "fake_http/knobs.rs"]
mod knobs;
#[path = "fake_http/modern.rs"]
mod modern;
