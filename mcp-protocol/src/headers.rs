//! The HTTP headers that mirror a request's body (2026-07-28+), as pure
//! functions a client, an HTTP transport, a proxy or a server can share:
//!
//! - [`param_headers`]: the `Mcp-Param-*` headers of a `tools/call`, from the
//!   tool's `inputSchema` (its `x-mcp-header` annotations) and the call's
//!   arguments.
//! - [`check_header_annotations`]: whether a tool's `x-mcp-header`
//!   annotations are valid (a client drops a tool whose are not).
//! - [`name_value`]: the `Mcp-Name` of a request (the tool or prompt name,
//!   the resource URI, the task id), before encoding.
//! - [`encode_header_value`] and [`decode_header_value`]: the spec's value
//!   encoding, shared with `Mcp-Name`: plain visible ASCII as it is,
//!   anything else as `=?base64?…?=` of its UTF-8.
//!
//! The rules are those of the Streamable HTTP transport's "Request
//! Metadata" section (2026-07-28).
//!
//! ```
//! use mcp_protocol::headers::{check_header_annotations, param_headers};
//! use serde_json::json;
//!
//! let schema = json!({"type": "object", "properties": {
//!     "region": {"type": "string", "x-mcp-header": "Region"},
//!     "query": {"type": "string"}
//! }});
//! let schema = schema.as_object().unwrap();
//! assert!(check_header_annotations(schema).is_ok());
//! let args = json!({"region": "us-west1", "query": "SELECT 1"});
//! assert_eq!(
//!     param_headers(schema, args.as_object().unwrap()),
//!     [("Mcp-Param-Region".to_owned(), "us-west1".to_owned())]
//! );
//! ```

use std::borrow::Cow;
use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

/// The `Mcp-Method` header's name.
pub const METHOD_HEADER: &str = "Mcp-Method";

/// The `Mcp-Name` header's name.
pub const NAME_HEADER: &str = "Mcp-Name";

/// The `Mcp-Name` of a request, unencoded: `params.name` of `tools/call`
/// and `prompts/get`, `params.uri` of `resources/read`, `params.taskId` of
/// the tasks extension's `tasks/get`, `tasks/result` and `tasks/cancel`;
/// `None` for other methods (which carry no `Mcp-Name`). Encode it with
/// [`encode_header_value`].
///
/// ```
/// use mcp_protocol::headers::{encode_header_value, name_value};
/// use serde_json::json;
///
/// let params = json!({"name": "café", "arguments": {}});
/// let name = name_value("tools/call", Some(&params)).unwrap();
/// assert_eq!(encode_header_value(name), "=?base64?Y2Fmw6k=?=");
/// assert_eq!(name_value("tools/list", None), None);
/// ```
pub fn name_value<'a>(method: &str, params: Option<&'a Value>) -> Option<&'a str> {
    use crate::methods::{
        PROMPTS_GET, RESOURCES_READ, TASKS_CANCEL, TASKS_GET, TASKS_RESULT, TOOLS_CALL,
    };
    let key = match method {
        TOOLS_CALL | PROMPTS_GET => "name",
        RESOURCES_READ => "uri",
        TASKS_GET | TASKS_RESULT | TASKS_CANCEL => "taskId",
        _ => return None,
    };
    params?.get(key)?.as_str()
}

/// What starts an `Mcp-Param-*` header's name; the annotation's value
/// follows.
///
/// ```
/// assert_eq!(format!("{}Region", mcp_protocol::headers::PARAM_HEADER_PREFIX), "Mcp-Param-Region");
/// ```
pub const PARAM_HEADER_PREFIX: &str = "Mcp-Param-";

/// The schema keyword that mirrors a tool parameter into a header.
///
/// ```
/// assert_eq!(mcp_protocol::headers::HEADER_ANNOTATION, "x-mcp-header");
/// ```
pub const HEADER_ANNOTATION: &str = "x-mcp-header";

