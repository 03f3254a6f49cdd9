//! What a 2026-07-28 client's request declared it can be asked: a
//! legacy server's request during the call is put to the client only
//! when the call's capabilities cover it, down to the kind asked.

use mcp_protocol::Request;
use mcp_protocol::methods::{ELICITATION_CREATE, ROOTS_LIST, SAMPLING_CREATE_MESSAGE};
use serde_json::Value;

/// The client capability a server request needs.
pub(super) fn capability_of(method: &str) -> Option<&'static str> {
    match method {
        ELICITATION_CREATE => Some("elicitation"),
        SAMPLING_CREATE_MESSAGE => Some("sampling"),
        ROOTS_LIST => Some("roots"),
        _ => None,
    }
}

/// Whether `capabilities` cover `request`, down to the kind asked: a URL
/// elicitation needs `elicitation.url` (a bare `elicitation` is forms
/// only), sampling with tools needs `sampling.tools`.
pub(super) fn declares(capabilities: &Value, request: &Request) -> bool {
    let Some(declared) = capability_of(&request.method).and_then(|c| capabilities.get(c)) else {
        return false;
    };
    let params = request.params.as_ref();
    let asks = |key: &str| params.and_then(|p| p.get(key));
    match request.method.as_str() {
        ELICITATION_CREATE if asks("mode").and_then(Value::as_str) == Some("url") => {
            declared.get("url").is_some()
        }
        SAMPLING_CREATE_MESSAGE
            if asks("tools")
                .and_then(Value::as_array)
                .is_some_and(|t| !t.is_empty()) =>
        {
            declared.get("tools").is_some()
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_capability_covers_only_the_kinds_it_declares() {
        let ask = |method: &str, params: Value| Request::new(1, method, Some(params));
        let forms = json!({"elicitation": {}, "sampling": {}});
        let url = ask(
            ELICITATION_CREATE,
            json!({"mode": "url", "url": "https://x"}),
        );
        let form = ask(ELICITATION_CREATE, json!({"message": "name?"}));
        let tooled = ask(SAMPLING_CREATE_MESSAGE, json!({"tools": [{"name": "t"}]}));
        assert!(declares(&forms, &form));
        assert!(!declares(&forms, &url));
        assert!(!declares(&forms, &tooled));
        let all = json!({"elicitation": {"form": {}, "url": {}}, "sampling": {"tools": {}}});
        assert!(declares(&all, &url) && declares(&all, &tooled));
        assert!(!declares(&all, &ask(ROOTS_LIST, json!({}))));
    }
}
