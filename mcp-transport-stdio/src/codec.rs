//! Splitting a byte stream into lines without ever giving up on it.
//!
//! `tokio_util::codec::LinesCodec` and friends end the stream on the first
//! decode error (`FramedRead` yields `None` after an `Err`), so one bad line
//! from a server would kill the connection. [`LineDecoder`] never fails on
//! content: its item is a [`Frame`], which is either a line or the news
//! that a line was too long. An over-long line is not buffered: the decoder
//! keeps its first bytes (to find the id of the answer it carries) and
//! discards the rest up to the next newline, then reading resumes.

use bytes::{Buf, Bytes, BytesMut};
use tokio_util::codec::Decoder;

/// How many leading bytes of an over-long line are kept, to find its id.
///
/// ```
/// assert!(mcp_transport_stdio::codec::PREFIX_LEN >= 64);
/// ```
pub const PREFIX_LEN: usize = 256;

/// One thing read from a newline-delimited stream.
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
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Frame {
    /// A whole line, without its `\n` (nor a `\r` before it). It may be
    /// anything: JSON, noise, invalid UTF-8; judging it is the reader's job.
    Line(Bytes),
    /// A line grew past the limit. It is reported once, as soon as that is
    /// known, and its remaining bytes are then discarded up to the next
    /// newline.
    TooLarge {
        /// How many bytes of the line were seen so far (a lower bound of
        /// its length).
        seen: usize,
        /// Its first bytes (at most [`PREFIX_LEN`]), enough to find an id
        /// with [`mcp_protocol::framing::sniff_id`].
        prefix: Bytes,
    },
    /// The end of a line reported as [`Frame::TooLarge`] was reached.
    Skipped {
        /// The whole line's length, newline excluded.
        size: usize,
    },
}

/// A [`Decoder`] for newline-delimited messages with a size limit, that
/// never returns an error for what a line contains (only the reader's own
/// I/O errors pass through `FramedRead`).
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
    max: usize,
    /// How far the current (incomplete) line was already searched.
    scanned: usize,
    /// Set while discarding an over-long line: bytes seen so far.
    discarding: Option<usize>,
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
            max,
            scanned: 0,
            discarding: None,
        }
    }

    /// The limit.
    ///
    /// ```
    /// assert_eq!(mcp_transport_stdio::codec::LineDecoder::new(10).max(), 10);
    /// ```
    pub fn max(&self) -> usize {
        self.max
    }
}

fn trim_cr(mut line: BytesMut) -> Bytes {
    if line.last() == Some(&b'\r') {
        line.truncate(line.len() - 1);
    }
    line.freeze()
}

impl Decoder for LineDecoder {
    type Item = Frame;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, std::io::Error> {
        if let Some(seen) = self.discarding {
            return Ok(match buf.iter().position(|b| *b == b'\n') {
                Some(i) => {
                    buf.advance(i + 1);
                    self.discarding = None;
                    Some(Frame::Skipped { size: seen + i })
                }
                None => {
                    self.discarding = Some(seen + buf.len());
                    buf.clear();
                    None
                }
            });
        }
        let newline = buf[self.scanned..]
            .iter()
            .position(|b| *b == b'\n')
            .map(|i| self.scanned + i);
        match newline {
            Some(i) if i <= self.max => {
                self.scanned = 0;
                let mut line = buf.split_to(i + 1);
                line.truncate(i);
                Ok(Some(Frame::Line(trim_cr(line))))
            }
            // Too long, but already whole: report it and move on.
            Some(i) => {
                self.scanned = 0;
                let prefix = Bytes::copy_from_slice(&buf[..i.min(PREFIX_LEN)]);
                // Report now; the `Skipped` comes on the next call, which
                // finds the newline left in place at once.
                self.discarding = Some(i);
                buf.advance(i);
                Ok(Some(Frame::TooLarge { seen: i, prefix }))
            }
            None if buf.len() > self.max => {
                self.scanned = 0;
                let seen = buf.len();
                let prefix = Bytes::copy_from_slice(&buf[..seen.min(PREFIX_LEN)]);
                self.discarding = Some(seen);
                buf.clear();
                Ok(Some(Frame::TooLarge { seen, prefix }))
            }
            None => {
                self.scanned = buf.len();
                Ok(None)
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, std::io::Error> {
        if let Some(frame) = self.decode(buf)? {
            return Ok(Some(frame));
        }
        if let Some(seen) = self.discarding.take() {
            return Ok(Some(Frame::Skipped { size: seen }));
        }
        if buf.is_empty() {
            return Ok(None);
        }
        // A last line without its newline: take it as it is.
        self.scanned = 0;
        Ok(Some(Frame::Line(trim_cr(buf.split()))))
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
