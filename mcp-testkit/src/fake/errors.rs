//! The JSON-RPC errors the fake answers with.

use mcp_protocol::ErrorObject;
use serde_json::{Value, json};

/// `-32600` Invalid Request.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// `-32601` Method not found.
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
/// `-32602` Invalid params.
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// `-32700` Parse error.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// `-32000`, implementation-defined.
pub(crate) const SERVER_ERROR: i64 = -32000;
/// `-32002` Resource not found (legacy).
pub(crate) const RESOURCE_NOT_FOUND: i64 = -32002;
/// `-32021` Missing required client capability (modern).
pub(crate) const MISSING_CAPABILITY: i64 = -32021;
/// `-32022` Unsupported protocol version (modern).
pub(crate) const UNSUPPORTED_VERSION: i64 = -32022;

pub(crate) fn invalid_params(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(INVALID_PARAMS, message)
}

pub(crate) fn method_not_found(method: &str) -> ErrorObject {
    ErrorObject::new(METHOD_NOT_FOUND, format!("Method not found: {method}"))
}

pub(crate) fn unsupported_version(supported: &[String], requested: &Value) -> ErrorObject {
    ErrorObject::new(UNSUPPORTED_VERSION, "Unsupported protocol version")
        .with_data(json!({ "supported": supported, "requested": requested }))
}

pub(crate) fn missing_capabilities(capabilities: &[&str]) -> ErrorObject {
    let required: serde_json::Map<String, Value> = capabilities
        .iter()
        .map(|c| ((*c).to_owned(), json!({})))
        .collect();
    ErrorObject::new(
        MISSING_CAPABILITY,
        format!(
            "Server requires the {} capability for this request",
            capabilities.join(" and ")
        ),
    )
    .with_data(json!({ "requiredCapabilities": required }))
}
