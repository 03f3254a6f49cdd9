//! Splitting a byte stream into lines without ever giving up on it.
//!
//! `tokio_util::codec::LinesCodec` and friends end the stream on the first
//! decode error (`FramedRead` yields `None` after an `Err`), so one bad line
//! from a server would kill the connection. [`LineDecoder`] never fails on
//! content: its item is a [`Frame`], which is either a line or the news
//! that a line was too long. An over-long line is not buffered: the decoder
//! keeps its first bytes (to find the id of the answer it carries) and
//! discards the rest up to the next newline, then reading resumes.
//!
//! The splitting itself is [`mcp_protocol::framing::LineSplitter`], the
//! one every line reader of this workspace uses; this is its `tokio-util`
//! face.

use bytes::{Buf, Bytes, BytesMut};
use mcp_protocol::framing::{LineSplitter, Split};
use tokio_util::codec::Decoder;

pub use mcp_protocol::framing::PREFIX_LEN;

/// One thing read from a newline-delimited stream:
/// [`mcp_protocol::framing::Frame`] over [`Bytes`].
///
/// ```
/// use mcp_transport_stdio::codec::Frame;
/// fn describe(frame: &Frame) -> String {
///     match frame {
///         Frame::Line(line) => format!("{} bytes", line.len()),
///         Frame::TooLarge { seen, .. } => format!("over the limit ({seen} bytes so far)"),
///         Frame::Skipped { size } => format!("skipped {size} bytes"),
///         _ => "something new".into(),
///     }
/// }
/// assert_eq!(describe(&Frame::Line("{}".into())), "2 bytes");
/// ```
pub type Frame = mcp_protocol::framing::Frame<Bytes>;

/// A [`Decoder`] for newline-delimited messages with a size limit, that
/// never returns an error for what a line contains (only the reader's own
/// I/O errors pass through `FramedRead`). The splitting is
/// [`mcp_protocol::framing::LineSplitter`]'s; this only moves bytes out of
/// `FramedRead`'s buffer.
///
/// ```
/// use bytes::BytesMut;
/// use mcp_transport_stdio::codec::{Frame, LineDecoder};
/// use tokio_util::codec::Decoder;
///
/// let mut decoder = LineDecoder::new(8);
/// let mut buf = BytesMut::from(&b"{}\r\nthis line is too long\n[1]\n"[..]);
/// assert_eq!(decoder.decode(&mut buf)?, Some(Frame::Line("{}".into())));
/// assert!(matches!(decoder.decode(&mut buf)?, Some(Frame::TooLarge { .. })));
/// assert_eq!(decoder.decode(&mut buf)?, Some(Frame::Skipped { size: 21 }));
/// assert_eq!(decoder.decode(&mut buf)?, Some(Frame::Line("[1]".into())));
/// assert_eq!(decoder.decode(&mut buf)?, None);
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct LineDecoder {
    splitter: LineSplitter,
}

impl LineDecoder {
    /// A decoder for lines of at most `max` bytes (newline excluded).
    ///
    /// ```
    /// use tokio_util::codec::FramedRead;
    /// let (ours, _theirs) = tokio::io::duplex(64);
    /// let frames = FramedRead::new(ours, mcp_transport_stdio::codec::LineDecoder::new(1 << 20));
    /// # let _ = frames;
    /// ```
    pub fn new(max: usize) -> Self {
        LineDecoder {
            splitter: LineSplitter::new(max),
        }
    }

    /// The limit.
    ///
    /// ```
    /// assert_eq!(mcp_transport_stdio::codec::LineDecoder::new(10).max(), 10);
    /// ```
    pub fn max(&self) -> usize {
        self.splitter.max()
    }
}

/// Takes what `split` found out of `buf`.
/// From this size on, a line's buffer grows by an eighth at a time
/// rather than doubling, and a line that ends the buffer is handed on in an
/// allocation of its own size: a large message then costs about its size
/// once as bytes (and once more parsed), not twice that.
const LARGE: usize = 1 << 20;

fn take(buf: &mut BytesMut, split: Split) -> Option<Frame> {
    match split {
        Split::Line { len, consumed } if len >= LARGE && consumed == buf.len() => {
            // Nothing follows: the buffer becomes the line, its spare room
            // given back (in place for a large allocation).
            let mut line: Vec<u8> = std::mem::take(buf).into();
            line.truncate(len);
            line.shrink_to_fit();
            Some(Frame::Line(Bytes::from(line)))
        }
        Split::Line { len, consumed } => {
            let mut line = buf.split_to(consumed);
            line.truncate(len);
            Some(Frame::Line(line.freeze()))
        }
        Split::TooLarge {
            seen,
            prefix,
            consumed,
        } => {
            let prefix = Bytes::copy_from_slice(&buf[..prefix]);
            buf.advance(consumed);
            Some(Frame::TooLarge { seen, prefix })
        }
        Split::Skipped { size, consumed } => {
            buf.advance(consumed);
            Some(Frame::Skipped { size })
        }
        Split::Incomplete { consumed } => {
            buf.advance(consumed);
            None
        }
        // A kind of split this decoder does not know: keep reading.
        _ => None,
    }
}

