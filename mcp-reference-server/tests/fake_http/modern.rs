//! Modern Streamable HTTP (header checks, statuses, listen streams,
//! cancel by closing) and the 2024-11-05 HTTP+SSE transport.

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
    reply.read_to_end().await;
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
    reply.read_to_end().await;
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
