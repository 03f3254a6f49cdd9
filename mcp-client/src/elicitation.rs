//! What the client adds to an elicitation answer: the schema's defaults.

use mcp_protocol::types::{ElicitAction, ElicitRequestParams, ElicitResult};

/// On `accept` of a form, fills each field the handler left out with the
/// default its schema gives, as the spec asks of clients.
pub(crate) fn fill_defaults(
    params: &ElicitRequestParams,
    mut result: ElicitResult,
) -> ElicitResult {
    let ElicitRequestParams::Form(form) = params else {
        return result;
    };
    if result.action != ElicitAction::Accept {
        return result;
    }
    let content = result.content.get_or_insert_with(Default::default);
    for (name, schema) in &form.requested_schema.properties {
        if content.contains_key(name) {
            continue;
        }
        let default = serde_json::to_value(schema)
            .ok()
            .and_then(|s| s.get("default").cloned())
            .filter(|d| !d.is_null());
        if let Some(default) = default {
            content.insert(name.clone(), default);
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn fills_only_missing_fields_on_accept() {
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "message": "m",
            "requestedSchema": {"type": "object", "properties": {
                "name": {"type": "string", "default": "anon"},
                "age": {"type": "integer", "default": 3},
                "ok": {"type": "boolean"}
            }}
        }))
        .unwrap();
        let mut content = serde_json::Map::new();
        content.insert("name".into(), Value::from("me"));
        let filled = fill_defaults(&params, ElicitResult::accept(content));
        assert_eq!(
            serde_json::to_value(filled.content).unwrap(),
            json!({"name": "me", "age": 3})
        );
        let declined = fill_defaults(&params, ElicitResult::new(ElicitAction::Decline));
        assert!(declined.content.is_none());
    }
}