/// What opens an encoded header value (lowercase, case-sensitive).
///
/// ```
/// use mcp_protocol::headers::{BASE64_PREFIX, BASE64_SUFFIX, encode_header_value};
/// let v = encode_header_value("é");
/// assert!(v.starts_with(BASE64_PREFIX) && v.ends_with(BASE64_SUFFIX));
/// ```
pub const BASE64_PREFIX: &str = "=?base64?";

/// What closes an encoded header value.
///
/// ```
/// assert_eq!(mcp_protocol::headers::BASE64_SUFFIX, "?=");
/// ```
pub const BASE64_SUFFIX: &str = "?=";

/// The largest integer a header may carry (JavaScript's safe range).
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Encodes a header value as the spec says: as it is when every character
/// is visible ASCII or a space (0x20 to 0x7E) and it neither starts nor
/// ends with a space; otherwise, and also when it already looks like the
/// sentinel, `=?base64?{base64 of its UTF-8}?=`.
///
/// A tab is legal in an HTTP field value, but it is a control character
/// and the spec sends those encoded, so it is encoded here too.
///
/// ```
/// use mcp_protocol::headers::encode_header_value;
///
/// assert_eq!(encode_header_value("us-west1"), "us-west1");
/// assert_eq!(encode_header_value("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
/// assert_eq!(encode_header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
/// assert_eq!(encode_header_value("a\tb"), "=?base64?YQli?=");
/// assert_eq!(encode_header_value("=?base64?literal?="), "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
/// ```
pub fn encode_header_value(value: &str) -> Cow<'_, str> {
    let plain = value.bytes().all(printable)
        && !value.starts_with(' ')
        && !value.ends_with(' ')
        && !looks_encoded(value);
    if plain {
        Cow::Borrowed(value)
    } else {
        Cow::Owned(format!(
            "{BASE64_PREFIX}{}{BASE64_SUFFIX}",
            STANDARD.encode(value.as_bytes())
        ))
    }
}

/// Whether a byte may be sent as it is: printable ASCII.
#[cfg(not(fuzz_planted))]
fn printable(b: u8) -> bool {
    (0x20..=0x7e).contains(&b)
}

/// The bug `cargo xtask fuzz --planted` builds in, for the `headers`
/// target to find: DEL (0x7f) is taken for printable and sent as it is,
/// a value HTTP refuses and the decoder does not read back.
#[cfg(fuzz_planted)]
fn printable(b: u8) -> bool {
    (0x20..0x80).contains(&b)
}

fn looks_encoded(value: &str) -> bool {
    value.starts_with(BASE64_PREFIX) && value.ends_with(BASE64_SUFFIX)
}

/// Why a received header value could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeaderValueError {
    /// It holds a byte an HTTP field value may not (a control character
    /// other than tab, or a byte outside ASCII).
    #[error("the header value holds a character a header may not")]
    InvalidCharacter,
    /// It wears the `=?base64?…?=` markers but what is inside is not
    /// standard, padded base64.
    #[error("the header value is not valid base64 inside its =?base64?…?= markers")]
    InvalidBase64,
    /// Its base64 decodes to bytes that are not UTF-8.
    #[error("the header value's base64 is not UTF-8")]
    NotUtf8,
}

