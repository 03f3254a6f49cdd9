//! Content blocks: what tools return, prompts hold and sampling exchanges.
//!
//! [`ContentBlock`] is tagged by `type`. A type no revision defines is kept
//! whole in [`ContentBlock::Unknown`] and written back unchanged.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Number, Value};

use super::common::{JsonObject, Meta, from_object, serialize_tagged};
use super::lifecycle::Icon;
use super::resources::ResourceContents;

string_enum! {
    /// Who a message or content is for or from.
    Role {
        /// The user.
        User = "user",
        /// The model.
        Assistant = "assistant",
    }
}

/// Hints on how a client should use or show a piece of content.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Annotations {
    /// Who the content is meant for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// How important it is, from 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<Number>,
    /// When it was last modified (ISO 8601), 2025-06-18+.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Text content (`"type": "text"`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// How to use or show it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// The block's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl TextContent {
    /// A text block.
    pub fn new(text: impl Into<String>) -> Self {
        TextContent {
            text: text.into(),
            annotations: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Base64 media: an image (`"type": "image"`) or audio (`"type": "audio"`,
/// 2025-03-26+).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MediaContent {
    /// The base64-encoded data.
    pub data: String,
    /// Its MIME type.
    pub mime_type: String,
    /// How to use or show it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// The block's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl MediaContent {
    /// Media from base64 data and its MIME type.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        MediaContent {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Image content.
pub type ImageContent = MediaContent;
/// Audio content.
pub type AudioContent = MediaContent;

/// A link to a resource (`"type": "resource_link"`, 2025-06-18+).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// How to use or show it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// The block's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ResourceLink {
    /// A link to `uri` named `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceLink {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            icons: None,
            annotations: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// A resource's contents inline (`"type": "resource"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EmbeddedResource {
    /// The contents.
    pub resource: ResourceContents,
    /// How to use or show it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// The block's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl EmbeddedResource {
    /// An embedded resource.
    pub fn new(resource: ResourceContents) -> Self {
        EmbeddedResource {
            resource,
            annotations: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// A model's request to call a tool, in sampling (`"type": "tool_use"`,
/// 2025-11-25+).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolUseContent {
    /// The call's id, which the result names.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments.
    pub input: JsonObject,
    /// The block's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ToolUseContent {
    /// A tool call.
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: JsonObject) -> Self {
        ToolUseContent {
            id: id.into(),
            name: name.into(),
            input,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// The result of a tool call, in sampling (`"type": "tool_result"`,
/// 2025-11-25+).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolResultContent {
    /// The id of the `tool_use` this answers.
    pub tool_use_id: String,
    /// The result's content.
    pub content: Vec<ContentBlock>,
    /// Structured output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the call failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// The block's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ToolResultContent {
    /// A tool result.
    pub fn new(tool_use_id: impl Into<String>, content: Vec<ContentBlock>) -> Self {
        ToolResultContent {
            tool_use_id: tool_use_id.into(),
            content,
            structured_content: None,
            is_error: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// One content block, tagged by `type`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ContentBlock {
    /// `"text"`.
    Text(TextContent),
    /// `"image"`.
    Image(ImageContent),
    /// `"audio"`.
    Audio(AudioContent),
    /// `"resource_link"`.
    ResourceLink(ResourceLink),
    /// `"resource"`.
    Resource(EmbeddedResource),
    /// `"tool_use"` (sampling only).
    ToolUse(ToolUseContent),
    /// `"tool_result"` (sampling only).
    ToolResult(ToolResultContent),
    /// A block of a type this library does not know, kept whole (its `type`
    /// member included).
    Unknown(JsonObject),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }

    /// The block's `type`.
    pub fn type_name(&self) -> &str {
        match self {
            ContentBlock::Text(_) => "text",
            ContentBlock::Image(_) => "image",
            ContentBlock::Audio(_) => "audio",
            ContentBlock::ResourceLink(_) => "resource_link",
            ContentBlock::Resource(_) => "resource",
            ContentBlock::ToolUse(_) => "tool_use",
            ContentBlock::ToolResult(_) => "tool_result",
            ContentBlock::Unknown(m) => m.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let tag = self.type_name();
        match self {
            ContentBlock::Text(c) => serialize_tagged(s, "type", tag, c),
            ContentBlock::Image(c) | ContentBlock::Audio(c) => serialize_tagged(s, "type", tag, c),
            ContentBlock::ResourceLink(c) => serialize_tagged(s, "type", tag, c),
            ContentBlock::Resource(c) => serialize_tagged(s, "type", tag, c),
            ContentBlock::ToolUse(c) => serialize_tagged(s, "type", tag, c),
            ContentBlock::ToolResult(c) => serialize_tagged(s, "type", tag, c),
            ContentBlock::Unknown(m) => m.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut map = JsonObject::deserialize(d)?;
        let tag = match map.remove("type") {
            Some(Value::String(t)) => t,
            Some(_) => return Err(D::Error::custom("a content block's type is not a string")),
            None => return Err(D::Error::missing_field("type")),
        };
        let known = [
            "text",
            "image",
            "audio",
            "resource_link",
            "resource",
            "tool_use",
            "tool_result",
        ];
        if !known.contains(&tag.as_str()) {
            // Kept whole, its type included.
            map.insert("type".to_owned(), Value::String(tag));
            return Ok(ContentBlock::Unknown(map));
        }
        Ok(match tag.as_str() {
            "text" => ContentBlock::Text(from_object(map)?),
            "image" => ContentBlock::Image(from_object(map)?),
            "audio" => ContentBlock::Audio(from_object(map)?),
            "resource_link" => ContentBlock::ResourceLink(from_object(map)?),
            "resource" => ContentBlock::Resource(from_object(map)?),
            "tool_use" => ContentBlock::ToolUse(from_object(map)?),
            _ => ContentBlock::ToolResult(from_object(map)?),
        })
    }
}

impl crate::unknown::UnknownFields for ContentBlock {
    fn collect_unknown(&self, path: &str, out: &mut Vec<String>) {
        match self {
            ContentBlock::Text(c) => c.collect_unknown(path, out),
            ContentBlock::Image(c) | ContentBlock::Audio(c) => c.collect_unknown(path, out),
            ContentBlock::ResourceLink(c) => c.collect_unknown(path, out),
            ContentBlock::Resource(c) => c.collect_unknown(path, out),
            ContentBlock::ToolUse(c) => c.collect_unknown(path, out),
            ContentBlock::ToolResult(c) => c.collect_unknown(path, out),
            ContentBlock::Unknown(_) => out.push(format!(
                "{path} (unknown content type {:?})",
                self.type_name()
            )),
        }
    }
}

deserialize_with_extra! {
    TextContent, "a text content block",
    required { text: "text" }
    optional { annotations: "annotations" }
    moved required {}
    moved optional { meta: "_meta" }
    example r#"{"text": "18 °C", "_meta": {"k": 1}}"#
}

/// A text block, the commonest, is moved out of its `Value`; any other
/// kind is read through serde as [`ContentBlock`]'s `Deserialize` reads it
/// (and with the same errors).
impl crate::macros::MovedFrom for ContentBlock {
    fn moved_from(value: Value) -> Result<Self, serde_json::Error> {
        match value {
            Value::Object(mut map) if map.get("type").and_then(Value::as_str) == Some("text") => {
                map.remove("type");
                TextContent::from_value(Value::Object(map))
                    .map(ContentBlock::Text)
                    .map_err(serde::de::Error::custom)
            }
            other => serde_json::from_value(other),
        }
    }
}

unknown_fields! {
    Annotations { audience: "audience" };
    TextContent { annotations: "annotations" };
    MediaContent { annotations: "annotations" };
    ResourceLink { icons: "icons", annotations: "annotations" };
    EmbeddedResource { resource: "resource", annotations: "annotations" };
    ToolUseContent;
    ToolResultContent { content: "content" };
}
