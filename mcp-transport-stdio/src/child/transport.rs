//! [`ChildTransport`]: the running server, its [`Transport`] impl, and
//! what dropping it does.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_protocol::{Notification, Request};
use mcp_transport::{
    ConnectionHandlers, Engine, ExitInfo, RequestOptions, ResponseFuture, Transport,
    TransportError, TransportProfile,
};
use tokio::sync::{mpsc, watch};
use tokio::task::{AbortHandle, JoinHandle};
use tracing::Instrument;

use super::command::StdioCommand;
use super::process::{Process, spawn_reader, spawn_stderr, spawn_writer, supervise};
use super::shutdown::{Signal, shutdown, signal};
use crate::stderr::Tail;

/// One running MCP server process: a [`Transport`] over its stdin and
/// stdout. Made by [`StdioCommand::spawn`]; see [`StdioCommand`] for what it
/// guarantees.
///
/// Dropping it without [`close`](Transport::close) kills the server's
/// process group with `SIGKILL` and returns at once, without waiting for
/// the server to die: the task that watches the server reaps it, or, when
/// its runtime is shutting down or gone, a small detached thread does. So
/// a drop never blocks an async worker, and no zombie is left behind. The
/// same happens when the runtime the transport was started on shuts down
/// first: with its tasks gone the server cannot be spoken to, so it is
/// killed and reaped then.
///
/// ```no_run
/// use std::time::Duration;
/// use mcp_protocol::Request;
/// use mcp_transport::{ConnectionHandlers, RequestOptions, Transport, TransportError};
/// use mcp_transport_stdio::StdioCommand;
///
/// # #[tokio::main]
/// # async fn main() -> std::io::Result<()> {
/// let server = StdioCommand::new("python3").args(["-m", "my_server"]).spawn(ConnectionHandlers::discard())?;
/// let options = RequestOptions::new().timeout(Duration::from_secs(30));
/// match server.request(Request::new(1, "tools/list", None), options).await {
///     Ok(result) => println!("{result}"),
///     Err(TransportError::ServerGone(info)) => {
///         // "the server is gone: the server exited (exit code 1); its last stderr line: …"
///         eprintln!("{info}\n{}", info.stderr_tail.as_deref().unwrap_or_default());
///     }
///     Err(other) => eprintln!("{other}"),
/// }
/// server.close().await;
/// # Ok(())
/// # }
/// ```
pub struct ChildTransport {
    engine: Engine,
    process: Arc<Process>,
    writer: Mutex<Option<JoinHandle<()>>>,
    reader: AbortHandle,
    stderr: AbortHandle,
    supervisor: AbortHandle,
    close_grace: Duration,
    term_grace: Duration,
    close_started: AtomicBool,
    closed: Arc<watch::Sender<bool>>,
    span: tracing::Span,
}

impl ChildTransport {
    #[cfg(unix)]
    pub(super) fn start(
        command: &StdioCommand,
        handlers: ConnectionHandlers,
    ) -> std::io::Result<Self> {
        let name: Arc<str> = command.get_name().into();
        let mut child = command.command().spawn()?;
        let pid = child.id();
        let span = tracing::info_span!("mcp_stdio", server = %name, pid);
        span.in_scope(|| tracing::debug!(program = ?command.program, args = ?command.args, "started the server"));
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            unreachable!("all three pipes were requested");
        };

        let process = Arc::new(Process {
            pid,
            name: name.clone(),
            exited: watch::Sender::new(false),
            exit_info: Mutex::new(None),
            tail: Arc::new(Mutex::new(Tail::new(
                command.stderr_tail_bytes,
                command.stderr_tail_lines,
            ))),
            stderr_done: watch::Sender::new(false),
        });
        let (engine, outbound) = Engine::with_lines(handlers);
        let (causes_tx, causes) = mpsc::unbounded_channel();

        let writer = spawn_writer(stdin, outbound, &engine, causes_tx.clone(), &span);
        let reader = spawn_reader(stdout, &engine, command.max_message_size, causes_tx, &span);
        let stderr = spawn_stderr(stderr, &process, command.on_stderr.clone(), &span);
        let supervisor = tokio::spawn(
            supervise(
                child,
                process.clone(),
                engine.clone(),
                causes,
                command.exit_linger,
            )
            .instrument(span.clone()),
        )
        .abort_handle();

