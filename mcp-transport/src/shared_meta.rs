//! `_meta` members that every request of a connection carries alike.

use std::borrow::Cow;
use std::sync::Arc;

use mcp_protocol::jsonrpc::JSONRPC_VERSION;
use mcp_protocol::{Message, Request};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// Members of `params._meta` that are the same on every request of a
/// connection: a modern client's protocol version, capabilities and
/// client info. They are kept as a map and, once, as JSON text, so that a
/// transport that writes lines splices the text into each request instead
/// of copying, serializing and freeing the same values every time.
///
/// A caller hands them to a transport with
/// [`RequestOptions::shared_meta`](crate::RequestOptions::shared_meta) only
/// when its [`TransportProfile::takes_shared_meta`](crate::TransportProfile::takes_shared_meta)
/// says it puts them on the wire; otherwise it merges them into the params
/// itself with [`merge_into`](Self::merge_into). Either way the server sees
/// the same `_meta`: these members, and the request's own members that do
/// not have their names (these win).
///
/// Cheap to clone.
///
/// ```
/// use mcp_transport::SharedMeta;
/// use serde_json::{Map, json};
///
/// let mut members = Map::new();
/// members.insert("io.modelcontextprotocol/protocolVersion".into(), json!("2026-07-28"));
/// let shared = SharedMeta::new(members);
/// let params = shared.merge_into(Some(json!({ "name": "echo", "_meta": { "progressToken": 1 } })));
/// assert_eq!(
///     params.unwrap()["_meta"],
///     json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28", "progressToken": 1 })
/// );
/// ```
#[derive(Clone)]
pub struct SharedMeta(Arc<Shared>);

struct Shared {
    members: Map<String, Value>,
    /// The members as one JSON object.
    text: Box<RawValue>,
}

impl SharedMeta {
    /// The members, serialized once here.
    pub fn new(members: Map<String, Value>) -> SharedMeta {
        let text = serde_json::value::to_raw_value(&members).expect("a map always serializes");
        SharedMeta(Arc::new(Shared { members, text }))
    }

    /// The members.
    pub fn members(&self) -> &Map<String, Value> {
        &self.0.members
    }

    /// Appends the line of `request` to `buf`, newline included, with the
    /// members spliced into its `_meta`: the same JSON as the request with
    /// [`merge_into`](Self::merge_into) applied, made without copying the
    /// members. How the [`Engine`](crate::Engine) writes a request's line;
    /// for a transport that encodes lines its own way. Params that are
    /// neither an object nor absent (and so have no `_meta`) go as they are.
    ///
    /// ```
    /// use mcp_protocol::Request;
    /// use mcp_transport::SharedMeta;
    /// use serde_json::{Map, json};
    ///
    /// let mut members = Map::new();
    /// members.insert("io.modelcontextprotocol/protocolVersion".into(), json!("2026-07-28"));
    /// let shared = SharedMeta::new(members);
    /// let mut line = Vec::new();
    /// shared.encode_request_line(&Request::new(1, "ping", None), &mut line);
    /// assert_eq!(
    ///     line,
    ///     br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}
    /// "#
    /// );
    /// ```
    pub fn encode_request_line(&self, request: &Request, buf: &mut Vec<u8>) {
        if matches!(request.params, None | Some(Value::Object(_))) {
            encode_request_line(request, self, buf);
        } else {
            let message = Message::Request(request.clone());
            mcp_protocol::framing::encode_line_into(&message, buf);
        }
    }

    /// The length of the members' JSON text.
    pub(crate) fn len(&self) -> usize {
        self.0.text.get().len()
    }

    /// `params` with the members in its `_meta` (params and `_meta` made
    /// objects when absent), replacing any of the same names: what the
    /// request is on the wire.
    pub fn merge_into(&self, params: Option<Value>) -> Option<Value> {
        if self.0.members.is_empty() {
            return params;
        }
        let mut params = params.unwrap_or_else(|| Value::Object(Map::new()));
        if let Value::Object(obj) = &mut params {
            let meta = obj
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            match meta {
                Value::Object(own) => own.extend(self.0.members.clone()),
                other => *other = Value::Object(self.0.members.clone()),
            }
        }
        Some(params)
    }