/// Decodes a header value as received (the inverse of
/// [`encode_header_value`], for a server comparing a header with the body):
/// a value wearing the sentinel's markers is base64-decoded, any other is
/// taken as it is.
///
/// ```
/// use mcp_protocol::headers::{HeaderValueError, decode_header_value, encode_header_value};
///
/// assert_eq!(decode_header_value("us-west1")?, "us-west1");
/// let sent = encode_header_value("Hello, 世界");
/// assert_eq!(decode_header_value(&sent)?, "Hello, 世界");
/// assert_eq!(decode_header_value("=?base64?%%?="), Err(HeaderValueError::InvalidBase64));
/// # Ok::<(), HeaderValueError>(())
/// ```
pub fn decode_header_value(value: &str) -> Result<Cow<'_, str>, HeaderValueError> {
    if !value
        .bytes()
        .all(|b| (0x20..=0x7e).contains(&b) || b == b'\t')
    {
        return Err(HeaderValueError::InvalidCharacter);
    }
    let Some(inner) = value
        .strip_prefix(BASE64_PREFIX)
        .and_then(|v| v.strip_suffix(BASE64_SUFFIX))
    else {
        return Ok(Cow::Borrowed(value));
    };
    let bytes = STANDARD
        .decode(inner)
        .map_err(|_| HeaderValueError::InvalidBase64)?;
    String::from_utf8(bytes)
        .map(Cow::Owned)
        .map_err(|_| HeaderValueError::NotUtf8)
}

/// The `Mcp-Param-*` headers of a `tools/call`: for each property of
/// `input_schema` annotated with `x-mcp-header`, the value at that
/// property's path in `arguments`, converted (a string as it is, an
/// integer in decimal, a boolean as `true`/`false`) and encoded with
/// [`encode_header_value`]. A property that is absent or `null` in the
/// arguments gives no header; so does an integer outside JavaScript's safe
/// range, or a value of another type.
///
/// Pairs are (header name, header value), in the order the schema's JSON
/// map keeps its properties (sorted by key, unless `serde_json`'s
/// `preserve_order` is on); header order carries no meaning.
/// The schema is assumed valid (see [`check_header_annotations`]; a client
/// drops tools whose annotations are not).
///
/// ```
/// use mcp_protocol::headers::param_headers;
/// use serde_json::json;
///
/// let schema = json!({"type": "object", "properties": {
///     "region": {"type": "string", "x-mcp-header": "Region"},
///     "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
///     "options": {"type": "object", "properties": {
///         "shard": {"type": "integer", "x-mcp-header": "Shard"}
///     }},
///     "note": {"type": "string", "x-mcp-header": "Note"}
/// }});
/// let args = json!({"region": "eu-west1", "verbose": true, "options": {"shard": -7}, "note": null});
/// let mut headers = param_headers(schema.as_object().unwrap(), args.as_object().unwrap());
/// headers.sort();
/// assert_eq!(headers, [
///     ("Mcp-Param-Region".to_owned(), "eu-west1".to_owned()),
///     ("Mcp-Param-Shard".to_owned(), "-7".to_owned()),
///     ("Mcp-Param-Verbose".to_owned(), "true".to_owned()),
/// ]);
/// ```
pub fn param_headers(
    input_schema: &Map<String, Value>,
    arguments: &Map<String, Value>,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    collect_headers(input_schema, Some(arguments), &mut out);
    out
}

/// `schema` is an object schema reached through `properties` alone;
/// `value` the instance at the same path, when there is one.
fn collect_headers(
    schema: &Map<String, Value>,
    value: Option<&Map<String, Value>>,
    out: &mut Vec<(String, String)>,
) {
    let Some(Value::Object(props)) = schema.get("properties") else {
        return;
    };
    for (prop, sub) in props {
        let Value::Object(sub) = sub else { continue };
        let child = value.and_then(|v| v.get(prop)).filter(|v| !v.is_null());
        if let (Some(Value::String(name)), Some(child)) = (sub.get(HEADER_ANNOTATION), child)
            && let Some(text) = header_text(child)
        {
            out.push((
                format!("{PARAM_HEADER_PREFIX}{name}"),
                encode_header_value(&text).into_owned(),
            ));
        }
        collect_headers(sub, child.and_then(Value::as_object), out);
    }
}

fn header_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => n
            .as_i64()
            .filter(|i| i.abs() <= MAX_SAFE_INTEGER)
            .map(|i| i.to_string()),
        _ => None,
    }
}

