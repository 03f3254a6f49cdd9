//! Modern Streamable HTTP (2026-07-28): one POST per message, no session,
//! and the headers the spec has a server check against the body
//! (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`); a
//! mismatch is `400` with `-32020`.

use std::sync::Arc;

use http::Response;
use mcp_protocol::error_codes::{HEADER_MISMATCH, INVALID_REQUEST};
use mcp_protocol::headers::{PARAM_HEADER_PREFIX, decode_header_value, param_headers};
use mcp_protocol::meta::PROTOCOL_VERSION;
use mcp_protocol::{Message, methods};
use serde_json::{Map, Value};

use super::exchange;
use super::front::{Front, RecordedRequest, Served};
use super::legacy::VERSION_HEADER;
use super::reply::{self, Body};

/// A POST of the modern rules.
pub(super) async fn post(
    front: &Arc<Front>,
    seen: &RecordedRequest,
    message: Message,
) -> Response<Body> {
    let served = front.modern();
    let id = match &message {
        Message::Request(r) => r.id.to_value(),
        _ => Value::Null,
    };
    if let Err(why) = check_headers(&served, seen, &message) {
        return reply::rpc_error(400, id, HEADER_MISMATCH, &why);
    }
    match message {
        Message::Request(request) => {
            exchange::answer(front, &served, request, true, Vec::new()).await
        }
        Message::Notification(_) => {
            served.session.handle(message);
            reply::status(202)
        }
        _ => {
            let text = "a modern client sends no JSON-RPC responses";
            reply::rpc_error(400, Value::Null, INVALID_REQUEST, text)
        }
    }
}

/// Checks the standard headers against the body: the reason for a
/// rejection, if any.
fn check_headers(served: &Served, seen: &RecordedRequest, message: &Message) -> Result<(), String> {
    let (method, params) = match message {
        Message::Request(r) => (r.method.as_str(), r.params.as_ref()),
        Message::Notification(n) => (n.method.as_str(), n.params.as_ref()),
        _ => return Ok(()),
    };
    let decoded = |name: &str| -> Result<Option<String>, String> {
        match seen.headers.get(name) {
            None => Ok(None),
            Some(v) => {
                let text = v
                    .to_str()
                    .map_err(|_| format!("the {name} header is not text"))?;
                decode_header_value(text)
                    .map(|d| Some(d.into_owned()))
                    .map_err(|e| format!("the {name} header cannot be decoded: {e}"))
            }
        }
    };
    let body_version = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(PROTOCOL_VERSION))
        .and_then(Value::as_str);
    match (seen.header(VERSION_HEADER), body_version) {
        (None, _) => return Err("the MCP-Protocol-Version header is required".into()),
        (Some(h), Some(b)) if h != b => {
            return Err(format!(
                "the MCP-Protocol-Version header {h:?} does not match the body's {b:?}"
            ));
        }
        _ => {}
    }
    match decoded("mcp-method")? {
        None => return Err("the Mcp-Method header is required".into()),
        Some(h) if h != method => {
            return Err(format!(
                "the Mcp-Method header {h:?} does not match the body's {method:?}"
            ));
        }
        _ => {}
    }
    let name_key = match method {
        methods::TOOLS_CALL | methods::PROMPTS_GET => Some("name"),
        methods::RESOURCES_READ => Some("uri"),
        _ => None,
    };
    if let Some(key) = name_key
        && let Some(name) = params.and_then(|p| p.get(key)).and_then(Value::as_str)
    {
        match decoded("mcp-name")? {
            None => return Err("the Mcp-Name header is required".into()),
            Some(h) if h != name => {
                return Err(format!(
                    "the Mcp-Name header {h:?} does not match the body's {key} {name:?}"
                ));
            }
            _ => {}
        }
    }
    if method == methods::TOOLS_CALL {
        check_params(served, seen, params)?;
    }
    Ok(())
}

/// `Mcp-Param-*`: exactly the headers the tool's `x-mcp-header`
/// annotations ask for, with the argument values.
fn check_params(
    served: &Served,
    seen: &RecordedRequest,
    params: Option<&Value>,
) -> Result<(), String> {
    let name = params.and_then(|p| p.get("name")).and_then(Value::as_str);
    let schema = name.and_then(|name| {
        served
            .session
            .state()
            .tools
            .iter()
            .find(|t| t.name() == name)
            .and_then(|t| t.definition.get("inputSchema").cloned())
    });
    let empty = Map::new();
    let arguments = params
        .and_then(|p| p.get("arguments"))
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let expected = match schema.as_ref().and_then(Value::as_object) {
        Some(schema) => param_headers(schema, arguments),
        None => Vec::new(),
    };
    let prefix = PARAM_HEADER_PREFIX.to_ascii_lowercase();
    for (name, value) in &seen.headers {
        if name.as_str().starts_with(&prefix)
            && !expected
                .iter()
                .any(|(e, _)| e.eq_ignore_ascii_case(name.as_str()))
        {
            let sent = value.to_str().unwrap_or_default();
            return Err(format!("the {name} header ({sent:?}) matches no argument"));
        }
    }
    for (name, value) in &expected {
        let want = decode_header_value(value).map_err(|e| e.to_string())?;
        let Some(sent) = seen.headers.get(name.as_str()) else {
            return Err(format!(
                "the {name} header is required (the tool annotates it)"
            ));
        };
        let sent = sent
            .to_str()
            .map_err(|_| format!("the {name} header is not text"))?;
        let got = decode_header_value(sent)
            .map_err(|e| format!("the {name} header cannot be decoded: {e}"))?;
        if got != want {
            return Err(format!(
                "the {name} header {got:?} does not match the argument {want:?}"
            ));
        }
    }
    Ok(())
}
