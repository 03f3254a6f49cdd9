//! Elicitation: a server asks the user for input, through a form
//! (2025-06-18+) or by sending them to a URL (2025-11-25+).

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::common::{JsonObject, Meta, from_object};
use super::form_schema::PrimitiveSchemaDefinition;
use super::tasks::TaskMetadata;

string_enum! {
    /// An elicitation's `mode`.
    ElicitationMode {
        /// A form the client shows.
        Form = "form",
        /// A URL the user visits (2025-11-25+).
        Url = "url",
    }
}

/// The schema of a form: a flat object of primitive fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ElicitationSchema {
    /// Always `"object"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The fields, by name.
    pub properties: BTreeMap<String, PrimitiveSchemaDefinition>,
    /// The names of the fields that must be filled in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
    /// The schema's dialect.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ElicitationSchema {
    /// A form with the given fields.
    pub fn new(properties: BTreeMap<String, PrimitiveSchemaDefinition>) -> Self {
        ElicitationSchema {
            kind: "object".to_owned(),
            properties,
            required: None,
            schema: None,
            extra: JsonObject::new(),
        }
    }
}

/// Params of a form-mode `elicitation/create`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitRequestFormParams {
    /// `"form"` when the server wrote it (it may be omitted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ElicitationMode>,
    /// What to ask the user.
    pub message: String,
    /// The form.
    pub requested_schema: ElicitationSchema,
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

impl ElicitRequestFormParams {
    /// A form request, with `mode: "form"`.
    pub fn new(message: impl Into<String>, requested_schema: ElicitationSchema) -> Self {
        ElicitRequestFormParams {
            mode: Some(ElicitationMode::Form),
            message: message.into(),
            requested_schema,
            task: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Params of a URL-mode `elicitation/create` (2025-11-25+).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitRequestUrlParams {
    /// Always `"url"`.
    pub mode: ElicitationMode,
    /// Why the user should visit the URL.
    pub message: String,
    /// The URL.
    pub url: String,
    /// The elicitation's id (2025-11-25 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
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

impl ElicitRequestUrlParams {
    /// A URL request.
    pub fn new(message: impl Into<String>, url: impl Into<String>) -> Self {
        ElicitRequestUrlParams {
            mode: ElicitationMode::Url,
            message: message.into(),
            url: url.into(),
            elicitation_id: None,
            task: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Params of `elicitation/create`, by `mode` (absent means form).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ElicitRequestParams {
    /// A form.
    Form(ElicitRequestFormParams),
    /// A URL.
    Url(ElicitRequestUrlParams),
    /// A mode this library does not know, kept whole.
    Unknown(JsonObject),
}

impl ElicitRequestParams {
    /// The message for the user, whatever the mode.
    pub fn message(&self) -> Option<&str> {
        match self {
            ElicitRequestParams::Form(f) => Some(&f.message),
            ElicitRequestParams::Url(u) => Some(&u.message),
            ElicitRequestParams::Unknown(m) => m.get("message").and_then(Value::as_str),
        }
    }
}

impl Serialize for ElicitRequestParams {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ElicitRequestParams::Form(f) => f.serialize(s),
            ElicitRequestParams::Url(u) => u.serialize(s),
            ElicitRequestParams::Unknown(m) => m.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ElicitRequestParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = JsonObject::deserialize(d)?;
        match map.get("mode") {
            None => Ok(ElicitRequestParams::Form(from_object(map)?)),
            Some(Value::String(m)) if m == "form" => {
                Ok(ElicitRequestParams::Form(from_object(map)?))
            }
            Some(Value::String(m)) if m == "url" => Ok(ElicitRequestParams::Url(from_object(map)?)),
            Some(Value::String(_)) => Ok(ElicitRequestParams::Unknown(map)),
            Some(_) => Err(D::Error::custom("an elicitation's mode is not a string")),
        }
    }
}

impl crate::unknown::UnknownFields for ElicitRequestParams {
    fn collect_unknown(&self, path: &str, out: &mut Vec<String>) {
        match self {
            ElicitRequestParams::Form(f) => f.collect_unknown(path, out),
            ElicitRequestParams::Url(u) => u.collect_unknown(path, out),
            ElicitRequestParams::Unknown(_) => out.push(format!("{path} (unknown mode)")),
        }
    }
}

string_enum! {
    /// What the user did.
    ElicitAction {
        /// They submitted (form) or consented (URL).
        Accept = "accept",
        /// They refused.
        Decline = "decline",
        /// They dismissed the request.
        Cancel = "cancel",
    }
}

/// Result of `elicitation/create` (a client's answer; bare in MRTR).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The form's values, on `accept` in form mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<JsonObject>,
    /// The result's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ElicitResult {
    /// A result with `action` and no content.
    pub fn new(action: ElicitAction) -> Self {
        ElicitResult {
            action,
            content: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// An `accept` with the form's values.
    ///
    /// ```
    /// use mcp_protocol::types::{ElicitAction, ElicitResult};
    ///
    /// let mut form = serde_json::Map::new();
    /// form.insert("name".into(), "Ada".into());
    /// let answer = ElicitResult::accept(form);
    /// assert_eq!(answer.action, ElicitAction::Accept);
    /// ```
    pub fn accept(content: JsonObject) -> Self {
        ElicitResult {
            content: Some(content),
            ..ElicitResult::new(ElicitAction::Accept)
        }
    }

    /// A `decline`: the person said no.
    ///
    /// ```
    /// use mcp_protocol::types::{ElicitAction, ElicitResult};
    ///
    /// assert_eq!(ElicitResult::decline().action, ElicitAction::Decline);
    /// ```
    pub fn decline() -> Self {
        ElicitResult::new(ElicitAction::Decline)
    }

    /// A `cancel`: the person dismissed the question without answering.
    ///
    /// ```
    /// use mcp_protocol::types::{ElicitAction, ElicitResult};
    ///
    /// assert_eq!(ElicitResult::cancel().action, ElicitAction::Cancel);
    /// ```
    pub fn cancel() -> Self {
        ElicitResult::new(ElicitAction::Cancel)
    }
}

/// Params of `notifications/elicitation/complete` (2025-11-25 only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationCompleteNotificationParams {
    /// The URL elicitation that completed.
    pub elicitation_id: String,
    /// The notification's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

unknown_fields! {
    ElicitationSchema { properties: "properties" };
    ElicitRequestFormParams {
        mode: "mode",
        requested_schema: "requestedSchema",
        task: "task",
    };
    ElicitRequestUrlParams { mode: "mode", task: "task" };
    ElicitResult { action: "action" };
    ElicitationCompleteNotificationParams;
}
