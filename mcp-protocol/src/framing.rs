//! Newline-delimited JSON, as the stdio transport frames messages.
//!
//! Each message is one line of compact JSON followed by `\n`. Compact JSON
//! escapes every control character inside strings, so an encoded message can
//! never contain a raw newline; [`encode_line`] relies on that and a test
//! proves it on arbitrary input.
//!
//! Reading is done by one splitter, for every reader of this workspace
//! (the stdio transport's codec, the testkit's peers, the reference
//! server, the benchmarks): [`LineSplitter`], a state machine over bytes
//! the caller holds, with a maximum line length past which a line is
//! reported once ([`Frame::TooLarge`], with its first bytes to find its id)
//! and then discarded as it arrives, never buffered whole. [`LineBuffer`] owns the
//! bytes for a caller that has no buffer of its own. Neither does I/O.

use crate::jsonrpc::{Message, RequestId};

/// Encodes a message as one line, newline included.
pub fn encode_line(message: &Message) -> Vec<u8> {
    let mut line = Vec::new();
    encode_line_into(message, &mut line);
    line
}

/// Appends `message` and its newline to `buf`: a writer that batches
/// messages serializes each straight into its buffer, with no line of its
/// own in between (reserve the message's size first to keep the buffer
/// from doubling past it).
///
/// ```
/// use mcp_protocol::{Message, Notification};
/// use mcp_protocol::framing::encode_line_into;
///
/// let mut buf = b"{}\n".to_vec();
/// encode_line_into(&Message::Notification(Notification::new("n", None)), &mut buf);
/// assert_eq!(buf, b"{}\n{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n");
/// ```
pub fn encode_line_into(message: &Message, buf: &mut Vec<u8>) {
    let start = buf.len();
    serde_json::to_writer(&mut *buf, message).expect("a message always serializes");
    debug_assert!(
        !buf[start..].contains(&b'\n'),
        "compact JSON has no raw newline"
    );
    buf.push(b'\n');
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

/// Reads a JSON string at the start of `s`; returns it unescaped as a JSON
/// parser would, and what follows (`None` for a string cut short or an
/// escape JSON does not allow).
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
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'u' => read_unicode_escape(&mut chars)?,
                    '"' | '\\' | '/' => e,
                    _ => return None,
                });
            }
            c => out.push(c),
        }
    }
    None
}

/// The character of a `\uXXXX` escape whose `\u` was read, with the low
/// half of a surrogate pair when it is the high half; `None` for a lone
/// surrogate, which a JSON parser refuses too.
fn read_unicode_escape(chars: &mut std::str::CharIndices<'_>) -> Option<char> {
    fn hex4(chars: &mut std::str::CharIndices<'_>) -> Option<u32> {
        (0..4).try_fold(0, |v, _| Some(v * 16 + chars.next()?.1.to_digit(16)?))
    }
    let first = hex4(chars)?;
    if !(0xD800..0xDC00).contains(&first) {
        return char::from_u32(first);
    }
    let (Some((_, '\\')), Some((_, 'u'))) = (chars.next(), chars.next()) else {
        return None;
    };
    let low = hex4(chars)?;
    if !(0xDC00..0xE000).contains(&low) {
        return None;
    }
    char::from_u32(0x10000 + ((first - 0xD800) << 10) + (low - 0xDC00))
}

/// How many leading bytes of an over-long line are kept
/// ([`Frame::TooLarge`]'s `prefix`), enough to find its id with
/// [`sniff_id`].
///
/// ```
/// assert!(mcp_protocol::framing::PREFIX_LEN >= 64);
/// ```
pub const PREFIX_LEN: usize = 256;

