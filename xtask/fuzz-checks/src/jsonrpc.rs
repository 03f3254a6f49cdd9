//! One inbound line or body: the fast reader of well-formed messages
//! against the general one, the id-and-result reader against both, each
//! message's encoding read back as itself, and its result normalized and
//! classified as either era's result would be.

use mcp_protocol::framing::{PREFIX_LEN, encode_line, sniff};
use mcp_protocol::jsonrpc::{ParseErrorKind, answer_text};
use mcp_protocol::result::{ClassifiedResult, RegisteredResultTypes, normalize_result};
use mcp_protocol::{Inbound, Message, ParseError, classify_result};
use serde_json::Value;

/// The input is one line or body as a server sends it.
pub fn jsonrpc(input: &[u8]) {
    let parsed = Inbound::parse(input);
    // The general path alone: JSON first, then the envelope.
    let general = serde_json::from_slice::<Value>(input)
        .map_err(|e| {
            let start = sniff(&input[..input.len().min(PREFIX_LEN)]);
            ParseError {
                kind: ParseErrorKind::NotJson(e.to_string()),
                id: start.id,
                request: start.request,
            }
        })
        .and_then(Inbound::from_value);
    assert_eq!(parsed, general, "the fast path and the general one differ");
    if let Some((id, result)) = answer_text(input) {
        // The result's text is checked for JSON syntax, not for numbers
        // out of range: the task waiting for the answer parses it and
        // fails the request as malformed when that fails, as the general
        // path fails the request its error names.
        match (&parsed, serde_json::from_str::<Value>(result.get())) {
            (Ok(Inbound::Single(Message::Response(r))), Ok(text)) => {
                assert_eq!(r.id, id);
                assert_eq!(r.result, text);
            }
            // An id written after the result cannot be read from the
            // start of bytes that do not parse; one that can is this id.
            (Err(e), Err(_)) => assert!(
                e.id.is_none() || (e.id.as_ref() == Some(&id) && !e.request),
                "{e:?}"
            ),
            (parsed, text) => {
                panic!("answer_text read an answer: {parsed:?} and {text:?}")
            }
        }
    }
    // Whatever the bytes, reading a message's start never panics.
    let _ = sniff(input);
    let Ok(inbound) = parsed else { return };
    for message in inbound.into_messages(|_| {}) {
        round_trip(&message);
        if let Message::Response(r) = &message {
            result(&r.result);
        }
    }
}

/// A message written and read back is the same message.
fn round_trip(message: &Message) {
    let line = encode_line(message);
    assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
    let again = Inbound::parse(&line[..line.len() - 1]).expect("an encoded message reads back");
    assert_eq!(
        again,
        Inbound::Single(message.clone()),
        "encoded as {line:?}"
    );
    assert_eq!(
        Message::from_value(message.to_value()).as_ref(),
        Ok(message)
    );
    // The start of a line too large to read names its id and its kind,
    // as the transports need to fail the request it answers.
    let sniffed = sniff(&line[..line.len().min(PREFIX_LEN)]);
    let request = matches!(message, Message::Request(_) | Message::Notification(_));
    if sniffed.id.is_some() || line.len() <= PREFIX_LEN {
        assert_eq!(sniffed.id.as_ref(), message.id(), "sniffed from {line:?}");
    }
    if line.len() <= PREFIX_LEN {
        assert_eq!(sniffed.request, request, "sniffed from {line:?}");
    }
}

/// Normalizing a result twice is normalizing it once, and a result
/// (legacy, without `resultType`, or modern) classifies the same before
/// and after.
fn result(raw: &Value) {
    let once = normalize_result(raw.clone());
    assert_eq!(normalize_result(once.clone()), once);
    for registered in [
        RegisteredResultTypes::new(),
        RegisteredResultTypes::new().with_tasks_extension(),
    ] {
        let before = classify_result(raw.clone(), &registered).map(|c| match c {
            ClassifiedResult::Complete(v) => ClassifiedResult::Complete(normalize_result(v)),
            other => other,
        });
        assert_eq!(before, classify_result(once.clone(), &registered));
    }
}
