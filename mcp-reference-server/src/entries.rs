//! The entries of a fake server's content: tools and their behaviours,
//! resources, resource templates and prompts.

use serde_json::{Value, json};

use super::content::base64;
use super::flow::InputRound;

/// What a tool does when called. The behaviours are the hard paths a
/// client must get right.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ToolBehavior {
    /// Returns `arguments.text` as text content.
    Echo,
    /// Returns `{sum, product}` of `arguments.a` and `arguments.b` as
    /// `structuredContent` (and as JSON text).
    Structured,
    /// Returns `isError: true`.
    Fail,
    /// Sleeps `arguments.steps` (default 3) times `arguments.delayMs`
    /// (default 100) ms, sending progress after each step when the request
    /// has a progress token; honours cancellation.
    Slow,
    /// Asks the client for input over several rounds (legacy: server-to-client
    /// requests; modern: `input_required` results), then returns the answers
    /// as JSON text.
    Ask(Vec<InputRound>),
    /// Adds a tool (named `arguments.name`, or `added_<n>`) that echoes,
    /// and announces `notifications/tools/list_changed`.
    AddTool,
    /// Changes the resource `arguments.uri` (default `fake://counter`, whose
    /// text counts up) and announces `notifications/resources/updated`.
    TouchResource,
    /// Sends `notifications/message` at `arguments.level` (default `info`)
    /// with `arguments.message`, when the client's log level lets it through.
    Log,
    /// Returns this result as it is.
    Fixed(Value),
    /// A fixture of the official conformance suite whose behaviour is its
    /// own (see [`ConformanceTool`](crate::ConformanceTool)).
    Conformance(crate::ConformanceTool),
}

/// A tool: its definition as `tools/list` shows it, and its behaviour.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FakeTool {
    /// `{name, description, inputSchema, outputSchema?}`.
    pub definition: Value,
    /// What a call does.
    pub behavior: ToolBehavior,
}

impl FakeTool {
    /// A tool taking no arguments.
    pub fn new(name: &str, description: &str, behavior: ToolBehavior) -> FakeTool {
        FakeTool {
            definition: json!({
                "name": name,
                "description": description,
                "inputSchema": { "type": "object", "properties": {} },
            }),
            behavior,
        }
    }

    /// Replaces the input schema.
    pub fn input_schema(mut self, schema: Value) -> FakeTool {
        self.definition["inputSchema"] = schema;
        self
    }

    /// Sets an output schema.
    pub fn output_schema(mut self, schema: Value) -> FakeTool {
        self.definition["outputSchema"] = schema;
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        self.definition["name"].as_str().unwrap_or_default()
    }
}

/// A resource's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResourceBody {
    /// Text contents.
    Text(String),
    /// Binary contents, sent base64-encoded.
    Blob(Vec<u8>),
}

/// A resource: its listing and its contents.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FakeResource {
    /// `{uri, name, mimeType}` as `resources/list` shows it.
    pub definition: Value,
    /// What `resources/read` returns.
    pub body: ResourceBody,
}

impl FakeResource {
    /// A resource.
    pub fn new(uri: &str, name: &str, mime_type: &str, body: ResourceBody) -> FakeResource {
        FakeResource {
            definition: json!({ "uri": uri, "name": name, "mimeType": mime_type }),
            body,
        }
    }

    /// Sets the description `resources/list` shows.
    pub fn description(mut self, description: &str) -> FakeResource {
        self.definition["description"] = Value::from(description);
        self
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        self.definition["uri"].as_str().unwrap_or_default()
    }

    /// The `contents` entry `resources/read` returns.
    pub fn contents(&self) -> Value {
        let mut entry = json!({ "uri": self.uri(), "mimeType": self.definition["mimeType"] });
        match &self.body {
            ResourceBody::Text(t) => entry["text"] = Value::from(t.as_str()),
            ResourceBody::Blob(b) => entry["blob"] = Value::from(base64(b)),
        }
        entry
    }
}

/// A resource template with one variable, such as `fake://items/{id}`;
/// reading a matching URI gives its [`text`](#structfield.text) with the
/// variable filled in (by default the text `item <value>`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FakeTemplate {
    /// `{uriTemplate, name, mimeType}`.
    pub definition: Value,
    /// Values `completion/complete` offers for the variable.
    pub completions: Vec<String>,
    /// What a matching URI reads as, the variable written as in the
    /// template (`{id}`).
    pub text: String,
}

