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
/// nested value.
pub fn sniff_id(prefix: &[u8]) -> Option<RequestId> {
    let text = match std::str::from_utf8(prefix) {
        Ok(t) => t,
        Err(e) => std::str::from_utf8(&prefix[..e.valid_up_to()]).ok()?,
    };
    let mut rest = text.trim_start().strip_prefix('{')?;
    // Walk `"key": value` pairs at the top level while the values are
    // scalars; stop at the first object or array (that is `result` or
    // `params`, which servers write after the id).
    loop {
        rest = rest.trim_start();
        let (key, after) = read_string(rest)?;
        rest = after.trim_start().strip_prefix(':')?.trim_start();
        if key == "id" {
            if let Some((s, _)) = read_string(rest) {
                return Some(RequestId::String(s));
            }
            let end = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '-'))
                .unwrap_or(rest.len());
            return rest[..end].parse().ok().map(RequestId::Number);
        }
        // Skip a scalar value.
        if let Some((_, after)) = read_string(rest) {
            rest = after;
        } else if rest.starts_with(['{', '[']) {
            return None;
        } else {
            let end = rest.find([',', '}'])?;
            rest = &rest[end..];
        }
        rest = rest.trim_start().strip_prefix(',')?;
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
