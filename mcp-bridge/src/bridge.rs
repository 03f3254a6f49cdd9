//! [`Bridge`]: one upstream server, served to a client over a byte stream
//! (the process's own stdio, by default).

use std::sync::Arc;

use mcp_transport::{Connector, TransportError};
use mcp_transport_stdio::{DEFAULT_MAX_MESSAGE_SIZE, StreamTransport};
use tokio::io::{AsyncRead, AsyncWrite};
use tracing::Instrument;

use crate::link::{Link, UpstreamEra};
use crate::passthrough::Passthrough;
use crate::policy::ToolPolicy;
use crate::relay::{downstream_handlers, upstream_handlers};
use crate::restart::{Budget, Restarts};
use crate::watched::{Ended, Watched};

/// Serves an MCP server to a client in the same era: every request,
/// notification, server request, progress and cancel relayed, `_meta`
/// kept, errors verbatim; what cannot be relayed gets a JSON-RPC error
/// that says why. The server is reached through any [`Connector`] (a
/// [`StdioCommand`](mcp_transport_stdio::StdioCommand), an HTTP transport,
/// a server of a servers file), on a session of its own for this client.
///
/// ```no_run
/// use mcp_bridge::Bridge;
/// use mcp_transport_stdio::StdioCommand;
///
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = StdioCommand::new("npx").args(["-y", "@modelcontextprotocol/server-everything"]);
/// // Serves it on this process's stdin and stdout until the client leaves.
/// let ended = Bridge::new(server).serve_stdio().await?;
/// eprintln!("{ended}");
/// # Ok(())
/// # }
/// ```
pub struct Bridge {
    upstream: Arc<dyn Connector>,
    max_message_size: usize,
    authorization_hint: Option<String>,
    restarts: Restarts,
    tools: ToolPolicy,
    upstream_era: UpstreamEra,
    tool_search: bool,
    held: crate::suspend::Limits,
}

impl std::fmt::Debug for Bridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bridge")
            .field("max_message_size", &self.max_message_size)
            .finish_non_exhaustive()
    }
}

/// Why the bridge could not serve at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BridgeError {
    /// The server could not be reached (started, connected to).
    #[error("could not reach the server: {0}")]
    Connect(#[source] TransportError),
    /// Serving over HTTP beyond loopback without a bearer token: anyone
    /// who can reach the address could use the server (and its tokens).
    #[error(
        "refusing to serve on {0} without a bearer token: listen on loopback (127.0.0.1), or require a token"
    )]
    Exposed(std::net::SocketAddr),
    /// The listening socket failed.
    #[error("the HTTP listener failed: {0}")]
    Listen(#[source] std::io::Error),
}

impl Bridge {
    /// A bridge to the server `upstream` connects to.
    pub fn new(upstream: impl Connector + 'static) -> Bridge {
        Bridge {
            upstream: Arc::new(upstream),
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            authorization_hint: None,
            restarts: Restarts::never(),
            tools: ToolPolicy::new(),
            upstream_era: UpstreamEra::AsTheClient,
            tool_search: false,
            held: crate::suspend::Limits::default(),
        }
    }

    /// Which era to speak to the server (by default the client's). A
    /// legacy client in front of a server spoken to in 2026-07-28 is
    /// translated: its `initialize` answered from `server/discover`, each
    /// request given the `_meta` that revision needs, an `input_required`
    /// result turned into the client's own elicitation, sampling and roots
    /// requests (their answers sent back with the server's
    /// `requestState`), list changes brought from `subscriptions/listen`;
    /// `ping` and `logging/setLevel` answered by the bridge. With
    /// [`UpstreamEra::Legacy`], a 2026-07-28 client in front of a legacy
    /// server is translated the other way: its `server/discover` answered
    /// from the server's `initialize`, and the server's requests during a
    /// call turned into `input_required` results, the call held until the
    /// client retries ([`Bridge::suspended_calls`]).
    ///
    /// ```
    /// # let server = mcp_transport_stdio::StdioCommand::new("server");
    /// let bridge = mcp_bridge::Bridge::new(server).upstream_era(mcp_bridge::UpstreamEra::Modern);
    /// # let _ = bridge;
    /// ```
    pub fn upstream_era(mut self, era: UpstreamEra) -> Bridge {
        self.upstream_era = era;
        self
    }

