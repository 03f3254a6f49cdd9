//! JSON-RPC 2.0 messages: the envelope every MCP message travels in.
//!
//! Parsing is strict about the envelope (a malformed message gets a typed
//! [`ParseError`] naming what is wrong, and the `id` when one could be found,
//! so a transport can fail the request it answers) and lenient about content:
//! `params`, `result` and `error.data` are kept as raw JSON for the layers
//! above to type.

use std::fmt;

mod well_formed;

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

/// The only `jsonrpc` member value JSON-RPC 2.0 allows.
pub const JSONRPC_VERSION: &str = "2.0";

/// A request id: a number or a string, never null.
///
/// The client owns ids; transports correlate on them and never renumber.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// An integer id, the form this library's client uses.
    Number(i64),
    /// A string id, as some peers use.
    String(String),
}

impl RequestId {
    /// Reads an id from a JSON value: an integer or a string, nothing else.
    pub fn from_value(value: &Value) -> Option<RequestId> {
        match value {
            Value::Number(n) => n.as_i64().map(RequestId::Number),
            Value::String(s) => Some(RequestId::String(s.clone())),
            _ => None,
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Number(n) => Value::from(*n),
            RequestId::String(s) => Value::from(s.as_str()),
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::String(s)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

/// A request: a method call that expects an answer with the same id.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// The id the answer will carry.
    pub id: RequestId,
    /// The method name, such as `tools/call`.
    pub method: String,
    /// The parameters, usually an object; `None` when the member is absent.
    pub params: Option<Value>,
}

impl Request {
    /// A request with the given id, method and params.
    pub fn new(id: impl Into<RequestId>, method: impl Into<String>, params: Option<Value>) -> Self {
        Request {
            id: id.into(),
            method: method.into(),
            params,
        }
    }

    /// `params._meta`, when present and an object.
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        meta_of(self.params.as_ref())
    }
}

/// A notification: a method call that gets no answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Notification {
    /// The method name, such as `notifications/progress`.
    pub method: String,
    /// The parameters; `None` when the member is absent.
    pub params: Option<Value>,
}

impl Notification {
    /// A notification with the given method and params.
    pub fn new(method: impl Into<String>, params: Option<Value>) -> Self {
        Notification {
            method: method.into(),
            params,
        }
    }

    /// `params._meta`, when present and an object.
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        meta_of(self.params.as_ref())
    }
}

fn meta_of(params: Option<&Value>) -> Option<&Map<String, Value>> {
    params?.get("_meta")?.as_object()
}

/// A successful answer to a request.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    /// The id of the request answered.
    pub id: RequestId,
    /// The `result` member, verbatim.
    pub result: Value,
}

/// The `error` member of an error answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code; see [`crate::error_codes`].
    pub code: i64,
    /// A short description from the peer.
    pub message: String,
    /// Additional information, verbatim (a `null` is kept as `Some(Null)`);
    /// its shape depends on the code.
    #[serde(
        default,
        deserialize_with = "present_value",
        skip_serializing_if = "Option::is_none"
    )]
    pub data: Option<Value>,
}

/// Reads a member that is present as `Some`, even when it is `null`.
fn present_value<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl ErrorObject {
    /// An error with a code and a message and no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The same error carrying `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

/// An error answer. Its id may be null when the peer could not read the
/// request's id (a parse error, for instance).
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorResponse {
    /// The id of the request answered, or `None` for a null or absent id.
    pub id: Option<RequestId>,
    /// What went wrong.
    pub error: ErrorObject,
}

/// Any one JSON-RPC message.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A successful answer.
    Response(Response),
    /// An error answer.
    Error(ErrorResponse),
}

impl Message {
    /// The id of a request or answer; `None` for notifications and
    /// error answers with a null id.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Message::Request(r) => Some(&r.id),
            Message::Response(r) => Some(&r.id),
            Message::Error(e) => e.id.as_ref(),
            Message::Notification(_) => None,
        }
    }

    /// The method of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request(r) => Some(&r.method),
            Message::Notification(n) => Some(&n.method),
            _ => None,
        }
    }

    /// Parses one message from a JSON value already read.
    pub fn from_value(value: Value) -> Result<Message, ParseError> {
        parse_object(value)
    }

    /// The message as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("a message always serializes")
    }
}

