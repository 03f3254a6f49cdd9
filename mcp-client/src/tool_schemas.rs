//! What the client checks in tool definitions and tool results:
//! `x-mcp-header` annotations (a tool with an invalid one is dropped from
//! the list), and `structuredContent` against the tool's `outputSchema`.
//!
//! Schemas are data from the server: a `$ref` in them is never fetched,
//! over the network or from disk (the validator is built with no
//! retriever), and a schema that cannot be compiled skips validation with
//! a warning instead of failing the call.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use mcp_protocol::types::{CallToolResult, Tool};
use serde_json::{Map, Value};

/// The largest integer a header may carry (JavaScript's safe range).
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Why a tool's `x-mcp-header` annotations are invalid, or `None` when
/// they are all valid (or absent).
pub(crate) fn header_annotation_error(tool: &Tool) -> Option<String> {
    let mut seen: Vec<String> = Vec::new();
    let schema = Value::Object(tool.input_schema.clone());
    check_node(&schema, true, "inputSchema", &mut seen).err()
}

/// Walks the schema. `reachable` is whether the path from the root is a
/// chain of `properties` keys only.
fn check_node(
    node: &Value,
    reachable: bool,
    path: &str,
    seen: &mut Vec<String>,
) -> Result<(), String> {
    match node {
        Value::Object(map) => {
            if let Some(name) = map.get("x-mcp-header") {
                check_annotation(map, name, reachable, path, seen)?;
            }
            for (key, child) in map {
                if key == "properties" {
                    if let Value::Object(props) = child {
                        for (prop, schema) in props {
                            let p = format!("{path}.properties.{prop}");
                            check_node(schema, reachable, &p, seen)?;
                        }
                    }
                } else if key != "x-mcp-header" {
                    check_node(child, false, &format!("{path}.{key}"), seen)?;
                }
            }
            Ok(())
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                check_node(item, false, &format!("{path}[{i}]"), seen)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn check_annotation(
    schema: &Map<String, Value>,
    name: &Value,
    reachable: bool,
    path: &str,
    seen: &mut Vec<String>,
) -> Result<(), String> {
    let Value::String(name) = name else {
        return Err(format!("x-mcp-header at {path} is not a string"));
    };
    if !reachable {
        return Err(format!(
            "x-mcp-header {name:?} at {path} is not reachable through `properties` alone"
        ));
    }
    if name.is_empty() || !name.bytes().all(is_tchar) {
        return Err(format!(
            "x-mcp-header {name:?} at {path} is not an HTTP field-name token"
        ));
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string" | "integer" | "boolean") => {}
        other => {
            return Err(format!(
                "x-mcp-header {name:?} at {path} is on a property of type {}, not string, integer or boolean",
                other.unwrap_or("(none)")
            ));
        }
    }
    let lower = name.to_ascii_lowercase();
    if seen.contains(&lower) {
        return Err(format!("x-mcp-header {name:?} is used twice"));
    }
    seen.push(lower);
    Ok(())
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The `Mcp-Param-*` headers of a call: each annotated property's value in
/// `arguments`, encoded as the spec says. Assumes a valid tool.
pub fn param_headers(tool: &Tool, arguments: &Map<String, Value>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    collect_headers(
        &Value::Object(tool.input_schema.clone()),
        Some(&Value::Object(arguments.clone())),
        &mut out,
    );
    out
}

fn collect_headers(schema: &Value, value: Option<&Value>, out: &mut Vec<(String, String)>) {
    let Some(map) = schema.as_object() else {
        return;
    };
    if let (Some(Value::String(name)), Some(value)) = (map.get("x-mcp-header"), value) {
        let text = match value {
            Value::String(s) => Some(s.clone()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Number(n) => n
                .as_i64()
                .filter(|i| i.abs() <= MAX_SAFE_INTEGER)
                .map(|i| i.to_string()),
            _ => None,
        };
        if let Some(text) = text {
            out.push((format!("Mcp-Param-{name}"), encode_header_value(&text)));
        }
    }
    if let Some(Value::Object(props)) = map.get("properties") {
        for (prop, sub) in props {
            let child = value.and_then(|v| v.get(prop)).filter(|v| !v.is_null());
            collect_headers(sub, child, out);
        }
    }
}

/// Encodes a header value: as it is when it is plain visible ASCII without
/// edge whitespace, else `=?base64?…?=` of its UTF-8 (also for a value that
/// looks like the sentinel).
pub fn encode_header_value(value: &str) -> String {
    let plain = value
        .bytes()
        .all(|b| (0x20..=0x7e).contains(&b) || b == b'\t')
        && value.trim() == value
        && !(value.starts_with("=?base64?") && value.ends_with("?="));
    if plain {
        value.to_owned()
    } else {
        format!("=?base64?{}?=", base64_encode(value.as_bytes()))
    }
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Drops tools with invalid `x-mcp-header` annotations, warning for each.
pub(crate) fn drop_invalid_tools(tools: &mut Vec<Tool>) {
    tools.retain(|tool| match header_annotation_error(tool) {
        None => true,
        Some(reason) => {
            tracing::warn!(tool = %tool.name, %reason, "dropped a tool with an invalid x-mcp-header annotation");
            false
        }
    });
}

/// Output schemas of the tools seen in `tools/list`, compiled on first use.
#[derive(Default)]
pub(crate) struct OutputSchemas {
    schemas: RwLock<HashMap<String, Arc<Compiled>>>,
}

enum Compiled {
    Ready(jsonschema::Validator),
    /// The schema could not be compiled (a `$ref` that is not local, say):
    /// results are not validated.
    Unusable,
    Pending(Value),
}

impl OutputSchemas {
    /// Remembers the output schemas of listed tools.
    pub(crate) fn learn(&self, tools: &[Tool]) {
        let mut schemas = self.schemas.write().unwrap_or_else(|p| p.into_inner());
        for tool in tools {
            match &tool.output_schema {
                Some(schema) => {
                    schemas.insert(
                        tool.name.clone(),
                        Arc::new(Compiled::Pending(Value::Object(schema.clone()))),
                    );
                }
                None => {
                    schemas.remove(&tool.name);
                }
            }
        }
    }

    /// Checks a result against its tool's output schema. Results with
    /// `isError`, and tools never listed, are not checked.
    pub(crate) fn check(&self, tool: &str, result: &CallToolResult) -> Result<(), String> {
        if result.is_error() {
            return Ok(());
        }
        let Some(entry) = self.compiled(tool) else {
            return Ok(());
        };
        let Compiled::Ready(validator) = entry.as_ref() else {
            return Ok(());
        };
        let Some(structured) = &result.structured_content else {
            return Err(format!(
                "tool {tool:?} declares an output schema but returned no structuredContent"
            ));
        };
        let errors: Vec<String> = validator
            .iter_errors(structured)
            .take(3)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "tool {tool:?} returned structuredContent that does not match its output schema: {}",
                errors.join("; ")
            ))
        }
    }

    fn compiled(&self, tool: &str) -> Option<Arc<Compiled>> {
        let entry = self
            .schemas
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(tool)
            .cloned()?;
        let Compiled::Pending(schema) = entry.as_ref() else {
            return Some(entry);
        };
        let compiled = match jsonschema::options().build(schema) {
            Ok(v) => Compiled::Ready(v),
            Err(e) => {
                tracing::warn!(%tool, error = %e, "a tool's output schema cannot be compiled; its results are not validated");
                Compiled::Unusable
            }
        };
        let compiled = Arc::new(compiled);
        self.schemas
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(tool.to_owned(), compiled.clone());
        Some(compiled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(schema: Value) -> Tool {
        serde_json::from_value(json!({"name": "t", "inputSchema": schema})).unwrap()
    }

    #[test]
    fn annotations_are_validated() {
        let ok = tool(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}
        }}));
        assert_eq!(header_annotation_error(&ok), None);
        for bad in [
            json!({"type": "object", "properties": {"x": {"type": "number", "x-mcp-header": "X"}}}),
            json!({"type": "object", "properties": {"x": {"type": "string", "x-mcp-header": ""}}}),
            json!({"type": "object", "properties": {"x": {"type": "string", "x-mcp-header": "a b"}}}),
            json!({"type": "object", "properties": {
                "x": {"type": "string", "x-mcp-header": "Dup"},
                "y": {"type": "string", "x-mcp-header": "dup"}}}),
            json!({"type": "object", "properties": {"x": {"type": "array",
                "items": {"type": "string", "x-mcp-header": "X"}}}}),
            json!({"type": "object", "oneOf": [{"properties": {"x": {"type": "string", "x-mcp-header": "X"}}}]}),
        ] {
            assert!(
                header_annotation_error(&tool(bad.clone())).is_some(),
                "{bad}"
            );
        }
    }

    #[test]
    fn headers_are_extracted_and_encoded() {
        let t = tool(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "greeting": {"type": "string", "x-mcp-header": "Greeting"},
            "ok": {"type": "boolean", "x-mcp-header": "Ok"},
            "absent": {"type": "string", "x-mcp-header": "Absent"},
            "opts": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}
        }}));
        let args = json!({"region": "us-west1", "greeting": "Hello, 世界", "ok": true,
            "opts": {"n": -7}, "absent": null});
        let mut h = param_headers(&t, args.as_object().unwrap());
        h.sort();
        assert_eq!(
            h,
            vec![
                (
                    "Mcp-Param-Greeting".into(),
                    "=?base64?SGVsbG8sIOS4lueVjA==?=".into()
                ),
                ("Mcp-Param-N".into(), "-7".into()),
                ("Mcp-Param-Ok".into(), "true".into()),
                ("Mcp-Param-Region".into(), "us-west1".into()),
            ]
        );
        assert_eq!(encode_header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(
            encode_header_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }
}
