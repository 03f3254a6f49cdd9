//! The envelope `mcp bridge` reads of a line it may pass through
//! unparsed: a line it takes is one JSON-RPC object in UTF-8, and the id
//! and method it read are the ones a full parse reads.

use mcp_bridge::fuzzing::envelope;
use mcp_protocol::RequestId;
use serde::de::IgnoredAny;
use serde_json::Value;

/// What serde_json refuses in a value that JSON's grammar allows.
const LENIENT: &[&str] = &[
    "number out of range",
    "unexpected end of hex escape",
    "lone leading surrogate",
    "invalid unicode code point",
];

/// The input is one line, as a client or a server wrote it.
pub fn bridge_lines(input: &[u8]) {
    let Some((id, method)) = envelope(input) else {
        return;
    };
    let shown = || String::from_utf8_lossy(input).into_owned();
    let text = std::str::from_utf8(input).unwrap_or_else(|e| panic!("taken, yet not UTF-8 ({e})"));
    serde_json::from_str::<IgnoredAny>(text)
        .unwrap_or_else(|e| panic!("taken, yet not JSON ({e}): {:?}", shown()));
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        // JSON's grammar bounds no number and pairs no surrogate; serde_json
        // reading values refuses both where the envelope skips them, and
        // such a field passes on as the peer wrote it, as it would with no
        // bridge between them.
        Err(e) if LENIENT.iter().any(|m| e.to_string().starts_with(m)) => return,
        Err(e) => panic!("taken, yet not read whole ({e}): {:?}", shown()),
    };
    let object = value.as_object().expect("taken, so one object");
    assert_eq!(object.get("jsonrpc").and_then(Value::as_str), Some("2.0"));
    let full_id = object.get("id").filter(|v| !v.is_null()).map(|v| {
        RequestId::from_value(v).unwrap_or_else(|| panic!("taken with an id that is not one: {v}"))
    });
    assert_eq!(id, full_id, "the id");
    let full_method = object
        .get("method")
        .map(|m| m.as_str().expect("a method is a string").to_owned());
    assert_eq!(method, full_method, "the method");
}
