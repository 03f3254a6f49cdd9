//! `mcp tools list` and `mcp tools call NAME k=v …`.

use mcp_client::protocol::types::{CallToolRequestParams, CallToolResult, Tool};
use serde_json::{Map, Value, json};

use super::Ctx;
use crate::args::{ToolsCommand, split_pair};
use crate::exit::{Failure, Outcome};
use crate::output::{content_blocks, one_line, table};

pub(super) async fn run(ctx: &Ctx, command: ToolsCommand) -> Outcome {
    match command {
        ToolsCommand::List => list(ctx).await,
        ToolsCommand::Call {
            name,
            arguments,
            args_json,
        } => call(ctx, &name, &arguments, args_json.as_deref()).await,
    }
}

async fn list(ctx: &Ctx) -> Outcome {
    let tools = ctx.client.list_all_tools().await?;
    if ctx.out.json {
        return ctx.out.json(&json!({ "tools": tools }));
    }
    ctx.out.text(&tools_table(&tools))
}

/// A table of tools: name, arguments (`?` marks optional ones), description.
pub(super) fn tools_table(tools: &[Tool]) -> String {
    let rows: Vec<Vec<String>> = tools
        .iter()
        .map(|t| {
            vec![
                t.name.clone(),
                arguments_summary(&t.input_schema),
                one_line(t.description.as_deref(), 60),
            ]
        })
        .collect();
    table(&["NAME", "ARGUMENTS", "DESCRIPTION"], &rows)
}

