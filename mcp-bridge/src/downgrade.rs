//! A 2026-07-28 client in front of a legacy server: the client's
//! `server/discover` is answered from the server's `initialize`, which the
//! bridge sends once (with the capabilities and info of the client that
//! asked), and each request then goes to the server without the `_meta`
//! only 2026-07-28 has. The server's own requests during a call
//! (elicitation, sampling, roots) are refused with an error that says so:
//! a 2026-07-28 client takes them only as an `input_required` result,
//! which needs calls held between the client's retries.

use std::sync::Arc;

use mcp_protocol::error_codes::INTERNAL_ERROR;
use mcp_protocol::meta::{
    CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, PROTOCOL_VERSION, SERVER_INFO,
};
use mcp_protocol::methods::{
    INITIALIZE, NOTIFICATION_INITIALIZED, PROMPTS_LIST, RESOURCES_LIST, RESOURCES_READ,
    RESOURCES_TEMPLATES_LIST, TOOLS_LIST,
};
use mcp_protocol::{ErrorObject, Notification, ProtocolVersion, Request, RequestId};
use mcp_transport::{RequestOptions, Transport};
use serde_json::{Value, json};

/// Opens a legacy session with the server for a 2026-07-28 client and
/// answers its `server/discover` from the server's `initialize`.
pub(crate) async fn discover(
    upstream: &Arc<dyn Transport>,
    request: &Request,
) -> Result<Value, ErrorObject> {
    let meta = request.meta().cloned().unwrap_or_default();
    let info = meta
        .get(CLIENT_INFO)
        .cloned()
        .unwrap_or_else(|| json!({"name": "mcp-bridge", "version": env!("CARGO_PKG_VERSION")}));
    let params = json!({
        "protocolVersion": ProtocolVersion::LATEST_LEGACY.as_str(),
        "capabilities": meta.get(CLIENT_CAPABILITIES).cloned().unwrap_or(json!({})),
        "clientInfo": info,
    });
    let id = RequestId::String("mcp-bridge-initialize".into());
    let initialized = upstream
        .request(
            Request::new(id, INITIALIZE, Some(params)),
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
    Ok(result)
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

/// Gives a complete result of a method that 2026-07-28 caches the hints
/// that revision requires of it (`ttlMs`, `cacheScope`), which a legacy
/// server never writes: `0`, since the bridge cannot tell when the
/// server's lists change, and `private`, since the answer came through
/// one session.
pub(crate) fn with_cache_hints(method: &str, result: &mut Value) {
    const CACHED: [&str; 5] = [
        TOOLS_LIST,
        PROMPTS_LIST,
        RESOURCES_LIST,
        RESOURCES_TEMPLATES_LIST,
        RESOURCES_READ,
    ];
    let Some(object) = result.as_object_mut() else {
        return;
    };
    let complete = object
        .get("resultType")
        .is_none_or(|t| t.as_str() == Some("complete"));
    if complete && CACHED.contains(&method) {
        object.entry("ttlMs").or_insert(json!(0));
        object.entry("cacheScope").or_insert(json!("private"));
    }
}

/// The error a legacy server's request gets when its client speaks
/// 2026-07-28.
pub(crate) fn refused(method: &str) -> ErrorObject {
    ErrorObject::new(
        INTERNAL_ERROR,
        format!(
            "the bridge's client speaks 2026-07-28, and the bridge does not yet turn a server's {method} into an input_required result"
        ),
    )
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
    fn cached_lists_get_the_hints_2026_07_28_requires() {
        let mut list = json!({"resultType": "complete", "tools": []});
        with_cache_hints(TOOLS_LIST, &mut list);
        assert_eq!(list["ttlMs"], 0);
        assert_eq!(list["cacheScope"], "private");
        let mut call = json!({"content": []});
        with_cache_hints("tools/call", &mut call);
        assert_eq!(call, json!({"content": []}));
        let mut asking = json!({"resultType": "input_required", "inputRequests": {}});
        with_cache_hints(RESOURCES_READ, &mut asking);
        assert!(asking.get("ttlMs").is_none());
    }
}