        Ok(ChildTransport {
            engine,
            process,
            writer: Mutex::new(Some(writer)),
            reader,
            stderr,
            supervisor,
            close_grace: command.close_grace,
            term_grace: command.term_grace,
            close_started: AtomicBool::new(false),
            closed: Arc::new(watch::Sender::new(false)),
            span,
        })
    }

    /// The server's process id (also its process group id), while known.
    ///
    /// ```no_run
    /// # #[tokio::main]
    /// # async fn main() -> std::io::Result<()> {
    /// let t = mcp_transport_stdio::StdioCommand::new("my-server")
    ///     .spawn(mcp_transport::ConnectionHandlers::discard())?;
    /// println!("{:?}", t.pid());
    /// # Ok(())
    /// # }
    /// ```
    pub fn pid(&self) -> Option<u32> {
        self.process.pid
    }

    /// The server's name, as given to [`StdioCommand::name`].
    ///
    /// ```no_run
    /// # #[tokio::main]
    /// # async fn main() -> std::io::Result<()> {
    /// let t = mcp_transport_stdio::StdioCommand::new("npx").name("everything")
    ///     .spawn(mcp_transport::ConnectionHandlers::discard())?;
    /// assert_eq!(t.name(), "everything");
    /// # Ok(())
    /// # }
    /// ```
    pub fn name(&self) -> &str {
        &self.process.name
    }

    /// The last lines the server wrote to stderr (bounded; see
    /// [`StdioCommand::stderr_tail`]), joined with `\n`.
    ///
    /// ```no_run
    /// # #[tokio::main]
    /// # async fn main() -> std::io::Result<()> {
    /// let t = mcp_transport_stdio::StdioCommand::new("my-server")
    ///     .spawn(mcp_transport::ConnectionHandlers::discard())?;
    /// eprintln!("{}", t.stderr_tail());
    /// # Ok(())
    /// # }
    /// ```
    pub fn stderr_tail(&self) -> String {
        self.process.tail()
    }

    /// How the server process ended, once it has (`None` while it runs, or
    /// when its status could not be read).
    ///
    /// ```no_run
    /// # #[tokio::main]
    /// # async fn main() -> std::io::Result<()> {
    /// use mcp_transport::Transport;
    /// let t = mcp_transport_stdio::StdioCommand::new("my-server")
    ///     .spawn(mcp_transport::ConnectionHandlers::discard())?;
    /// t.close().await;
    /// println!("{:?}", t.exit_status());
    /// # Ok(())
    /// # }
    /// ```
    pub fn exit_status(&self) -> Option<ExitInfo> {
        self.process.exit_info()
    }

    /// Whether the server process has ended (been reaped).
    ///
    /// ```no_run
    /// # #[tokio::main]
    /// # async fn main() -> std::io::Result<()> {
    /// use mcp_transport::Transport;
    /// let t = mcp_transport_stdio::StdioCommand::new("my-server")
    ///     .spawn(mcp_transport::ConnectionHandlers::discard())?;
    /// t.close().await;
    /// assert!(t.has_exited());
    /// # Ok(())
    /// # }
    /// ```
    pub fn has_exited(&self) -> bool {
        self.process.has_exited()
    }

    fn take_writer(&self) -> Option<JoinHandle<()>> {
        self.writer.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

impl Transport for ChildTransport {
    fn request(&self, request: Request, options: RequestOptions) -> ResponseFuture {
        self.engine.request(request, options)
    }

    fn notify(&self, notification: Notification) -> Result<(), TransportError> {
        self.engine.notify(notification)
    }

    fn line_sender(&self) -> Option<mcp_transport::LineSender> {
        self.engine.line_sender()
    }

    /// Fails pending requests with [`TransportError::Closed`] at once, then
    /// shuts the server down: stdin closed, `close_grace`, `SIGTERM` to the
    /// group, `term_grace`, `SIGKILL` to the group. The returned future
    /// ends when the server is gone; the shutdown runs on a task of its
    /// own, so dropping the future does not stop it.
    fn close(&self) -> BoxFuture<'static, ()> {
        let mut done = self.closed.subscribe();
        if !self.close_started.swap(true, Ordering::AcqRel) {
            drop(self.engine.close());
            let sequence = shutdown(
                self.process.clone(),
                self.take_writer(),
                [self.reader.clone(), self.stderr.clone()],
                self.supervisor.clone(),
                self.close_grace,
                self.term_grace,
                self.closed.clone(),
            );
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => {
                    handle.spawn(sequence.instrument(self.span.clone()));
                }
                Err(_) => {
                    // No runtime to wait on: do what drop does.
                    signal(&self.process, Signal::Kill);
                    self.closed.send_replace(true);
                }
            }
        }
        Box::pin(async move {
            let _ = done.wait_for(|d| *d).await;
        })
    }

    fn is_alive(&self) -> bool {
        self.engine.is_alive()
    }

    fn profile(&self) -> TransportProfile {
        self.engine.profile()
    }
}

impl Drop for ChildTransport {
    fn drop(&mut self) {
        drop(self.engine.close());
        if let Some(writer) = self.take_writer() {
            writer.abort();
        }
        self.reader.abort();
        self.stderr.abort();
        if !*self.closed.borrow() {
            let _guard = self.span.enter();
            tracing::debug!("dropped without close: killing the server's process group");
            // Only the signal here: the supervisor, which owns the child,
            // reaps it (and hands that to a thread if its runtime goes
            // away first). Waiting here would block whatever thread drops
            // the transport, an async worker included.
            signal(&self.process, Signal::Kill);
        }
    }
}

impl std::fmt::Debug for ChildTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildTransport")
            .field("name", &self.process.name)
            .field("pid", &self.process.pid)
            .field("exit", &self.process.exit_info())
            .field("engine", &self.engine)
            .finish()
    }
}