/// Why a tool's `x-mcp-header` annotations are invalid: where, and what is
/// wrong.
///
/// ```
/// use mcp_protocol::headers::{AnnotationFault, check_header_annotations};
/// use serde_json::json;
///
/// let schema = json!({"type": "object", "properties": {
///     "ratio": {"type": "number", "x-mcp-header": "Ratio"}
/// }});
/// let error = check_header_annotations(schema.as_object().unwrap()).unwrap_err();
/// assert_eq!(error.path, "inputSchema.properties.ratio");
/// assert_eq!(error.fault, AnnotationFault::WrongType(Some("number".into())));
/// println!("{error}");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
#[error("x-mcp-header{} at {path}: {fault}", .name.as_deref().map(|n| format!(" {n:?}")).unwrap_or_default())]
pub struct HeaderAnnotationError {
    /// Where the annotation is, from `inputSchema` (for instance
    /// `inputSchema.properties.region`).
    pub path: String,
    /// The header name it gives, when it is a string.
    pub name: Option<String>,
    /// What is wrong with it.
    pub fault: AnnotationFault,
}

/// What is wrong with an `x-mcp-header` annotation.
///
/// ```
/// use mcp_protocol::headers::AnnotationFault;
/// assert_eq!(AnnotationFault::Duplicate.to_string(), "the name is used twice (case-insensitively)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AnnotationFault {
    /// Its value is not a string.
    NotAString,
    /// The property is not reached from the root through `properties` keys
    /// alone (it is under `items`, `oneOf`, `$ref`, …).
    Unreachable,
    /// The name is empty or not an HTTP field-name token (RFC 9110
    /// `1*tchar`).
    NotAToken,
    /// The property's type is not `string`, `integer` or `boolean` (the
    /// type found, if any).
    WrongType(Option<String>),
    /// Another annotation of the schema has the same name, ignoring case.
    Duplicate,
}

impl fmt::Display for AnnotationFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnnotationFault::NotAString => f.write_str("the annotation is not a string"),
            AnnotationFault::Unreachable => {
                f.write_str("the property is not reachable through `properties` alone")
            }
            AnnotationFault::NotAToken => f.write_str("the name is not an HTTP field-name token"),
            AnnotationFault::WrongType(t) => write!(
                f,
                "the property's type is {}, not string, integer or boolean",
                t.as_deref().unwrap_or("(none)")
            ),
            AnnotationFault::Duplicate => {
                f.write_str("the name is used twice (case-insensitively)")
            }
        }
    }
}

/// Checks every `x-mcp-header` annotation of a tool's `inputSchema`: a
/// string, an HTTP token, unique ignoring case, on a `string`, `integer` or
/// `boolean` property reached from the root through `properties` keys
/// alone. The first fault found is returned. Annotations anywhere in the
/// schema count, so one hidden under `items` or `oneOf` is a fault too.
///
/// ```
/// use mcp_protocol::headers::{AnnotationFault, check_header_annotations};
/// use serde_json::json;
///
/// let ok = json!({"type": "object", "properties": {
///     "region": {"type": "string", "x-mcp-header": "Region"}
/// }});
/// assert!(check_header_annotations(ok.as_object().unwrap()).is_ok());
///
/// let hidden = json!({"type": "object", "properties": {
///     "regions": {"type": "array", "items": {"type": "string", "x-mcp-header": "Region"}}
/// }});
/// let error = check_header_annotations(hidden.as_object().unwrap()).unwrap_err();
/// assert_eq!(error.fault, AnnotationFault::Unreachable);
/// ```
pub fn check_header_annotations(
    input_schema: &Map<String, Value>,
) -> Result<(), HeaderAnnotationError> {
    let mut seen = Vec::new();
    check_object(input_schema, true, &Path::Root, &mut seen)
}