    /// How many calls of a 2026-07-28 client in front of a legacy server
    /// ([`UpstreamEra::Legacy`]) are held at most, and for how long each
    /// (by default 64 and 10 minutes). Such a call is held when the server
    /// asks for input during it (the client is answered `input_required`)
    /// until the client retries with its answers; one not retried in time
    /// is given up (the server's request gets an error), and a call that
    /// would be held beyond `max` ends with an error saying so. Over
    /// stdio the count is the client's; for 2026-07-28 clients over HTTP,
    /// which share the bridge's one connection to the server, it is all
    /// of theirs.
    ///
    /// ```
    /// # let server = mcp_transport_stdio::StdioCommand::new("server");
    /// let bridge = mcp_bridge::Bridge::new(server)
    ///     .upstream_era(mcp_bridge::UpstreamEra::Legacy)
    ///     .suspended_calls(16, std::time::Duration::from_secs(120));
    /// # let _ = bridge;
    /// ```
    pub fn suspended_calls(mut self, max: usize, ttl: std::time::Duration) -> Bridge {
        self.held = crate::suspend::Limits { max, ttl };
        self
    }

    /// Which tools the client sees and may call (by default, all): a
    /// hidden tool is left out of `tools/list` and refused on
    /// `tools/call` with `-32602`, naming the rule that hides it.
    ///
    /// ```
    /// # fn main() -> Result<(), mcp_bridge::PolicyError> {
    /// # let server = mcp_transport_stdio::StdioCommand::new("server");
    /// let policy = mcp_bridge::ToolPolicy::new().deny("*delete*")?.read_only(true);
    /// let bridge = mcp_bridge::Bridge::new(server).tools(policy);
    /// # let _ = bridge;
    /// # Ok(())
    /// # }
    /// ```
    pub fn tools(mut self, policy: ToolPolicy) -> Bridge {
        self.tools = policy;
        self
    }

    /// Serves the client two tools in place of the server's (by default
    /// off): `search_tools`, which ranks the server's tools for a query
    /// (BM25 over their names and descriptions) and answers the best with
    /// their `inputSchema`, and `call_tool`, which calls one by name. An
    /// agent in front of many servers (a [`Servers`](crate::Servers)
    /// file) then carries two tool definitions instead of every one.
    ///
    /// The bridge lists the server's tools itself (every page), again when
    /// the server says they changed or a minute on; the
    /// [`tools`](Self::tools) policy still holds (a hidden tool is never
    /// found and is refused). A call goes up as the client's own
    /// `tools/call`, with its progress, `_meta`, cancellation and the
    /// server's questions; calling a tool by its own name works too. A
    /// `call_tool` of a name the server does not have is refused with
    /// `-32602`, pointing at `search_tools`.
    ///
    /// ```
    /// # let server = mcp_transport_stdio::StdioCommand::new("server");
    /// let bridge = mcp_bridge::Bridge::new(server).tool_search(true);
    /// # let _ = bridge;
    /// ```
    pub fn tool_search(mut self, on: bool) -> Bridge {
        self.tool_search = on;
        self
    }

    /// Restarts a server that died, within this budget (by default it
    /// never does, and serving ends). Calls in flight when it died are
    /// answered with an error saying they may have run; the new server is
    /// told the client's `initialize` and `initialized` again, and a legacy
    /// client is told that the tools, resources and prompts may have
    /// changed.
    ///
    /// ```
    /// use std::time::Duration;
    /// # let server = mcp_transport_stdio::StdioCommand::new("server");
    /// let bridge = mcp_bridge::Bridge::new(server)
    ///     .restarts(mcp_bridge::Restarts::new(3, Duration::from_secs(60)));
    /// # let _ = bridge;
    /// ```
    pub fn restarts(mut self, restarts: Restarts) -> Bridge {
        self.restarts = restarts;
        self
    }

    /// What the client is told to do when the server asks for
    /// authorization, after the error itself: a bridge serving on stdio
    /// cannot ask anyone (stdin carries the protocol), so it names the step
    /// to take, such as `run \`mcp --url … login\` first`.
    ///
    /// ```
    /// # let server = mcp_transport_stdio::StdioCommand::new("server");
    /// let bridge = mcp_bridge::Bridge::new(server)
    ///     .authorization_hint("run `mcp --url https://example.com/mcp login` first");
    /// # let _ = bridge;
    /// ```
    pub fn authorization_hint(mut self, hint: impl Into<String>) -> Bridge {
        self.authorization_hint = Some(hint.into());
        self
    }

    /// The largest message read from the client, in bytes (default
    /// [`DEFAULT_MAX_MESSAGE_SIZE`]); a longer one is refused with a
    /// JSON-RPC error and reading goes on.
    ///
    /// ```
    /// # let server = mcp_transport_stdio::StdioCommand::new("server");
    /// let bridge = mcp_bridge::Bridge::new(server).max_message_size(4 << 20);
    /// # let _ = bridge;
    /// ```
    pub fn max_message_size(mut self, bytes: usize) -> Bridge {
        self.max_message_size = bytes;
        self
    }

