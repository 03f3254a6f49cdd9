//! Draining a server's stderr: always read (so a chatty server never blocks
//! on a full pipe), kept as a bounded tail, forwarded line by line.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt};

/// A user callback given each stderr line of a server, in order.
pub(crate) type StderrCallback = Arc<dyn Fn(&str) + Send + Sync>;

/// The `tracing` target stderr lines are forwarded under (at level INFO,
/// with a `server` field holding the server's name).
///
/// ```
/// // With tracing-subscriber, silence chatty servers but keep everything else:
/// let directive = format!("info,{}=warn", mcp_transport_stdio::STDERR_TARGET);
/// assert_eq!(directive, "info,mcp_transport_stdio::stderr=warn");
/// ```
pub const STDERR_TARGET: &str = "mcp_transport_stdio::stderr";

/// Lines longer than this are cut into pieces of this size.
const MAX_LINE: usize = 8 * 1024;

/// The last lines of a server's stderr, bounded in lines and bytes.
#[derive(Debug)]
pub(crate) struct Tail {
    lines: VecDeque<String>,
    bytes: usize,
    max_bytes: usize,
    max_lines: usize,
}

impl Tail {
    pub(crate) fn new(max_bytes: usize, max_lines: usize) -> Self {
        Tail {
            lines: VecDeque::new(),
            bytes: 0,
            max_bytes,
            max_lines,
        }
    }

    fn push(&mut self, line: &str) {
        if self.max_lines == 0 || self.max_bytes == 0 {
            return;
        }
        let mut line = line;
        if line.len() > self.max_bytes {
            // Keep the end of a line too long for the whole tail.
            let mut start = line.len() - self.max_bytes;
            while !line.is_char_boundary(start) {
                start += 1;
            }
            line = &line[start..];
        }
        self.bytes += line.len() + 1;
        self.lines.push_back(line.to_owned());
        while self.lines.len() > self.max_lines || self.bytes > self.max_bytes + 1 {
            match self.lines.pop_front() {
                Some(old) => self.bytes -= old.len() + 1,
                None => break,
            }
        }
    }

    pub(crate) fn snapshot(&self) -> String {
        let mut out = String::with_capacity(self.bytes);
        for (i, line) in self.lines.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(line);
        }
        out
    }
}

/// Reads `stderr` to its end: every line goes to the tail, to `tracing`
/// (target [`STDERR_TARGET`], field `server`), and to `callback`.
pub(crate) async fn drain<R>(
    mut stderr: R,
    tail: Arc<Mutex<Tail>>,
    server: Arc<str>,
    callback: Option<StderrCallback>,
) where
    R: AsyncRead + Unpin,
{
    let mut chunk = vec![0u8; 16 * 1024];
    let mut line: Vec<u8> = Vec::new();
    // Whether the line being read was already cut into pieces.
    let mut cut = false;
    let emit = |bytes: &[u8]| {
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        let text = String::from_utf8_lossy(bytes);
        tracing::info!(target: STDERR_TARGET, server = %server, "{text}");
        tail.lock().unwrap_or_else(|p| p.into_inner()).push(&text);
        if let Some(cb) = &callback
            && catch_unwind(AssertUnwindSafe(|| cb(&text))).is_err()
        {
            tracing::error!(server = %server, "the stderr callback panicked; it keeps receiving");
        }
    };
    loop {
        let n = match stderr.read(&mut chunk).await {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                tracing::debug!(server = %server, error = %e, "reading the server's stderr failed");
                break;
            }
        };
        let mut rest = &chunk[..n];
        loop {
            let newline = rest.iter().position(|b| *b == b'\n');
            let (part, after) = match newline {
                Some(i) => (&rest[..i], Some(&rest[i + 1..])),
                None => (rest, None),
            };
            if line.is_empty() && !cut && part.len() < MAX_LINE && newline.is_some() {
                // The common case: a whole short line, no copy.
                emit(part);
            } else {
                line.extend_from_slice(part);
                while line.len() >= MAX_LINE {
                    let piece: Vec<u8> = line.drain(..MAX_LINE).collect();
                    emit(&piece);
                    cut = true;
                }
                if newline.is_some() {
                    if !line.is_empty() || !cut {
                        emit(&line);
                    }
                    line.clear();
                    cut = false;
                }
            }
            match after {
                Some(after) => rest = after,
                None => break,
            }
        }
    }
    if !line.is_empty() {
        emit(&line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_lines_within_bounds() {
        let mut t = Tail::new(20, 3);
        for i in 0..10 {
            t.push(&format!("line {i}"));
        }
        assert_eq!(t.snapshot(), "line 7\nline 8\nline 9");
        let mut t = Tail::new(10, 50);
        t.push("aaaa");
        t.push("bbbb");
        t.push("cccc");
        assert_eq!(t.snapshot(), "bbbb\ncccc");
        t.push("0123456789abcdef");
        assert_eq!(t.snapshot(), "6789abcdef");
    }

    #[tokio::test]
    async fn drain_splits_lines_and_cuts_long_ones() {
        let mut input = b"one\r\ntwo\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_LINE + 5));
        input.extend(b"\nlast");
        let tail = Arc::new(Mutex::new(Tail::new(1 << 20, 10)));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let cb: StderrCallback = Arc::new(move |l: &str| s.lock().unwrap().push(l.len()));
        drain(&input[..], tail.clone(), "t".into(), Some(cb)).await;
        assert_eq!(*seen.lock().unwrap(), vec![3, 3, MAX_LINE, 5, 4]);
        assert!(tail.lock().unwrap().snapshot().ends_with("xxxxx\nlast"));
    }

    #[tokio::test]
    async fn a_line_cut_exactly_at_the_limit_leaves_no_empty_line() {
        let mut input = vec![b'y'; MAX_LINE];
        input.extend(
            b"
next
",
        );
        // One byte at a time, and all at once.
        for chunked in [true, false] {
            let tail = Arc::new(Mutex::new(Tail::new(1 << 20, 10)));
            let seen = Arc::new(Mutex::new(Vec::new()));
            let s = seen.clone();
            let cb: StderrCallback = Arc::new(move |l: &str| s.lock().unwrap().push(l.len()));
            let reader: Box<dyn AsyncRead + Unpin + Send> = if chunked {
                Box::new(in_pieces(&input))
            } else {
                Box::new(&input[..])
            };
            drain(reader, tail, "t".into(), Some(cb)).await;
            assert_eq!(
                *seen.lock().unwrap(),
                vec![MAX_LINE, 4],
                "chunked: {chunked}"
            );
        }
    }

    /// A reader giving `bytes` in pieces of at most 1000 bytes.
    fn in_pieces(bytes: &[u8]) -> impl AsyncRead + Unpin + Send + 'static {
        use tokio::io::AsyncWriteExt;
        let (mut write, read) = tokio::io::duplex(1000);
        let bytes = bytes.to_vec();
        tokio::spawn(async move { write.write_all(&bytes).await.unwrap() });
        read
    }
}
