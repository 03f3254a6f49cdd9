//! The transport over any byte stream: pipes, sockets, an in-memory duplex.

use std::sync::Arc;

use futures::future::BoxFuture;
use mcp_protocol::{Notification, Request};
use mcp_transport::{
    ConnectionHandlers, Engine, GoneInfo, RequestOptions, ResponseFuture, Transport,
    TransportError, TransportProfile,
};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::task::AbortHandle;
use tracing::Instrument;

use crate::DEFAULT_MAX_MESSAGE_SIZE;
use crate::wire::{ReadEnd, read_loop, write_loop};

/// MCP over one `AsyncRead` (the server's output) and one `AsyncWrite` (its
/// input), one JSON-RPC message per line, as the spec's stdio transport
/// frames them.
///
/// What a misbehaving peer costs:
///
/// * a line that is not JSON (a stray `println!` on stdout), or not UTF-8,
///   is skipped, logged, and reported to the events listener as
///   [`TransportEvent::Noise`](mcp_transport::TransportEvent::Noise);
/// * valid JSON that is not JSON-RPC is skipped and reported as
///   [`TransportEvent::Malformed`](mcp_transport::TransportEvent::Malformed);
///   an answer among them fails its request with
///   [`TransportError::Malformed`], a server request is answered `-32600`;
/// * a line longer than the maximum message size is discarded as it
///   streams past (never buffered whole), reported as
///   [`TransportEvent::TooLarge`](mcp_transport::TransportEvent::TooLarge),
///   and the request it answers, when its id is near its start as usual,
///   fails with [`TransportError::MessageTooLarge`] (a server request is
///   answered with an error instead);
/// * the end of the stream fails every pending request with
///   [`TransportError::ServerGone`].
///
/// Reading and writing run on tasks of their own, so a peer that stops
/// reading never blocks a caller: requests still end at their timeout, and
/// [`close`](Transport::close) returns at once. Dropping the transport stops
/// both tasks and drops both halves.
///
/// For a server run as a child process use
/// [`StdioCommand`](crate::StdioCommand), which adds stderr capture, exit
/// detection and process shutdown.
///
/// ```
/// use mcp_protocol::Request;
/// use mcp_transport::{ConnectionHandlers, RequestOptions, Transport};
/// use mcp_transport_stdio::StreamTransport;
/// use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mcp_transport::TransportError> {
/// let (ours, theirs) = tokio::io::duplex(4096);
/// // A server that answers every line with `{}`, after some noise.
/// tokio::spawn(async move {
///     let (read, mut write) = tokio::io::split(theirs);
///     let mut lines = BufReader::new(read).lines();
///     while let Ok(Some(line)) = lines.next_line().await {
///         let request: serde_json::Value = serde_json::from_str(&line).unwrap();
///         let answer = serde_json::json!({"jsonrpc": "2.0", "id": request["id"], "result": {}});
///         write.write_all(b"starting up...\n").await.unwrap();
///         write.write_all(format!("{answer}\n").as_bytes()).await.unwrap();
///     }
/// });
///
/// let transport = StreamTransport::duplex(ours, ConnectionHandlers::discard());
/// let result = transport
///     .request(Request::new(1, "ping", None), RequestOptions::new())
///     .await?;
/// assert_eq!(result["resultType"], "complete");
/// transport.close().await;
/// assert!(!transport.is_alive());
/// # Ok(())
/// # }
/// ```
pub struct StreamTransport {
    engine: Engine,
    reader: AbortHandle,
    writer: AbortHandle,
    name: Arc<str>,
}

/// Settings for a [`StreamTransport`]: see [`StreamTransport::builder`].
///
/// ```
/// use mcp_transport_stdio::StreamTransport;
///
/// let builder = StreamTransport::builder()
///     .max_message_size(1 << 20)
///     .name("local-socket");
/// assert_eq!(builder.get_max_message_size(), 1 << 20);
/// ```
#[derive(Clone, Debug)]
pub struct StreamBuilder {
    max_message_size: usize,
    name: String,
}

impl Default for StreamBuilder {
    fn default() -> Self {
        StreamBuilder {
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            name: "stream".to_owned(),
        }
    }
}

