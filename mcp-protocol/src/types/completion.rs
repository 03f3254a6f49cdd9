//! Argument completion: `completion/complete`.

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::common::{JsonObject, Meta, ResultType, from_object, serialize_tagged};

/// A reference to a prompt (`"type": "ref/prompt"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptReference {
    /// The prompt's name.
    pub name: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A reference to a resource template (`"type": "ref/resource"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResourceTemplateReference {
    /// The URI or URI template.
    pub uri: String,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// What is being completed, tagged by `type`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Reference {
    /// `"ref/prompt"`.
    Prompt(PromptReference),
    /// `"ref/resource"`.
    Resource(ResourceTemplateReference),
    /// A reference type this library does not know, kept whole.
    Unknown(JsonObject),
}

impl Reference {
    /// A reference to the prompt `name`.
    pub fn prompt(name: impl Into<String>) -> Self {
        Reference::Prompt(PromptReference {
            name: name.into(),
            title: None,
            extra: JsonObject::new(),
        })
    }

    /// A reference to the resource template `uri`.
    pub fn resource(uri: impl Into<String>) -> Self {
        Reference::Resource(ResourceTemplateReference {
            uri: uri.into(),
            extra: JsonObject::new(),
        })
    }
}

impl Serialize for Reference {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Reference::Prompt(p) => serialize_tagged(s, "type", "ref/prompt", p),
            Reference::Resource(r) => serialize_tagged(s, "type", "ref/resource", r),
            Reference::Unknown(m) => m.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Reference {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut map = JsonObject::deserialize(d)?;
        let tag = match map.get("type").and_then(|t| t.as_str()) {
            Some(t) => t.to_owned(),
            None => return Err(D::Error::missing_field("type")),
        };
        Ok(match tag.as_str() {
            "ref/prompt" => {
                map.remove("type");
                Reference::Prompt(from_object(map)?)
            }
            "ref/resource" => {
                map.remove("type");
                Reference::Resource(from_object(map)?)
            }
            _ => Reference::Unknown(map),
        })
    }
}

impl crate::unknown::UnknownFields for Reference {
    fn collect_unknown(&self, path: &str, out: &mut Vec<String>) {
        match self {
            Reference::Prompt(p) => p.collect_unknown(path, out),
            Reference::Resource(r) => r.collect_unknown(path, out),
            Reference::Unknown(_) => out.push(format!("{path} (unknown reference type)")),
        }
    }
}

/// The argument being completed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompletionArgument {
    /// The argument's name.
    pub name: String,
    /// What has been typed so far.
    pub value: String,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Values already given for other arguments (2025-06-18+).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompletionContext {
    /// Already-resolved arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of `completion/complete`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompleteRequestParams {
    /// What is being completed.
    #[serde(rename = "ref")]
    pub reference: Reference,
    /// The argument being completed.
    pub argument: CompletionArgument,
    /// Other arguments' values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompletionContext>,
    /// The request's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CompleteRequestParams {
    /// Params completing argument `name`, typed so far as `value`.
    pub fn new(reference: Reference, name: impl Into<String>, value: impl Into<String>) -> Self {
        CompleteRequestParams {
            reference,
            argument: CompletionArgument {
                name: name.into(),
                value: value.into(),
                extra: JsonObject::new(),
            },
            context: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// The same with other arguments' values.
    pub fn with_context(mut self, arguments: BTreeMap<String, String>) -> Self {
        self.context = Some(CompletionContext {
            arguments: Some(arguments),
            extra: JsonObject::new(),
        });
        self
    }
}

/// The completions offered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Completion {
    /// At most 100 values.
    pub values: Vec<String>,
    /// How many there are in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more than these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Result of `completion/complete`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CompleteResult {
    /// The completions.
    pub completion: Completion,
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

impl CompleteResult {
    /// A result offering `values`.
    pub fn new(values: Vec<String>) -> Self {
        CompleteResult {
            completion: Completion {
                values,
                total: None,
                has_more: None,
                extra: JsonObject::new(),
            },
            result_type: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

unknown_fields! {
    PromptReference;
    ResourceTemplateReference;
    CompletionArgument;
    CompletionContext;
    CompleteRequestParams {
        reference: "ref",
        argument: "argument",
        context: "context",
    };
    Completion;
    CompleteResult { completion: "completion", result_type: "resultType" };
}