impl From<Request> for Message {
    fn from(r: Request) -> Self {
        Message::Request(r)
    }
}

impl From<Notification> for Message {
    fn from(n: Notification) -> Self {
        Message::Notification(n)
    }
}

impl From<Response> for Message {
    fn from(r: Response) -> Self {
        Message::Response(r)
    }
}

impl From<ErrorResponse> for Message {
    fn from(e: ErrorResponse) -> Self {
        Message::Error(e)
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
        match self {
            Message::Request(r) => {
                map.serialize_entry("id", &r.id)?;
                map.serialize_entry("method", &r.method)?;
                if let Some(p) = &r.params {
                    map.serialize_entry("params", p)?;
                }
            }
            Message::Notification(n) => {
                map.serialize_entry("method", &n.method)?;
                if let Some(p) = &n.params {
                    map.serialize_entry("params", p)?;
                }
            }
            Message::Response(r) => {
                map.serialize_entry("id", &r.id)?;
                map.serialize_entry("result", &r.result)?;
            }
            Message::Error(e) => {
                map.serialize_entry("id", &e.id)?;
                map.serialize_entry("error", &e.error)?;
            }
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        parse_object(value).map_err(serde::de::Error::custom)
    }
}

/// What one inbound line or body held: one message, or a batch.
///
/// Batches were allowed from 2025-03-26 to 2025-06-18 and a client must
/// accept them on receive; each element is parsed on its own, so one bad
/// element does not cost the others.
#[derive(Debug, PartialEq)]
pub enum Inbound {
    /// A single message.
    Single(Message),
    /// A batch, element by element.
    Batch(Vec<Result<Message, ParseError>>),
}

impl Inbound {
    /// Parses one line (without its newline) or one HTTP body.
    pub fn parse(bytes: &[u8]) -> Result<Inbound, ParseError> {
        if let Some(message) = well_formed::parse(bytes) {
            return Ok(Inbound::Single(message));
        }
        let value: Value = serde_json::from_slice(bytes).map_err(|e| {
            // Bytes that start as a message but do not parse (a number out
            // of range, a cut-off body) still name the request they answer,
            // which then fails at once rather than waiting for its timeout.
            let sniffed =
                crate::framing::sniff(&bytes[..bytes.len().min(crate::framing::PREFIX_LEN)]);
            ParseError {
                kind: ParseErrorKind::NotJson(e.to_string()),
                id: sniffed.id,
                request: sniffed.request,
            }
        })?;
        Inbound::from_value(value)
    }

    /// Classifies a JSON value already read.
    pub fn from_value(value: Value) -> Result<Inbound, ParseError> {
        match value {
            Value::Array(items) if items.is_empty() => Err(ParseError {
                kind: ParseErrorKind::EmptyBatch,
                id: None,
                request: false,
            }),
            Value::Array(items) => Ok(Inbound::Batch(
                items.into_iter().map(parse_object).collect(),
            )),
            other => parse_object(other).map(Inbound::Single),
        }
    }

