//! Draining a server's stderr: always read (so a chatty server never blocks
//! on a full pipe), kept as a bounded tail, forwarded line by line.
//!
//! The user's callback never runs on the drain: lines reach it through a
//! bounded queue on a thread of its own, the oldest dropped (and counted)
//! when the callback falls behind, so a slow callback cannot stop the drain
//! and fill the pipe.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex};

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

/// How many bytes of lines may wait for a slow callback before the oldest
/// are dropped.
const CALLBACK_QUEUE_BYTES: usize = 4 * 1024 * 1024;

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

/// Lines on their way to the callback.
#[derive(Default)]
struct Queue {
    lines: VecDeque<String>,
    bytes: usize,
    /// Lines dropped since the callback last caught up.
    dropped: u64,
    /// The drain ended: deliver what is left, then stop.
    ended: bool,
}

/// The drain's end of the callback's queue. Pushing never waits on the
/// callback: the lock is held only to move a line in or out.
struct Forwarder {
    shared: Arc<(Mutex<Queue>, Condvar)>,
    /// In bytes of line text.
    capacity: usize,
}

impl Forwarder {
    /// Starts the callback's thread.
    fn start(
        callback: StderrCallback,
        server: Arc<str>,
        capacity: usize,
    ) -> std::io::Result<(Self, std::thread::JoinHandle<()>)> {
        let shared = Arc::new((Mutex::new(Queue::default()), Condvar::new()));
        let theirs = shared.clone();
        let thread = std::thread::Builder::new()
            // A NUL in a thread's name would make spawning panic.
            .name(format!("mcp-stderr-{}", server.replace('\0', "")))
            .spawn(move || deliver(&theirs, &callback, &server))?;
        Ok((Forwarder { shared, capacity }, thread))
    }

    fn push(&self, line: &str) {
        let (queue, ready) = &*self.shared;
        let mut q = queue.lock().unwrap_or_else(|p| p.into_inner());
        q.bytes += line.len();
        q.lines.push_back(line.to_owned());
        while q.bytes > self.capacity && q.lines.len() > 1 {
            if let Some(old) = q.lines.pop_front() {
                q.bytes -= old.len();
                q.dropped += 1;
            }
        }
        drop(q);
        ready.notify_one();
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        let (queue, ready) = &*self.shared;
        queue.lock().unwrap_or_else(|p| p.into_inner()).ended = true;
        ready.notify_one();
    }
}

/// The callback's thread: hands it each queued line, in order, until the
/// drain ended and the queue is empty.
fn deliver(shared: &(Mutex<Queue>, Condvar), callback: &StderrCallback, server: &str) {
    let (queue, ready) = shared;
    loop {
        let mut q = queue.lock().unwrap_or_else(|p| p.into_inner());
        while q.lines.is_empty() && !q.ended {
            q = ready.wait(q).unwrap_or_else(|p| p.into_inner());
        }
        let Some(line) = q.lines.pop_front() else {
            return;
        };
        q.bytes -= line.len();
        let dropped = std::mem::take(&mut q.dropped);
        drop(q);
        if dropped > 0 {
            tracing::warn!(
                server,
                dropped,
                "the stderr callback fell behind; its oldest lines were dropped"
            );
        }
        if catch_unwind(AssertUnwindSafe(|| callback(&line))).is_err() {
            tracing::error!(server, "the stderr callback panicked; it keeps receiving");
        }
    }
}

/// Reads `stderr` to its end: every line goes to the tail, to `tracing`
/// (target [`STDERR_TARGET`], field `server`), and to `callback`, which
/// runs on a thread of its own (returned, so a test can wait for it; the
/// drain never does).
pub(crate) async fn drain<R>(
    stderr: R,
    tail: Arc<Mutex<Tail>>,
    server: Arc<str>,
    callback: Option<StderrCallback>,
) -> Option<std::thread::JoinHandle<()>>
where
    R: AsyncRead + Unpin,
{
    drain_with(stderr, tail, server, callback, CALLBACK_QUEUE_BYTES).await
}

