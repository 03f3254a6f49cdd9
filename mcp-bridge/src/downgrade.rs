//! A 2026-07-28 client in front of a legacy server: the client's
//! `server/discover` is answered from the server's `initialize`, which the
//! bridge sends once (with the info of the client that asked, and its
//! capabilities plus elicitation, sampling and roots: each later request
//! declares its own, which the bridge holds the server's requests to),
//! and each request then goes to the server without the `_meta` only
//! 2026-07-28 has. A cacheable result gets `ttlMs` 0 (`cacheScope`
//! private): a legacy server's list changes reach only a client that
//! listens, which a result's lifetime cannot count on. The server's own requests during a call (elicitation, sampling,
//! roots) become an `input_required` result and the call is held for the
//! client's retry ([`crate::suspend`]); one outside any call is refused
//! with `-32602` (SEP-2260), saying why. Its notifications of list
//! changes reach the client's `subscriptions/listen`
//! ([`crate::subscriptions`]). Each request is first judged as a
//! 2026-07-28 server would ([`admit`]).

use std::sync::Arc;

use mcp_protocol::error_codes::{
    INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, RESOURCE_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
};
use mcp_protocol::meta::{
    CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, PROTOCOL_VERSION, SERVER_INFO,
};
use mcp_protocol::methods::{
    INITIALIZE, LOGGING_SET_LEVEL, NOTIFICATION_INITIALIZED, PING, PROMPTS_LIST, RESOURCES_LIST,
    RESOURCES_READ, RESOURCES_SUBSCRIBE, RESOURCES_TEMPLATES_LIST, RESOURCES_UNSUBSCRIBE,
    TOOLS_LIST,
};
use mcp_protocol::{ErrorObject, Notification, ProtocolVersion, Request, RequestId};
use mcp_transport::{RequestOptions, Transport};
use serde_json::{Value, json};

/// The methods 2026-07-28 removed: a legacy server has them, a 2026-07-28
/// client must not find them.
const REMOVED: [&str; 5] = [
    INITIALIZE,
    PING,
    LOGGING_SET_LEVEL,
    RESOURCES_SUBSCRIBE,
    RESOURCES_UNSUBSCRIBE,
];

/// Opens a legacy session with the server for a 2026-07-28 client and
/// answers its `server/discover` from the server's `initialize`; gives
/// that answer and the `initialize` params sent (what a restart sends
/// again).
pub(crate) async fn discover(
    upstream: &Arc<dyn Transport>,
    request: &Request,
) -> Result<(Value, Value), ErrorObject> {
    let meta = request.meta().cloned().unwrap_or_default();
    let info = meta
        .get(CLIENT_INFO)
        .cloned()
        .unwrap_or_else(|| json!({"name": "mcp-bridge", "version": env!("CARGO_PKG_VERSION")}));
    // The session is shared by requests that each declare their own
    // capabilities: it declares all the bridge can carry, and each server
    // request is held to its call's.
    let mut capabilities = meta.get(CLIENT_CAPABILITIES).cloned().unwrap_or(json!({}));
    if let Some(declared) = capabilities.as_object_mut() {
        for carried in ["elicitation", "sampling", "roots"] {
            declared.entry(carried).or_insert_with(|| json!({}));
        }
    }
    let params = json!({
        "protocolVersion": ProtocolVersion::LATEST_LEGACY.as_str(),
        "capabilities": capabilities,
        "clientInfo": info,
    });
    let id = RequestId::String("mcp-bridge-initialize".into());
    let initialized = upstream
        .request(
            Request::new(id, INITIALIZE, Some(params.clone())),
            RequestOptions::new().no_wire_cancel(),
        )
        .await
        .map_err(|e| {
            ErrorObject::new(
                INTERNAL_ERROR,
                format!("the server is of the legacy era, and its initialize failed: {e}"),
            )
        })?;
    if let Err(e) = upstream.notify(Notification::new(NOTIFICATION_INITIALIZED, None)) {
        tracing::debug!(error = %e, "notifications/initialized was not sent");
    }
    tracing::info!(
        "the server is of the legacy era; the 2026-07-28 client's requests are translated"
    );
    let mut result = json!({
        "resultType": "complete",
        "supportedVersions": [ProtocolVersion::LATEST.as_str()],
        "capabilities": initialized.get("capabilities").cloned().unwrap_or(json!({})),
        "_meta": { SERVER_INFO: initialized.get("serverInfo").cloned().unwrap_or(json!({})) },
        // The lists may change with no one to tell: never cache them.
        "ttlMs": 0,
        "cacheScope": "private",
    });
    if let Some(instructions) = initialized.get("instructions") {
        result["instructions"] = instructions.clone();
    }
    Ok((result, params))
}

