//! The two loops every newline-delimited transport runs: a reader that
//! turns lines into engine input, and a writer that drains the engine's
//! outbound queue.

use futures::StreamExt;
use mcp_protocol::Inbound;
use mcp_protocol::framing::encode_line_into;
use mcp_protocol::jsonrpc::{ParseErrorKind, answer_text};
use mcp_transport::{Engine, GoneInfo, Outbound, OutboundReceiver, TransportEvent};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio_util::codec::FramedRead;
use tokio_util::sync::CancellationToken;

use crate::codec::{Frame, LineDecoder};

/// How much of a noisy line goes into the log and the event.
const NOISE_SHOWN: usize = 200;
/// The longest answer line handed to its caller as text, to parse on the
/// caller's task; a longer one is parsed by the reader.
const TEXT_ANSWER_MAX: usize = 8 * 1024;
/// The writer gathers queued messages into one write up to this size.
const WRITE_BATCH: usize = 64 * 1024;

/// How the reading side of a wire ended.
#[derive(Debug)]
pub(crate) enum ReadEnd {
    /// The peer closed its side.
    Eof,
    /// Reading failed.
    Failed(std::io::Error),
}

/// Reads frames until the stream ends, giving each to the engine. Bad
/// lines cost only themselves. After the engine's shutdown the stream is
/// still drained (so a peer writing during its own shutdown never blocks
/// on a full pipe), but nothing more is delivered.
pub(crate) async fn read_loop<R>(reader: R, engine: Engine, max: usize) -> ReadEnd
where
    R: AsyncRead + Unpin,
{
    let mut frames = FramedRead::new(reader, LineDecoder::new(max));
    let shutdown = engine.shutdown_token();
    let _ends_the_connection_on_panic = OnPanic(&engine);
    while let Some(frame) = frames.next().await {
        match frame {
            Ok(frame) if !shutdown.is_cancelled() => handle_frame(&engine, frame, max),
            Ok(_) => {}
            Err(e) => return ReadEnd::Failed(e),
        }
    }
    ReadEnd::Eof
}

/// Ends the connection if the read loop panics (a log line that panics,
/// say): a reader that is gone without saying so would leave every
/// request waiting for answers that can no longer be read.
struct OnPanic<'a>(&'a Engine);

impl Drop for OnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.peer_gone(GoneInfo::new(
                "the transport's reader stopped (it panicked)",
            ));
        }
    }
}

fn handle_frame(engine: &Engine, frame: Frame, limit: usize) {
    match frame {
        Frame::Line(line) => handle_line(engine, &line),
        Frame::TooLarge { seen, prefix } => {
            if let Some(tap) = engine.line_tap() {
                tap.too_large(&prefix, seen, limit);
            }
            engine.receive_oversized(&prefix, seen, limit)
        }
        Frame::Skipped { size } => {
            tracing::debug!(size, "skipped the over-long message; reading resumes");
        }
        // A kind of frame newer than this reader: nothing to act on.
        _ => {}
    }
}

fn handle_line(engine: &Engine, line: &[u8]) {
    if line.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    if engine.line_tap().is_some_and(|tap| tap.take(line)) {
        return;
    }
    // The commonest line, a small success answer, goes to its caller
    // unparsed. A large one is parsed here, once: handing it on as text
    // would cost a pass to find where it ends and a copy of it.
    if line.len() <= TEXT_ANSWER_MAX
        && let Some((id, result)) = answer_text(line)
    {
        return engine.receive_result(&id, result);
    }
    // The JSON parser checks UTF-8 itself (invalid bytes make the line
    // not JSON), so only a line that failed is scanned again, to say why.
    match Inbound::parse(line) {
        Ok(inbound) => engine.receive_inbound(inbound),
        // Not JSON, and not the start of a message either: noise. A line
        // that starts as one (its id readable) is a malformed message.
        Err(e) if matches!(e.kind, ParseErrorKind::NotJson(_)) && e.id.is_none() => {
            let why = if std::str::from_utf8(line).is_err() {
                "invalid UTF-8"
            } else {
                "not JSON"
            };
            noise(engine, line, why)
        }
        Err(e) => engine.receive_malformed(e),
    }
}

fn noise(engine: &Engine, line: &[u8], why: &str) {
    let shown = String::from_utf8_lossy(&line[..line.len().min(NOISE_SHOWN)]).into_owned();
    tracing::warn!(
        line = %shown,
        len = line.len(),
        "skipped a line on the server's stdout that is not JSON-RPC ({why}); \
         servers must log to stderr"
    );
    engine.event(TransportEvent::Noise {
        line: shown,
        len: line.len(),
    });
}

/// Writes the engine's outbound items in order until the engine shuts down
/// or the queue closes. Messages queued together go out in one write.
///
/// The receiver is borrowed: the caller keeps it until it has reported why
/// writing stopped, since dropping it ends the connection with a cause that
/// says less ("the transport's writer stopped").
pub(crate) async fn write_loop<W>(
    mut writer: W,
    outbound: &mut OutboundReceiver,
    shutdown: CancellationToken,
) -> std::io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    let mut buf = Vec::new();
    loop {
        let item = tokio::select! {
            biased;
            item = outbound.recv() => item,
            _ = shutdown.cancelled() => None,
        };
        let Some(item) = item else { break };
        buf.clear();
        append(&mut buf, item);
        while buf.len() < WRITE_BATCH {
            match outbound.try_recv() {
                Some(item) => append(&mut buf, item),
                None => break,
            }
        }
        writer.write_all(&buf).await?;
        writer.flush().await?;
        if buf.capacity() > KEEP_CAPACITY {
            // A large message's room is given back, not kept for the
            // connection's life.
            buf = Vec::new();
        }
    }
    writer.shutdown().await
}

/// The write buffer kept between batches; a larger one is released.
const KEEP_CAPACITY: usize = 2 * WRITE_BATCH;

/// Puts `item` on `buf`: a line as its bytes (a large one, alone, as the
/// buffer itself rather than a copy), anything else serialized, room
/// reserved first so that the buffer holds a large message once rather
/// than doubling past it; the message is dropped as soon as its bytes are
/// in the buffer.
fn append(buf: &mut Vec<u8>, item: Outbound) {
    match item {
        Outbound::Line { line, .. } if buf.is_empty() && line.len() >= WRITE_BATCH => *buf = line,
        Outbound::Line { line, .. } => buf.extend_from_slice(&line),
        item => {
            buf.reserve(item.size_hint() + 1);
            encode_line_into(&item.into_message(), buf);
        }
    }
}
