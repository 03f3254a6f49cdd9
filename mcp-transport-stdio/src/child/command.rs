//! [`StdioCommand`]: how to start a server, and the settings of the
//! transport that speaks to it.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_transport::{ConnectionHandlers, Connector, GoneInfo, Transport, TransportError};

use super::env::{EnvPolicy, MINIMAL_ENV_VARS};
use super::transport::ChildTransport;
use super::{
    DEFAULT_CLOSE_GRACE, DEFAULT_EXIT_LINGER, DEFAULT_STDERR_TAIL_BYTES, DEFAULT_STDERR_TAIL_LINES,
    DEFAULT_TERM_GRACE,
};
use crate::DEFAULT_MAX_MESSAGE_SIZE;
use crate::stderr::StderrCallback;

/// How to start an MCP server as a child process, and the settings of the
/// [`ChildTransport`] that speaks to it. It is also a [`Connector`]: each
/// `connect` starts the command again (the client's era probe needs that
/// for servers that exit on an unknown request before `initialize`).
///
/// What the transport guarantees:
///
/// * **stderr is always drained**, so a chatty server never blocks on a
///   full pipe. The last [`DEFAULT_STDERR_TAIL_LINES`] lines (at most
///   [`DEFAULT_STDERR_TAIL_BYTES`]) are kept; every line is forwarded to
///   `tracing` (target [`STDERR_TARGET`](crate::STDERR_TARGET), field
///   `server` = the [name](Self::name)) and to [`on_stderr`](Self::on_stderr).
/// * **Death is noticed at once.** When the process exits or closes its
///   stdout, every pending request fails with [`TransportError::ServerGone`]
///   carrying the exit status and the stderr tail (after waiting at most
///   [`exit_linger`](Self::exit_linger) for the last of them), and
///   [`is_alive`](Transport::is_alive) turns false.
/// * **Nothing waits on the server reading its stdin.** Writes happen on a
///   task of their own; requests end at their timeout; `close` abandons a
///   blocked writer.
/// * **Shutdown as the spec says**, bounded in time: close stdin, wait
///   [`close_grace`](Self::close_grace), `SIGTERM`, wait
///   [`term_grace`](Self::term_grace), `SIGKILL`. Signals go to the whole
///   process group: the server is started in a group of its own, so
///   grandchildren (the real server behind `npx`, `uvx` or a shell script)
///   go too, and any left after the server itself exited are killed.
///   Dropping the transport without `close` kills the group with `SIGKILL`
///   and returns at once; the child is reaped by the transport's own task
///   (or, when its runtime is gone, a small thread): no orphans, no
///   zombies, and no thread blocked waiting.
/// * **Cancellation** goes on the wire as `notifications/cancelled`.
/// * The [environment](EnvPolicy) is inherited by default.
///
/// Child processes are supported on Unix; elsewhere [`spawn`](Self::spawn)
/// fails with [`std::io::ErrorKind::Unsupported`] for now.
///
/// ```no_run
/// use mcp_protocol::Request;
/// use mcp_transport::{ConnectionHandlers, RequestOptions, Transport};
/// use mcp_transport_stdio::StdioCommand;
/// use std::time::Duration;
///
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let transport = StdioCommand::new("npx")
///     .args(["-y", "@modelcontextprotocol/server-everything"])
///     .env("DEBUG", "1")
///     .current_dir("/tmp")
///     .name("everything")
///     .on_stderr(|line| eprintln!("[everything] {line}"))
///     .spawn(ConnectionHandlers::discard())?;
/// let options = RequestOptions::new().timeout(Duration::from_secs(30));
/// let result = transport
///     .request(Request::new(1, "server/discover", None), options)
///     .await;
/// println!("{result:?}");
/// transport.close().await;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct StdioCommand {
    pub(super) program: OsString,
    pub(super) args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    env_policy: EnvPolicy,
    current_dir: Option<PathBuf>,
    name: Option<String>,
    pub(super) max_message_size: usize,
    pub(super) close_grace: Duration,
    pub(super) term_grace: Duration,
    pub(super) exit_linger: Duration,
    pub(super) stderr_tail_bytes: usize,
    pub(super) stderr_tail_lines: usize,
    pub(super) on_stderr: Option<StderrCallback>,
}