impl StreamBuilder {
    /// The longest line read, in bytes, newline excluded; longer ones are
    /// skipped. Defaults to [`DEFAULT_MAX_MESSAGE_SIZE`] (128 MiB, room for
    /// a 64 MiB resource sent as base64).
    ///
    /// ```
    /// let b = mcp_transport_stdio::StreamTransport::builder().max_message_size(4096);
    /// assert_eq!(b.get_max_message_size(), 4096);
    /// ```
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes;
        self
    }

    /// The configured maximum message size.
    ///
    /// ```
    /// let b = mcp_transport_stdio::StreamTransport::builder();
    /// assert_eq!(b.get_max_message_size(), mcp_transport_stdio::DEFAULT_MAX_MESSAGE_SIZE);
    /// ```
    pub fn get_max_message_size(&self) -> usize {
        self.max_message_size
    }

    /// A name for the peer, used in logs and tracing spans.
    ///
    /// ```
    /// let b = mcp_transport_stdio::StreamTransport::builder().name("tcp:localhost:9000");
    /// # let _ = b;
    /// ```
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Starts the transport over a read half (the peer's output) and a
    /// write half (its input). Must be called inside a tokio runtime.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use mcp_transport::{ConnectionHandlers, Transport};
    /// let (a, _b) = tokio::io::duplex(1024);
    /// let (read, write) = tokio::io::split(a);
    /// let t = mcp_transport_stdio::StreamTransport::builder()
    ///     .build(read, write, ConnectionHandlers::discard());
    /// assert!(t.is_alive());
    /// # }
    /// ```
    pub fn build<R, W>(self, reader: R, writer: W, handlers: ConnectionHandlers) -> StreamTransport
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (engine, outbound) = Engine::with_lines(handlers);
        let name: Arc<str> = self.name.into();
        let span = tracing::info_span!("mcp_stream", server = %name);
        let max = self.max_message_size;

        let read_engine = engine.clone();
        let reader = tokio::spawn(
            async move {
                let reason = match read_loop(reader, read_engine.clone(), max).await {
                    ReadEnd::Eof => "the stream ended".to_owned(),
                    ReadEnd::Failed(e) => format!("reading failed: {e}"),
                };
                if !read_engine.shutdown_token().is_cancelled() {
                    // Said before it is logged: a log line that fails must
                    // not keep the connection's end from being known.
                    read_engine.peer_gone(GoneInfo::new(reason.clone()));
                    tracing::warn!(%reason, "the peer is gone");
                }
            }
            .instrument(span.clone()),
        )
        .abort_handle();

        let write_engine = engine.clone();
        let shutdown = engine.shutdown_token();
        let writer = tokio::spawn(
            async move {
                let mut outbound = outbound;
                if let Err(e) = write_loop(writer, &mut outbound, shutdown).await
                    && !write_engine.shutdown_token().is_cancelled()
                {
                    tracing::warn!(error = %e, "writing to the peer failed");
                    write_engine.peer_gone(GoneInfo::new(format!("writing failed: {e}")));
                }
                // Only now: the cause is reported.
                drop(outbound);
            }
            .instrument(span),
        )
        .abort_handle();

        StreamTransport {
            engine,
            reader,
            writer,
            name,
        }
    }

    /// Starts the transport over one duplex stream (a `TcpStream`, a
    /// `UnixStream`, a `tokio::io::DuplexStream`), split in two.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use mcp_transport::{ConnectionHandlers, Transport};
    /// let (a, _b) = tokio::io::duplex(1024);
    /// let t = mcp_transport_stdio::StreamTransport::builder()
    ///     .name("in-memory")
    ///     .build_duplex(a, ConnectionHandlers::discard());
    /// assert!(t.is_alive());
    /// # }
    /// ```
    pub fn build_duplex<S>(self, stream: S, handlers: ConnectionHandlers) -> StreamTransport
    where
        S: AsyncRead + AsyncWrite + Send + 'static,
    {
        let (reader, writer) = tokio::io::split(stream);
        self.build(reader, writer, handlers)
    }
}

impl StreamTransport {
    /// Settings other than the defaults.
    ///
    /// ```
    /// let b = mcp_transport_stdio::StreamTransport::builder().max_message_size(1024);
    /// # let _ = b;
    /// ```
    pub fn builder() -> StreamBuilder {
        StreamBuilder::default()
    }