    /// Serves the client on this process's stdin and stdout until it
    /// leaves or the server is gone. Nothing but JSON-RPC is written to
    /// stdout; logs go through `tracing`.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), mcp_bridge::BridgeError> {
    /// let server = mcp_transport_stdio::StdioCommand::new("./my-server");
    /// let ended = mcp_bridge::Bridge::new(server).serve_stdio().await?;
    /// eprintln!("bridge: {ended}");
    /// # Ok(())
    /// # }
    /// ```
    pub async fn serve_stdio(self) -> Result<Ended, BridgeError> {
        self.serve_stdio_until(std::future::pending()).await
    }

    /// [`serve_stdio`](Self::serve_stdio) until `stop` resolves too (SIGINT
    /// or SIGTERM, say): see [`serve_until`](Self::serve_until).
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), mcp_bridge::BridgeError> {
    /// let server = mcp_transport_stdio::StdioCommand::new("./my-server");
    /// // Sent from elsewhere (a signal handler, say) to end serving.
    /// let (_stop, stopped) = tokio::sync::oneshot::channel::<()>();
    /// let stop = async {
    ///     let _ = stopped.await;
    /// };
    /// let ended = mcp_bridge::Bridge::new(server).serve_stdio_until(stop).await?;
    /// eprintln!("bridge: {ended}");
    /// # Ok(())
    /// # }
    /// ```
    pub async fn serve_stdio_until(
        self,
        stop: impl std::future::Future<Output = ()> + Send,
    ) -> Result<Ended, BridgeError> {
        #[cfg(unix)]
        if let Some((reader, writer)) = stdio_pipes() {
            return self.serve_until(reader, writer, stop).await;
        }
        self.serve_until(tokio::io::stdin(), tokio::io::stdout(), stop)
            .await
    }

    /// Serves clients over Streamable HTTP on `listener`, at `/mcp`, until
    /// `stop` resolves; then every session is ended (its server closed)
    /// within a few seconds, and this returns [`Ended::Stopped`].
    ///
    /// * **Legacy clients** (2025-03-26 to 2025-11-25): each `initialize`
    ///   opens a session with a random `Mcp-Session-Id` and an upstream
    ///   session of its own (a child process each, for a command); a
    ///   `POST`'s requests are answered on an SSE stream of its own, which
    ///   also carries their progress and the server's requests; the `GET`
    ///   stream carries the rest; `DELETE` ends the session; events have
    ///   ids and `Last-Event-ID` resumes a broken stream. A session whose
    ///   server died ends, and its client gets `404` and starts anew.
    /// * **2026-07-28 clients**: one `POST` per message, no session; the
    ///   headers that mirror the body are checked (`400`, `-32020`); their
    ///   requests share one upstream connection under ids of the bridge's
    ///   own; closing a reply's stream cancels the call.
    ///
    /// Bodies are capped at [`max_message_size`](Self::max_message_size)
    /// (`413`). A listener beyond loopback needs
    /// [`HttpOptions::bearer_token`](crate::HttpOptions::bearer_token) ([`BridgeError::Exposed`]); on
    /// loopback, `Host` and `Origin` must name loopback too (`403`).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use mcp_bridge::{Bridge, Ended, HttpOptions};
    /// use mcp_reference_server::{FakeConfig, FakeServer};
    ///
    /// let server = FakeServer::new(FakeConfig::legacy());
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// println!("serving on http://{}/mcp", listener.local_addr()?);
    /// let stop = std::future::ready(()); // a signal, in a real program
    /// let ended = Bridge::new(server.connector())
    ///     .serve_http(listener, HttpOptions::new(), stop)
    ///     .await?;
    /// assert_eq!(ended, Ended::Stopped);
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    pub async fn serve_http(
        self,
        listener: tokio::net::TcpListener,
        options: crate::HttpOptions,
        stop: impl std::future::Future<Output = ()> + Send,
    ) -> Result<Ended, BridgeError> {
        let addr = listener.local_addr().map_err(BridgeError::Listen)?;
        let loopback = addr.ip().is_loopback();
        if !loopback && options.token().is_none() {
            return Err(BridgeError::Exposed(addr));
        }
        let settings = crate::link::LinkSettings {
            upstream: self.upstream,
            authorization_hint: self.authorization_hint,
            tools: self.tools,
            upstream_era: self.upstream_era,
            tool_search: self.tool_search,
            held: self.held,
        };
        let front = crate::http::Front::new(settings, self.max_message_size, options, loopback);
        crate::http::serve(listener, front, stop)
            .instrument(tracing::info_span!("mcp_bridge", %addr))
            .await;
        Ok(Ended::Stopped)
    }

    /// Serves the client that writes to `reader` and reads `writer`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use mcp_bridge::{Bridge, Ended};
    /// use mcp_reference_server::{FakeConfig, FakeServer};
    ///
    /// let server = FakeServer::new(FakeConfig::legacy());
    /// let (client_end, bridge_end) = tokio::io::duplex(4096);
    /// let (read, write) = tokio::io::split(bridge_end);
    /// drop(client_end); // a client that leaves at once
    /// let ended = Bridge::new(server.connector()).serve(read, write).await.unwrap();
    /// assert_eq!(ended, Ended::ClientLeft);
    /// # }
    /// ```
    pub async fn serve<R, W>(self, reader: R, writer: W) -> Result<Ended, BridgeError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        self.serve_until(reader, writer, std::future::pending())
            .await
    }

    /// [`serve`](Self::serve) until `stop` resolves too (a signal, say):
    /// then the server is told each call in flight is cancelled, its
    /// session is closed (a child process shut down, its process group
    /// signalled), and this returns [`Ended::Stopped`].
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use mcp_bridge::{Bridge, Ended};
    /// use mcp_reference_server::{FakeConfig, FakeServer};
    ///
    /// let server = FakeServer::new(FakeConfig::legacy());
    /// let (_client_end, bridge_end) = tokio::io::duplex(4096);
    /// let (read, write) = tokio::io::split(bridge_end);
    /// let stop = std::future::ready(()); // a signal that came at once
    /// let ended = Bridge::new(server.connector()).serve_until(read, write, stop).await.unwrap();
    /// assert_eq!(ended, Ended::Stopped);
    /// # }
    /// ```
    pub async fn serve_until<R, W>(
        self,
        reader: R,
        writer: W,
        stop: impl std::future::Future<Output = ()> + Send,
    ) -> Result<Ended, BridgeError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let link = Arc::new(Link::new(
            self.authorization_hint,
            self.tools,
            self.upstream_era,
            self.tool_search,
            self.held,
        ));
        let passthrough = Passthrough::of(&link);
        if let Some(passthrough) = &passthrough {
            let _ = link.server_lines.set(passthrough.from_server());
        }
        let upstream = self
            .upstream
            .connect(upstream_handlers(&link))
            .await
            .map_err(BridgeError::Connect)?;
        link.set_upstream(upstream);
        let mut handlers = downstream_handlers(&link);
        if let Some(passthrough) = &passthrough {
            handlers = handlers.with_line_tap(passthrough.from_client());
        }
        let downstream = Arc::new(
            StreamTransport::builder()
                .name("client")
                .max_message_size(self.max_message_size)
                .build(reader, writer, handlers),
        );
        link.set_downstream(downstream.clone());
        let watched = Watched {
            link,
            downstream,
            passthrough,
            connector: self.upstream.clone(),
            budget: Budget::new(self.restarts),
        };
        let ended = watched
            .run(stop)
            .instrument(tracing::info_span!("mcp_bridge"))
            .await;
        Ok(ended)
    }
}

/// Stdin and stdout as pipes the runtime's I/O driver reads and writes,
/// when both are pipes (as a client that starts the bridge makes them):
/// tokio's own stdin and stdout read and write on a blocking thread, a
/// hand-off each way for every read and write. Anything else (a terminal,
/// a file) is left to those.
#[cfg(unix)]
fn stdio_pipes() -> Option<(
    tokio::net::unix::pipe::Receiver,
    tokio::net::unix::pipe::Sender,
)> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileTypeExt;
    let is_pipe = |fd: &std::os::fd::OwnedFd| {
        std::fs::File::from(fd.try_clone().ok()?)
            .metadata()
            .ok()
            .map(|m| m.file_type().is_fifo())
    };
    let stdin = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let stdout = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    // Both or neither: converting one sets it non-blocking, which tokio's
    // own stdin and stdout do not expect.
    if is_pipe(&stdin) != Some(true) || is_pipe(&stdout) != Some(true) {
        return None;
    }
    let reader = tokio::net::unix::pipe::Receiver::from_owned_fd(stdin).ok()?;
    let writer = tokio::net::unix::pipe::Sender::from_owned_fd(stdout).ok()?;
    Some((reader, writer))
}
