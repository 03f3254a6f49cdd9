//! What a fake server offers, as a whole: [`Content`], and
//! [`Content::default`], the standard set.

use serde_json::json;

use super::entries::{
    FakePrompt, FakeResource, FakeTemplate, FakeTool, PromptArgument, ResourceBody, ToolBehavior,
};
use super::flow::InputRound;
use super::skills::FakeSkill;

/// Everything a fake server offers.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Content {
    /// Tools, in `tools/list` order.
    pub tools: Vec<FakeTool>,
    /// Resources, in `resources/list` order.
    pub resources: Vec<FakeResource>,
    /// Resource templates.
    pub templates: Vec<FakeTemplate>,
    /// Prompts.
    pub prompts: Vec<FakePrompt>,
    /// Skills (the Skills extension; none by default): served once
    /// [`FakeConfig::with_skills`](crate::FakeConfig::with_skills) declares
    /// the extension.
    pub skills: Vec<FakeSkill>,
}

impl Content {
    /// Nothing at all.
    pub fn empty() -> Content {
        Content {
            tools: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            prompts: Vec::new(),
            skills: Vec::new(),
        }
    }

    /// The same content with one more tool (replacing one of that name).
    pub fn with_tool(mut self, tool: FakeTool) -> Content {
        self.tools.retain(|t| t.name() != tool.name());
        self.tools.push(tool);
        self
    }

    /// The same content with one more resource.
    pub fn with_resource(mut self, resource: FakeResource) -> Content {
        self.resources.push(resource);
        self
    }

    /// The same content with one more template.
    pub fn with_template(mut self, template: FakeTemplate) -> Content {
        self.templates.push(template);
        self
    }

    /// The same content with one more prompt.
    pub fn with_prompt(mut self, prompt: FakePrompt) -> Content {
        self.prompts.push(prompt);
        self
    }
}

impl Default for Content {
    /// The standard tools, resources, template and prompts (see the module
    /// docs of [`super`]).
    fn default() -> Self {
        let text_arg = |name: &str| json!({"type": "object", "properties": {name: {"type": "string"}}, "required": [name]});
        Content::empty()
            .with_tool(
                FakeTool::new("echo", "Returns its text.", ToolBehavior::Echo)
                    .input_schema(text_arg("text")),
            )
            .with_tool(
                FakeTool::new(
                    "structured",
                    "Adds and multiplies a and b.",
                    ToolBehavior::Structured,
                )
                .input_schema(json!({"type": "object",
                        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                        "required": ["a", "b"]}))
                .output_schema(json!({"type": "object",
                        "properties": {"sum": {"type": "number"}, "product": {"type": "number"}},
                        "required": ["sum", "product"]})),
            )
            .with_tool(FakeTool::new(
                "fail",
                "Always fails (isError).",
                ToolBehavior::Fail,
            ))
            .with_tool(
                FakeTool::new("slow", "Sleeps, reporting progress.", ToolBehavior::Slow)
                    .input_schema(json!({"type": "object", "properties": {
                        "steps": {"type": "integer", "minimum": 0},
                        "delayMs": {"type": "integer", "minimum": 0}}})),
            )
            .with_tool(FakeTool::new(
                "elicit",
                "Asks the user for a name (needs elicitation).",
                ToolBehavior::Ask(vec![InputRound::elicit("answer", "What is your name?")]),
            ))
            .with_tool(FakeTool::new(
                "sample",
                "Asks the model a question (needs sampling).",
                ToolBehavior::Ask(vec![InputRound::sample(
                    "answer",
                    "What is the capital of France?",
                )]),
            ))
            .with_tool(FakeTool::new(
                "roots",
                "Asks for the client's roots (needs roots).",
                ToolBehavior::Ask(vec![InputRound::roots("roots")]),
            ))
            .with_tool(FakeTool::new(
                "mrtr_multi",
                "Elicitation, then sampling, then a round with only requestState.",
                ToolBehavior::Ask(vec![
                    InputRound::elicit("login", "GitHub username?"),
                    InputRound::sample("capital", "What is the capital of France?"),
                    InputRound::shed(),
                ]),
            ))
            .with_tool(
                FakeTool::new(
                    "add_tool",
                    "Adds a tool and announces the change.",
                    ToolBehavior::AddTool,
                )
                .input_schema(
                    json!({"type": "object", "properties": {"name": {"type": "string"}}}),
                ),
            )
            .with_tool(
                FakeTool::new(
                    "touch_resource",
                    "Changes a resource and announces it.",
                    ToolBehavior::TouchResource,
                )
                .input_schema(json!({"type": "object", "properties": {"uri": {"type": "string"}}})),
            )
            .with_tool(
                FakeTool::new("log", "Sends a log message.", ToolBehavior::Log)
                    .input_schema(json!({"type": "object", "properties": {
                        "level": {"type": "string"}, "message": {"type": "string"}}})),
            )
            .with_resource(FakeResource::new(
                "fake://text/hello",
                "hello.txt",
                "text/plain",
                ResourceBody::Text("Hello from the fake MCP server.\n".to_owned()),
            ))
            .with_resource(FakeResource::new(
                "fake://blob/bytes",
                "bytes.bin",
                "application/octet-stream",
                ResourceBody::Blob(vec![0x00, 0x01, 0x02, 0xfe, 0xff]),
            ))
            .with_resource(FakeResource::new(
                "fake://json/config",
                "config.json",
                "application/json",
                ResourceBody::Text("{\"answer\":42}".to_owned()),
            ))
            .with_resource(FakeResource::new(
                "fake://counter",
                "counter",
                "text/plain",
                ResourceBody::Text("0".to_owned()),
            ))
            .with_template(FakeTemplate::new(
                "fake://items/{id}",
                "item",
                &["1", "2", "3", "42"],
            ))
            .with_prompt(FakePrompt::new(
                "greeting",
                "Greets someone.",
                vec![PromptArgument::new(
                    "name",
                    true,
                    &["Alice", "Bob", "Carol"],
                )],
                "Please greet {name} warmly.",
            ))
            .with_prompt(FakePrompt::new(
                "simple",
                "A prompt without arguments.",
                Vec::new(),
                "Tell me something interesting.",
            ))
    }
}

/// Standard base64 with padding, as blob resources are sent.
pub(crate) fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_blob_is_what_is_sent() {
        // The module doc promises this encoding of `fake://blob/bytes`.
        assert_eq!(base64(&[0, 1, 2, 0xfe, 0xff]), "AAEC/v8=");
    }
}
