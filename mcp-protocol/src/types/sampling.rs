//! Sampling: a server asks the client's model for a message
//! (`sampling/createMessage`; deprecated in 2026-07-28, where it is an MRTR
//! input).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Number, Value};

use super::common::{JsonObject, Meta};
use super::content::{ContentBlock, Role};
use super::tasks::TaskMetadata;
use super::tools::Tool;

/// A sampling message's content: one block or, since 2025-11-25, several.
#[allow(
    clippy::large_enum_variant,
    reason = "plain data, matched by users; boxing would only hurt that"
)]
#[derive(Clone, Debug, PartialEq)]
pub enum SamplingContent {
    /// One block.
    Single(ContentBlock),
    /// Several blocks.
    Multiple(Vec<ContentBlock>),
}

impl SamplingContent {
    /// The blocks, however many.
    pub fn blocks(&self) -> &[ContentBlock] {
        match self {
            SamplingContent::Single(b) => std::slice::from_ref(b),
            SamplingContent::Multiple(v) => v,
        }
    }
}

impl From<ContentBlock> for SamplingContent {
    fn from(b: ContentBlock) -> Self {
        SamplingContent::Single(b)
    }
}

impl Serialize for SamplingContent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SamplingContent::Single(b) => b.serialize(s),
            SamplingContent::Multiple(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for SamplingContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        if value.is_array() {
            serde_json::from_value(value)
                .map(SamplingContent::Multiple)
                .map_err(serde::de::Error::custom)
        } else {
            serde_json::from_value(value)
                .map(SamplingContent::Single)
                .map_err(serde::de::Error::custom)
        }
    }
}

impl crate::unknown::UnknownFields for SamplingContent {
    fn collect_unknown(&self, path: &str, out: &mut Vec<String>) {
        match self {
            SamplingContent::Single(b) => b.collect_unknown(path, out),
            SamplingContent::Multiple(v) => v.collect_unknown(path, out),
        }
    }
}

/// A message in a sampling conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SamplingMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: SamplingContent,
    /// The message's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SamplingMessage {
    /// A message.
    pub fn new(role: Role, content: impl Into<SamplingContent>) -> Self {
        SamplingMessage {
            role,
            content: content.into(),
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// A hint for choosing a model.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelHint {
    /// A (part of a) model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The server's preferences for the model the client picks.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ModelPreferences {
    /// Model name hints, in order of preference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much cost matters, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<Number>,
    /// How much speed matters, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<Number>,
    /// How much capability matters, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<Number>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

string_enum! {
    /// Which servers' context to include (deprecated values included).
    IncludeContext {
        /// None.
        None = "none",
        /// The requesting server's (deprecated in 2026-07-28).
        ThisServer = "thisServer",
        /// Every server's (deprecated in 2026-07-28).
        AllServers = "allServers",
    }
}

string_enum! {
    /// How the model may use tools.
    ToolChoiceMode {
        /// As it sees fit.
        Auto = "auto",
        /// It must use one.
        Required = "required",
        /// It must not.
        None = "none",
    }
}

/// How the model may use the offered tools (2025-11-25+).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolChoice {
    /// The mode; absent means `auto`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ToolChoice {
    /// A tool choice with a mode.
    pub fn new(mode: ToolChoiceMode) -> Self {
        ToolChoice {
            mode: Some(mode),
            extra: JsonObject::new(),
        }
    }
}

/// Params of `sampling/createMessage`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageRequestParams {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// The most tokens to generate.
    pub max_tokens: u64,
    /// Model preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Which context to include.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<Number>,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// Tools the model may call (2025-11-25+; needs `sampling.tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How it may call them (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Run as a task (2025-11-25, experimental).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// The request's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CreateMessageRequestParams {
    /// Params sampling at most `max_tokens` after `messages`.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> Self {
        CreateMessageRequestParams {
            messages,
            max_tokens,
            model_preferences: None,
            system_prompt: None,
            include_context: None,
            temperature: None,
            stop_sequences: None,
            metadata: None,
            tools: None,
            tool_choice: None,
            task: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

string_enum! {
    /// Why the model stopped.
    StopReason {
        /// It finished its turn.
        EndTurn = "endTurn",
        /// It met a stop sequence.
        StopSequence = "stopSequence",
        /// It reached `maxTokens`.
        MaxTokens = "maxTokens",
        /// It wants to call a tool (2025-11-25+).
        ToolUse = "toolUse",
    }
}

/// Result of `sampling/createMessage` (a client's answer; bare in MRTR).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageResult {
    /// Who speaks: the model, as `assistant`.
    pub role: Role,
    /// What it said.
    pub content: SamplingContent,
    /// The model that answered.
    pub model: String,
    /// Why it stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
    /// The result's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CreateMessageResult {
    /// A result from `model`, spoken as the assistant.
    pub fn new(content: impl Into<SamplingContent>, model: impl Into<String>) -> Self {
        CreateMessageResult {
            role: Role::Assistant,
            content: content.into(),
            model: model.into(),
            stop_reason: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// A text answer from `model`, spoken as the assistant.
    ///
    /// ```
    /// use mcp_protocol::types::CreateMessageResult;
    ///
    /// let answer = CreateMessageResult::text("Paris.", "a-model");
    /// assert_eq!(answer.model, "a-model");
    /// ```
    pub fn text(text: impl Into<String>, model: impl Into<String>) -> Self {
        CreateMessageResult::new(crate::types::ContentBlock::text(text), model)
    }

    /// The same with a stop reason.
    pub fn with_stop_reason(mut self, reason: StopReason) -> Self {
        self.stop_reason = Some(reason);
        self
    }
}

unknown_fields! {
    SamplingMessage { role: "role", content: "content" };
    ModelHint;
    ModelPreferences { hints: "hints" };
    ToolChoice { mode: "mode" };
    CreateMessageRequestParams {
        messages: "messages",
        model_preferences: "modelPreferences",
        include_context: "includeContext",
        tools: "tools",
        tool_choice: "toolChoice",
        task: "task",
    };
    CreateMessageResult {
        role: "role",
        content: "content",
        stop_reason: "stopReason",
    };
}
