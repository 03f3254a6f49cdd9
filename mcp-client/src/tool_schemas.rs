//! What the client checks in tool definitions and tool results:
//! `x-mcp-header` annotations (a tool with an invalid one is dropped from
//! the list; the rules are [`mcp_protocol::headers`]'s), and
//! `structuredContent` against the tool's `outputSchema`.
//!
//! Schemas are data from the server: a `$ref` in them is never fetched,
//! over the network or from disk (the validator is built with no
//! retriever), and a schema that cannot be compiled skips validation with
//! a warning instead of failing the call.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use mcp_protocol::headers::check_header_annotations;
use mcp_protocol::types::{CallToolResult, Tool};
use serde_json::Value;

/// Drops tools with invalid `x-mcp-header` annotations, warning for each.
pub(crate) fn drop_invalid_tools(tools: &mut Vec<Tool>) {
    tools.retain(|tool| match check_header_annotations(&tool.input_schema) {
        Ok(()) => true,
        Err(reason) => {
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

/// The input schemas of listed tools that carry `x-mcp-header`
/// annotations: what a transport with headers needs to send a call's
/// `Mcp-Param-*` values.
#[derive(Default)]
pub(crate) struct InputSchemas {
    listed: std::sync::atomic::AtomicBool,
    annotated: RwLock<HashMap<String, Arc<serde_json::Map<String, Value>>>>,
}

impl InputSchemas {
    /// Remembers the annotated input schemas of listed tools.
    pub(crate) fn learn(&self, tools: &[Tool]) {
        let mut annotated = self.annotated.write().unwrap_or_else(|p| p.into_inner());
        for tool in tools {
            if tool.input_schema.values().any(mentions_header)
                || tool
                    .input_schema
                    .contains_key(mcp_protocol::headers::HEADER_ANNOTATION)
            {
                annotated.insert(tool.name.clone(), Arc::new(tool.input_schema.clone()));
            } else {
                annotated.remove(&tool.name);
            }
        }
        self.listed
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// Whether any tool list was read on this connection.
    pub(crate) fn listed(&self) -> bool {
        self.listed.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The `Mcp-Param-*` headers of a call to `tool` with `arguments`.
    pub(crate) fn headers(
        &self,
        tool: &str,
        arguments: &serde_json::Map<String, Value>,
    ) -> Vec<(String, String)> {
        let schema = self
            .annotated
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(tool)
            .cloned();
        match schema {
            Some(schema) => mcp_protocol::headers::param_headers(&schema, arguments),
            None => Vec::new(),
        }
    }
}

fn mentions_header(value: &Value) -> bool {
    match value {
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| k == mcp_protocol::headers::HEADER_ANNOTATION || mentions_header(v)),
        Value::Array(items) => items.iter().any(mentions_header),
        _ => false,
    }
}
