//! The events of a response body: read from one frame, one byte per
//! frame and arbitrary frames, the same events come out, none of them
//! larger than the bound, and the same end.

use mcp_protocol::framing::PREFIX_LEN;
use mcp_transport_http::fuzzing::{End, Event, read_events};

/// The input's first byte sets the bound (1 to 64 bytes, so that it is
/// often reached), the next four the frames.
pub fn sse(input: &[u8]) {
    let (head, body) = crate::take(input, 5);
    let max = usize::from(head.first().copied().unwrap_or(0) % 64) + 1;
    let seed = head.get(1..).unwrap_or_default();
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    let frames = crate::chunks(body, seed);
    let by_byte = read_events(&bytes, max);
    let whole = read_events(&[body], max);
    let framed = read_events(&frames, max);
    for (events, end) in [&by_byte, &whole, &framed] {
        within(events, end, max);
    }
    same(&whole, &by_byte, "one frame");
    same(&framed, &by_byte, "arbitrary frames");
}

/// No event passed the bound: its fields, with the least their lines
/// could have taken on the wire (`data:` and the others, a comment
/// aside), fit in `max`.
fn within(events: &[Event], end: &End, max: usize) {
    for e in events {
        let mut least = 0;
        if let Some(data) = &e.data {
            let lines = data.split('\n').count();
            least += "data:".len() * lines + data.len() + 1 - lines;
        }
        least += e.event.as_ref().map_or(0, |v| "event:".len() + v.len());
        least += e.id.as_ref().map_or(0, |v| "id:".len() + v.len());
        least += e.retry.map_or(0, |_| "retry:0".len());
        assert!(
            least <= max,
            "an event of at least {least} bytes passed the bound {max}: {e:?}"
        );
    }
    if let End::TooLarge { size, prefix } = end {
        assert!(*size > max, "reported too large at {size} of {max}");
        assert!(prefix.len() <= 2 * PREFIX_LEN);
    }
}

/// The same events and end as read byte by byte; after a line the parser
/// refuses, a frame's events before it may be lost (the parser reports
/// the line first), but never other ones.
fn same(read: &(Vec<Event>, End), by_byte: &(Vec<Event>, End), how: &str) {
    assert_eq!(read.1, by_byte.1, "{how}: another end");
    if matches!(read.1, End::Invalid(_)) {
        assert!(
            by_byte.0.starts_with(&read.0),
            "{how}: {:?} is not a start of {:?}",
            read.0,
            by_byte.0
        );
    } else {
        assert_eq!(read.0, by_byte.0, "{how}: other events");
    }
}