/// Makes room for more of a large line by an eighth of what it holds,
/// before the reader would double the buffer. A no-op below [`LARGE`] or
/// while room is left.
fn grow(buf: &mut BytesMut) {
    const ROOM: usize = 64 * 1024;
    if buf.len() < LARGE || buf.capacity() - buf.len() >= ROOM {
        return;
    }
    let mut bytes: Vec<u8> = std::mem::take(buf).into();
    bytes.reserve_exact((bytes.len() / 8).max(ROOM));
    *buf = BytesMut::from(Bytes::from(bytes));
}

impl Decoder for LineDecoder {
    type Item = Frame;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, std::io::Error> {
        let split = self.splitter.split(buf);
        let frame = take(buf, split);
        if frame.is_none() {
            grow(buf);
        }
        Ok(frame)
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, std::io::Error> {
        Ok(match self.splitter.finish(buf) {
            Some(split) => take(buf, split),
            None => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(max: usize, chunks: &[&[u8]], eof: bool) -> Vec<Frame> {
        let mut d = LineDecoder::new(max);
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for chunk in chunks {
            buf.extend_from_slice(chunk);
            while let Some(f) = d.decode(&mut buf).unwrap() {
                out.push(f);
            }
        }
        if eof {
            while let Some(f) = d.decode_eof(&mut buf).unwrap() {
                out.push(f);
            }
        }
        out
    }

    #[test]
    fn large_lines_come_whole_alone_or_followed() {
        let big = vec![b'x'; 3 * LARGE];
        let mut input = big.clone();
        input.push(b'\n');
        let mut d = LineDecoder::new(usize::MAX);
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        // As a reader would: room for a chunk, a chunk, decode.
        for chunk in input.chunks(64 * 1024) {
            buf.reserve(chunk.len());
            buf.extend_from_slice(chunk);
            while let Some(f) = d.decode(&mut buf).unwrap() {
                out.push(f);
            }
        }
        assert_eq!(out, vec![Frame::Line(Bytes::from(big.clone()))]);
        // Followed by another line in the same buffer: split, not taken whole.
        let mut both = big.clone();
        both.extend_from_slice(b"\nnext\n");
        let f = frames(usize::MAX, &[&both], false);
        assert_eq!(
            f,
            vec![Frame::Line(Bytes::from(big)), Frame::Line("next".into())]
        );
    }

    #[test]
    fn lines_across_chunks() {
        let f = frames(100, &[b"ab", b"c\nde", b"f\r\n", b"\n"], false);
        assert_eq!(
            f,
            vec![
                Frame::Line("abc".into()),
                Frame::Line("def".into()),
                Frame::Line("".into())
            ]
        );
    }

    #[test]
    fn exactly_at_the_limit_passes() {
        let f = frames(3, &[b"abc\nabcd\n"], false);
        assert_eq!(f[0], Frame::Line("abc".into()));
        assert!(matches!(f[1], Frame::TooLarge { seen: 4, .. }));
        assert_eq!(f[2], Frame::Skipped { size: 4 });
    }

    #[test]
    fn over_long_line_is_discarded_without_buffering() {
        let mut d = LineDecoder::new(10);
        let mut buf = BytesMut::new();
        buf.extend_from_slice(br#"{"id":7,"result":"#);
        let f = d.decode(&mut buf).unwrap().unwrap();
        match f {
            Frame::TooLarge { seen, prefix } => {
                assert_eq!(seen, 17);
                assert_eq!(mcp_protocol::framing::sniff_id(&prefix), Some(7.into()));
            }
            other => panic!("{other:?}"),
        }
        for _ in 0..100 {
            buf.extend_from_slice(&[b'x'; 1000]);
            assert_eq!(d.decode(&mut buf).unwrap(), None);
            assert!(buf.is_empty(), "discarded bytes are not kept");
        }
        buf.extend_from_slice(b"}\n{}\n");
        assert_eq!(
            d.decode(&mut buf).unwrap(),
            Some(Frame::Skipped {
                size: 17 + 100_000 + 1
            })
        );
        assert_eq!(d.decode(&mut buf).unwrap(), Some(Frame::Line("{}".into())));
    }

    #[test]
    fn eof_flushes_a_last_line_and_a_skip() {
        assert_eq!(
            frames(10, &[b"a\nlast"], true),
            vec![Frame::Line("a".into()), Frame::Line("last".into())]
        );
        let f = frames(3, &[b"toolong"], true);
        assert!(matches!(f[0], Frame::TooLarge { seen: 7, .. }));
        assert_eq!(f[1], Frame::Skipped { size: 7 });
    }
}
