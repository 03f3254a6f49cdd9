//! Each HTTP knob behaving as documented.

use std::time::{Duration, Instant};

use super::http_common::{post, request, send_within, session};
use super::{echo, legacy_with, tools_call};
use mcp_reference_server::FakeConfig;
use mcp_reference_server::http::{HttpFake, HttpKnob, HttpOptions};
use serde_json::json;

async fn with(knob: HttpKnob) -> (HttpFake, String) {
    let server = legacy_with(HttpOptions::new().knob(knob)).await;
    let id = session(server.addr(), "2025-11-25").await;
    (server, id)
}

#[tokio::test]
async fn bad_gateway_is_a_502_html_page() {
    let (server, id) = with(HttpKnob::BadGateway(tools_call())).await;
    let mut reply = post(server.addr(), &[("mcp-session-id", &id)], &echo(1)).await;
    assert_eq!(reply.status, 502);
    assert!(
        reply
            .header("content-type")
            .unwrap()
            .starts_with("text/html")
    );
    reply.read_to_end().await;
    assert!(reply.text().contains("502 Bad Gateway"));
}

#[tokio::test]
async fn never_respond_sends_no_head() {
    let (server, id) = with(HttpKnob::NeverRespond(tools_call())).await;
    let mut headers = super::POST.to_vec();
    headers.push(("mcp-session-id", &id));
    let body = echo(1).to_string();
    let reply = send_within(
        server.addr(),
        "POST",
        "/mcp",
        &headers,
        &body,
        Duration::from_millis(300),
    )
    .await;
    assert!(reply.is_none(), "a head came");
}

#[tokio::test]
async fn drip_writes_one_byte_at_a_time() {
    let interval = Duration::from_millis(2);
    let (server, id) = with(HttpKnob::Drip(tools_call(), interval)).await;
    let start = Instant::now();
    let mut reply = post(server.addr(), &[("mcp-session-id", &id)], &echo(1)).await;
    reply.read_to_end().await;
    let bytes = reply.body.len();
    assert!(reply.text().contains("\"result\""));
    // One write per byte, each after the interval.
    assert!(
        start.elapsed() >= interval * bytes as u32,
        "{:?}",
        start.elapsed()
    );
    assert!(
        reply.reads > bytes / 4,
        "{} reads for {bytes} bytes",
        reply.reads
    );
}

#[tokio::test]
async fn oversized_pads_the_answer_past_the_size() {
    let (server, id) = with(HttpKnob::Oversized(tools_call(), 100_000)).await;
    let mut reply = post(server.addr(), &[("mcp-session-id", &id)], &echo(1)).await;
    reply.read_to_end().await;
    assert!(reply.body.len() > 100_000, "{}", reply.body.len());
    assert!(reply.text().contains("\"padding\""));
}

#[tokio::test]
async fn endless_body_answers_then_never_ends() {
    let (server, id) = with(HttpKnob::EndlessBody(tools_call())).await;
    let mut reply = post(server.addr(), &[("mcp-session-id", &id)], &echo(1)).await;
    assert_eq!(reply.header("content-type"), Some("application/json"));
    reply.until("\"result\"").await;
    assert!(!reply.read_more(Duration::from_millis(300)).await);
    assert!(!reply.ended);
}

#[tokio::test]
async fn content_type_missing_or_wrong() {
    let (server, id) = with(HttpKnob::ContentType(tools_call(), None)).await;
    let mut reply = post(server.addr(), &[("mcp-session-id", &id)], &echo(1)).await;
    assert_eq!(reply.header("content-type"), None);
    reply.read_to_end().await;
    assert_eq!(reply.json()["id"], 1);

    let wrong = HttpKnob::ContentType(tools_call(), Some("text/html".into()));
    let (server, id) = with(wrong).await;
    let reply = post(server.addr(), &[("mcp-session-id", &id)], &echo(1)).await;
    assert_eq!(reply.header("content-type"), Some("text/html"));
}

#[tokio::test]
async fn redirect_is_a_307_to_another_origin() {
    let to = "http://127.0.0.2:9/mcp";
    let (server, id) = with(HttpKnob::Redirect(tools_call(), to.into())).await;
    let reply = post(server.addr(), &[("mcp-session-id", &id)], &echo(1)).await;
    assert_eq!(reply.status, 307);
    assert_eq!(reply.header("location"), Some(to));
}

#[tokio::test]
async fn discover_without_a_session_is_400_server_not_initialized() {
    let server = legacy_with(HttpOptions::new().knob(HttpKnob::DiscoverNotInitialized)).await;
    let discover = request(1, "server/discover", json!({}));
    let mut reply = post(server.addr(), &[], &discover).await;
    assert_eq!(reply.status, 400);
    reply.read_to_end().await;
    assert_eq!(reply.json()["error"]["code"], -32000);
    assert!(reply.text().contains("Server not initialized"));

    // Without the knob, a fresh server answers it: -32601.
    let server = HttpFake::start(FakeConfig::legacy()).await.unwrap();
    let mut reply = post(server.addr(), &[], &discover).await;
    assert_eq!(reply.status, 200);
    reply.until("-32601").await;
}

#[tokio::test]
async fn an_unknown_session_can_be_400() {
    let (server, _) = with(HttpKnob::UnknownSessionIs400).await;
    let reply = post(server.addr(), &[("mcp-session-id", "gone")], &echo(1)).await;
    assert_eq!(reply.status, 400);
}

#[tokio::test]
async fn sessions_can_expire_after_n_requests() {
    let (server, id) = with(HttpKnob::ExpireSessionsAfter(2)).await;
    for n in 1..=2 {
        let mut ok = post(server.addr(), &[("mcp-session-id", &id)], &echo(n)).await;
        assert_eq!(ok.status, 200);
        ok.read_to_end().await;
    }
    let expired = post(server.addr(), &[("mcp-session-id", &id)], &echo(3)).await;
    assert_eq!(expired.status, 404);
}

#[test]
fn knobs_parse_as_the_binary_takes_them() {
    let all = [
        "bad-gateway",
        "never-respond@tools/call",
        "drip=5",
        "oversized=1000",
        "endless-body",
        "content-type=",
        "content-type=text/html",
        "redirect=http://127.0.0.2:9/mcp",
        "drop-stream=100",
        "resume-empty",
        "discover-not-initialized",
        "unknown-session-400",
        "expire-after=3",
    ];
    for text in all {
        assert!(HttpKnob::parse(text).is_ok(), "{text}");
    }
    assert!(HttpKnob::parse("nope").is_err());
    assert!(HttpKnob::parse("drip").is_err());
}