impl StdioCommand {
    /// A command running `program` (looked up in `PATH` as
    /// [`std::process::Command`] does), with the defaults.
    ///
    /// ```
    /// let cmd = mcp_transport_stdio::StdioCommand::new("uvx");
    /// assert_eq!(cmd.get_name(), "uvx");
    /// ```
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        StdioCommand {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            env: Vec::new(),
            env_policy: EnvPolicy::default(),
            current_dir: None,
            name: None,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            close_grace: DEFAULT_CLOSE_GRACE,
            term_grace: DEFAULT_TERM_GRACE,
            exit_linger: DEFAULT_EXIT_LINGER,
            stderr_tail_bytes: DEFAULT_STDERR_TAIL_BYTES,
            stderr_tail_lines: DEFAULT_STDERR_TAIL_LINES,
            on_stderr: None,
        }
    }

    /// Adds an argument.
    ///
    /// ```
    /// let cmd = mcp_transport_stdio::StdioCommand::new("python").arg("server.py");
    /// # let _ = cmd;
    /// ```
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Adds arguments.
    ///
    /// ```
    /// let cmd = mcp_transport_stdio::StdioCommand::new("npx")
    ///     .args(["-y", "@modelcontextprotocol/server-everything"]);
    /// # let _ = cmd;
    /// ```
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Sets an environment variable for the server, whatever the
    /// [`EnvPolicy`].
    ///
    /// ```
    /// let cmd = mcp_transport_stdio::StdioCommand::new("server").env("LOG_LEVEL", "debug");
    /// # let _ = cmd;
    /// ```
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Sets several environment variables.
    ///
    /// ```
    /// let cmd = mcp_transport_stdio::StdioCommand::new("server")
    ///     .envs([("A", "1"), ("B", "2")]);
    /// # let _ = cmd;
    /// ```
    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        for (k, v) in vars {
            self = self.env(k, v);
        }
        self
    }

    /// Which of the caller's variables the server inherits; see
    /// [`EnvPolicy`]. Default: all of them.
    ///
    /// ```
    /// use mcp_transport_stdio::{EnvPolicy, StdioCommand};
    /// let cmd = StdioCommand::new("server").env_policy(EnvPolicy::AllowList(vec!["PATH".into()]));
    /// # let _ = cmd;
    /// ```
    pub fn env_policy(mut self, policy: EnvPolicy) -> Self {
        self.env_policy = policy;
        self
    }

    /// The server's working directory (default: the caller's).
    ///
    /// ```
    /// let cmd = mcp_transport_stdio::StdioCommand::new("server").current_dir("/srv");
    /// # let _ = cmd;
    /// ```
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.current_dir = Some(dir.as_ref().to_owned());
        self
    }

    /// A name for the server in logs, tracing spans and forwarded stderr
    /// (default: the program's file name).
    ///
    /// ```
    /// let cmd = mcp_transport_stdio::StdioCommand::new("npx").name("everything");
    /// assert_eq!(cmd.get_name(), "everything");
    /// ```
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The name used for the server.
    ///
    /// ```
    /// let cmd = mcp_transport_stdio::StdioCommand::new("/usr/bin/server");
    /// assert_eq!(cmd.get_name(), "server");
    /// ```
    pub fn get_name(&self) -> String {
        match &self.name {
            Some(n) => n.clone(),
            None => Path::new(&self.program)
                .file_name()
                .unwrap_or(&self.program)
                .to_string_lossy()
                .into_owned(),
        }
    }

    /// The longest message read from the server's stdout, in bytes
    /// (default [`DEFAULT_MAX_MESSAGE_SIZE`], 128 MiB); see
    /// [`StreamTransport`](crate::StreamTransport) for what happens to
    /// longer ones.
    ///
    /// ```
    /// let cmd = mcp_transport_stdio::StdioCommand::new("server").max_message_size(16 << 20);
    /// # let _ = cmd;
    /// ```
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes;
        self
    }

    /// How long `close` waits for the server to exit once its stdin is
    /// closed, before `SIGTERM` (default [`DEFAULT_CLOSE_GRACE`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// let cmd = mcp_transport_stdio::StdioCommand::new("server")
    ///     .close_grace(Duration::from_millis(500));
    /// # let _ = cmd;
    /// ```
    pub fn close_grace(mut self, grace: Duration) -> Self {
        self.close_grace = grace;
        self
    }

    /// How long `close` waits after `SIGTERM` before `SIGKILL` (default
    /// [`DEFAULT_TERM_GRACE`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// let cmd = mcp_transport_stdio::StdioCommand::new("server")
    ///     .term_grace(Duration::from_millis(500));
    /// # let _ = cmd;
    /// ```
    pub fn term_grace(mut self, grace: Duration) -> Self {
        self.term_grace = grace;
        self
    }

    /// How long, once the server's exit or the end of its stdout is seen,
    /// to wait for the rest (exit status, stdout's end, stderr's last
    /// lines) before failing pending requests (default
    /// [`DEFAULT_EXIT_LINGER`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// let cmd = mcp_transport_stdio::StdioCommand::new("server")
    ///     .exit_linger(Duration::from_millis(50));
    /// # let _ = cmd;
    /// ```
    pub fn exit_linger(mut self, linger: Duration) -> Self {
        self.exit_linger = linger;
        self
    }

    /// How much of the server's stderr to keep: at most `lines` lines and
    /// `bytes` bytes (defaults [`DEFAULT_STDERR_TAIL_LINES`],
    /// [`DEFAULT_STDERR_TAIL_BYTES`]).
    ///
    /// ```
    /// let cmd = mcp_transport_stdio::StdioCommand::new("server").stderr_tail(16 * 1024, 20);
    /// # let _ = cmd;
    /// ```
    pub fn stderr_tail(mut self, bytes: usize, lines: usize) -> Self {
        self.stderr_tail_bytes = bytes;
        self.stderr_tail_lines = lines;
        self
    }

    /// Calls `callback` with each line the server writes to stderr, in
    /// order, on a thread of its own (one per server): the drain never
    /// waits for it, so even a callback that blocks cannot stall the
    /// server. When it falls more than 4 MiB of lines behind, the oldest
    /// waiting lines are dropped, counted and warned about (the tail and
    /// `tracing` still get every line). A panic is caught and logged.
    ///
    /// ```
    /// let cmd = mcp_transport_stdio::StdioCommand::new("server")
    ///     .on_stderr(|line| eprintln!("[server] {line}"));
    /// # let _ = cmd;
    /// ```
    pub fn on_stderr(mut self, callback: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_stderr = Some(Arc::new(callback));
        self
    }

    /// Starts the server and the transport speaking to it; inbound traffic
    /// goes to `handlers`. Must be called inside a tokio runtime.
    ///
    /// Fails when the program cannot be started (not found, not
    /// executable), and on platforms other than Unix for now.
    ///
    /// ```no_run
    /// # #[tokio::main]
    /// # async fn main() -> std::io::Result<()> {
    /// use mcp_transport::{ConnectionHandlers, Listener, Transport};
    ///
    /// let (listener, _notifications) = Listener::channel(1024);
    /// let transport = mcp_transport_stdio::StdioCommand::new("my-server")
    ///     .spawn(ConnectionHandlers::new(listener))?;
    /// println!("started {:?}", transport.pid());
    /// transport.close().await;
    /// # Ok(())
    /// # }
    /// ```
    pub fn spawn(&self, handlers: ConnectionHandlers) -> std::io::Result<ChildTransport> {
        #[cfg(not(unix))]
        {
            let _ = handlers;
            Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "mcp-transport-stdio: child-process servers are not supported on this \
                 platform yet (Unix only); start the process yourself and use \
                 StreamTransport over its pipes",
            ))
        }
        #[cfg(unix)]
        {
            ChildTransport::start(self, handlers)
        }
    }

    pub(super) fn command(&self) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.args(&self.args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            // The transport kills and reaps the process group itself.
            .kill_on_drop(false);
        let inherit = |cmd: &mut tokio::process::Command, names: &mut dyn Iterator<Item = &str>| {
            cmd.env_clear();
            for name in names {
                if let Some(value) = std::env::var_os(name)
                    && !value.to_string_lossy().starts_with("()")
                {
                    cmd.env(name, value);
                }
            }
        };
        match &self.env_policy {
            EnvPolicy::Inherit => {}
            EnvPolicy::Minimal => inherit(&mut cmd, &mut MINIMAL_ENV_VARS.iter().copied()),
            EnvPolicy::AllowList(names) => inherit(&mut cmd, &mut names.iter().map(String::as_str)),
            EnvPolicy::Empty => {
                cmd.env_clear();
            }
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        if let Some(dir) = &self.current_dir {
            cmd.current_dir(dir);
        }
        // A group of its own, so that signals reach grandchildren too.
        #[cfg(unix)]
        cmd.process_group(0);
        cmd
    }
}

