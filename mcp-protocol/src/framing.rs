//! Newline-delimited JSON, as the stdio transport frames messages.
//!
//! Each message is one line of compact JSON followed by `\n`. Compact JSON
//! escapes every control character inside strings, so an encoded message can
//! never contain a raw newline; [`encode_line`] relies on that and a test
//! proves it on arbitrary input.

use crate::jsonrpc::{Message, RequestId};

/// Encodes a message as one line, newline included.
pub fn encode_line(message: &Message) -> Vec<u8> {
    let mut line = serde_json::to_vec(message).expect("a message always serializes");
    debug_assert!(!line.contains(&b'\n'), "compact JSON has no raw newline");
    line.push(b'\n');
    line
}

/// Finds the id of a message from its first bytes, without parsing it all.
///
/// A message too large to read still names the request it answers near its
/// start (`{"jsonrpc":"2.0","id":7,"result":…`); this looks for a top-level
/// `"id"` member in `prefix` so that request can be failed with a clear error
/// instead of hanging. Returns `None` when no id is found before the first
/// nested value. [`sniff`] also says whether the message is a request.
pub fn sniff_id(prefix: &[u8]) -> Option<RequestId> {
    sniff(prefix).id
}

/// What the first bytes of a message say about it: see [`sniff`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Sniffed {
    /// The top-level `id`, when found before the first nested value.
    pub id: Option<RequestId>,
    /// Whether the message is the peer's request (or notification): it has
    /// a `method` member, or its first nested member is `params`. Its id
    /// then names the peer's request, never one of ours.
    pub request: bool,
}

/// Reads the top-level scalar members at the start of a message too large
/// to parse: its id, and whether it is a request or an answer.
///
/// ```
/// use mcp_protocol::framing::sniff;
///
/// let answer = sniff(br#"{"jsonrpc":"2.0","id":7,"result":{"content":["#);
/// assert_eq!((answer.id, answer.request), (Some(7.into()), false));
/// let request = sniff(br#"{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"#);
/// assert_eq!((request.id, request.request), (Some(7.into()), true));
/// ```
pub fn sniff(prefix: &[u8]) -> Sniffed {
    let text = match std::str::from_utf8(prefix) {
        Ok(t) => t,
        Err(e) => std::str::from_utf8(&prefix[..e.valid_up_to()]).unwrap_or_default(),
    };
    let mut found = Sniffed::default();
    let Some(mut rest) = text.trim_start().strip_prefix('{') else {
        return found;
    };
    // Walk `"key": value` pairs at the top level while the values are
    // scalars; stop at the first object or array (`result`, `error` or
    // `params`, which peers write after the id).
    loop {
        rest = rest.trim_start();
        let Some((key, after)) = read_string(rest) else {
            return found;
        };
        let Some(after) = after.trim_start().strip_prefix(':') else {
            return found;
        };
        rest = after.trim_start();
        if key == "method" {
            found.request = true;
        }
        if key == "id" && found.id.is_none() {
            found.id = if let Some((s, _)) = read_string(rest) {
                Some(RequestId::String(s))
            } else {
                let end = rest
                    .find(|c: char| !(c.is_ascii_digit() || c == '-'))
                    .unwrap_or(rest.len());
                rest[..end].parse().ok().map(RequestId::Number)
            };
        }
        // Skip a scalar value.
        if let Some((_, after)) = read_string(rest) {
            rest = after;
        } else if rest.starts_with(['{', '[']) {
            found.request |= key == "params";
            return found;
        } else {
            let Some(end) = rest.find([',', '}']) else {
                return found;
            };
            rest = &rest[end..];
        }
        let Some(after) = rest.trim_start().strip_prefix(',') else {
            return found;
        };
        rest = after;
    }
}

/// Reads a JSON string at the start of `s`; returns it unescaped (simple
/// escapes only) and what follows.
fn read_string(s: &str) -> Option<(String, &str)> {
    let body = s.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, &body[i + 1..])),
            '\\' => {
                let (_, e) = chars.next()?;
                out.push(match e {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    other => other,
                });
            }
            c => out.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::{Notification, Request};
    use serde_json::json;

    #[test]
    fn newline_in_strings_is_escaped() {
        let m = Message::Notification(Notification::new(
            "a\nb",
            Some(json!({"t": "x\n\r\u{2028}"})),
        ));
        let line = encode_line(&m);
        assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1);
        assert_eq!(*line.last().unwrap(), b'\n');
    }

    #[test]
    fn sniffs_ids() {
        assert_eq!(
            sniff_id(br#"{"jsonrpc":"2.0","id":42,"result":{"x":"#),
            Some(42.into())
        );
        assert_eq!(
            sniff_id(br#"{"id":"a\"b","jsonrpc":"2.0"#),
            Some("a\"b".into())
        );
        assert_eq!(sniff_id(br#"{"jsonrpc":"2.0","result":{"id":1}"#), None);
        assert_eq!(sniff_id(br#"{"jsonrpc":"2.0","id":-3,"#), Some((-3).into()));
        assert_eq!(sniff_id(b"garbage"), None);
        let line = encode_line(&Message::Request(Request::new(5, "x", Some(json!({})))));
        assert_eq!(sniff_id(&line), Some(5.into()));
    }
}