/// One thing read from a newline-delimited stream, its bytes as `T`
/// (`&[u8]` from a [`LineBuffer`], `Bytes` from the stdio codec).
///
/// ```
/// use mcp_protocol::framing::Frame;
/// fn describe(frame: &Frame<&[u8]>) -> String {
///     match frame {
///         Frame::Line(line) => format!("{} bytes", line.len()),
///         Frame::TooLarge { seen, .. } => format!("over the limit ({seen} bytes so far)"),
///         Frame::Skipped { size } => format!("skipped {size} bytes"),
///         _ => "something new".into(),
///     }
/// }
/// assert_eq!(describe(&Frame::Line(b"{}")), "2 bytes");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Frame<T> {
    /// A whole line, without its `\n` (nor a `\r` before it). It may be
    /// anything: JSON, noise, invalid UTF-8; judging it is the reader's job.
    Line(T),
    /// A line grew past the limit. It is reported once, as soon as that is
    /// known, and its remaining bytes are then discarded up to the next
    /// newline.
    TooLarge {
        /// How many bytes of the line were seen so far (a lower bound of
        /// its length).
        seen: usize,
        /// Its first bytes (at most [`PREFIX_LEN`]), enough to find an id
        /// with [`sniff_id`].
        prefix: T,
    },
    /// The end of a line reported as [`Frame::TooLarge`] was reached.
    Skipped {
        /// The whole line's length, newline excluded.
        size: usize,
    },
}

/// What [`LineSplitter::split`] found at the start of the bytes it was
/// given, and how many of them the caller is done with (`consumed`: drop
/// them before the next call).
///
/// ```
/// use mcp_protocol::framing::{LineSplitter, Split};
///
/// let mut splitter = LineSplitter::new(100);
/// let buf = b"{}\r\nrest";
/// assert_eq!(splitter.split(buf), Split::Line { len: 2, consumed: 4 });
/// assert_eq!(splitter.split(&buf[4..]), Split::Incomplete { consumed: 0 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Split {
    /// A whole line: the first `len` bytes (newline and a `\r` before it
    /// excluded); `consumed` counts the newline too.
    Line {
        /// The line's length.
        len: usize,
        /// Bytes done with.
        consumed: usize,
    },
    /// A line over the limit ([`Frame::TooLarge`]): its first `prefix`
    /// bytes are at the start of the buffer; read them before dropping
    /// the `consumed` bytes.
    TooLarge {
        /// Bytes of the line seen so far.
        seen: usize,
        /// How many leading bytes to keep (at most [`PREFIX_LEN`]).
        prefix: usize,
        /// Bytes done with (discarded).
        consumed: usize,
    },
    /// The end of an over-long line ([`Frame::Skipped`]).
    Skipped {
        /// The whole line's length.
        size: usize,
        /// Bytes done with.
        consumed: usize,
    },
    /// No whole frame yet: call again with more bytes after the ones kept.
    /// While an over-long line is being discarded, `consumed` is all of
    /// them, so nothing of it is ever kept.
    Incomplete {
        /// Bytes done with.
        consumed: usize,
    },
}

/// Splits a byte stream into lines of at most `max` bytes, without ever
/// giving up on it: a line over the limit is reported once and skipped,
/// then reading resumes. Pure: the caller holds the bytes, calls
/// [`split`](Self::split) with everything it has not consumed yet (new
/// bytes after the old ones), and drops what each answer says it consumed.
///
/// ```
/// use mcp_protocol::framing::{LineSplitter, Split};
///
/// let mut splitter = LineSplitter::new(8);
/// let mut buf: Vec<u8> = b"this line is too long\n[1]\n".to_vec();
/// let Split::TooLarge { prefix, consumed, .. } = splitter.split(&buf) else { panic!() };
/// assert_eq!(&buf[..prefix], b"this line is too long");
/// buf.drain(..consumed);
/// let Split::Skipped { size: 21, consumed } = splitter.split(&buf) else { panic!() };
/// buf.drain(..consumed);
/// assert_eq!(splitter.split(&buf), Split::Line { len: 3, consumed: 4 });
/// ```
#[derive(Clone, Debug)]
pub struct LineSplitter {
    max: usize,
    /// How far the current (incomplete) line was already searched.
    scanned: usize,
    /// Set while discarding an over-long line: bytes seen so far.
    discarding: Option<usize>,
}

impl LineSplitter {
    /// A splitter for lines of at most `max` bytes (newline excluded);
    /// `usize::MAX` for no limit.
    ///
    /// ```
    /// assert_eq!(mcp_protocol::framing::LineSplitter::new(10).max(), 10);
    /// ```
    pub fn new(max: usize) -> Self {
        LineSplitter {
            max,
            scanned: 0,
            discarding: None,
        }
    }

    /// The limit.
    ///
    /// ```
    /// assert_eq!(mcp_protocol::framing::LineSplitter::new(usize::MAX).max(), usize::MAX);
    /// ```
    pub fn max(&self) -> usize {
        self.max
    }

