//! The fake through bytes: newline-delimited JSON over any reader and
//! writer ([`serve_lines`]), and over the process's own stdin and stdout
//! with as little per-message cost as possible ([`serve_stdio`]).

use std::io::{self, Read, Write};
use std::sync::Arc;

use mcp_protocol::framing::{Frame, LineBuffer};
use mcp_protocol::{ErrorObject, ErrorResponse, Inbound, Message};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::mpsc;

use super::config::{FakeConfig, Knob};
use super::session::{Out, Session};
use mcp_protocol::error_codes::{INVALID_REQUEST, PARSE_ERROR};

/// How serving ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ending {
    /// The input ended (the client closed our stdin): a clean exit, code 0.
    InputClosed,
    /// The server "exited" on its own (a misbehaviour knob): the process
    /// should write `stderr` to its stderr and exit with `code`.
    Exited {
        /// The exit code.
        code: i32,
        /// What it writes to stderr before exiting.
        stderr: String,
    },
}

impl Ending {
    /// The process exit code this ending means.
    pub fn code(&self) -> i32 {
        match self {
            Ending::InputClosed => 0,
            Ending::Exited { code, .. } => *code,
        }
    }
}

/// Serves one connection of the fake over newline-delimited JSON: reads
/// messages from `reader`, writes answers and notifications to `writer`
/// (buffered, flushed whenever nothing more is queued). Returns when the
/// input ends or the server "exits".
pub async fn serve_lines<R, W>(config: FakeConfig, reader: R, writer: W) -> io::Result<Ending>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reading = !config.has_knob(&Knob::NeverReadInput);
    let (session, mut out) = Session::new(Arc::new(config));
    let mut reader = reader;
    let mut writer = BufWriter::new(writer);
    let mut lines = LineBuffer::new(MAX_LINE);
    let mut chunk = vec![0; 64 * 1024];
    let mut buf = Vec::with_capacity(4096);
    loop {
        tokio::select! {
            biased;
            item = out.recv() => {
                let mut item = item;
                loop {
                    match item {
                        Some(Out::Message(m) | Out::Related { message: m, .. }) => {
                            encode(&m, &mut buf);
                            writer.write_all(&buf).await?;
                        }
                        Some(Out::Exit { code, stderr }) => {
                            writer.flush().await?;
                            return Ok(Ending::Exited { code, stderr });
                        }
                        Some(Out::End) | None => {
                            writer.flush().await?;
                            return Ok(Ending::InputClosed);
                        }
                    }
                    match out.try_recv() {
                        Ok(next) => item = Some(next),
                        Err(_) => break,
                    }
                }
                writer.flush().await?;
            }
            read = reader.read(&mut chunk), if reading => {
                let n = read?;
                if n == 0 {
                    while let Some(frame) = lines.finish() {
                        take_frame(&session, frame);
                    }
                    reading = false;
                    session.end();
                    continue;
                }
                lines.extend(&chunk[..n]);
                while let Some(frame) = lines.next_frame() {
                    take_frame(&session, frame);
                }
            }
        }
    }
}

/// Serves the fake on this process's stdin and stdout until stdin ends or
/// the server "exits"; blocks. A reader thread parses and handles each line,
/// a writer thread writes through one buffer, flushing when nothing more is
/// queued, and a current-thread runtime runs whatever takes time.
pub fn serve_stdio(config: FakeConfig) -> io::Result<Ending> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let read = !config.has_knob(&Knob::NeverReadInput);
    let (session, out) = Session::new(Arc::new(config));
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("fake-writer".into())
        .spawn(move || {
            let _ = done_tx.send(write_stdout(out));
        })?;
    if read {
        let handle = runtime.handle().clone();
        let session = session.clone();
        std::thread::Builder::new()
            .name("fake-reader".into())
            .spawn(move || {
                let _guard = handle.enter();
                let mut stdin = io::stdin().lock();
                let mut lines = LineBuffer::new(MAX_LINE);
                let mut chunk = vec![0; 64 * 1024];
                loop {
                    match stdin.read(&mut chunk) {
                        Ok(0) => break,
                        Ok(n) => {
                            lines.extend(&chunk[..n]);
                            while let Some(frame) = lines.next_frame() {
                                take_frame(&session, frame);
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
                while let Some(frame) = lines.finish() {
                    take_frame(&session, frame);
                }
                session.end();
            })?;
    }
    let ending = runtime.block_on(async {
        done_rx
            .await
            .unwrap_or_else(|_| Err(io::Error::other("the writer thread panicked")))
    });
    // Held until here so that, never reading, the queue stays open.
    drop(session);
    ending
}

fn write_stdout(mut out: mpsc::UnboundedReceiver<Out>) -> io::Result<Ending> {
    let stdout = io::stdout();
    let mut writer = io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    let mut buf = Vec::with_capacity(4096);
    while let Some(mut item) = out.blocking_recv() {
        loop {
            match item {
                Out::Message(m) | Out::Related { message: m, .. } => {
                    encode(&m, &mut buf);
                    writer.write_all(&buf)?;
                }
                Out::Exit { code, stderr } => {
                    writer.flush()?;
                    return Ok(Ending::Exited { code, stderr });
                }
                Out::End => {
                    writer.flush()?;
                    return Ok(Ending::InputClosed);
                }
            }
            match out.try_recv() {
                Ok(next) => item = next,
                Err(_) => break,
            }
        }
        writer.flush()?;
    }
    writer.flush()?;
    Ok(Ending::InputClosed)
}

/// Encodes one message as a line into `buf`, reusing its allocation.
fn encode(message: &Message, buf: &mut Vec<u8>) {
    buf.clear();
    serde_json::to_writer(&mut *buf, message).expect("a message always serializes");
    buf.push(b'\n');
}

/// The longest line the fake reads: no limit (a test may send anything;
/// what an over-long line does is the transport's concern, not the fake's).
const MAX_LINE: usize = usize::MAX;

/// Hands a line to [`take_line`]; with no limit, nothing else comes.
fn take_frame(session: &Session, frame: Frame<&[u8]>) {
    if let Frame::Line(line) = frame {
        take_line(session, line);
    }
}

/// Parses one line and hands its messages to the session; a line that is
/// not JSON-RPC gets the JSON-RPC error for it.
fn take_line(session: &Session, line: &[u8]) {
    let line = line.trim_ascii();
    if line.is_empty() {
        return;
    }
    match Inbound::parse(line) {
        Ok(inbound) => {
            for message in inbound.into_messages(|e| reject(session, e)) {
                session.handle(message);
            }
        }
        Err(e) => reject(session, e),
    }
}

fn reject(session: &Session, error: mcp_protocol::ParseError) {
    let code = match error.kind {
        mcp_protocol::jsonrpc::ParseErrorKind::NotJson(_) => PARSE_ERROR,
        _ => INVALID_REQUEST,
    };
    let message = Message::Error(ErrorResponse {
        id: error.id.clone(),
        error: ErrorObject::new(code, error.to_string()),
    });
    session.send(message);
}
