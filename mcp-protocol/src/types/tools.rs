//! Tools: listing and calling.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{JsonObject, Meta, ResultType};
use super::content::ContentBlock;
use super::input::InputResponses;
use super::lifecycle::Icon;
use super::list::{ListItem, ListResult};
use super::tasks::TaskMetadata;

/// Hints about a tool's behaviour. Untrusted unless the server is.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not change its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling it twice with the same arguments has no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool reaches an open world (the web, for instance).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

string_enum! {
    /// Whether a tool may be called as a task (2025-11-25, experimental).
    TaskSupport {
        /// It must not.
        Forbidden = "forbidden",
        /// It may.
        Optional = "optional",
        /// It must.
        Required = "required",
    }
}

/// How a tool executes (2025-11-25).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolExecution {
    /// Whether the tool may be called as a task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ToolExecution {
    /// Execution settings with a task support level.
    pub fn new(task_support: TaskSupport) -> Self {
        ToolExecution {
            task_support: Some(task_support),
            extra: JsonObject::new(),
        }
    }
}

/// A tool the server offers.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Tool {
    /// Its name, used to call it.
    pub name: String,
    /// A display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of its arguments, kept verbatim.
    pub input_schema: JsonObject,
    /// The JSON Schema of its structured output (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    /// Behaviour hints (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Execution settings (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// The tool's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Tool {
    /// A tool with a name and an input schema.
    pub fn new(name: impl Into<String>, input_schema: JsonObject) -> Self {
        Tool {
            name: name.into(),
            title: None,
            description: None,
            input_schema,
            output_schema: None,
            annotations: None,
            execution: None,
            icons: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// The same with a description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// Result of `tools/list`: a page of [`Tool`]s under `"tools"`.
pub type ListToolsResult = ListResult<Tool>;

impl ListItem for Tool {
    const MEMBER: &'static str = "tools";
    const EXPECTING: &'static str = "a tools/list result";

    fn item_from_value(value: Value) -> Result<Self, serde_json::Error> {
        Tool::from_value(value)
    }
}

/// Params of `tools/call`; the MRTR members are for a retry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolRequestParams {
    /// The tool's name.
    pub name: String,
    /// The arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
    /// Run the call as a task (2025-11-25, experimental).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Answers to the server's `inputRequests` (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The server's `requestState`, echoed byte for byte (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// The request's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CallToolRequestParams {
    /// Params to call `name` with no arguments.
    pub fn new(name: impl Into<String>) -> Self {
        CallToolRequestParams {
            name: name.into(),
            arguments: None,
            task: None,
            input_responses: None,
            request_state: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// The same with arguments.
    pub fn with_arguments(mut self, arguments: JsonObject) -> Self {
        self.arguments = Some(arguments);
        self
    }
}

/// Result of `tools/call` (when complete).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolResult {
    /// The unstructured result.
    pub content: Vec<ContentBlock>,
    /// The structured result (2025-06-18+), matching the tool's output
    /// schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool failed; the error is in `content`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// `resultType` (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The result's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CallToolResult {
    /// A successful result with the given content.
    pub fn new(content: Vec<ContentBlock>) -> Self {
        CallToolResult {
            content,
            structured_content: None,
            is_error: None,
            result_type: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// Whether the tool reported an error.
    pub fn is_error(&self) -> bool {
        self.is_error.unwrap_or(false)
    }
}

deserialize_with_extra! {
    Tool, "a tool",
    required { name: "name" }
    optional {
        title: "title",
        description: "description",
        annotations: "annotations",
        execution: "execution",
        icons: "icons",
    }
    moved required { input_schema: "inputSchema" }
    moved optional { output_schema: "outputSchema", meta: "_meta" }
    example r#"{"name": "echo", "inputSchema": {"type": "object"}, "x-vendor": 1}"#
}

deserialize_with_extra! {
    CallToolResult, "a tools/call result",
    required {}
    optional { is_error: "isError", result_type: "resultType" }
    moved required { content: "content" }
    moved optional { structured_content: "structuredContent", meta: "_meta" }
    example r#"{"content": [{"type": "text", "text": "18 °C"}], "structuredContent": {"celsius": 18}}"#
}

unknown_fields! {
    ToolAnnotations;
    ToolExecution { task_support: "taskSupport" };
    Tool {
        annotations: "annotations",
        execution: "execution",
        icons: "icons",
    };
    CallToolRequestParams { task: "task", input_responses: "inputResponses" };
    CallToolResult { content: "content", result_type: "resultType" };
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn members_typed_as_they_come_and_unknown_ones_kept() {
        let raw = json!({
            "tools": [{
                "name": "echo",
                "title": null,
                "inputSchema": {"type": "object"},
                "x-vendor": {"a": [1, 2]},
            }],
            "nextCursor": "2",
            "later": true,
        });
        // From a `Value` (what the client does) and from text alike.
        for list in [
            serde_json::from_value::<ListToolsResult>(raw.clone()).unwrap(),
            serde_json::from_str::<ListToolsResult>(&raw.to_string()).unwrap(),
        ] {
            assert_eq!(list.next_cursor.as_deref(), Some("2"));
            assert_eq!(list.extra.get("later"), Some(&json!(true)));
            let tool = &list.items[0];
            assert_eq!(tool.name, "echo");
            assert_eq!(tool.title, None, "null reads as absent");
            assert_eq!(tool.extra.get("x-vendor"), Some(&json!({"a": [1, 2]})));
            // And back: the same JSON, the unknown member included.
            assert_eq!(
                serde_json::to_value(&list).unwrap()["tools"][0]["x-vendor"],
                json!({"a": [1, 2]})
            );
        }
    }

    #[test]
    fn missing_repeated_and_mistyped_members_are_errors() {
        let missing = serde_json::from_value::<CallToolResult>(json!({"isError": true}));
        assert!(
            missing
                .unwrap_err()
                .to_string()
                .contains("missing field `content`")
        );
        let twice = serde_json::from_str::<CallToolResult>(
            r#"{"content":[],"isError":true,"isError":false}"#,
        );
        assert!(
            twice
                .unwrap_err()
                .to_string()
                .contains("duplicate field `isError`")
        );
        let mistyped =
            serde_json::from_value::<CallToolResult>(json!({"content": [], "isError": "yes"}));
        assert!(mistyped.is_err());
        let not_an_object = serde_json::from_value::<Tool>(json!(["echo"]));
        assert!(not_an_object.unwrap_err().to_string().contains("a tool"));
    }

    #[test]
    fn a_call_result_from_a_value_is_what_serde_makes_of_it() {
        let results = [
            json!({
                "content": [{"type": "text", "text": "18 °C", "x-tone": "calm"}],
                "structuredContent": {"temperature": 18, "wind": {"speed": 12}},
                "isError": false,
                "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s"}},
                "x-later": [1, {"deep": null}],
            }),
            json!({"content": [], "structuredContent": null, "_meta": null, "isError": null}),
            json!({"content": [], "structuredContent": [1, "two"]}),
        ];
        for value in results {
            let moved = CallToolResult::from_value(value.clone()).unwrap();
            assert_eq!(moved, serde_json::from_value(value.clone()).unwrap());
            assert_eq!(
                serde_json::to_value(&moved).unwrap()["x-later"],
                value["x-later"]
            );
        }
        // What serde refuses, so does the moving path, in the same words.
        for bad in [
            json!({"isError": true}),
            json!({"content": [], "_meta": "not an object"}),
            json!({"content": [], "isError": "yes"}),
            json!({"content": [{"type": "text"}]}),
            json!(["content"]),
        ] {
            let moved = CallToolResult::from_value(bad.clone()).unwrap_err();
            let serde = serde_json::from_value::<CallToolResult>(bad).unwrap_err();
            assert_eq!(moved.to_string(), serde.to_string());
        }
    }

    #[test]
    fn a_tool_list_from_a_value_is_what_serde_makes_of_it() {
        let tool = json!({
            "name": "echo",
            "title": null,
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
            "outputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true},
            "_meta": {"k": 1},
            "x-vendor": {"a": [1, 2]},
        });
        let lists = [
            json!({"tools": [tool.clone(), {"name": "b", "inputSchema": {}}], "nextCursor": "2", "later": true}),
            json!({"tools": [], "_meta": null, "ttlMs": 5000}),
        ];
        for value in lists {
            let moved = ListToolsResult::from_value(value.clone()).unwrap();
            assert_eq!(moved, serde_json::from_value(value).unwrap());
        }
        assert_eq!(
            Tool::from_value(tool.clone()).unwrap(),
            serde_json::from_value::<Tool>(tool).unwrap()
        );
        for bad in [
            json!({"nextCursor": "2"}),
            json!({"tools": {"name": "echo"}}),
            json!({"tools": [{"name": "echo"}]}),
            json!({"tools": [{"name": "echo", "inputSchema": null}]}),
            json!({"tools": [{"name": "echo", "inputSchema": [1]}]}),
            json!({"tools": [{"name": "echo", "inputSchema": {}, "outputSchema": 3}]}),
            json!({"tools": [], "ttlMs": "soon"}),
            json!("tools"),
        ] {
            let moved = ListToolsResult::from_value(bad.clone()).unwrap_err();
            let serde = serde_json::from_value::<ListToolsResult>(bad).unwrap_err();
            assert_eq!(moved.to_string(), serde.to_string());
        }
    }

    /// `from_value` and serde on the same `Value`: the same result, or the
    /// same error text.
    fn same<T>(from_value: fn(Value) -> Result<T, serde_json::Error>, value: &Value)
    where
        T: serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
    {
        match (
            from_value(value.clone()),
            serde_json::from_value::<T>(value.clone()),
        ) {
            (Ok(moved), Ok(serde)) => assert_eq!(moved, serde, "{value}"),
            (Err(moved), Err(serde)) => assert_eq!(moved.to_string(), serde.to_string(), "{value}"),
            (moved, serde) => panic!("{value}: moved {moved:?}, serde {serde:?}"),
        }
    }

    /// Each member of each type given each kind of JSON, removed, and two
    /// at a time mistyped (which error is reported first).
    fn sweep<T>(
        from_value: fn(Value) -> Result<T, serde_json::Error>,
        base: Value,
        members: &[&str],
    ) where
        T: serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
    {
        let kinds = [
            json!(null),
            json!(1),
            json!("s"),
            json!(true),
            json!([]),
            json!({}),
            json!([1]),
            json!([{}]),
            json!([{"type": "text", "text": "t"}]),
            json!([{"name": "n", "inputSchema": {}}]),
            json!({"type": "object"}),
        ];
        same(from_value, &base);
        for member in members {
            for kind in &kinds {
                let mut value = base.clone();
                value[*member] = kind.clone();
                same(from_value, &value);
            }
            let mut value = base.clone();
            value.as_object_mut().unwrap().remove(*member);
            same(from_value, &value);
            for other in members {
                let mut value = base.clone();
                value[*member] = json!(1);
                value[*other] = json!("s");
                same(from_value, &value);
            }
        }
        for not_an_object in kinds.iter().filter(|k| !k.is_object()) {
            same(from_value, not_an_object);
        }
    }

    #[test]
    fn every_member_with_every_kind_of_json_types_alike_both_ways() {
        sweep(
            CallToolResult::from_value,
            json!({"content": [{"type": "text", "text": "t"}], "structuredContent": {"a": 1}}),
            &[
                "content",
                "structuredContent",
                "isError",
                "resultType",
                "_meta",
                "x-other",
            ],
        );
        let tool = json!({"name": "echo", "inputSchema": {"type": "object"}, "outputSchema": {}});
        sweep(
            Tool::from_value,
            tool.clone(),
            &[
                "name",
                "title",
                "description",
                "inputSchema",
                "outputSchema",
                "annotations",
                "execution",
                "icons",
                "_meta",
                "x-other",
            ],
        );
        sweep(
            ListToolsResult::from_value,
            json!({"tools": [tool.clone(), tool], "nextCursor": "2"}),
            &[
                "tools",
                "nextCursor",
                "ttlMs",
                "cacheScope",
                "resultType",
                "_meta",
                "x-other",
            ],
        );
        // A content block of each kind, and a text block's members.
        let text = json!({"type": "text", "text": "t", "annotations": {"priority": 0.5}});
        sweep(
            <ContentBlock as crate::macros::MovedFrom>::moved_from,
            text.clone(),
            &["type", "text", "annotations", "_meta", "x-other"],
        );
        for block in [
            json!({"type": "image", "data": "AA==", "mimeType": "image/png"}),
            json!({"type": "resource_link", "uri": "file:///a", "name": "a"}),
            json!({"type": "new-kind", "x": 1}),
            json!({"type": "text"}),
        ] {
            same(
                CallToolResult::from_value,
                &json!({"content": [text.clone(), block]}),
            );
        }
        // The first bad tool's error wins, as with serde.
        same(
            ListToolsResult::from_value,
            &json!({"tools": [{"name": 1, "inputSchema": {}}, {"name": "b", "inputSchema": 2}]}),
        );
    }
}
