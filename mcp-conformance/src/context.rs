//! What the suite tells the client: the server URL (the last argument) and
//! the `MCP_CONFORMANCE_*` environment variables.

use mcp_client::protocol::ProtocolVersion;
use serde_json::{Map, Value};

/// The revision the suite assumes when it names none (its own default).
const DEFAULT_VERSION: &str = "2025-11-25";

/// One run: which scenario, at which revision, against which server.
#[derive(Debug)]
pub(crate) struct Run {
    /// `MCP_CONFORMANCE_SCENARIO`.
    pub(crate) scenario: String,
    /// `MCP_CONFORMANCE_PROTOCOL_VERSION`.
    pub(crate) version: ProtocolVersion,
    /// The mock server's URL, used as given (with or without a path).
    pub(crate) url: String,
    /// `MCP_CONFORMANCE_CONTEXT`, when set: `{"name": <scenario>, ...}`.
    pub(crate) context: Option<Map<String, Value>>,
}

impl Run {
    /// Reads the run from the arguments and the environment.
    pub(crate) fn from_env(args: Vec<String>) -> Result<Run, String> {
        let url = args
            .last()
            .cloned()
            .ok_or("usage: mcp-conformance-client [...] <server URL>")?;
        let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO")
            .map_err(|_| "MCP_CONFORMANCE_SCENARIO is not set")?;
        let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
            .unwrap_or_else(|_| DEFAULT_VERSION.to_owned());
        let version = ProtocolVersion::new(version.as_str());
        if !version.is_known() {
            return Err(format!(
                "MCP_CONFORMANCE_PROTOCOL_VERSION={version} is no revision the library knows"
            ));
        }
        let context = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
            Ok(json) => Some(parse_context(&json)?),
            Err(_) => None,
        };
        Ok(Run {
            scenario,
            version,
            url,
            context,
        })
    }

    /// A string field of the context.
    pub(crate) fn context_str(&self, field: &str) -> Option<&str> {
        self.context.as_ref()?.get(field)?.as_str()
    }

    /// The context's `toolCalls`: `(name, arguments)` pairs, in order.
    pub(crate) fn tool_calls(&self) -> Vec<(String, Map<String, Value>)> {
        let calls = self
            .context
            .as_ref()
            .and_then(|c| c.get("toolCalls"))
            .and_then(Value::as_array);
        calls
            .into_iter()
            .flatten()
            .filter_map(|call| {
                let name = call.get("name")?.as_str()?.to_owned();
                let arguments = call
                    .get("arguments")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                Some((name, arguments))
            })
            .collect()
    }
}

fn parse_context(json: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str(json) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "MCP_CONFORMANCE_CONTEXT is not a JSON object: {other}"
        )),
        Err(e) => Err(format!("MCP_CONFORMANCE_CONTEXT is not JSON: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tool_calls_in_order() {
        let context = parse_context(
            r#"{"name":"http-custom-headers","toolCalls":[
                {"name":"a","arguments":{"x":1}},{"name":"b"},{"arguments":{}}]}"#,
        )
        .unwrap();
        let run = Run {
            scenario: "http-custom-headers".into(),
            version: ProtocolVersion::V2026_07_28,
            url: "http://localhost:1".into(),
            context: Some(context),
        };
        let calls = run.tool_calls();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].0, "a");
        assert_eq!(calls[0].1.get("x"), Some(&Value::from(1)));
        assert_eq!(calls[1].0, "b");
        assert!(calls[1].1.is_empty());
        assert!(parse_context("[1]").is_err());
    }
}
