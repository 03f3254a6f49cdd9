//! Multi round-trip requests (MRTR, 2026-07-28+): what a server asks for in
//! an `input_required` result, and what the client answers in its retry.

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::common::{JsonObject, Meta, RequestParams, ResultType, from_object};
use super::elicitation::{ElicitRequestParams, ElicitResult};
use super::roots::ListRootsResult;
use super::sampling::{CreateMessageRequestParams, CreateMessageResult};
use crate::methods;

/// What an input request asks, typed by its `method`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum InputRequestParams {
    /// `elicitation/create`.
    Elicitation(ElicitRequestParams),
    /// `sampling/createMessage`.
    Sampling(CreateMessageRequestParams),
    /// `roots/list`; its params are optional.
    ListRoots(Option<RequestParams>),
    /// A method this library does not know, kept raw.
    Unknown {
        /// The method.
        method: String,
        /// The params, verbatim.
        params: Option<Value>,
    },
}

/// One request for input: `{method, params}`, with no id.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct InputRequest {
    /// The method and its params.
    pub params: InputRequestParams,
    /// Members besides `method` and `params`, kept for the round trip.
    pub extra: JsonObject,
}

impl InputRequest {
    /// A request for input.
    pub fn new(params: InputRequestParams) -> Self {
        InputRequest {
            params,
            extra: JsonObject::new(),
        }
    }

    /// The request's method.
    pub fn method(&self) -> &str {
        match &self.params {
            InputRequestParams::Elicitation(_) => methods::ELICITATION_CREATE,
            InputRequestParams::Sampling(_) => methods::SAMPLING_CREATE_MESSAGE,
            InputRequestParams::ListRoots(_) => methods::ROOTS_LIST,
            InputRequestParams::Unknown { method, .. } => method,
        }
    }
}

impl Serialize for InputRequest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = self.extra.clone();
        let params = match &self.params {
            InputRequestParams::Elicitation(p) => Some(serde_json::to_value(p)),
            InputRequestParams::Sampling(p) => Some(serde_json::to_value(p)),
            InputRequestParams::ListRoots(p) => p.as_ref().map(serde_json::to_value),
            InputRequestParams::Unknown { params, .. } => params.clone().map(Ok),
        };
        map.insert("method".into(), Value::from(self.method()));
        if let Some(p) = params {
            map.insert("params".into(), p.map_err(serde::ser::Error::custom)?);
        }
        map.serialize(s)
    }
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut extra = JsonObject::deserialize(d)?;
        let method = match extra.remove("method") {
            Some(Value::String(m)) => m,
            Some(_) => {
                return Err(D::Error::custom(
                    "an input request's method is not a string",
                ));
            }
            None => return Err(D::Error::missing_field("method")),
        };
        let params = extra.remove("params");
        let object = |p: Option<Value>| match p {
            Some(Value::Object(m)) => Ok(m),
            Some(_) => Err(D::Error::custom(
                "an input request's params are not an object",
            )),
            None => Err(D::Error::missing_field("params")),
        };
        let params = match method.as_str() {
            methods::ELICITATION_CREATE => {
                InputRequestParams::Elicitation(from_object(object(params)?)?)
            }
            methods::SAMPLING_CREATE_MESSAGE => {
                InputRequestParams::Sampling(from_object(object(params)?)?)
            }
            methods::ROOTS_LIST => match params {
                None => InputRequestParams::ListRoots(None),
                p => InputRequestParams::ListRoots(Some(from_object(object(p)?)?)),
            },
            _ => InputRequestParams::Unknown { method, params },
        };
        Ok(InputRequest { params, extra })
    }
}

impl crate::unknown::UnknownFields for InputRequest {
    fn collect_unknown(&self, path: &str, out: &mut Vec<String>) {
        crate::unknown::report_extra(&self.extra, path, out);
        let params_path = format!("{path}.params");
        match &self.params {
            InputRequestParams::Elicitation(p) => p.collect_unknown(&params_path, out),
            InputRequestParams::Sampling(p) => p.collect_unknown(&params_path, out),
            InputRequestParams::ListRoots(p) => p.collect_unknown(&params_path, out),
            InputRequestParams::Unknown { method, .. } => {
                out.push(format!("{path} (unknown method {method:?})"))
            }
        }
    }
}

