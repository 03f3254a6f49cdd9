//! Protocol micro-benchmarks: what the client does to each message, against
//! what `serde_json` alone does to the same bytes (the floor).
//!
//! - parse and normalize a `tools/list` answer of 100 tools (the line to a
//!   typed `ListToolsResult`: `Inbound::parse`, `normalize_result`,
//!   `from_value`), floor `serde_json::from_slice::<Value>`;
//! - the same for a `tools/call` answer (`CallToolResult`);
//! - encode a modern request with its envelope as the stdio transport does
//!   (the call's params made, the connection's constant `_meta` spliced in
//!   as text made once, `SharedMeta::encode_request_line`), floor
//!   `serde_json::to_writer` of the finished message as a `Value`.
//!
//! Timed in-process by the bench rather than by divan or criterion, so that
//! ours and the floor take turns round by round like every other row and
//! their ratio is paired by round on this shared machine.

use std::hint::black_box;
use std::time::Instant;

use mcp_protocol::meta::RequestMetaBuilder;
use mcp_protocol::result::normalize_result;
use mcp_protocol::types::{CallToolResult, ClientCapabilities, Implementation, ListToolsResult};
use mcp_protocol::{Inbound, Message, ProtocolVersion, Request};
use mcp_transport::SharedMeta;
use serde_json::{Value, json};

use crate::report::{Micro, Report};
use crate::{Result, Settings};

/// A `tools/list` answer line of `n` tools.
fn tools_list_line(n: usize) -> Vec<u8> {
    let tools: Vec<Value> = (0..n)
        .map(|i| {
            json!({
                "name": format!("tool_{i}"),
                "description": "Returns its text; one of many tools of a large listing.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string", "description": "The text to return."},
                        "count": {"type": "integer", "minimum": 0}
                    },
                    "required": ["text"]
                }
            })
        })
        .collect();
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 7, "result": {"tools": tools}}))
        .expect("serializes")
}

/// A `tools/call` answer line.
fn tools_call_line() -> Vec<u8> {
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 7, "result": {
        "content": [{"type": "text", "text": "The weather in Paris is 18 °C, partly cloudy, wind 12 km/h from the west."}],
        "structuredContent": {"temperature": 18, "conditions": "partly cloudy", "wind": {"speed": 12, "from": "W"}},
        "isError": false
    }}))
    .expect("serializes")
}

/// A line to its normalized result, as the transports hand it on.
fn result_of(line: &[u8]) -> Result<Value> {
    match Inbound::parse(line)? {
        Inbound::Single(Message::Response(r)) => Ok(normalize_result(r.result)),
        _ => Err("not a response".into()),
    }
}

fn parse_list(line: &[u8]) -> Result<ListToolsResult> {
    // As the client types it: the schemas moved, not rebuilt.
    Ok(ListToolsResult::from_value(result_of(line)?)?)
}

fn parse_call(line: &[u8]) -> Result<CallToolResult> {
    // As the client types it: the `Value` members moved, not rebuilt.
    Ok(CallToolResult::from_value(result_of(line)?)?)
}

/// The modern request our client would send for `tools/call echo`.
fn encode(id: u64, shared: &SharedMeta, buf: &mut Vec<u8>) {
    let params = json!({"name": "echo", "arguments": {"text": "hello"}});
    let request = Request::new(id as i64, "tools/call", Some(params));
    buf.clear();
    shared.encode_request_line(&request, buf);
}

/// Runs `ours` and `floor` in turns, `iters` each per round; the time per
/// operation of each round.
fn race(
    rounds: usize,
    iters: usize,
    mut ours: impl FnMut(),
    mut floor: impl FnMut(),
) -> [Vec<f64>; 2] {
    let mut out = [Vec::new(), Vec::new()];
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..iters {
            ours();
        }
        out[0].push(t.elapsed().as_secs_f64() / iters as f64);
        let t = Instant::now();
        for _ in 0..iters {
            floor();
        }
        out[1].push(t.elapsed().as_secs_f64() / iters as f64);
    }
    out
}

/// Runs the three micro-benchmarks.
pub fn run(settings: &Settings, report: &mut Report) -> Result {
    let rounds = 20;
    let scale = settings.micro_iters;
    let list = tools_list_line(100);
    let call = tools_call_line();
    // Checked once, outside the timing.
    let tools = parse_list(&list)?;
    if tools.items.len() != 100 {
        return Err("the tools/list answer did not parse to 100 tools".into());
    }
    parse_call(&call)?;
    let [ours, floor] = race(
        rounds,
        scale / 10,
        || {
            black_box(parse_list(black_box(&list)).ok());
        },
        || {
            black_box(serde_json::from_slice::<Value>(black_box(&list)).ok());
        },
    );
    report.micro.push(Micro::new(
        format!(
            "parse + normalize `tools/list`, 100 tools ({} B)",
            list.len()
        ),
        "`from_slice::<Value>`",
        ours,
        floor,
    ));
    let [ours, floor] = race(
        rounds,
        scale,
        || {
            black_box(parse_call(black_box(&call)).ok());
        },
        || {
            black_box(serde_json::from_slice::<Value>(black_box(&call)).ok());
        },
    );
    report.micro.push(Micro::new(
        format!("parse + normalize `tools/call` result ({} B)", call.len()),
        "`from_slice::<Value>`",
        ours,
        floor,
    ));
    let caps = ClientCapabilities::new();
    let info = Implementation::new("mcp-bench", "0.1.0");
    let shared = SharedMeta::new(
        RequestMetaBuilder::modern(&ProtocolVersion::V2026_07_28, &caps, &info).build(),
    );
    let mut buf = Vec::with_capacity(1024);
    encode(1, &shared, &mut buf);
    let finished: Value = serde_json::from_slice(&buf)?;
    let len = buf.len();
    let mut floor_buf = Vec::with_capacity(1024);
    let mut id = 0;
    let [ours, floor] = race(
        rounds,
        scale,
        || {
            id += 1;
            encode(id, &shared, &mut buf);
            black_box(&buf);
        },
        || {
            floor_buf.clear();
            serde_json::to_writer(&mut floor_buf, black_box(&finished)).expect("serializes");
            floor_buf.push(b'\n');
            black_box(&floor_buf);
        },
    );
    report.micro.push(Micro::new(
        format!("encode a modern `tools/call` with its envelope ({len} B)"),
        "`to_writer` of the finished `Value`",
        ours,
        floor,
    ));
    Ok(())
}
