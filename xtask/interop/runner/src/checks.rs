//! The checks, one `check_*` fn per row of the table, and their helpers.

mod calls;
mod features;

use mcp_client::protocol::types::{CallToolResult, ContentBlock};
use mcp_client::protocol::{Era, ProtocolVersion};
use mcp_client::{Client, ClientError, Reached, Verdict};
use serde_json::{Map, Value, json};

use crate::model::{Check, Kind, Mode, Wire};

pub(crate) use calls::{
    check_cancel, check_close, check_concurrent, check_echo, check_elicitation, check_errors,
    check_list_tools, check_progress,
};
pub(crate) use features::{check_list_changed, check_prompt, check_resource, check_roots};

/// The `connect` check: the era, version and route the client settled on.
pub(crate) fn check_verdict(kind: Kind, wire: Wire, mode: Mode, v: &Verdict) -> Check {
    let want = match mode {
        Mode::Legacy => Era::Legacy,
        Mode::Modern => Era::Modern,
        Mode::Auto => kind.native_era(wire),
    };
    if v.era != want {
        return Err(format!(
            "era {} (version {}, reached {:?}); expected {want}",
            v.era, v.version, v.reached
        ));
    }
    let want_version = match want {
        Era::Legacy => ProtocolVersion::V2025_11_25,
        _ => ProtocolVersion::V2026_07_28,
    };
    if v.version != want_version {
        return Err(format!("version {}; expected {want_version}", v.version));
    }
    let reached_ok = match (mode, kind) {
        (Mode::Legacy, _) => v.reached == Reached::PinnedLegacy,
        (Mode::Modern, _) => v.reached == Reached::PinnedModern,
        (Mode::Auto, _) => v.reached == kind.auto_reached(wire),
    };
    if !reached_ok {
        return Err(format!(
            "reached {:?}, which is not how this server should be found ({:?})",
            v.reached,
            kind.auto_reached(wire)
        ));
    }
    let name = v
        .server_info
        .as_ref()
        .map(|i| i.name.as_str())
        .unwrap_or("?");
    Ok(format!(
        "{} {} ({}), {:?}",
        v.era, v.version, name, v.reached
    ))
}

/// A result's text content, joined by newlines.
fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A client error, with its kind.
fn err(e: ClientError) -> String {
    format!("{e} [{:?}]", e.kind())
}

/// Calls a tool; a result with isError is an error.
async fn call(client: &Client, name: &str, args: Value) -> Result<CallToolResult, String> {
    let result = client.call_tool(name, args).await.map_err(err)?;
    if result.is_error() {
        return Err(format!("{name} returned isError: {}", text_of(&result)));
    }
    Ok(result)
}

/// The names of every tool the server lists.
async fn tool_names(client: &Client) -> Result<Vec<String>, String> {
    Ok(client
        .list_all_tools()
        .await
        .map_err(err)?
        .into_iter()
        .map(|t| t.name)
        .collect())
}

/// Which of `want` are not in `names`.
fn missing<'a>(names: &[String], want: &[&'a str]) -> Vec<&'a str> {
    want.iter()
        .copied()
        .filter(|w| !names.iter().any(|n| n == w))
        .collect()
}

/// A JSON object's map (empty for anything else).
fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// The arguments of the server's echo tool.
fn echo_args(kind: Kind, text: &str) -> Value {
    match kind {
        Kind::Python => json!({ "text": text }),
        Kind::Everything => json!({ "message": text }),
    }
}