/// Input requests by key, as in `inputRequests`.
pub type InputRequests = BTreeMap<String, InputRequest>;

/// One answer to an input request, bare (no `resultType`).
#[allow(
    clippy::large_enum_variant,
    reason = "plain data, matched by users; boxing would only hurt that"
)]
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum InputResponse {
    /// Answers `elicitation/create`.
    Elicitation(ElicitResult),
    /// Answers `sampling/createMessage`.
    Sampling(CreateMessageResult),
    /// Answers `roots/list`.
    ListRoots(ListRootsResult),
    /// An answer of a shape this library does not know, kept raw.
    Unknown(JsonObject),
}

impl From<ElicitResult> for InputResponse {
    fn from(r: ElicitResult) -> Self {
        InputResponse::Elicitation(r)
    }
}

impl From<CreateMessageResult> for InputResponse {
    fn from(r: CreateMessageResult) -> Self {
        InputResponse::Sampling(r)
    }
}

impl From<ListRootsResult> for InputResponse {
    fn from(r: ListRootsResult) -> Self {
        InputResponse::ListRoots(r)
    }
}

impl Serialize for InputResponse {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            InputResponse::Elicitation(r) => r.serialize(s),
            InputResponse::Sampling(r) => r.serialize(s),
            InputResponse::ListRoots(r) => r.serialize(s),
            InputResponse::Unknown(m) => m.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for InputResponse {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = JsonObject::deserialize(d)?;
        Ok(if map.contains_key("action") {
            InputResponse::Elicitation(from_object(map)?)
        } else if map.contains_key("roots") {
            InputResponse::ListRoots(from_object(map)?)
        } else if map.contains_key("model") || map.contains_key("role") {
            InputResponse::Sampling(from_object(map)?)
        } else {
            InputResponse::Unknown(map)
        })
    }
}

impl crate::unknown::UnknownFields for InputResponse {
    fn collect_unknown(&self, path: &str, out: &mut Vec<String>) {
        match self {
            InputResponse::Elicitation(r) => r.collect_unknown(path, out),
            InputResponse::Sampling(r) => r.collect_unknown(path, out),
            InputResponse::ListRoots(r) => r.collect_unknown(path, out),
            InputResponse::Unknown(_) => out.push(format!("{path} (unknown response shape)")),
        }
    }
}

/// Answers by key, as in a retry's `inputResponses`.
pub type InputResponses = BTreeMap<String, InputResponse>;

/// A result asking for input before the request can finish
/// (`resultType: "input_required"`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InputRequiredResult {
    /// `input_required`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// What the server asks for, by key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state to echo in the retry, exactly as received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// The result's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl InputRequiredResult {
    /// An `input_required` result.
    pub fn new(input_requests: Option<InputRequests>, request_state: Option<String>) -> Self {
        InputRequiredResult {
            result_type: Some(ResultType::InputRequired),
            input_requests,
            request_state,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Params that a request may be retried with after an `input_required`
/// result: those of `tools/call`, `prompts/get` and `resources/read`.
pub trait RetryParams {
    /// Sets the retry members: the answers and the echoed state (both
    /// replaced, `None` removing them).
    fn set_retry(&mut self, input_responses: Option<InputResponses>, request_state: Option<String>);
}

macro_rules! impl_retry {
    ($($ty:ty),+) => {
        $(
            impl RetryParams for $ty {
                fn set_retry(
                    &mut self,
                    input_responses: Option<InputResponses>,
                    request_state: Option<String>,
                ) {
                    self.input_responses = input_responses;
                    self.request_state = request_state;
                }
            }
        )+
    };
}

impl_retry!(
    super::tools::CallToolRequestParams,
    super::prompts::GetPromptRequestParams,
    super::resources::ReadResourceRequestParams
);

unknown_fields! {
    InputRequiredResult { result_type: "resultType", input_requests: "inputRequests" };
}