    /// The whole `_meta` object as JSON text: the members, then those of
    /// `own` that do not have their names. Without such members of its own,
    /// a request borrows the text made once.
    pub(crate) fn object_with(&self, own: Option<&Map<String, Value>>) -> Cow<'_, RawValue> {
        let shared = &self.0.members;
        let mut extra = own
            .into_iter()
            .flatten()
            .filter(|(key, _)| !shared.contains_key(*key))
            .peekable();
        if extra.peek().is_none() {
            return Cow::Borrowed(&self.0.text);
        }
        // The object made once, its closing brace replaced by the rest.
        let base = self.0.text.get();
        let mut text = base.as_bytes()[..base.len() - 1].to_vec();
        for (i, (key, value)) in extra.enumerate() {
            if i > 0 || !shared.is_empty() {
                text.push(b',');
            }
            serde_json::to_writer(&mut text, key).expect("a string always serializes");
            text.push(b':');
            serde_json::to_writer(&mut text, value).expect("a value always serializes");
        }
        text.push(b'}');
        let text = String::from_utf8(text).expect("serde_json writes UTF-8");
        Cow::Owned(RawValue::from_string(text).expect("an object of valid members"))
    }
}

fn encode_request_line(request: &Request, shared: &SharedMeta, buf: &mut Vec<u8>) {
    let params = if shared.members().is_empty() {
        // Nothing to splice: the request as it is.
        request.params.as_ref().map(Params::Plain)
    } else {
        let obj = request.params.as_ref().and_then(Value::as_object);
        debug_assert!(request.params.is_none() || obj.is_some());
        let own = obj.and_then(|o| o.get("_meta")).and_then(Value::as_object);
        Some(Params::Spliced {
            obj,
            meta: shared.object_with(own),
        })
    };
    serde_json::to_writer(&mut *buf, &Line { request, params })
        .expect("a message always serializes");
    buf.push(b'\n');
}

struct Line<'a> {
    request: &'a Request,
    params: Option<Params<'a>>,
}

impl Serialize for Line<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // The members and their order are those of `Message`'s request.
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
        map.serialize_entry("id", &self.request.id)?;
        map.serialize_entry("method", &self.request.method)?;
        if let Some(params) = &self.params {
            map.serialize_entry("params", params)?;
        }
        map.end()
    }
}

enum Params<'a> {
    Plain(&'a Value),
    /// The params' members, `_meta` replaced by the whole object's text.
    Spliced {
        obj: Option<&'a Map<String, Value>>,
        meta: Cow<'a, RawValue>,
    },
}

impl Serialize for Params<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (obj, meta) = match self {
            Params::Plain(value) => return value.serialize(serializer),
            Params::Spliced { obj, meta } => (obj, meta),
        };
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("_meta", meta)?;
        for (key, value) in obj.iter().copied().flatten() {
            if key != "_meta" {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

impl std::fmt::Debug for SharedMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SharedMeta").field(&self.0.members).finish()
    }
}

impl PartialEq for SharedMeta {
    fn eq(&self, other: &Self) -> bool {
        self.0.members == other.0.members
    }
}

#[cfg(test)]
mod tests {
    use mcp_protocol::framing::encode_line;
    use mcp_protocol::{Inbound, Message};
    use serde_json::json;

    use super::*;

    fn shared(members: Value) -> SharedMeta {
        let Value::Object(members) = members else {
            panic!("an object")
        };
        SharedMeta::new(members)
    }

    /// The message a line holds.
    fn read(line: &[u8]) -> Message {
        assert_eq!(line.last(), Some(&b'\n'));
        match Inbound::parse(&line[..line.len() - 1]).unwrap() {
            Inbound::Single(m) => m,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_spliced_line_is_the_merged_request() {
        let members =
            json!({ "p/version": "2026-07-28", "p/caps": { "a": {} }, "p/info": { "n": "x\n" } });
        let params = [
            None,
            Some(json!({})),
            Some(json!({ "name": "echo", "arguments": { "t": "é\"" } })),
            Some(json!({ "name": "echo", "_meta": { "progressToken": 3 } })),
            // The shared members win over the request's own of that name.
            Some(json!({ "_meta": { "p/version": "old", "mine": 1 }, "A": 1, "z": [] })),
            Some(json!({ "_meta": "not an object", "b": null })),
            Some(json!([1, 2])),
        ];
        for members in [members, json!({})] {
            let shared = shared(members);
            for params in params.clone() {
                let request = Request::new(5, "tools/call", params.clone());
                let mut line = Vec::new();
                shared.encode_request_line(&request, &mut line);
                let merged = Request::new(5, "tools/call", shared.merge_into(params.clone()));
                let expected = read(&encode_line(&Message::Request(merged)));
                assert_eq!(read(&line), expected, "{params:?}");
            }
        }
    }

    #[test]
    fn without_members_of_its_own_a_request_borrows_the_text() {
        let shared = shared(json!({ "k": 1 }));
        assert!(matches!(shared.object_with(None), Cow::Borrowed(_)));
        let own = json!({ "k": 2 });
        assert!(matches!(
            shared.object_with(own.as_object()),
            Cow::Borrowed(_)
        ));
        let own = json!({ "j": 2 });
        assert_eq!(
            shared.object_with(own.as_object()).get(),
            r#"{"k":1,"j":2}"#
        );
    }
}