fn arguments_summary(schema: &Map<String, Value>) -> String {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .keys()
                .map(|k| {
                    if required.contains(&k.as_str()) {
                        k.clone()
                    } else {
                        format!("{k}?")
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

async fn call(ctx: &Ctx, name: &str, pairs: &[String], args_json: Option<&str>) -> Outcome {
    let mut arguments = match args_json {
        None => Map::new(),
        Some(text) => match serde_json::from_str(text) {
            Ok(Value::Object(map)) => map,
            Ok(other) => {
                return Err(Failure::usage(format!(
                    "--args must be a JSON object, not {other}"
                )));
            }
            Err(e) => return Err(Failure::usage(format!("--args is not JSON: {e}"))),
        },
    };
    if !pairs.is_empty() {
        // The tool's input schema types the values; without it (the list
        // failed, or the tool is not listed), values are read as JSON when
        // they parse, as strings otherwise.
        let schema = match ctx.client.list_all_tools().await {
            Ok(tools) => tools
                .into_iter()
                .find(|t| t.name == name)
                .map(|t| t.input_schema),
            Err(_) => None,
        };
        for pair in pairs {
            let (key, raw) = split_pair(pair).map_err(Failure::usage)?;
            let property = schema
                .as_ref()
                .and_then(|s| s.get("properties"))
                .and_then(|p| p.get(key));
            let value = typed_value(property, raw)
                .map_err(|why| Failure::usage(format!("argument {key}: {why}")))?;
            arguments.insert(key.to_owned(), value);
        }
    }
    let params = CallToolRequestParams::new(name).with_arguments(arguments);
    let result = ctx
        .client
        .call_tool_with(params, &ctx.options_with_progress())
        .await;
    ctx.progress.clear();
    let result = result?;
    if ctx.out.json {
        return ctx.out.json(&result);
    }
    ctx.out.text(&render_result(ctx, &result))
}

/// A tool result for people: an error marker, the content, and the
/// structured content unless a text block already says the same.
fn render_result(ctx: &Ctx, result: &CallToolResult) -> String {
    let mut parts = Vec::new();
    if result.is_error() {
        parts.push(
            ctx.out
                .error_mark("The tool reported an error (isError: true):"),
        );
    }
    if !result.content.is_empty() {
        parts.push(content_blocks(&result.content));
    }
    if let Some(structured) = &result.structured_content {
        let repeated = result.content.iter().any(|b| {
            b.as_text()
                .and_then(|t| serde_json::from_str::<Value>(t).ok())
                .is_some_and(|v| &v == structured)
        });
        if !repeated {
            parts.push(ctx.out.heading("Structured content:"));
            parts.push(serde_json::to_string_pretty(structured).unwrap_or_default());
        }
    }
    parts.join("\n")
}

/// Types a `k=v` value by its property's schema: the first of the allowed
/// types the text reads as (integer, number, boolean, null, object, array,
/// then string). Without a schema, JSON when it parses, else a string.
fn typed_value(schema: Option<&Value>, raw: &str) -> Result<Value, String> {
    let types = schema.map(allowed_types).unwrap_or_default();
    if types.is_empty() {
        return Ok(serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned())));
    }
    const ORDER: [&str; 7] = [
        "integer", "number", "boolean", "null", "object", "array", "string",
    ];
    for kind in ORDER.iter().filter(|k| types.iter().any(|t| t == *k)) {
        let parsed = match *kind {
            "string" => Some(Value::String(raw.to_owned())),
            "integer" => raw
                .parse::<i64>()
                .map(Value::from)
                .or_else(|_| raw.parse::<u64>().map(Value::from))
                .ok(),
            "number" => raw.parse::<i64>().map(Value::from).ok().or_else(|| {
                serde_json::from_str::<Value>(raw)
                    .ok()
                    .filter(Value::is_number)
            }),
            "boolean" => match raw {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => None,
            },
            "null" => (raw == "null").then_some(Value::Null),
            "object" => serde_json::from_str::<Value>(raw)
                .ok()
                .filter(Value::is_object),
            _ => serde_json::from_str::<Value>(raw)
                .ok()
                .filter(Value::is_array),
        };
        if let Some(value) = parsed {
            return Ok(value);
        }
    }
    Err(format!("expected {}, got {raw:?}", types.join(" or ")))
}

/// The JSON types a property allows: `type` (a name or a list), or those
/// of its `anyOf`/`oneOf` branches; string for an `enum` of strings.
fn allowed_types(schema: &Value) -> Vec<String> {
    let mut types = Vec::new();
    match schema.get("type") {
        Some(Value::String(t)) => types.push(t.clone()),
        Some(Value::Array(ts)) => {
            types.extend(ts.iter().filter_map(Value::as_str).map(str::to_owned))
        }
        _ => {}
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            types.extend(branches.iter().flat_map(allowed_types));
        }
    }
    if types.is_empty()
        && let Some(Value::Array(values)) = schema.get("enum")
        && values.iter().all(Value::is_string)
    {
        types.push("string".into());
    }
    types
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(schema: Value, raw: &str) -> Result<Value, String> {
        typed_value(Some(&schema), raw)
    }

    #[test]
    fn values_follow_the_schema() {
        assert_eq!(typed(json!({"type": "integer"}), "3"), Ok(json!(3)));
        assert_eq!(typed(json!({"type": "number"}), "2.5"), Ok(json!(2.5)));
        assert_eq!(typed(json!({"type": "number"}), "3"), Ok(json!(3)));
        assert_eq!(typed(json!({"type": "string"}), "3"), Ok(json!("3")));
        assert_eq!(typed(json!({"type": "boolean"}), "true"), Ok(json!(true)));
        assert_eq!(typed(json!({"type": "array"}), "[1,2]"), Ok(json!([1, 2])));
        assert_eq!(
            typed(json!({"type": "object"}), "{\"a\":1}"),
            Ok(json!({"a": 1}))
        );
        assert_eq!(
            typed(json!({"type": ["integer", "string"]}), "x"),
            Ok(json!("x"))
        );
        assert_eq!(
            typed(
                json!({"anyOf": [{"type": "null"}, {"type": "integer"}]}),
                "null"
            ),
            Ok(Value::Null)
        );
        assert_eq!(typed(json!({"enum": ["a", "b"]}), "a"), Ok(json!("a")));
        assert!(typed(json!({"type": "integer"}), "three").is_err());
        assert!(typed(json!({"type": "boolean"}), "yes").is_err());
    }

    #[test]
    fn without_a_schema_json_then_string() {
        assert_eq!(typed_value(None, "3"), Ok(json!(3)));
        assert_eq!(typed_value(None, "hello"), Ok(json!("hello")));
        assert_eq!(typed_value(Some(&json!({})), "true"), Ok(json!(true)));
    }

    #[test]
    fn argument_summaries_mark_optional_ones() {
        let schema = json!({"properties": {"a": {}, "b": {}}, "required": ["a"]});
        assert_eq!(arguments_summary(schema.as_object().unwrap()), "a, b?");
    }
}
