//! The newline framing: [`LineBuffer`] over one buffer, over one byte at
//! a time and over arbitrary reads, and the stdio transport's
//! [`LineDecoder`] over the same reads, all against a model (split on
//! `\n`; a line over the limit is reported once, then skipped).

use bytes::BytesMut;
use mcp_protocol::framing::{Frame, LineBuffer, PREFIX_LEN};
use mcp_transport_stdio::codec::LineDecoder;
use tokio_util::codec::Decoder;

/// A frame with its bytes owned, and of an over-long line only what every
/// way of reading sees (how much was seen when it was reported depends on
/// the reads).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seen {
    Line(Vec<u8>),
    TooLarge(Vec<u8>),
    Skipped(usize),
}

/// The input's first byte is the limit (0 to 31, so that it is often
/// reached), the next four choose the reads.
pub fn framing(input: &[u8]) {
    let (head, rest) = crate::take(input, 5);
    let max = usize::from(head.first().copied().unwrap_or(0) % 32);
    let seed = head.get(1..).unwrap_or_default();
    let model = model(rest, max);
    let reads = crate::chunks(rest, seed);
    let bytes: Vec<&[u8]> = rest.chunks(1).collect();
    assert_eq!(buffered(max, &[rest]), model, "one buffer, limit {max}");
    assert_eq!(buffered(max, &bytes), model, "byte by byte, limit {max}");
    assert_eq!(buffered(max, &reads), model, "in reads, limit {max}");
    assert_eq!(decoded(max, &reads), model, "the stdio codec, limit {max}");
}

/// What must come out: each `\n`-ended line, and a last one without its
/// newline at the end of the stream.
fn model(input: &[u8], max: usize) -> Vec<Seen> {
    let mut lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    let last = lines.pop().unwrap_or_default();
    if !last.is_empty() {
        lines.push(last);
    }
    let mut out = Vec::new();
    for line in lines {
        if line.len() <= max {
            out.push(Seen::Line(
                line.strip_suffix(b"\r").unwrap_or(line).to_vec(),
            ));
        } else {
            out.push(Seen::TooLarge(line[..kept(max)].to_vec()));
            out.push(Seen::Skipped(line.len()));
        }
    }
    out
}

/// How much of an over-long line's start every reader keeps.
fn kept(max: usize) -> usize {
    (max + 1).min(PREFIX_LEN)
}

fn seen(frame: Frame<&[u8]>, max: usize) -> Seen {
    match frame {
        Frame::Line(line) => {
            assert!(
                line.len() <= max,
                "a line of {} passed the limit {max}",
                line.len()
            );
            Seen::Line(line.to_vec())
        }
        Frame::TooLarge { seen, prefix } => {
            assert!(seen > max, "reported too large at {seen} of {max}");
            assert_eq!(prefix.len(), seen.min(PREFIX_LEN));
            Seen::TooLarge(prefix[..kept(max)].to_vec())
        }
        Frame::Skipped { size } => Seen::Skipped(size),
        other => panic!("a frame this check does not know: {other:?}"),
    }
}

fn buffered(max: usize, reads: &[&[u8]]) -> Vec<Seen> {
    let mut lines = LineBuffer::new(max);
    let mut out = Vec::new();
    for read in reads {
        lines.extend(read);
        while let Some(frame) = lines.next_frame() {
            out.push(seen(frame, max));
        }
    }
    while let Some(frame) = lines.finish() {
        out.push(seen(frame, max));
    }
    out
}

fn decoded(max: usize, reads: &[&[u8]]) -> Vec<Seen> {
    let mut decoder = LineDecoder::new(max);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let own = |frame: mcp_transport_stdio::codec::Frame| match frame {
        Frame::Line(line) => seen(Frame::Line(&line[..]), max),
        Frame::TooLarge { seen: n, prefix } => seen(
            Frame::TooLarge {
                seen: n,
                prefix: &prefix[..],
            },
            max,
        ),
        Frame::Skipped { size } => Seen::Skipped(size),
        other => panic!("a frame this check does not know: {other:?}"),
    };
    for read in reads {
        buf.extend_from_slice(read);
        while let Some(frame) = decoder.decode(&mut buf).expect("decoding never fails") {
            out.push(own(frame));
        }
    }
    while let Some(frame) = decoder.decode_eof(&mut buf).expect("decoding never fails") {
        out.push(own(frame));
    }
    out
}