    /// The next frame at the start of `buf`: the bytes not consumed by
    /// earlier calls, followed by any new ones.
    ///
    /// ```
    /// use mcp_protocol::framing::{LineSplitter, Split};
    /// let mut s = LineSplitter::new(100);
    /// assert_eq!(s.split(b"ab"), Split::Incomplete { consumed: 0 });
    /// assert_eq!(s.split(b"abc\n"), Split::Line { len: 3, consumed: 4 });
    /// ```
    pub fn split(&mut self, buf: &[u8]) -> Split {
        if let Some(seen) = self.discarding {
            return match newline(buf) {
                Some(i) => {
                    self.discarding = None;
                    Split::Skipped {
                        size: seen + i,
                        consumed: i + 1,
                    }
                }
                None => {
                    self.discarding = Some(seen + buf.len());
                    Split::Incomplete {
                        consumed: buf.len(),
                    }
                }
            };
        }
        let from = self.scanned.min(buf.len());
        match newline(&buf[from..]).map(|i| from + i) {
            Some(i) if fits(i, self.max) => {
                self.scanned = 0;
                let len = if i > 0 && buf[i - 1] == b'\r' {
                    i - 1
                } else {
                    i
                };
                Split::Line {
                    len,
                    consumed: i + 1,
                }
            }
            // Too long, but already whole: report it now; the newline is
            // left in place, so the next call ends the skip at once.
            Some(i) => self.too_large(i),
            None if buf.len() > self.max => self.too_large(buf.len()),
            None => {
                self.scanned = buf.len();
                Split::Incomplete { consumed: 0 }
            }
        }
    }

    fn too_large(&mut self, seen: usize) -> Split {
        self.scanned = 0;
        self.discarding = Some(seen);
        Split::TooLarge {
            seen,
            prefix: seen.min(PREFIX_LEN),
            consumed: seen,
        }
    }

    /// Like [`split`](Self::split), at the end of the stream: a last line
    /// without its newline is taken as it is, and a skip in progress ends.
    /// `None` once nothing is left.
    ///
    /// ```
    /// use mcp_protocol::framing::{LineSplitter, Split};
    /// let mut s = LineSplitter::new(100);
    /// assert_eq!(s.finish(b"last"), Some(Split::Line { len: 4, consumed: 4 }));
    /// assert_eq!(s.finish(b""), None);
    /// ```
    pub fn finish(&mut self, buf: &[u8]) -> Option<Split> {
        let consumed = match self.split(buf) {
            Split::Incomplete { consumed } => consumed,
            found => return Some(found),
        };
        if let Some(seen) = self.discarding.take() {
            return Some(Split::Skipped {
                size: seen,
                consumed,
            });
        }
        if buf.is_empty() {
            return None;
        }
        self.scanned = 0;
        let len = buf.len() - usize::from(buf.ends_with(b"\r"));
        Some(Split::Line {
            len,
            consumed: buf.len(),
        })
    }
}

/// Whether a line of `len` bytes (a `\r` before its newline included) is
/// within the limit `max`.
#[cfg(not(fuzz_planted))]
fn fits(len: usize, max: usize) -> bool {
    len <= max
}

/// The bug `cargo xtask fuzz --planted` builds in, for the `framing`
/// target to find: a whole line one byte over the limit passes.
#[cfg(fuzz_planted)]
fn fits(len: usize, max: usize) -> bool {
    len <= max.saturating_add(1)
}

fn newline(buf: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', buf)
}

/// A [`LineSplitter`] that owns its bytes, for a reader with no buffer of
/// its own: [`extend`](Self::extend) it with what was read, then take
/// frames with [`next_frame`](Self::next_frame) until there are none (and
/// [`finish`](Self::finish) at the end of the stream). It holds at most one
/// line of the limit's size plus what was read last.
///
/// ```
/// use mcp_protocol::framing::{Frame, LineBuffer};
///
/// let mut lines = LineBuffer::new(1024);
/// lines.extend(b"{\"a\":1}\n{\"b\"");
/// assert_eq!(lines.next_frame(), Some(Frame::Line(&b"{\"a\":1}"[..])));
/// assert_eq!(lines.next_frame(), None);
/// lines.extend(b":2}\n");
/// assert_eq!(lines.next_frame(), Some(Frame::Line(&b"{\"b\":2}"[..])));
/// assert_eq!(lines.finish(), None);
/// ```
#[derive(Clone, Debug)]
pub struct LineBuffer {
    splitter: LineSplitter,
    buf: Vec<u8>,
    /// Where the bytes not yet consumed start.
    start: usize,
}

