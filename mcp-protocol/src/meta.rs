//! Reserved `_meta` keys and a typed builder for a request's `_meta`.
//!
//! In 2026-07-28 every request carries the protocol version, the client's
//! capabilities and (SHOULD) its info in `params._meta`; legacy requests
//! carry none of these, only `progressToken` and whatever the caller adds.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::jsonrpc::RequestId;
use crate::types::{ClientCapabilities, Implementation, LoggingLevel};
use crate::version::ProtocolVersion;

/// The protocol version a modern request is made in (required, 2026-07-28+).
pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The client's capabilities for this request (required, 2026-07-28+).
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The client's [`Implementation`] (recommended, 2026-07-28+).
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// The lowest log level the server should send for this request
/// (2026-07-28+, deprecated).
pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// The token progress notifications for this request will carry.
pub const PROGRESS_TOKEN: &str = "progressToken";
/// The server's [`Implementation`], on results (2026-07-28+).
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// The id of the `subscriptions/listen` request a notification belongs to.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// The task a message belongs to (`{"taskId": …}`), tasks of 2025-11-25.
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// W3C trace context: `traceparent` (2026-07-28+).
pub const TRACEPARENT: &str = "traceparent";
/// W3C trace context: `tracestate` (2026-07-28+).
pub const TRACESTATE: &str = "tracestate";
/// W3C baggage (2026-07-28+).
pub const BAGGAGE: &str = "baggage";

/// The keys only modern (2026-07-28+) requests carry; a legacy request must
/// carry none of them.
pub const MODERN_REQUEST_KEYS: [&str; 4] = [
    PROTOCOL_VERSION,
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LOG_LEVEL,
];

/// Builds a request's `_meta` object.
///
/// ```
/// use mcp_protocol::meta::{self, RequestMetaBuilder};
/// use mcp_protocol::types::{ClientCapabilities, Implementation};
/// use mcp_protocol::ProtocolVersion;
///
/// let meta = RequestMetaBuilder::modern(
///     &ProtocolVersion::V2026_07_28,
///     &ClientCapabilities::new(),
///     &Implementation::new("demo", "1.0.0"),
/// )
/// .progress_token(7)
/// .build();
/// assert_eq!(meta[meta::PROTOCOL_VERSION], "2026-07-28");
/// assert_eq!(meta[meta::PROGRESS_TOKEN], 7);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RequestMetaBuilder {
    map: Map<String, Value>,
}

fn to_value<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("protocol types always serialize")
}

impl RequestMetaBuilder {
    /// An empty `_meta`, as a legacy request starts.
    pub fn new() -> Self {
        Self::default()
    }

    /// A modern request's `_meta`: version, capabilities and client info.
    pub fn modern(
        version: &ProtocolVersion,
        capabilities: &ClientCapabilities,
        client_info: &Implementation,
    ) -> Self {
        Self::new()
            .protocol_version(version)
            .client_capabilities(capabilities)
            .client_info(client_info)
    }

    /// Starts from an existing `_meta` (the caller's extra keys, say).
    pub fn from_map(map: Map<String, Value>) -> Self {
        RequestMetaBuilder { map }
    }

    /// Sets `io.modelcontextprotocol/protocolVersion`.
    pub fn protocol_version(self, version: &ProtocolVersion) -> Self {
        self.insert(PROTOCOL_VERSION, Value::from(version.as_str()))
    }

    /// Sets `io.modelcontextprotocol/clientCapabilities`.
    pub fn client_capabilities(self, capabilities: &ClientCapabilities) -> Self {
        self.insert(CLIENT_CAPABILITIES, to_value(capabilities))
    }

    /// Sets `io.modelcontextprotocol/clientInfo`.
    pub fn client_info(self, info: &Implementation) -> Self {
        self.insert(CLIENT_INFO, to_value(info))
    }

    /// Sets `io.modelcontextprotocol/logLevel`.
    pub fn log_level(self, level: &LoggingLevel) -> Self {
        self.insert(LOG_LEVEL, Value::from(level.as_str()))
    }