impl FakeTemplate {
    /// A template whose variable completes from `completions`.
    pub fn new(uri_template: &str, name: &str, completions: &[&str]) -> FakeTemplate {
        let variable = match (uri_template.find('{'), uri_template.find('}')) {
            (Some(open), Some(close)) if open < close => &uri_template[open..=close],
            _ => "",
        };
        FakeTemplate {
            definition: json!({ "uriTemplate": uri_template, "name": name, "mimeType": "text/plain" }),
            completions: completions.iter().map(|s| (*s).to_owned()).collect(),
            text: format!("item {variable}"),
        }
    }

    /// Replaces what a matching URI reads as, and its MIME type.
    pub fn reads_as(mut self, mime_type: &str, text: &str) -> FakeTemplate {
        self.definition["mimeType"] = Value::from(mime_type);
        self.text = text.to_owned();
        self
    }

    /// The `contents` entry of `uri`, read with the variable's `value`.
    pub fn contents(&self, uri: &str, value: &str) -> Value {
        let template = self.uri_template();
        let variable = match (template.find('{'), template.find('}')) {
            (Some(open), Some(close)) if open < close => &template[open..=close],
            _ => "",
        };
        let text = if variable.is_empty() {
            self.text.clone()
        } else {
            self.text.replace(variable, value)
        };
        json!({ "uri": uri, "mimeType": self.definition["mimeType"], "text": text })
    }

    /// The template string.
    pub fn uri_template(&self) -> &str {
        self.definition["uriTemplate"].as_str().unwrap_or_default()
    }

    /// The variable's value when `uri` matches the template.
    pub fn matches<'u>(&self, uri: &'u str) -> Option<&'u str> {
        let template = self.uri_template();
        let (open, close) = (template.find('{')?, template.find('}')?);
        let (prefix, suffix) = (&template[..open], &template[close + 1..]);
        let value = uri.strip_prefix(prefix)?.strip_suffix(suffix)?;
        (!value.is_empty() && !value.contains('/')).then_some(value)
    }
}

/// A prompt argument.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// Whether `prompts/get` must give it.
    pub required: bool,
    /// Values `completion/complete` offers for it.
    pub completions: Vec<String>,
}

impl PromptArgument {
    /// An argument completing from `completions`.
    pub fn new(name: &str, required: bool, completions: &[&str]) -> PromptArgument {
        PromptArgument {
            name: name.to_owned(),
            required,
            completions: completions.iter().map(|s| (*s).to_owned()).collect(),
        }
    }
}

/// A prompt: one user message, its `{argument}` placeholders filled in
/// (or [messages](#structfield.messages) of any content), optionally after
/// asking the client for input.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FakePrompt {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its arguments.
    pub arguments: Vec<PromptArgument>,
    /// The message text, with `{name}` placeholders.
    pub text: String,
    /// When not empty, the messages `prompts/get` returns instead of the
    /// one text message (images, embedded resources…), `{name}`
    /// placeholders filled in in every string.
    pub messages: Vec<Value>,
    /// Input asked of the client before the prompt is given (legacy:
    /// server-to-client requests; modern: `input_required` results); the
    /// answers then follow as one more message.
    pub rounds: Vec<InputRound>,
}

impl FakePrompt {
    /// A prompt.
    pub fn new(name: &str, description: &str, arguments: Vec<PromptArgument>, text: &str) -> Self {
        FakePrompt {
            name: name.to_owned(),
            description: description.to_owned(),
            arguments,
            text: text.to_owned(),
            messages: Vec::new(),
            rounds: Vec::new(),
        }
    }

    /// The same prompt giving these messages (see
    /// [`FakePrompt::messages`](#structfield.messages)).
    pub fn with_messages(mut self, messages: Vec<Value>) -> FakePrompt {
        self.messages = messages;
        self
    }

    /// The same prompt, given after these rounds of input.
    pub fn asking(mut self, rounds: Vec<InputRound>) -> FakePrompt {
        self.rounds = rounds;
        self
    }

    /// The definition `prompts/list` shows.
    pub fn definition(&self) -> Value {
        let arguments: Vec<Value> = self
            .arguments
            .iter()
            .map(|a| json!({ "name": a.name, "required": a.required }))
            .collect();
        json!({ "name": self.name, "description": self.description, "arguments": arguments })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_one_segment() {
        let t = FakeTemplate::new("fake://items/{id}", "item", &[]);
        assert_eq!(t.matches("fake://items/42"), Some("42"));
        assert_eq!(t.matches("fake://items/"), None);
        assert_eq!(t.matches("fake://other/1"), None);
    }
}
