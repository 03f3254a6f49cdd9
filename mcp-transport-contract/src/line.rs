//! A peer over any byte stream, speaking newline-delimited JSON.

use std::collections::VecDeque;

use futures::future::BoxFuture;
use mcp_protocol::framing::{Frame, LineBuffer, encode_line};
use mcp_protocol::{Inbound, Message};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::Peer;

/// A [`Peer`] over any [`AsyncRead`]/[`AsyncWrite`] pair that speaks
/// newline-delimited JSON, as the stdio transport does: the other end of a
/// [`tokio::io::duplex`] pipe, a socket, a child's stdio.
///
/// [`Peer::die`] drops both streams, so the transport reads the end of its
/// stream. [`Peer::recv`] panics when the transport writes a line that is
/// not JSON-RPC (the suite reports that as the rule's failure).
pub struct LinePeer<R, W> {
    reader: Option<R>,
    writer: Option<W>,
    pending: VecDeque<Message>,
    /// What was read and not yet taken as lines. No limit: the suite must
    /// see whatever the transport writes.
    lines: LineBuffer,
    chunk: Vec<u8>,
}

impl<R, W> LinePeer<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
{
    /// A peer reading what the transport writes from `reader` and writing
    /// to the transport on `writer`.
    pub fn new(reader: R, writer: W) -> Self {
        LinePeer {
            reader: Some(reader),
            writer: Some(writer),
            pending: VecDeque::new(),
            lines: LineBuffer::new(usize::MAX),
            chunk: vec![0; 64 * 1024],
        }
    }

    /// The next message, or `None` at the end of the stream. A batch is
    /// returned element by element.
    pub async fn recv_message(&mut self) -> Option<Message> {
        loop {
            if let Some(m) = self.pending.pop_front() {
                return Some(m);
            }
            let frame = match self.reader.as_mut() {
                Some(_) => self.lines.next_frame(),
                // At the end, a last line without its newline counts.
                None => Some(self.lines.finish()?),
            };
            let Some(frame) = frame else {
                let reader = self.reader.as_mut()?;
                // Reading is cancel-safe and what was read stays in
                // `self.lines`, so a recv under a timeout loses nothing.
                match reader.read(&mut self.chunk).await {
                    Ok(0) | Err(_) => self.reader = None,
                    Ok(n) => self.lines.extend(&self.chunk[..n]),
                }
                continue;
            };
            let Frame::Line(line) = frame else {
                continue;
            };
            let text = line.trim_ascii();
            if text.is_empty() {
                continue;
            }
            match Inbound::parse(text) {
                Ok(inbound) => {
                    let messages = inbound.into_messages(|e| {
                        panic!("the transport wrote a malformed batch element: {e}")
                    });
                    self.pending.extend(messages);
                }
                Err(e) => panic!(
                    "the transport wrote a line that is not a JSON-RPC message ({e}): {}",
                    String::from_utf8_lossy(text)
                ),
            }
        }
    }

    /// Writes one message as a line. Errors (the transport is gone) are
    /// ignored: what the transport does about it is what the suite checks.
    pub async fn send_message(&mut self, message: &Message) {
        self.write_line(&encode_line(message)).await;
    }

    /// Writes raw bytes followed by a newline.
    pub async fn send_line(&mut self, line: &[u8]) {
        let mut bytes = line.to_vec();
        bytes.push(b'\n');
        self.write_line(&bytes).await;
    }

    async fn write_line(&mut self, bytes: &[u8]) {
        if let Some(w) = self.writer.as_mut()
            && (w.write_all(bytes).await.is_err() || w.flush().await.is_err())
        {
            self.writer = None;
        }
    }

    /// Drops both streams: the transport sees its stream end.
    pub async fn close(&mut self) {
        if let Some(mut w) = self.writer.take() {
            let _ = w.shutdown().await;
        }
        self.reader = None;
        self.lines = LineBuffer::new(usize::MAX);
        self.pending.clear();
    }
}

impl<R, W> std::fmt::Debug for LinePeer<R, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinePeer")
            .field("reading", &self.reader.is_some())
            .field("writing", &self.writer.is_some())
            .finish()
    }
}

impl<R, W> Peer for LinePeer<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
{
    fn recv(&mut self) -> BoxFuture<'_, Option<Message>> {
        Box::pin(self.recv_message())
    }

    fn send(&mut self, message: Message) -> BoxFuture<'_, ()> {
        Box::pin(async move { self.send_message(&message).await })
    }

    fn send_raw(&mut self, line: Vec<u8>) -> BoxFuture<'_, ()> {
        Box::pin(async move { self.send_line(&line).await })
    }

    fn die(&mut self) -> BoxFuture<'_, ()> {
        Box::pin(self.close())
    }
}
