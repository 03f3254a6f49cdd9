//! JSON-RPC and MCP error codes, and typed views of the `data` the spec
//! defines for some of them.
//!
//! Pre-release drafts of 2026-07-28 used -32001, -32003 and -32004 for the
//! last three modern codes; those carry no meaning here.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::jsonrpc::ErrorObject;
use crate::types::{ClientCapabilities, ElicitRequestUrlParams, JsonObject};
use crate::version::ProtocolVersion;

/// Invalid JSON was received.
pub const PARSE_ERROR: i64 = -32700;
/// The JSON sent is not a valid request.
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist, or its capability was not advertised.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid params: an unknown tool or prompt, bad arguments or cursor, a
/// missing `_meta` key; since 2026-07-28 also a resource not found.
pub const INVALID_PARAMS: i64 = -32602;
/// An internal error.
pub const INTERNAL_ERROR: i64 = -32603;
/// A resource was not found (2025-11-25 and earlier; clients still accept
/// it).
pub const RESOURCE_NOT_FOUND: i64 = -32002;
/// An HTTP header disagrees with the body (2026-07-28+).
pub const HEADER_MISMATCH: i64 = -32020;
/// The request needs a client capability it did not declare; `data` is
/// `{requiredCapabilities}` (2026-07-28+).
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// The protocol version is not supported; `data` is `{supported,
/// requested}` (2026-07-28+).
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// The request needs URL elicitations first; `data` is `{elicitations}`
/// (2025-11-25 only; reserved since).
pub const URL_ELICITATION_REQUIRED: i64 = -32042;

/// The spec's name for a code, or `None` for an implementation-defined one.
pub fn name(code: i64) -> Option<&'static str> {
    Some(match code {
        PARSE_ERROR => "ParseError",
        INVALID_REQUEST => "InvalidRequest",
        METHOD_NOT_FOUND => "MethodNotFound",
        INVALID_PARAMS => "InvalidParams",
        INTERNAL_ERROR => "InternalError",
        RESOURCE_NOT_FOUND => "ResourceNotFound",
        HEADER_MISMATCH => "HeaderMismatch",
        MISSING_REQUIRED_CLIENT_CAPABILITY => "MissingRequiredClientCapability",
        UNSUPPORTED_PROTOCOL_VERSION => "UnsupportedProtocolVersion",
        URL_ELICITATION_REQUIRED => "URLElicitationRequired",
        _ => return None,
    })
}

/// Whether the code exists only in modern (2026-07-28+) servers, so that
/// seeing it proves the server modern.
pub fn is_modern_only(code: i64) -> bool {
    matches!(
        code,
        HEADER_MISMATCH | MISSING_REQUIRED_CLIENT_CAPABILITY | UNSUPPORTED_PROTOCOL_VERSION
    )
}

/// The `supported` revisions of a version rejection's `data` (a `-32022`
/// error, or the `-32602` with which 2024-11-05 servers reject a version),
/// read leniently: entries that are not strings are skipped, and data of
/// another shape gives an empty list.
///
/// ```
/// use mcp_protocol::ProtocolVersion;
/// use mcp_protocol::error_codes::supported_versions;
/// use serde_json::json;
///
/// let data = json!({"supported": ["2026-07-28", 5], "requested": "1900-01-01"});
/// assert_eq!(supported_versions(Some(&data)), [ProtocolVersion::V2026_07_28]);
/// assert!(supported_versions(Some(&json!({"supported": 3}))).is_empty());
/// assert!(supported_versions(None).is_empty());
/// ```
pub fn supported_versions(data: Option<&Value>) -> Vec<ProtocolVersion> {
    data.and_then(|d| d.get("supported"))
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(ProtocolVersion::new)
                .collect()
        })
        .unwrap_or_default()
}

fn data_of<T: serde::de::DeserializeOwned>(error: &ErrorObject, code: i64) -> Option<T> {
    if error.code != code {
        return None;
    }
    serde_json::from_value(error.data.clone()?).ok()
}