impl LineBuffer {
    /// A buffer for lines of at most `max` bytes (`usize::MAX`: no limit).
    ///
    /// ```
    /// let lines = mcp_protocol::framing::LineBuffer::new(1 << 20);
    /// assert_eq!(lines.max(), 1 << 20);
    /// ```
    pub fn new(max: usize) -> Self {
        LineBuffer {
            splitter: LineSplitter::new(max),
            buf: Vec::new(),
            start: 0,
        }
    }

    /// The limit.
    ///
    /// ```
    /// assert_eq!(mcp_protocol::framing::LineBuffer::new(7).max(), 7);
    /// ```
    pub fn max(&self) -> usize {
        self.splitter.max()
    }

    /// Adds bytes read from the stream.
    ///
    /// ```
    /// let mut lines = mcp_protocol::framing::LineBuffer::new(100);
    /// lines.extend(b"ping\n");
    /// assert!(lines.next_frame().is_some());
    /// ```
    pub fn extend(&mut self, bytes: &[u8]) {
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        } else if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next frame, or `None` until more bytes are added.
    ///
    /// ```
    /// use mcp_protocol::framing::{Frame, LineBuffer};
    /// let mut lines = LineBuffer::new(4);
    /// lines.extend(b"too long\nok\n");
    /// assert!(matches!(lines.next_frame(), Some(Frame::TooLarge { seen: 8, .. })));
    /// assert_eq!(lines.next_frame(), Some(Frame::Skipped { size: 8 }));
    /// assert_eq!(lines.next_frame(), Some(Frame::Line(&b"ok"[..])));
    /// ```
    pub fn next_frame(&mut self) -> Option<Frame<&[u8]>> {
        let split = self.splitter.split(&self.buf[self.start..]);
        self.take(split)
    }

    /// The next frame at the end of the stream: a last line without its
    /// newline counts. `None` once nothing is left.
    ///
    /// ```
    /// use mcp_protocol::framing::{Frame, LineBuffer};
    /// let mut lines = LineBuffer::new(100);
    /// lines.extend(b"no newline");
    /// assert_eq!(lines.next_frame(), None);
    /// assert_eq!(lines.finish(), Some(Frame::Line(&b"no newline"[..])));
    /// ```
    pub fn finish(&mut self) -> Option<Frame<&[u8]>> {
        let split = self.splitter.finish(&self.buf[self.start..])?;
        self.take(split)
    }

    fn take(&mut self, split: Split) -> Option<Frame<&[u8]>> {
        let at = self.start;
        match split {
            Split::Line { len, consumed } => {
                self.start += consumed;
                Some(Frame::Line(&self.buf[at..at + len]))
            }
            Split::TooLarge {
                seen,
                prefix,
                consumed,
            } => {
                self.start += consumed;
                Some(Frame::TooLarge {
                    seen,
                    prefix: &self.buf[at..at + prefix],
                })
            }
            Split::Skipped { size, consumed } => {
                self.start += consumed;
                Some(Frame::Skipped { size })
            }
            Split::Incomplete { consumed } => {
                self.start += consumed;
                if self.start == self.buf.len() {
                    // Drop discarded bytes now, not at the next extend.
                    self.buf.clear();
                    self.start = 0;
                }
                None
            }
        }
    }
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

