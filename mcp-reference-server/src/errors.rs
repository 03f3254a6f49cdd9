//! The JSON-RPC errors the fake answers with.

use mcp_protocol::ErrorObject;
use mcp_protocol::error_codes::{
    INVALID_PARAMS, METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
};
use serde_json::{Value, json};

/// `-32000`, implementation-defined (the spec names no code for it); what
/// legacy servers in the wild answer for "no valid session".
pub(crate) const SERVER_ERROR: i64 = -32000;

pub(crate) fn invalid_params(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(INVALID_PARAMS, message)
}

pub(crate) fn method_not_found(method: &str) -> ErrorObject {
    ErrorObject::new(METHOD_NOT_FOUND, format!("Method not found: {method}"))
}

pub(crate) fn unsupported_version(supported: &[String], requested: &Value) -> ErrorObject {
    ErrorObject::new(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
        .with_data(json!({ "supported": supported, "requested": requested }))
}

pub(crate) fn missing_capabilities(capabilities: &[&str]) -> ErrorObject {
    let required: serde_json::Map<String, Value> = capabilities
        .iter()
        .map(|c| ((*c).to_owned(), json!({})))
        .collect();
    ErrorObject::new(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "Server requires the {} capability for this request",
            capabilities.join(" and ")
        ),
    )
    .with_data(json!({ "requiredCapabilities": required }))
}