/// `data` of [`UNSUPPORTED_PROTOCOL_VERSION`] (and of the `-32602` with
/// which 2024-11-05 servers reject a version).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UnsupportedProtocolVersionData {
    /// The versions the server supports.
    pub supported: Vec<ProtocolVersion>,
    /// The version the client asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested: Option<String>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl UnsupportedProtocolVersionData {
    /// The data of a `-32022` error, when well-formed.
    pub fn from_error(error: &ErrorObject) -> Option<Self> {
        data_of(error, UNSUPPORTED_PROTOCOL_VERSION)
    }

    /// The data of any error whose `data` has this shape (a 2024-11-05
    /// server's `-32602` rejection, for instance).
    pub fn from_data(data: &Value) -> Option<Self> {
        serde_json::from_value(data.clone()).ok()
    }

    /// `-32022` data.
    pub fn new(supported: Vec<ProtocolVersion>, requested: impl Into<String>) -> Self {
        UnsupportedProtocolVersionData {
            supported,
            requested: Some(requested.into()),
            extra: JsonObject::new(),
        }
    }

    /// The error object carrying this data.
    pub fn into_error(self, message: impl Into<String>) -> ErrorObject {
        ErrorObject::new(UNSUPPORTED_PROTOCOL_VERSION, message)
            .with_data(serde_json::to_value(self).expect("always serializes"))
    }
}

/// `data` of [`MISSING_REQUIRED_CLIENT_CAPABILITY`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MissingRequiredClientCapabilityData {
    /// The capabilities the request needs.
    pub required_capabilities: ClientCapabilities,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl MissingRequiredClientCapabilityData {
    /// The data of a `-32021` error, when well-formed.
    pub fn from_error(error: &ErrorObject) -> Option<Self> {
        data_of(error, MISSING_REQUIRED_CLIENT_CAPABILITY)
    }
}

/// `data` of [`URL_ELICITATION_REQUIRED`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UrlElicitationRequiredData {
    /// The URL elicitations to complete before retrying.
    pub elicitations: Vec<ElicitRequestUrlParams>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl UrlElicitationRequiredData {
    /// The data of a `-32042` error, when well-formed.
    pub fn from_error(error: &ErrorObject) -> Option<Self> {
        data_of(error, URL_ELICITATION_REQUIRED)
    }
}

unknown_fields! {
    UnsupportedProtocolVersionData;
    MissingRequiredClientCapabilityData { required_capabilities: "requiredCapabilities" };
    UrlElicitationRequiredData { elicitations: "elicitations" };
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typed_data_views() {
        let e = ErrorObject::new(UNSUPPORTED_PROTOCOL_VERSION, "no").with_data(
            json!({"supported": ["2026-07-28", "2025-11-25"], "requested": "1900-01-01"}),
        );
        let d = UnsupportedProtocolVersionData::from_error(&e).unwrap();
        assert_eq!(d.supported[1], ProtocolVersion::V2025_11_25);
        assert_eq!(d.requested.as_deref(), Some("1900-01-01"));
        assert_eq!(d.clone().into_error("no"), e);
        // The wrong code or malformed data gives nothing.
        assert!(
            UnsupportedProtocolVersionData::from_error(&ErrorObject::new(-32602, "x")).is_none()
        );
        let bad =
            ErrorObject::new(UNSUPPORTED_PROTOCOL_VERSION, "x").with_data(json!({"supported": 3}));
        assert!(UnsupportedProtocolVersionData::from_error(&bad).is_none());

        let e = ErrorObject::new(MISSING_REQUIRED_CLIENT_CAPABILITY, "x")
            .with_data(json!({"requiredCapabilities": {"elicitation": {}}}));
        let d = MissingRequiredClientCapabilityData::from_error(&e).unwrap();
        assert!(d.required_capabilities.elicitation.is_some());

        let e = ErrorObject::new(URL_ELICITATION_REQUIRED, "x").with_data(json!({"elicitations": [
            {"mode": "url", "elicitationId": "e1", "url": "https://x.example/a", "message": "m"}
        ]}));
        let d = UrlElicitationRequiredData::from_error(&e).unwrap();
        assert_eq!(d.elicitations[0].elicitation_id.as_deref(), Some("e1"));
        assert!(d.elicitations[0].extra.is_empty());

        assert!(is_modern_only(HEADER_MISMATCH));
        assert!(!is_modern_only(METHOD_NOT_FOUND));
        assert_eq!(name(-32022), Some("UnsupportedProtocolVersion"));
        assert_eq!(name(-32000), None);
    }
}
