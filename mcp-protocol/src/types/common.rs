//! Building blocks every other type module shares.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A JSON object, as the spec's `{ [key: string]: unknown }`.
pub type JsonObject = Map<String, Value>;

/// A `_meta` object: reserved keys (see [`crate::meta`]) and anything a peer
/// or extension adds.
pub type Meta = Map<String, Value>;

string_enum! {
    /// A result's `resultType` (2026-07-28); absent on legacy results, where
    /// it means `complete`.
    ResultType {
        /// A finished result.
        Complete = "complete",
        /// The server asks for input before it can finish (MRTR).
        InputRequired = "input_required",
        /// The tasks extension: the request runs as a task.
        Task = "task",
    }
}

/// Params that hold nothing but `_meta`: `server/discover`, `ping`,
/// `roots/list` and others.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RequestParams {
    /// The request's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl RequestParams {
    /// Empty params.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same params with `_meta`.
    pub fn with_meta(mut self, meta: Meta) -> Self {
        self.meta = Some(meta);
        self
    }
}

/// Params of a notification that carries nothing but `_meta` (the
/// `list_changed` notifications, `notifications/initialized`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NotificationParams {
    /// The notification's `_meta`, such as
    /// `io.modelcontextprotocol/subscriptionId` on a listen stream.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl NotificationParams {
    /// Empty params.
    pub fn new() -> Self {
        Self::default()
    }
}

/// A result with no content of its own (`ping`, `logging/setLevel`,
/// `resources/subscribe`, `tasks/cancel` of the tasks extension…).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EmptyResult {
    /// `resultType`; absent on legacy results.
    #[serde(
        rename = "resultType",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub result_type: Option<ResultType>,
    /// The result's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl EmptyResult {
    /// An empty result, as a legacy peer writes it: `{}`.
    pub fn new() -> Self {
        Self::default()
    }
}

unknown_fields! {
    RequestParams;
    NotificationParams;
    EmptyResult { result_type: "resultType" };
}

/// Serializes `inner` (a struct) with a tag member added, as content blocks
/// and references carry their `type`.
pub(crate) fn serialize_tagged<S, T>(
    serializer: S,
    key: &'static str,
    tag: &str,
    inner: &T,
) -> Result<S::Ok, S::Error>
where
    S: serde::Serializer,
    T: Serialize,
{
    #[derive(Serialize)]
    struct Tagged<'a, T> {
        #[serde(flatten)]
        tag: Map<String, Value>,
        #[serde(flatten)]
        inner: &'a T,
    }
    let mut tag_map = Map::new();
    tag_map.insert(key.to_owned(), Value::from(tag));
    Tagged {
        tag: tag_map,
        inner,
    }
    .serialize(serializer)
}

/// Deserializes the object `map` (its tag already removed) into `T`,
/// mapping the error into the caller's deserializer's error.
pub(crate) fn from_object<T, E>(map: JsonObject) -> Result<T, E>
where
    T: serde::de::DeserializeOwned,
    E: serde::de::Error,
{
    serde_json::from_value(Value::Object(map)).map_err(E::custom)
}