    #[test]
    fn sniffed_string_ids_unescape_as_json_does() {
        for id in ["a\u{1}b", "\u{8}\u{c}/\\", "é😀", "\u{7f}\u{2028}"] {
            let line = encode_line(&Message::Request(Request::new(id, "x", Some(json!({})))));
            assert_eq!(sniff_id(&line), Some(id.into()), "{id:?}");
        }
        let escaped = br#"{"id":"\u0001\b\f\/\ud83d\ude00","result":{"#;
        assert_eq!(sniff_id(escaped), Some("\u{1}\u{8}\u{c}/😀".into()));
        // A lone surrogate or an unknown escape: no id, as JSON has none.
        assert_eq!(sniff_id(br#"{"id":"\ud83d","result":{"#), None);
        assert_eq!(sniff_id(br#"{"id":"\q","result":{"#), None);
    }

    fn frames(max: usize, chunks: &[&[u8]], eof: bool) -> Vec<Frame<Vec<u8>>> {
        let mut lines = LineBuffer::new(max);
        let mut out = Vec::new();
        let own = |f: Frame<&[u8]>| match f {
            Frame::Line(l) => Frame::Line(l.to_vec()),
            Frame::TooLarge { seen, prefix } => Frame::TooLarge {
                seen,
                prefix: prefix.to_vec(),
            },
            Frame::Skipped { size } => Frame::Skipped { size },
        };
        for chunk in chunks {
            lines.extend(chunk);
            while let Some(f) = lines.next_frame() {
                out.push(own(f));
            }
        }
        if eof {
            while let Some(f) = lines.finish() {
                out.push(own(f));
            }
        }
        out
    }

    fn line(s: &str) -> Frame<Vec<u8>> {
        Frame::Line(s.as_bytes().to_vec())
    }

    #[test]
    fn lines_across_chunks() {
        let f = frames(100, &[b"ab", b"c\nde", b"f\r\n", b"\n"], false);
        assert_eq!(f, vec![line("abc"), line("def"), line("")]);
    }

    #[test]
    fn exactly_at_the_limit_passes() {
        let f = frames(3, &[b"abc\nabcd\n"], false);
        assert_eq!(f[0], line("abc"));
        assert!(matches!(f[1], Frame::TooLarge { seen: 4, .. }));
        assert_eq!(f[2], Frame::Skipped { size: 4 });
    }

    #[test]
    fn over_long_line_is_discarded_without_buffering() {
        let mut lines = LineBuffer::new(10);
        lines.extend(br#"{"id":7,"result":"#);
        match lines.next_frame().unwrap() {
            Frame::TooLarge { seen, prefix } => {
                assert_eq!(seen, 17);
                assert_eq!(sniff_id(prefix), Some(7.into()));
            }
            other => panic!("{other:?}"),
        }
        for _ in 0..100 {
            lines.extend(&[b'x'; 1000]);
            assert_eq!(lines.next_frame(), None);
            assert!(lines.buf.is_empty(), "discarded bytes are not kept");
        }
        lines.extend(b"}\n{}\n");
        assert_eq!(
            lines.next_frame(),
            Some(Frame::Skipped {
                size: 17 + 100_000 + 1
            })
        );
        assert_eq!(lines.next_frame(), Some(Frame::Line(&b"{}"[..])));
    }

    #[test]
    fn eof_flushes_a_last_line_and_a_skip() {
        assert_eq!(
            frames(10, &[b"a\nlast\r"], true),
            vec![line("a"), line("last")]
        );
        let f = frames(3, &[b"toolong"], true);
        assert!(matches!(f[0], Frame::TooLarge { seen: 7, .. }));
        assert_eq!(f[1], Frame::Skipped { size: 7 });
        assert_eq!(f.len(), 2);
    }

    #[test]
    fn one_byte_at_a_time_is_the_same_as_all_at_once() {
        let input = b"{\"a\":1}\r\nnoise\nthis one is far too long\n\nend";
        // How much of an over-long line was seen when it was reported
        // depends on the chunks; everything else does not.
        let same = |frames: Vec<Frame<Vec<u8>>>| -> Vec<Frame<Vec<u8>>> {
            frames
                .into_iter()
                .map(|f| match f {
                    Frame::TooLarge { prefix, .. } => Frame::TooLarge {
                        seen: 0,
                        prefix: prefix[..12].to_vec(),
                    },
                    other => other,
                })
                .collect()
        };
        let whole = same(frames(12, &[input], true));
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(same(frames(12, &bytes, true)), whole);
        assert_eq!(whole.len(), 6, "{whole:?}");
    }

    #[test]
    fn no_limit_keeps_any_line() {
        let long = vec![b'y'; 1 << 20];
        let mut input = long.clone();
        input.push(b'\n');
        assert_eq!(
            frames(usize::MAX, &[&input], false),
            vec![Frame::Line(long)]
        );
    }
}