    /// A transport with the default settings over a read half and a write
    /// half. Must be called inside a tokio runtime.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use mcp_transport::{ConnectionHandlers, Transport};
    /// let (a, _b) = tokio::io::duplex(1024);
    /// let (read, write) = tokio::io::split(a);
    /// let t = mcp_transport_stdio::StreamTransport::new(read, write, ConnectionHandlers::discard());
    /// assert!(t.is_alive());
    /// # }
    /// ```
    pub fn new<R, W>(reader: R, writer: W, handlers: ConnectionHandlers) -> StreamTransport
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Self::builder().build(reader, writer, handlers)
    }

    /// A transport with the default settings over one duplex stream.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use mcp_transport::{ConnectionHandlers, Transport};
    /// let (a, _b) = tokio::io::duplex(1024);
    /// let t = mcp_transport_stdio::StreamTransport::duplex(a, ConnectionHandlers::discard());
    /// assert!(t.is_alive());
    /// # }
    /// ```
    pub fn duplex<S>(stream: S, handlers: ConnectionHandlers) -> StreamTransport
    where
        S: AsyncRead + AsyncWrite + Send + 'static,
    {
        Self::builder().build_duplex(stream, handlers)
    }

    /// The peer's name, as given to [`StreamBuilder::name`].
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let (a, _b) = tokio::io::duplex(1024);
    /// let t = mcp_transport_stdio::StreamTransport::builder()
    ///     .name("peer")
    ///     .build_duplex(a, mcp_transport::ConnectionHandlers::discard());
    /// assert_eq!(t.name(), "peer");
    /// # }
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many requests wait for an answer: the table every path (answer,
    /// error, timeout, cancel, drop, the peer's end) takes its entry out
    /// of, so on a long-lived connection this stays at the number of calls
    /// in flight.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let (a, _b) = tokio::io::duplex(1024);
    /// let t = mcp_transport_stdio::StreamTransport::duplex(a, mcp_transport::ConnectionHandlers::discard());
    /// assert_eq!(t.pending_count(), 0);
    /// # }
    /// ```
    pub fn pending_count(&self) -> usize {
        self.engine.pending_count()
    }

    /// Resolves once the connection has ended: the peer closed its side
    /// or went away, writing failed, or the transport was closed. A
    /// program serving a client over its stdio waits on this to know the
    /// client left.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use mcp_transport::{ConnectionHandlers, Transport};
    /// let (a, b) = tokio::io::duplex(1024);
    /// let t = mcp_transport_stdio::StreamTransport::duplex(a, ConnectionHandlers::discard());
    /// drop(b); // the peer leaves
    /// t.ended().await;
    /// assert!(!t.is_alive());
    /// # }
    /// ```
    pub fn ended(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        self.engine.shutdown_token().cancelled_owned()
    }

    /// Closes the connection once what is queued has been written, waiting
    /// at most `grace` for the peer to take it: the last answers a program
    /// sends before it exits reach their reader. Pending requests fail with
    /// [`TransportError::Closed`](mcp_transport::TransportError::Closed),
    /// as with [`close`](Transport::close), which drops what is queued.
    pub async fn close_after_writing(&self, grace: std::time::Duration) {
        drop(self.engine.close());
        let deadline = tokio::time::Instant::now() + grace;
        while !self.writer.is_finished() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        self.writer.abort();
        self.reader.abort();
    }
}

impl Transport for StreamTransport {
    fn request(&self, request: Request, options: RequestOptions) -> ResponseFuture {
        self.engine.request(request, options)
    }

    fn notify(&self, notification: Notification) -> Result<(), TransportError> {
        self.engine.notify(notification)
    }

    fn line_sender(&self) -> Option<mcp_transport::LineSender> {
        self.engine.line_sender()
    }

    fn close(&self) -> BoxFuture<'static, ()> {
        let closed = self.engine.close();
        // Nothing to wait for: a writer blocked on a peer that does not
        // read is abandoned, and dropping both halves ends the stream.
        self.writer.abort();
        self.reader.abort();
        closed
    }

    fn is_alive(&self) -> bool {
        self.engine.is_alive()
    }

    fn profile(&self) -> TransportProfile {
        self.engine.profile()
    }
}

impl Drop for StreamTransport {
    fn drop(&mut self) {
        drop(self.engine.close());
        self.writer.abort();
        self.reader.abort();
    }
}

impl std::fmt::Debug for StreamTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamTransport")
            .field("name", &self.name)
            .field("engine", &self.engine)
            .finish()
    }
}