    /// The messages, flattened; bad batch elements are handed to `on_error`.
    pub fn into_messages(self, mut on_error: impl FnMut(ParseError)) -> Vec<Message> {
        match self {
            Inbound::Single(m) => vec![m],
            Inbound::Batch(items) => items
                .into_iter()
                .filter_map(|r| r.map_err(&mut on_error).ok())
                .collect(),
        }
    }
}

/// The id and the `result` (as JSON text) of `bytes` when they hold one
/// well-formed success answer, the commonest line a client reads; `None`
/// for anything else, which [`Inbound::parse`] reads (and says what is
/// wrong with). Nothing of the result is built: a reader can hand the text
/// to the task waiting for the answer, which parses it there.
///
/// ```
/// use mcp_protocol::RequestId;
/// use mcp_protocol::jsonrpc::answer_text;
///
/// let (id, result) = answer_text(br#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#).unwrap();
/// assert_eq!(id, RequestId::Number(7));
/// assert_eq!(result.get(), r#"{"content":[]}"#);
/// assert!(answer_text(br#"{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}}"#).is_none());
/// ```
pub fn answer_text(bytes: &[u8]) -> Option<(RequestId, &serde_json::value::RawValue)> {
    well_formed::answer(bytes)
}

/// Why an inbound message could not be read.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{kind}")]
pub struct ParseError {
    /// What was wrong.
    pub kind: ParseErrorKind,
    /// The message's id, when it could be read despite the fault; a
    /// transport uses it to fail the request the message answers, or to
    /// answer the request it is.
    pub id: Option<RequestId>,
    /// Whether the message has a `method` member: it is a request (or a
    /// notification) of the peer's, not an answer to one of ours, so its id
    /// names the peer's request, not a pending one.
    pub request: bool,
}

/// The ways an inbound message can be malformed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The bytes are not JSON.
    #[error("not JSON: {0}")]
    NotJson(String),
    /// Valid JSON, but not an object (nor an array of them).
    #[error("not a JSON-RPC message: expected an object, found {0}")]
    NotAnObject(&'static str),
    /// An empty array, which JSON-RPC forbids as a batch.
    #[error("empty batch")]
    EmptyBatch,
    /// No `jsonrpc` member.
    #[error("the \"jsonrpc\" member is missing")]
    MissingVersion,
    /// A `jsonrpc` member other than `"2.0"`.
    #[error("the \"jsonrpc\" member is {0}, not \"2.0\"")]
    WrongVersion(String),
    /// A method that is not a string.
    #[error("the \"method\" member is not a string")]
    MethodNotString,
    /// A request whose id is null.
    #[error("request {method:?} has a null id")]
    NullRequestId {
        /// The request's method.
        method: String,
    },
    /// An id that is neither an integer nor a string.
    #[error("the id {0} is neither an integer nor a string")]
    InvalidId(String),
    /// `params` that is neither an object nor an array.
    #[error("\"params\" must be an object or an array")]
    InvalidParams,
    /// An answer carrying both `result` and `error`.
    #[error("an answer carries both \"result\" and \"error\"")]
    BothResultAndError,
    /// An answer with no id member at all (a null id is allowed on errors).
    #[error("an answer has no \"id\" member")]
    MissingId,
    /// A successful answer with a null id.
    #[error("a result answer has a null id")]
    NullResponseId,
    /// An `error` member that is not `{code, message, data?}`.
    #[error("the \"error\" member is malformed: {0}")]
    InvalidError(String),
    /// An object with neither `method`, `result` nor `error`.
    #[error("neither a request, a notification nor an answer")]
    UnknownShape,
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn parse_object(value: Value) -> Result<Message, ParseError> {
    let mut obj = match value {
        Value::Object(obj) => obj,
        other => {
            return Err(ParseError {
                kind: ParseErrorKind::NotAnObject(type_name(&other)),
                id: None,
                request: false,
            });
        }
    };
    let request = obj.contains_key("method");
    // Read the id first so that every later fault can name it.
    let raw_id = obj.remove("id");
    let id = match &raw_id {
        None | Some(Value::Null) => None,
        Some(v) => match RequestId::from_value(v) {
            Some(id) => Some(id),
            None => {
                return Err(ParseError {
                    kind: ParseErrorKind::InvalidId(v.to_string()),
                    id: None,
                    request,
                });
            }
        },
    };
    let id_for_faults = id.clone();
    let fail = move |kind| ParseError {
        kind,
        id: id_for_faults.clone(),
        request,
    };
    match obj.remove("jsonrpc") {
        None => return Err(fail(ParseErrorKind::MissingVersion)),
        Some(Value::String(s)) if s == JSONRPC_VERSION => {}
        Some(other) => return Err(fail(ParseErrorKind::WrongVersion(other.to_string()))),
    }
    if let Some(method) = obj.remove("method") {
        let Value::String(method) = method else {
            return Err(fail(ParseErrorKind::MethodNotString));
        };
        let params = match obj.remove("params") {
            None => None,
            Some(p @ (Value::Object(_) | Value::Array(_))) => Some(p),
            Some(_) => return Err(fail(ParseErrorKind::InvalidParams)),
        };
        return match (raw_id, id) {
            (None, _) => Ok(Message::Notification(Notification { method, params })),
            (Some(_), Some(id)) => Ok(Message::Request(Request { id, method, params })),
            (Some(_), None) => Err(fail(ParseErrorKind::NullRequestId { method })),
        };
    }
    let result = obj.remove("result");
    let error = obj.remove("error");
    match (result, error) {
        (Some(_), Some(_)) => Err(fail(ParseErrorKind::BothResultAndError)),
        (Some(result), None) => {
            if raw_id.is_none() {
                return Err(fail(ParseErrorKind::MissingId));
            }
            match id {
                Some(id) => Ok(Message::Response(Response { id, result })),
                None => Err(fail(ParseErrorKind::NullResponseId)),
            }
        }
        (None, Some(error)) => {
            // A null id is legal here: the peer could not read ours. An
            // absent one is tolerated the same way, as peers omit it.
            let error: ErrorObject = serde_json::from_value(error)
                .map_err(|e| fail(ParseErrorKind::InvalidError(e.to_string())))?;
            Ok(Message::Error(ErrorResponse { id, error }))
        }
        (None, None) => Err(fail(ParseErrorKind::UnknownShape)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(s: &str) -> Result<Inbound, ParseError> {
        Inbound::parse(s.as_bytes())
    }

    fn kind(s: &str) -> ParseErrorKind {
        parse(s).unwrap_err().kind
    }

    #[test]
    fn parses_each_kind() {
        let m = parse(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
        assert_eq!(
            m,
            Inbound::Single(Message::Request(Request::new(1, "ping", None)))
        );
        let m = parse(r#"{"jsonrpc":"2.0","method":"n","params":{"a":1}}"#).unwrap();
        assert_eq!(
            m,
            Inbound::Single(Message::Notification(Notification::new(
                "n",
                Some(json!({"a":1}))
            )))
        );
        let m = parse(r#"{"jsonrpc":"2.0","id":"x","result":{}}"#).unwrap();
        assert_eq!(
            m,
            Inbound::Single(Message::Response(Response {
                id: "x".into(),
                result: json!({})
            }))
        );
        let m = parse(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#)
            .unwrap();
        assert_eq!(
            m,
            Inbound::Single(Message::Error(ErrorResponse {
                id: None,
                error: ErrorObject::new(-32700, "bad")
            }))
        );
    }

    #[test]
    fn each_malformation_has_its_error() {
        assert!(matches!(kind("{nope"), ParseErrorKind::NotJson(_)));
        assert_eq!(kind("3"), ParseErrorKind::NotAnObject("a number"));
        assert_eq!(kind("[]"), ParseErrorKind::EmptyBatch);
        assert_eq!(
            kind(r#"{"id":1,"result":{}}"#),
            ParseErrorKind::MissingVersion
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"1.0","id":1,"result":{}}"#),
            ParseErrorKind::WrongVersion("\"1.0\"".into())
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":1,"method":7}"#),
            ParseErrorKind::MethodNotString
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#),
            ParseErrorKind::NullRequestId { method: "m".into() }
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#),
            ParseErrorKind::InvalidId("1.5".into())
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":3}"#),
            ParseErrorKind::InvalidParams
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}"#),
            ParseErrorKind::BothResultAndError
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","result":{}}"#),
            ParseErrorKind::MissingId
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":null,"result":{}}"#),
            ParseErrorKind::NullResponseId
        );
        assert!(matches!(
            kind(r#"{"jsonrpc":"2.0","id":1,"error":{"message":"x"}}"#),
            ParseErrorKind::InvalidError(_)
        ));
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":1}"#),
            ParseErrorKind::UnknownShape
        );
    }

    #[test]
    fn faults_keep_the_id_when_readable() {
        let e = parse(r#"{"jsonrpc":"2.0","id":9,"result":{},"error":{"code":1,"message":""}}"#)
            .unwrap_err();
        assert_eq!(e.id, Some(RequestId::Number(9)));
    }

    #[test]
    fn batches_parse_element_by_element() {
        let b = parse(r#"[{"jsonrpc":"2.0","id":1,"result":{}}, 5]"#).unwrap();
        let Inbound::Batch(items) = b else { panic!() };
        assert!(items[0].is_ok());
        assert!(items[1].is_err());
    }

    #[test]
    fn serializes_with_version() {
        let m = Message::Request(Request::new(1, "ping", None));
        assert_eq!(
            m.to_value(),
            json!({"jsonrpc":"2.0","id":1,"method":"ping"})
        );
        let e = Message::Error(ErrorResponse {
            id: None,
            error: ErrorObject::new(-1, "x"),
        });
        assert_eq!(
            e.to_value(),
            json!({"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"x"}})
        );
    }
}