async fn drain_with<R>(
    mut stderr: R,
    tail: Arc<Mutex<Tail>>,
    server: Arc<str>,
    callback: Option<StderrCallback>,
    capacity: usize,
) -> Option<std::thread::JoinHandle<()>>
where
    R: AsyncRead + Unpin,
{
    let (forwarder, thread) = match callback
        .map(|cb| Forwarder::start(cb, server.clone(), capacity))
    {
        Some(Ok((f, t))) => (Some(f), Some(t)),
        Some(Err(e)) => {
            tracing::error!(server = %server, error = %e, "could not start the stderr callback's thread; the callback gets nothing");
            (None, None)
        }
        None => (None, None),
    };
    let mut chunk = vec![0u8; 16 * 1024];
    let mut line: Vec<u8> = Vec::new();
    // Whether the line being read was already cut into pieces.
    let mut cut = false;
    let emit = |bytes: &[u8]| {
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        let text = String::from_utf8_lossy(bytes);
        tracing::info!(target: STDERR_TARGET, server = %server, "{text}");
        tail.lock().unwrap_or_else(|p| p.into_inner()).push(&text);
        if let Some(forwarder) = &forwarder {
            forwarder.push(&text);
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
    thread
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

    /// Records the length of each line the callback is given.
    fn lengths() -> (StderrCallback, Arc<Mutex<Vec<usize>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let cb: StderrCallback = Arc::new(move |l: &str| s.lock().unwrap().push(l.len()));
        (cb, seen)
    }

    #[tokio::test]
    async fn drain_splits_lines_and_cuts_long_ones() {
        let mut input = b"one\r\ntwo\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_LINE + 5));
        input.extend(b"\nlast");
        let tail = Arc::new(Mutex::new(Tail::new(1 << 20, 10)));
        let (cb, seen) = lengths();
        let thread = drain(&input[..], tail.clone(), "t".into(), Some(cb)).await;
        thread.unwrap().join().unwrap();
        assert_eq!(*seen.lock().unwrap(), vec![3, 3, MAX_LINE, 5, 4]);
        assert!(tail.lock().unwrap().snapshot().ends_with("xxxxx\nlast"));
    }

    #[tokio::test]
    async fn a_line_cut_exactly_at_the_limit_leaves_no_empty_line() {
        let mut input = vec![b'y'; MAX_LINE];
        input.extend(b"\nnext\n");
        // One byte at a time, and all at once.
        for one_by_one in [true, false] {
            let tail = Arc::new(Mutex::new(Tail::new(1 << 20, 10)));
            let (cb, seen) = lengths();
            let reads = Arc::new(Mutex::new(0));
            let reader: Box<dyn AsyncRead + Unpin + Send> = if one_by_one {
                Box::new(OneByte {
                    bytes: input.clone(),
                    at: 0,
                    reads: reads.clone(),
                })
            } else {
                Box::new(&input[..])
            };
            let thread = drain(reader, tail, "t".into(), Some(cb)).await;
            thread.unwrap().join().unwrap();
            assert_eq!(
                *seen.lock().unwrap(),
                vec![MAX_LINE, 4],
                "one byte at a time: {one_by_one}"
            );
            if one_by_one {
                // Every byte was a read of its own, and the end one more.
                assert_eq!(*reads.lock().unwrap(), input.len() + 1);
            }
        }
    }

    /// A reader that gives one byte per read, counting the reads.
    struct OneByte {
        bytes: Vec<u8>,
        at: usize,
        reads: Arc<Mutex<usize>>,
    }

    impl AsyncRead for OneByte {
        fn poll_read(
            mut self: std::pin::Pin<&mut Self>,
            _cx: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            *self.reads.lock().unwrap() += 1;
            if let Some(&b) = self.bytes.get(self.at) {
                buf.put_slice(&[b]);
                self.at += 1;
            }
            std::task::Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn a_blocked_callback_neither_stops_the_drain_nor_keeps_old_lines() {
        // The callback blocks on its first line until released.
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (g, s) = (gate.clone(), seen.clone());
        let cb: StderrCallback = Arc::new(move |l: &str| {
            let (open, turn) = &*g;
            let mut open = open.lock().unwrap();
            while !*open {
                open = turn.wait(open).unwrap();
            }
            s.lock().unwrap().push(l.to_owned());
        });
        // Lines of 7 bytes, a queue of 70.
        let input: String = (0..100).map(|i| format!("line {i:02}\n")).collect();
        let tail = Arc::new(Mutex::new(Tail::new(1 << 20, 1000)));
        // The drain ends while the callback is still blocked.
        let thread = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            drain_with(input.as_bytes(), tail.clone(), "t".into(), Some(cb), 70),
        )
        .await
        .expect("the drain does not wait for the callback");
        assert!(tail.lock().unwrap().snapshot().ends_with("line 99"));
        *gate.0.lock().unwrap() = true;
        gate.1.notify_all();
        thread.unwrap().join().unwrap();
        // Perhaps the line it was blocked on, then the newest ten; the rest
        // were dropped.
        let seen = seen.lock().unwrap();
        assert!(matches!(seen.len(), 10 | 11), "{seen:?}");
        let newest: Vec<String> = (90..100).map(|i| format!("line {i}")).collect();
        assert_eq!(seen[seen.len() - 10..], newest[..]);
    }
}