    /// Sets `progressToken`.
    pub fn progress_token(self, token: impl Into<RequestId>) -> Self {
        let token = token.into().to_value();
        self.insert(PROGRESS_TOKEN, token)
    }

    /// Sets `io.modelcontextprotocol/related-task`.
    pub fn related_task(self, task_id: impl Into<String>) -> Self {
        let mut related = Map::new();
        related.insert("taskId".into(), Value::from(task_id.into()));
        self.insert(RELATED_TASK, Value::Object(related))
    }

    /// Sets `traceparent` (W3C trace context).
    pub fn traceparent(self, value: impl Into<String>) -> Self {
        self.insert(TRACEPARENT, Value::from(value.into()))
    }

    /// Sets `tracestate` (W3C trace context).
    pub fn tracestate(self, value: impl Into<String>) -> Self {
        self.insert(TRACESTATE, Value::from(value.into()))
    }

    /// Sets `baggage` (W3C baggage).
    pub fn baggage(self, value: impl Into<String>) -> Self {
        self.insert(BAGGAGE, Value::from(value.into()))
    }

    /// Sets any key.
    pub fn insert(mut self, key: impl Into<String>, value: Value) -> Self {
        self.map.insert(key.into(), value);
        self
    }

    /// Adds every key of `other` that is not set yet (the reserved keys set
    /// here win over a caller's).
    pub fn merge_missing(mut self, other: &Map<String, Value>) -> Self {
        for (k, v) in other {
            self.map.entry(k.clone()).or_insert_with(|| v.clone());
        }
        self
    }

    /// The `_meta` object.
    pub fn build(self) -> Map<String, Value> {
        self.map
    }
}

/// Puts `meta` into `params._meta`, merged over any `_meta` already there
/// (keys of `meta` win). Absent params become `{"_meta": meta}`; params
/// that are not an object are returned unchanged.
pub fn with_meta(params: Option<Value>, meta: Map<String, Value>) -> Option<Value> {
    if meta.is_empty() {
        return params;
    }
    let mut params = params.unwrap_or_else(|| Value::Object(Map::new()));
    if let Value::Object(obj) = &mut params {
        match obj.get_mut("_meta") {
            Some(Value::Object(existing)) => existing.extend(meta),
            _ => {
                obj.insert("_meta".into(), Value::Object(meta));
            }
        }
    }
    Some(params)
}

/// `_meta.progressToken` of raw params (or a bare `progressToken`, as some
/// peers send it), if it is a string or an integer.
pub fn progress_token_of(params: Option<&Value>) -> Option<RequestId> {
    let params = params?;
    params
        .get("_meta")
        .and_then(|m| m.get(PROGRESS_TOKEN))
        .or_else(|| params.get(PROGRESS_TOKEN))
        .and_then(RequestId::from_value)
}

/// The protocol version in a request's `_meta`, if any.
pub fn protocol_version_of(meta: &Map<String, Value>) -> Option<ProtocolVersion> {
    meta.get(PROTOCOL_VERSION)
        .and_then(Value::as_str)
        .map(ProtocolVersion::new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builds_and_merges() {
        let meta = RequestMetaBuilder::new()
            .log_level(&LoggingLevel::Warning)
            .related_task("t1")
            .traceparent("00-abc-def-01")
            .build();
        assert_eq!(
            Value::Object(meta.clone()),
            json!({LOG_LEVEL: "warning", RELATED_TASK: {"taskId": "t1"}, TRACEPARENT: "00-abc-def-01"})
        );
        let params = with_meta(Some(json!({"name": "x", "_meta": {"a": 1}})), meta);
        assert_eq!(params.as_ref().unwrap()["_meta"]["a"], 1);
        assert_eq!(params.as_ref().unwrap()["_meta"][LOG_LEVEL], "warning");
        assert_eq!(with_meta(None, Map::new()), None);
        assert_eq!(
            progress_token_of(Some(&json!({"_meta": {"progressToken": "p"}}))),
            Some("p".into())
        );
        assert_eq!(
            progress_token_of(Some(&json!({"progressToken": 3}))),
            Some(3.into())
        );
    }
}
