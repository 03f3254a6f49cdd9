//! The headers a 2026-07-28 request mirrors its body in
//! (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`),
//! checked against the body as a server must: a mismatch is refused
//! (`400`, `-32020`) before anything is relayed.

use http::HeaderMap;
use mcp_protocol::Message;
use mcp_protocol::headers::{PARAM_HEADER_PREFIX, decode_header_value, name_value, param_headers};
use mcp_protocol::meta::PROTOCOL_VERSION;
use mcp_protocol::methods::{PROMPTS_GET, RESOURCES_READ, TOOLS_CALL};
use serde_json::{Map, Value};

/// The header that names a legacy session.
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";
/// The header of the revision a request speaks.
pub(crate) const VERSION_HEADER: &str = "mcp-protocol-version";

/// A header's value, decoded (`=?base64?…?=`), if it is there.
fn decoded(headers: &HeaderMap, name: &str) -> Result<Option<String>, String> {
    match headers.get(name) {
        None => Ok(None),
        Some(v) => {
            let text = v
                .to_str()
                .map_err(|_| format!("the {name} header is not text"))?;
            decode_header_value(text.trim())
                .map(|d| Some(d.into_owned()))
                .map_err(|e| format!("the {name} header cannot be decoded: {e}"))
        }
    }
}

/// Checks the standard headers against the body: the reason for a
/// refusal, if any.
pub(crate) fn check_headers(headers: &HeaderMap, message: &Message) -> Result<(), String> {
    let (method, params) = match message {
        Message::Request(r) => (r.method.as_str(), r.params.as_ref()),
        Message::Notification(n) => (n.method.as_str(), n.params.as_ref()),
        _ => return Ok(()),
    };
    let body_version = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(PROTOCOL_VERSION))
        .and_then(Value::as_str);
    let header_version = headers
        .get(VERSION_HEADER)
        .map(|v| v.to_str().map(str::trim).unwrap_or_default());
    match (header_version, body_version) {
        (None, _) => {
            return Err(
                "the MCP-Protocol-Version header is required (a legacy client starts with initialize)"
                    .into(),
            );
        }
        (Some(h), Some(b)) if h != b => {
            return Err(format!(
                "the MCP-Protocol-Version header {h:?} does not match the body's {b:?}"
            ));
        }
        _ => {}
    }
    match decoded(headers, "mcp-method")? {
        None => return Err("the Mcp-Method header is required".into()),
        Some(h) if h != method => {
            return Err(format!(
                "the Mcp-Method header {h:?} does not match the body's {method:?}"
            ));
        }
        _ => {}
    }
    // The core methods only: the tasks extension's are the server's to
    // check (a server without it answers them -32601, headers or not).
    let named = matches!(method, TOOLS_CALL | PROMPTS_GET | RESOURCES_READ);
    if let Some(name) = name_value(method, params).filter(|_| named) {
        match decoded(headers, "mcp-name")? {
            None => return Err("the Mcp-Name header is required".into()),
            Some(h) if h != name => {
                return Err(format!(
                    "the Mcp-Name header {h:?} does not match the body's {name:?}"
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// `Mcp-Param-*` of a `tools/call`: exactly the headers the tool's
/// `x-mcp-header` annotations ask for, with the argument values. A tool
/// the bridge does not know is the server's to refuse.
pub(crate) fn check_params(
    headers: &HeaderMap,
    params: Option<&Value>,
    schema: Option<&Value>,
) -> Result<(), String> {
    let empty = Map::new();
    let arguments = params
        .and_then(|p| p.get("arguments"))
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let expected = match schema.and_then(Value::as_object) {
        Some(schema) => param_headers(schema, arguments),
        None => Vec::new(),
    };
    let prefix = PARAM_HEADER_PREFIX.to_ascii_lowercase();
    for (name, value) in headers {
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
        let Some(got) = decoded(headers, name)? else {
            return Err(format!(
                "the {name} header is required (the tool annotates it)"
            ));
        };
        if got != want {
            return Err(format!(
                "the {name} header {got:?} does not match the argument {want:?}"
            ));
        }
    }
    Ok(())
}

/// The `Mcp-Param-*` headers a client sent, to send on upstream as they
/// are.
pub(crate) fn param_headers_sent(headers: &HeaderMap) -> Vec<(String, String)> {
    let prefix = PARAM_HEADER_PREFIX.to_ascii_lowercase();
    headers
        .iter()
        .filter(|(name, _)| name.as_str().starts_with(&prefix))
        .filter_map(|(name, value)| {
            Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_protocol::Request;
    use serde_json::json;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().unwrap());
        }
        map
    }

    fn call(name: &str) -> Message {
        Message::Request(Request::new(
            1,
            "tools/call",
            Some(json!({"name": name, "arguments": {"region": "eu"},
                        "_meta": {PROTOCOL_VERSION: "2026-07-28"}})),
        ))
    }

    #[test]
    fn the_standard_headers_must_match_the_body() {
        let good = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "echo"),
        ];
        assert_eq!(check_headers(&headers(&good), &call("echo")), Ok(()));
        let wrong_name = [good[0], good[1], ("mcp-name", "other")];
        assert!(check_headers(&headers(&wrong_name), &call("echo")).is_err());
        let wrong_version = [("mcp-protocol-version", "2025-11-25"), good[1], good[2]];
        assert!(check_headers(&headers(&wrong_version), &call("echo")).is_err());
        assert!(check_headers(&headers(&good[1..]), &call("echo")).is_err());
        let encoded = [good[0], good[1], ("mcp-name", "=?base64?Y2Fmw6k=?=")];
        assert_eq!(check_headers(&headers(&encoded), &call("café")), Ok(()));
    }

    #[test]
    fn param_headers_are_exactly_those_annotated() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}});
        let params = json!({"name": "q", "arguments": {"region": "eu"}});
        let check =
            |h: &[(&'static str, &str)]| check_params(&headers(h), Some(&params), Some(&schema));
        assert_eq!(check(&[("mcp-param-region", "eu")]), Ok(()));
        assert!(check(&[("mcp-param-region", "us")]).is_err());
        assert!(check(&[]).is_err());
        assert!(check(&[("mcp-param-region", "eu"), ("mcp-param-other", "x")]).is_err());
        // A tool the bridge does not know: no header may claim a param.
        assert_eq!(check_params(&headers(&[]), Some(&params), None), Ok(()));
        assert_eq!(
            param_headers_sent(&headers(&[("mcp-param-region", "eu"), ("mcp-name", "q")])),
            [("mcp-param-region".to_owned(), "eu".to_owned())]
        );
    }
}