impl std::fmt::Debug for StdioCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioCommand")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("env", &self.env.iter().map(|(k, _)| k).collect::<Vec<_>>())
            .field("env_policy", &self.env_policy)
            .field("current_dir", &self.current_dir)
            .field("name", &self.get_name())
            .field("max_message_size", &self.max_message_size)
            .field("close_grace", &self.close_grace)
            .field("term_grace", &self.term_grace)
            .field("exit_linger", &self.exit_linger)
            .field("stderr_tail_bytes", &self.stderr_tail_bytes)
            .field("stderr_tail_lines", &self.stderr_tail_lines)
            .field("on_stderr", &self.on_stderr.is_some())
            .finish()
    }
}

impl Connector for StdioCommand {
    /// Starts the command again. A failure to start is
    /// [`TransportError::ServerGone`] whose reason names the program and
    /// the OS error.
    fn connect(
        &self,
        handlers: ConnectionHandlers,
    ) -> BoxFuture<'static, Result<Arc<dyn Transport>, TransportError>> {
        let command = self.clone();
        Box::pin(async move {
            command
                .spawn(handlers)
                .map(|t| Arc::new(t) as Arc<dyn Transport>)
                .map_err(|e| {
                    TransportError::gone(GoneInfo::new(format!(
                        "could not start {:?}: {e}{}",
                        command.program,
                        next_step(&e)
                    )))
                })
        })
    }
}

/// What to do when a command does not start, for the failures with an
/// obvious next step.
fn next_step(error: &std::io::Error) -> &'static str {
    match error.kind() {
        std::io::ErrorKind::NotFound => {
            "; is it installed, and on the PATH the client runs with (or give its full path)?"
        }
        std::io::ErrorKind::PermissionDenied => "; is the file executable?",
        _ => "",
    }
}
