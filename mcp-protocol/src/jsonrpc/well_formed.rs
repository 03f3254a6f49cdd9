//! The fast path of [`Inbound::parse`](super::Inbound::parse): a single,
//! well-formed request, notification or response read straight into its
//! message.
//!
//! The general path reads the whole line into a [`Value`] and takes the
//! envelope's members out of the map, which allocates the map and every
//! member's name (`jsonrpc`, `id`, `result`, …) only to drop them again:
//! five allocations of an answer's twenty-odd. This reads the envelope's
//! members into fields and keeps only `params` or `result` as JSON. It
//! accepts only what the general path would turn into the same message;
//! anything else (an error answer, an unknown member, a repeated one, a
//! `null` where the general path says why it is wrong, a batch) makes it
//! give up, and the general path parses the line and says what is wrong.

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;

use super::{JSONRPC_VERSION, Message, Notification, Request, RequestId, Response};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: &'a str,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    method: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    params: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    result: Option<Value>,
}

/// A member that is there, `null` included (a plain `Option` would read
/// `null` as absent).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// The message `bytes` hold, when they are one well-formed request,
/// notification or response; `None` sends the caller to the general path.
pub(super) fn parse(bytes: &[u8]) -> Option<Message> {
    let e: Envelope<'_> = serde_json::from_slice(bytes).ok()?;
    if !is_version(e.jsonrpc) {
        return None;
    }
    let id = match &e.id {
        Some(v) => Some(RequestId::from_value(v)?),
        None => None,
    };
    match (e.method, e.result) {
        (Some(Value::String(method)), None) => {
            let params = match e.params {
                None => None,
                Some(p @ (Value::Object(_) | Value::Array(_))) => Some(p),
                Some(_) => return None,
            };
            Some(match id {
                Some(id) => Message::Request(Request { id, method, params }),
                None => Message::Notification(Notification { method, params }),
            })
        }
        (None, Some(result)) if e.params.is_none() => {
            Some(Message::Response(Response { id: id?, result }))
        }
        _ => None,
    }
}

/// A success answer's envelope, its result left as JSON text.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer<'a> {
    #[serde(borrow)]
    jsonrpc: &'a str,
    #[serde(deserialize_with = "request_id")]
    id: RequestId,
    #[serde(borrow)]
    result: &'a RawValue,
}

/// An id as [`RequestId::from_value`] reads one: an integer that fits an
/// `i64`, or a string.
fn request_id<'de, D: Deserializer<'de>>(d: D) -> Result<RequestId, D::Error> {
    struct Id;
    impl Visitor<'_> for Id {
        type Value = RequestId;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an integer or a string")
        }
        fn visit_i64<E: de::Error>(self, n: i64) -> Result<RequestId, E> {
            Ok(RequestId::Number(n))
        }
        fn visit_u64<E: de::Error>(self, n: u64) -> Result<RequestId, E> {
            i64::try_from(n)
                .map(RequestId::Number)
                .map_err(|_| E::custom("out of range"))
        }
        fn visit_str<E: de::Error>(self, s: &str) -> Result<RequestId, E> {
            Ok(RequestId::String(s.to_owned()))
        }
    }
    d.deserialize_any(Id)
}

/// The id and the `result` text of `bytes` when they are one well-formed
/// success answer; `None` sends the caller to [`Inbound::parse`](super::Inbound::parse).
pub(super) fn answer(bytes: &[u8]) -> Option<(RequestId, &RawValue)> {
    let a: Answer<'_> = serde_json::from_slice(bytes).ok()?;
    is_version(a.jsonrpc).then_some((a.id, a.result))
}

/// Whether a `jsonrpc` member is the version this reads.
#[cfg(not(fuzz_planted))]
fn is_version(jsonrpc: &str) -> bool {
    jsonrpc == JSONRPC_VERSION
}

/// The bug `cargo xtask fuzz --planted` builds in, for the `jsonrpc`
/// target to find: the fast path reads only the major version, and takes
/// a `2.1` the general path refuses.
#[cfg(fuzz_planted)]
fn is_version(jsonrpc: &str) -> bool {
    jsonrpc.starts_with(&JSONRPC_VERSION[..2])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::Inbound;

    /// What the general path makes of `line`.
    fn general(line: &str) -> Result<Inbound, crate::jsonrpc::ParseError> {
        Inbound::from_value(serde_json::from_str(line).unwrap())
    }

    #[test]
    fn agrees_with_the_general_path_where_it_answers() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","id":"a","result":null}"#,
            r#"{"result":7,"id":-3,"jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"x","params":[1]}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"p":1}}"#,
        ];
        for line in lines {
            let fast = parse(line.as_bytes()).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(general(line), Ok(Inbound::Single(fast.clone())), "{line}");
            // An answer read as text says the same once parsed.
            match (fast, answer(line.as_bytes())) {
                (Message::Response(r), Some((id, text))) => {
                    assert_eq!(id, r.id, "{line}");
                    let result: Value = serde_json::from_str(text.get()).unwrap();
                    assert_eq!(result, r.result, "{line}");
                }
                (Message::Response(_), None) => panic!("{line}: answer() gave up"),
                (_, found) => assert!(found.is_none(), "{line}: not an answer"),
            }
        }
    }

    #[test]
    fn leaves_everything_else_to_the_general_path() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":null,"result":1}"#,
            r#"{"jsonrpc":"2.0","result":1}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"result":1}"#,
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"result":1}"#,
            r#"{"jsonrpc":"2.0","id":true,"result":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"a":}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":1,"result":2}"#,
            r#"{"jsonrpc":"1.0","id":1,"result":1}"#,
            r#"{"id":1,"result":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":1,"extra":true}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"result":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":null,"result":5}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":3}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","result":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"params":{},"result":1}"#,
            r#"{"jsonrpc":"2\u002e0","id":1,"result":1}"#,
            r#"[{"jsonrpc":"2.0","id":1,"result":1}]"#,
            r#"{}"#,
            r#"not json"#,
        ];
        for line in lines {
            assert_eq!(parse(line.as_bytes()), None, "{line}");
            assert!(answer(line.as_bytes()).is_none(), "{line}");
        }
    }
}