/// Whether a 2026-07-28 request may go on, as a 2026-07-28 server
/// would judge it: what that revision removed is not found, and the
/// request's `_meta` must name the revision and the client's
/// capabilities.
pub(crate) fn admit(request: &Request) -> Result<(), ErrorObject> {
    if REMOVED.contains(&request.method.as_str()) {
        return Err(ErrorObject::new(
            METHOD_NOT_FOUND,
            format!("Method not found: {} (2026-07-28 has none)", request.method),
        ));
    }
    let meta = request.meta();
    let Some(version) = meta.and_then(|m| m.get(PROTOCOL_VERSION)) else {
        let why = format!("_meta[\"{PROTOCOL_VERSION}\"] is required");
        return Err(ErrorObject::new(INVALID_PARAMS, why));
    };
    if meta
        .and_then(|m| m.get(CLIENT_CAPABILITIES))
        .is_none_or(|c| !c.is_object())
    {
        let why = format!("_meta[\"{CLIENT_CAPABILITIES}\"] is required (an object)");
        return Err(ErrorObject::new(INVALID_PARAMS, why));
    }
    if version.as_str() != Some(ProtocolVersion::LATEST.as_str()) {
        let data = json!({"supported": [ProtocolVersion::LATEST.as_str()], "requested": version});
        return Err(
            ErrorObject::new(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
                .with_data(data),
        );
    }
    Ok(())
}

/// A legacy server's error as 2026-07-28 words it: a resource not found
/// is `-32602` there (SEP-2164), not `-32002`.
pub(crate) fn modern_error(mut error: ErrorObject) -> ErrorObject {
    if error.code == RESOURCE_NOT_FOUND {
        error.code = INVALID_PARAMS;
    }
    error
}

/// A 2026-07-28 request made fit for a legacy session: the `_meta` only
/// that revision has is taken out (the progress token and anything else
/// stays).
pub(crate) fn strip(mut request: Request) -> Request {
    if let Some(meta) = request
        .params
        .as_mut()
        .and_then(|p| p.get_mut("_meta"))
        .and_then(Value::as_object_mut)
    {
        for key in [
            PROTOCOL_VERSION,
            CLIENT_CAPABILITIES,
            CLIENT_INFO,
            LOG_LEVEL,
        ] {
            meta.remove(key);
        }
        if meta.is_empty()
            && let Some(params) = request.params.as_mut().and_then(Value::as_object_mut)
        {
            params.remove("_meta");
        }
    }
    request
}

/// A complete result of a cacheable method with the caching hints
/// 2026-07-28 requires: never cached, as a change reaches only a client
/// that listens for it.
pub(crate) fn hinted(method: &str, mut result: Value) -> Value {
    const CACHEABLE: [&str; 5] = [
        TOOLS_LIST,
        PROMPTS_LIST,
        RESOURCES_LIST,
        RESOURCES_TEMPLATES_LIST,
        RESOURCES_READ,
    ];
    if CACHEABLE.contains(&method)
        && let Some(object) = result.as_object_mut()
        && object.get("resultType").and_then(Value::as_str) != Some("input_required")
    {
        object.entry("ttlMs").or_insert(json!(0));
        object.entry("cacheScope").or_insert(json!("private"));
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_revisions_own_meta_is_taken_out() {
        let request = Request::new(
            1,
            "tools/call",
            Some(json!({"name": "echo", "_meta": {
                PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {}, "progressToken": 3}})),
        );
        let params = strip(request).params.unwrap();
        assert_eq!(params["_meta"], json!({"progressToken": 3}));
        let bare = Request::new(
            1,
            "tools/list",
            Some(json!({"_meta": {PROTOCOL_VERSION: "x"}})),
        );
        assert_eq!(strip(bare).params.unwrap(), json!({}));
    }

    #[test]
    fn a_request_is_admitted_as_a_2026_07_28_server_would() {
        let meta = |m: Value| Request::new(1, "tools/list", Some(json!({"_meta": m})));
        let good = json!({PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {}});
        assert!(admit(&meta(good)).is_ok());
        let code = |r: Request| admit(&r).unwrap_err().code;
        assert_eq!(code(meta(json!({CLIENT_CAPABILITIES: {}}))), INVALID_PARAMS);
        assert_eq!(
            code(meta(json!({PROTOCOL_VERSION: "2026-07-28"}))),
            INVALID_PARAMS
        );
        let old = json!({PROTOCOL_VERSION: "2025-06-18", CLIENT_CAPABILITIES: {}});
        assert_eq!(code(meta(old)), UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(code(Request::new(1, PING, None)), METHOD_NOT_FOUND);
    }

    #[test]
    fn only_cacheable_results_get_hints() {
        let listed = hinted(TOOLS_LIST, json!({"tools": []}));
        assert_eq!(listed["ttlMs"], 0);
        assert_eq!(listed["cacheScope"], "private");
        let called = hinted("tools/call", json!({"content": []}));
        assert!(called.get("ttlMs").is_none());
        let asked = hinted(RESOURCES_READ, json!({"resultType": "input_required"}));
        assert!(asked.get("ttlMs").is_none());
    }
}