/// Where a node sits in the schema, as a chain on the stack: rendered only
/// for an error, so a valid schema is walked without allocating.
enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Property(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Path::Root => f.write_str("inputSchema"),
            Path::Key(parent, key) => write!(f, "{parent}.{key}"),
            Path::Property(parent, name) => write!(f, "{parent}.properties.{name}"),
            Path::Index(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

/// Walks the schema. `reachable` is whether the path from the root is a
/// chain of `properties` keys only.
fn check_node(
    node: &Value,
    reachable: bool,
    path: &Path<'_>,
    seen: &mut Vec<String>,
) -> Result<(), HeaderAnnotationError> {
    match node {
        Value::Object(map) => check_object(map, reachable, path, seen),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                check_node(item, false, &Path::Index(path, i), seen)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn check_object(
    map: &Map<String, Value>,
    reachable: bool,
    path: &Path<'_>,
    seen: &mut Vec<String>,
) -> Result<(), HeaderAnnotationError> {
    if let Some(name) = map.get(HEADER_ANNOTATION) {
        check_annotation(map, name, reachable, path, seen)?;
    }
    for (key, child) in map {
        if key == "properties" {
            if let Value::Object(props) = child {
                for (prop, schema) in props {
                    check_node(schema, reachable, &Path::Property(path, prop), seen)?;
                }
            }
        } else if key != HEADER_ANNOTATION {
            check_node(child, false, &Path::Key(path, key), seen)?;
        }
    }
    Ok(())
}

fn check_annotation(
    schema: &Map<String, Value>,
    name: &Value,
    reachable: bool,
    path: &Path<'_>,
    seen: &mut Vec<String>,
) -> Result<(), HeaderAnnotationError> {
    let fail = |name: Option<&str>, fault| HeaderAnnotationError {
        path: path.to_string(),
        name: name.map(str::to_owned),
        fault,
    };
    let Value::String(name) = name else {
        return Err(fail(None, AnnotationFault::NotAString));
    };
    if !reachable {
        return Err(fail(Some(name), AnnotationFault::Unreachable));
    }
    if name.is_empty() || !name.bytes().all(is_tchar) {
        return Err(fail(Some(name), AnnotationFault::NotAToken));
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string" | "integer" | "boolean") => {}
        other => {
            return Err(fail(
                Some(name),
                AnnotationFault::WrongType(other.map(str::to_owned)),
            ));
        }
    }
    let lower = name.to_ascii_lowercase();
    if seen.contains(&lower) {
        return Err(fail(Some(name), AnnotationFault::Duplicate));
    }
    seen.push(lower);
    Ok(())
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn the_path_of_a_fault_names_every_step() {
        let nested = schema(json!({"type": "object", "properties": {
            "opts": {"type": "object", "properties": {
                "mode": {"anyOf": [{"type": "string"}, {"type": "string", "x-mcp-header": "Mode"}]}
            }}
        }}));
        let error = check_header_annotations(&nested).unwrap_err();
        assert_eq!(error.fault, AnnotationFault::Unreachable);
        assert_eq!(
            error.path,
            "inputSchema.properties.opts.properties.mode.anyOf[1]"
        );
    }

    #[test]
    fn annotations_are_validated() {
        let ok = schema(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}
        }}));
        assert_eq!(check_header_annotations(&ok), Ok(()));
        for (bad, fault) in [
            (
                json!({"type": "object", "properties": {"x": {"type": "number", "x-mcp-header": "X"}}}),
                AnnotationFault::WrongType(Some("number".into())),
            ),
            (
                json!({"type": "object", "properties": {"x": {"x-mcp-header": "X"}}}),
                AnnotationFault::WrongType(None),
            ),
            (
                json!({"type": "object", "properties": {"x": {"type": "string", "x-mcp-header": ""}}}),
                AnnotationFault::NotAToken,
            ),
            (
                json!({"type": "object", "properties": {"x": {"type": "string", "x-mcp-header": "a b"}}}),
                AnnotationFault::NotAToken,
            ),
            (
                json!({"type": "object", "properties": {"x": {"type": "string", "x-mcp-header": "a\r\nb"}}}),
                AnnotationFault::NotAToken,
            ),
            (
                json!({"type": "object", "properties": {"x": {"type": "string", "x-mcp-header": 3}}}),
                AnnotationFault::NotAString,
            ),
            (
                json!({"type": "object", "properties": {
                    "x": {"type": "string", "x-mcp-header": "Dup"},
                    "y": {"type": "string", "x-mcp-header": "dup"}}}),
                AnnotationFault::Duplicate,
            ),
            (
                json!({"type": "object", "properties": {"x": {"type": "array",
                    "items": {"type": "string", "x-mcp-header": "X"}}}}),
                AnnotationFault::Unreachable,
            ),
            (
                json!({"type": "object", "oneOf": [{"properties": {"x": {"type": "string", "x-mcp-header": "X"}}}]}),
                AnnotationFault::Unreachable,
            ),
            (
                json!({"type": "object", "$defs": {"d": {"type": "string", "x-mcp-header": "X"}}}),
                AnnotationFault::Unreachable,
            ),
        ] {
            let error = check_header_annotations(&schema(bad.clone())).unwrap_err();
            assert_eq!(error.fault, fault, "{bad}");
        }
    }

    #[test]
    fn headers_are_extracted_and_encoded() {
        let s = schema(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "greeting": {"type": "string", "x-mcp-header": "Greeting"},
            "ok": {"type": "boolean", "x-mcp-header": "Ok"},
            "absent": {"type": "string", "x-mcp-header": "Absent"},
            "missing": {"type": "string", "x-mcp-header": "Missing"},
            "big": {"type": "integer", "x-mcp-header": "Big"},
            "opts": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}
        }}));
        let args = json!({"region": "us-west1", "greeting": "Hello, 世界", "ok": true,
            "opts": {"n": -7}, "absent": null, "big": 1_i64 << 60});
        let mut h = param_headers(&s, args.as_object().unwrap());
        h.sort();
        assert_eq!(
            h,
            vec![
                (
                    "Mcp-Param-Greeting".into(),
                    "=?base64?SGVsbG8sIOS4lueVjA==?=".into()
                ),
                ("Mcp-Param-N".into(), "-7".into()),
                ("Mcp-Param-Ok".into(), "true".into()),
                ("Mcp-Param-Region".into(), "us-west1".into()),
            ]
        );
    }

    /// The spec's table of examples, and the cases around its rule.
    #[test]
    fn values_are_encoded_as_the_spec_says() {
        for (value, sent) in [
            ("us-west1", "us-west1"),
            ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            (" padded ", "=?base64?IHBhZGRlZCA=?="),
            ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
            ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
            // A tab is a control character: encoded, inside or at an edge.
            ("a\tb", "=?base64?YQli?="),
            ("\tlead", "=?base64?CWxlYWQ=?="),
            ("trail\t", "=?base64?dHJhaWwJ?="),
            ("lead ", "=?base64?bGVhZCA=?="),
            (" ", "=?base64?IA==?="),
            ("inner space", "inner space"),
            ("", ""),
            ("=?base64?", "=?base64?"),
            ("\u{7f}", "=?base64?fw==?="),
        ] {
            assert_eq!(encode_header_value(value), sent, "{value:?}");
            assert_eq!(decode_header_value(sent).unwrap(), value, "{sent:?}");
        }
    }

    #[test]
    fn decoding_refuses_what_a_header_cannot_hold() {
        assert_eq!(
            decode_header_value("a\nb"),
            Err(HeaderValueError::InvalidCharacter)
        );
        assert_eq!(
            decode_header_value("é"),
            Err(HeaderValueError::InvalidCharacter)
        );
        assert_eq!(
            decode_header_value("=?base64?/w==?="),
            Err(HeaderValueError::NotUtf8)
        );
        assert_eq!(decode_header_value("a\tb").unwrap(), "a\tb");
    }
}
