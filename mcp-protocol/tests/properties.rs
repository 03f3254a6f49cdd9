//! Properties of the envelope, the framing, header values and result
//! normalization, on arbitrary input.

use mcp_protocol::framing::{Frame, LineBuffer, encode_line};
use mcp_protocol::headers::{decode_header_value, encode_header_value};
use mcp_protocol::jsonrpc::ErrorObject;
use mcp_protocol::result::normalize_result;
use mcp_protocol::{ErrorResponse, Inbound, Message, Notification, Request, RequestId, Response};
use proptest::prelude::*;
use serde_json::{Map, Value};

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        // Finite floats only (JSON has none other), and dyadic ones, which
        // every float parser reads back exactly.
        (-1_000_000i64..1_000_000).prop_map(|n| Value::from(n as f64 / 64.0)),
        any::<String>().prop_map(Value::from),
        "[\\n\\r\\t\"\\\\\u{2028}a-z]{0,8}".prop_map(Value::from),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::btree_map(any::<String>(), inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn params() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        prop::collection::btree_map(any::<String>(), json_value(), 0..6)
            .prop_map(|m| Some(Value::Object(m.into_iter().collect()))),
        prop::collection::vec(json_value(), 0..6).prop_map(|v| Some(Value::Array(v))),
    ]
}

fn request_id() -> impl Strategy<Value = RequestId> {
    prop_oneof![
        any::<i64>().prop_map(RequestId::Number),
        any::<String>().prop_map(RequestId::String),
    ]
}

fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        (request_id(), any::<String>(), params())
            .prop_map(|(id, m, p)| Message::Request(Request::new(id, m, p))),
        (any::<String>(), params())
            .prop_map(|(m, p)| Message::Notification(Notification::new(m, p))),
        (request_id(), json_value())
            .prop_map(|(id, result)| Message::Response(Response { id, result })),
        (
            prop::option::of(request_id()),
            any::<i64>(),
            any::<String>(),
            prop::option::of(json_value())
        )
            .prop_map(|(id, code, msg, data)| {
                let mut error = ErrorObject::new(code, msg);
                error.data = data;
                Message::Error(ErrorResponse { id, error })
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn encode_then_parse_is_identity(m in message()) {
        let line = encode_line(&m);
        prop_assert_eq!(*line.last().unwrap(), b'\n');
        prop_assert!(!line[..line.len() - 1].contains(&b'\n'));
        let parsed = Inbound::parse(&line[..line.len() - 1]).unwrap();
        prop_assert_eq!(parsed, Inbound::Single(m));
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = Inbound::parse(&bytes);
    }

    #[test]
    fn truncated_messages_never_panic(m in message(), cut in any::<prop::sample::Index>()) {
        let line = encode_line(&m);
        let end = cut.index(line.len());
        let _ = Inbound::parse(&line[..end]);
    }

    #[test]
    fn arbitrary_json_never_panics(v in json_value()) {
        let bytes = serde_json::to_vec(&v).unwrap();
        let _ = Inbound::parse(&bytes);
    }

    #[test]
    fn a_header_value_decodes_to_what_was_encoded(text in any::<String>()) {
        let sent = encode_header_value(&text);
        prop_assert!(sent.bytes().all(|b| (0x20..=0x7e).contains(&b)), "{:?}", sent);
        let decoded = decode_header_value(&sent);
        prop_assert_eq!(decoded.as_deref(), Ok(text.as_str()));
    }

    #[test]
    fn a_received_header_value_reencodes_to_itself(
        text in "(=\\?base64\\?)?[ -~\t]{0,24}(\\?=)?"
    ) {
        if let Ok(received) = decode_header_value(&text) {
            let again = encode_header_value(&received);
            let decoded = decode_header_value(&again);
            prop_assert_eq!(decoded.as_deref(), Ok(&*received));
        }
    }

    #[test]
    fn normalizing_a_result_twice_is_normalizing_it_once(v in json_value()) {
        let once = normalize_result(v);
        prop_assert_eq!(normalize_result(once.clone()), once);
    }
}

/// The frames of `chunks` read one after another, then the end.
fn frames(max: usize, chunks: &[&[u8]]) -> Vec<Frame<Vec<u8>>> {
    let mut lines = LineBuffer::new(max);
    let mut out = Vec::new();
    let own = |f: Frame<&[u8]>| match f {
        Frame::Line(l) => Frame::Line(l.to_vec()),
        Frame::TooLarge { seen, prefix } => Frame::TooLarge {
            seen,
            prefix: prefix.to_vec(),
        },
        Frame::Skipped { size } => Frame::Skipped { size },
        other => panic!("{other:?}"),
    };
    for chunk in chunks {
        lines.extend(chunk);
        while let Some(f) = lines.next_frame() {
            out.push(own(f));
        }
    }
    while let Some(f) = lines.finish() {
        out.push(own(f));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Messages written one after another read back the same wherever the
    /// reads split the bytes: at every byte boundary (every few bytes past
    /// 2 KiB of lines, to keep the time linear).
    #[test]
    fn framing_split_at_every_byte_gives_the_same_messages(
        messages in prop::collection::vec(message(), 1..4)
    ) {
        let bytes: Vec<u8> = messages.iter().flat_map(encode_line).collect();
        let whole = frames(usize::MAX, &[&bytes]);
        let read: Vec<Message> = whole
            .iter()
            .map(|f| match f {
                Frame::Line(line) => match Inbound::parse(line) {
                    Ok(Inbound::Single(m)) => m,
                    other => panic!("{other:?}"),
                },
                other => panic!("{other:?}"),
            })
            .collect();
        prop_assert_eq!(&read, &messages);
        for at in (0..=bytes.len()).step_by(bytes.len() / 2048 + 1) {
            let (a, b) = bytes.split_at(at);
            prop_assert_eq!(&frames(usize::MAX, &[a, b]), &whole, "split at {}", at);
        }
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    // `[[[[…`, `{"a":{"a":…`, open and then closed: serde_json's recursion
    // limit turns each into an error.
    for (open, close) in [(&b"["[..], b']'), (&b"{\"a\":"[..], b'}')] {
        let mut deep = open.repeat(100_000);
        assert!(Inbound::parse(&deep).is_err());
        deep.extend(std::iter::repeat_n(close, 100_000));
        assert!(Inbound::parse(&deep).is_err());
    }
    let inside = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    assert!(Inbound::parse(inside.as_bytes()).is_err());
}
