//! Header values: any text encodes to a value HTTP can carry, which
//! decodes back to it; a received value that decodes encodes and decodes
//! to the same; and the `Mcp-Param-*` headers of a JSON schema and
//! arguments each decode.

use mcp_protocol::headers::{
    PARAM_HEADER_PREFIX, check_header_annotations, decode_header_value, encode_header_value,
};
use serde_json::Value;

/// The input is a header value, text to encode, or a JSON document of a
/// schema and arguments.
pub fn headers(input: &[u8]) {
    let text = String::from_utf8_lossy(input);
    let sent = encode_header_value(&text);
    assert!(
        http::HeaderValue::from_str(&sent).is_ok(),
        "{sent:?} is no header value"
    );
    assert_eq!(decode_header_value(&sent).as_deref(), Ok(&*text));
    if let Ok(received) = decode_header_value(&text) {
        let again = encode_header_value(&received);
        assert_eq!(decode_header_value(&again).as_deref(), Ok(&*received));
    }
    if let Ok(Value::Object(doc)) = serde_json::from_slice::<Value>(input) {
        params(&doc);
    }
}

/// `{"schema": {...}, "arguments": {...}}`: the schema's annotations are
/// judged, and each header of the arguments is a header whose value
/// decodes.
fn params(doc: &serde_json::Map<String, Value>) {
    let (Some(Value::Object(schema)), Some(Value::Object(arguments))) =
        (doc.get("schema"), doc.get("arguments"))
    else {
        return;
    };
    if check_header_annotations(schema).is_err() {
        return;
    }
    for (name, value) in mcp_protocol::headers::param_headers(schema, arguments) {
        assert!(name.starts_with(PARAM_HEADER_PREFIX), "{name:?}");
        assert!(
            http::HeaderName::from_bytes(name.as_bytes()).is_ok(),
            "{name:?} is no header name"
        );
        assert!(http::HeaderValue::from_str(&value).is_ok(), "{value:?}");
        assert!(decode_header_value(&value).is_ok(), "{value:?}");
    }
}
