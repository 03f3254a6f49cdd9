//! A request's failure as JSON, and back: how a recording keeps an
//! outcome that is no JSON-RPC answer (an HTTP status, a dead server, a
//! timeout).

use std::time::Duration;

use serde_json::{Value, json};

use crate::{GoneInfo, TransportError};

/// A failure as recorded: `{"kind": …}` with the variant's fields, and
/// `"message"`, its text, for people.
///
/// ```
/// use mcp_transport::TransportError;
/// use mcp_transport::record::{failure_from_value, failure_value};
///
/// let error = TransportError::Http { status: 400, body: "bad".into() };
/// let value = failure_value(&error);
/// assert_eq!(value["kind"], "http");
/// assert!(matches!(failure_from_value(&value), TransportError::Http { status: 400, .. }));
/// ```
pub fn failure_value(error: &TransportError) -> Value {
    let message = error.to_string();
    let mut value = match error {
        TransportError::Rpc {
            code,
            message,
            data,
        } => json!({ "kind": "rpc", "code": code, "rpcMessage": message, "data": data }),
        TransportError::Timeout { method, after } => {
            json!({ "kind": "timeout", "method": method, "afterMs": after.as_millis() as u64 })
        }
        TransportError::ServerGone(info) => json!({ "kind": "gone", "reason": info.reason }),
        TransportError::Closed => json!({ "kind": "closed" }),
        TransportError::Cancelled => json!({ "kind": "cancelled" }),
        TransportError::MessageTooLarge { size, limit } => {
            json!({ "kind": "tooLarge", "size": size, "limit": limit })
        }
        TransportError::Malformed { detail } => json!({ "kind": "malformed", "detail": detail }),
        TransportError::Http { status, body } => {
            json!({ "kind": "http", "status": status, "body": body })
        }
        TransportError::AuthorizationRequired { status, challenge } => {
            json!({ "kind": "authorizationRequired", "status": status, "challenge": challenge })
        }
        TransportError::Unreachable { cause } => json!({ "kind": "unreachable", "cause": cause }),
        TransportError::Credentials { cause } => json!({ "kind": "credentials", "cause": cause }),
        TransportError::StreamBroken {
            may_have_run,
            cause,
        } => json!({ "kind": "streamBroken", "mayHaveRun": may_have_run, "cause": cause }),
        TransportError::SessionExpired { status } => {
            json!({ "kind": "sessionExpired", "status": status })
        }
        TransportError::RetryLater {
            status,
            retry_after,
            body,
        } => json!({
            "kind": "retryLater",
            "status": status,
            "retryAfterMs": retry_after.map(|d| d.as_millis() as u64),
            "body": body,
        }),
        // The rest are faults of the caller, not of the server: kept as
        // text, replayed as an unreachable server.
        other => json!({ "kind": "other", "cause": other.to_string() }),
    };
    value["message"] = Value::from(message);
    value
}

/// The failure [`failure_value`] recorded. A value it cannot read becomes
/// [`TransportError::Unreachable`] holding the value's text.
pub fn failure_from_value(value: &Value) -> TransportError {
    let str_of = |key: &str| value[key].as_str().unwrap_or_default().to_owned();
    let u16_of = |key: &str| value[key].as_u64().unwrap_or_default() as u16;
    let usize_of = |key: &str| value[key].as_u64().unwrap_or_default() as usize;
    let ms_of = |key: &str| value[key].as_u64().map(Duration::from_millis);
    match value["kind"].as_str().unwrap_or_default() {
        "rpc" => TransportError::Rpc {
            code: value["code"].as_i64().unwrap_or_default(),
            message: str_of("rpcMessage"),
            data: value.get("data").filter(|d| !d.is_null()).cloned(),
        },
        "timeout" => TransportError::Timeout {
            method: str_of("method"),
            after: ms_of("afterMs").unwrap_or_default(),
        },
        "gone" => TransportError::gone(GoneInfo::new(str_of("reason"))),
        "closed" => TransportError::Closed,
        "cancelled" => TransportError::Cancelled,
        "tooLarge" => TransportError::MessageTooLarge {
            size: usize_of("size"),
            limit: usize_of("limit"),
        },
        "malformed" => TransportError::Malformed {
            detail: str_of("detail"),
        },
        "http" => TransportError::Http {
            status: u16_of("status"),
            body: str_of("body"),
        },
        "authorizationRequired" => TransportError::AuthorizationRequired {
            status: u16_of("status"),
            challenge: value["challenge"].as_str().map(str::to_owned),
        },
        "streamBroken" => TransportError::StreamBroken {
            may_have_run: value["mayHaveRun"].as_bool().unwrap_or(true),
            cause: str_of("cause"),
        },
        "sessionExpired" => TransportError::SessionExpired {
            status: u16_of("status"),
        },
        "retryLater" => TransportError::RetryLater {
            status: u16_of("status"),
            retry_after: ms_of("retryAfterMs"),
            body: str_of("body"),
        },
        "credentials" => TransportError::Credentials {
            cause: str_of("cause"),
        },
        "unreachable" | "other" => TransportError::Unreachable {
            cause: str_of("cause"),
        },
        _ => TransportError::Unreachable {
            cause: format!("a recorded failure this version cannot read: {value}"),
        },
    }
}
