//! A server run as a child process, spoken to over its stdin and stdout.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_protocol::{Notification, Request};
use mcp_transport::{
    ConnectionHandlers, Connector, Engine, ExitInfo, GoneInfo, RequestOptions, ResponseFuture,
    Transport, TransportError,
};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::{mpsc, watch};
use tokio::task::{AbortHandle, JoinHandle};
use tokio::time::timeout;
use tracing::Instrument;

use crate::DEFAULT_MAX_MESSAGE_SIZE;
use crate::stderr::{self, StderrCallback, Tail};
use crate::wire::{ReadEnd, read_loop, write_loop};

/// How long [`close`](Transport::close) waits for the server to exit after
/// its stdin is closed, before `SIGTERM` (2 s, as the TypeScript and Python
/// SDKs do).
///
/// ```
/// use std::time::Duration;
/// use mcp_transport_stdio::{DEFAULT_CLOSE_GRACE, DEFAULT_TERM_GRACE, StdioCommand};
///
/// // The worst case of `close`: both graces, then SIGKILL.
/// assert_eq!(DEFAULT_CLOSE_GRACE + DEFAULT_TERM_GRACE, Duration::from_secs(4));
/// let quick = StdioCommand::new("server").close_grace(DEFAULT_CLOSE_GRACE / 4);
/// # let _ = quick;
/// ```
pub const DEFAULT_CLOSE_GRACE: Duration = Duration::from_secs(2);
/// How long [`close`](Transport::close) waits after `SIGTERM` before
/// `SIGKILL`.
///
/// ```
/// let patient = mcp_transport_stdio::StdioCommand::new("server")
///     .term_grace(mcp_transport_stdio::DEFAULT_TERM_GRACE * 5);
/// # let _ = patient;
/// ```
pub const DEFAULT_TERM_GRACE: Duration = Duration::from_secs(2);
/// How long, once the server's exit or the end of its stdout is seen, the
/// transport waits for the rest (exit status, end of stdout, end of
/// stderr) before failing pending requests: the last stderr line is often
/// the only diagnostic.
///
/// ```
/// assert!(mcp_transport_stdio::DEFAULT_EXIT_LINGER.as_millis() <= 100);
/// ```
pub const DEFAULT_EXIT_LINGER: Duration = Duration::from_millis(100);
/// How many bytes of the server's stderr are kept for
/// [`GoneInfo::stderr_tail`].
///
/// ```
/// use mcp_transport_stdio::{DEFAULT_STDERR_TAIL_BYTES, DEFAULT_STDERR_TAIL_LINES, StdioCommand};
/// let more = StdioCommand::new("server")
///     .stderr_tail(4 * DEFAULT_STDERR_TAIL_BYTES, 4 * DEFAULT_STDERR_TAIL_LINES);
/// # let _ = more;
/// ```
pub const DEFAULT_STDERR_TAIL_BYTES: usize = 64 * 1024;
/// How many lines of the server's stderr are kept for
/// [`GoneInfo::stderr_tail`].
///
/// ```
/// assert_eq!(mcp_transport_stdio::DEFAULT_STDERR_TAIL_LINES, 50);
/// ```
pub const DEFAULT_STDERR_TAIL_LINES: usize = 50;
/// The variables [`EnvPolicy::Minimal`] passes on from the caller's
/// environment, as the TypeScript SDK does by default.
///
/// ```
/// # #[cfg(unix)]
/// assert!(mcp_transport_stdio::MINIMAL_ENV_VARS.contains(&"PATH"));
/// ```
#[cfg(not(windows))]
pub const MINIMAL_ENV_VARS: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];
/// The variables [`EnvPolicy::Minimal`] passes on from the caller's
/// environment, as the TypeScript SDK does by default.
#[cfg(windows)]
pub const MINIMAL_ENV_VARS: &[&str] = &[
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
    "PROGRAMFILES",
];

/// How long `SIGKILL` is given to take effect.
const KILL_WAIT: Duration = Duration::from_secs(2);
/// How long close waits for the output readers to see the end of the
/// pipes once the process group is gone (a process outside the group may
/// hold them open).
const DRAIN_WAIT: Duration = Duration::from_millis(200);

/// Which of the caller's environment variables the server inherits. The
/// variables given with [`StdioCommand::env`] are always set on top.
///
/// The default is [`EnvPolicy::Inherit`], what a shell does and what most
/// servers expect (`npx` needs `PATH`, `HOME` and often `npm_config_*`).
/// Choose [`EnvPolicy::Minimal`] to keep secrets in your environment
/// (API keys, tokens) away from third-party servers, as the TypeScript SDK
/// does by default.
///
/// ```
/// use mcp_transport_stdio::{EnvPolicy, StdioCommand};
///
/// let cmd = StdioCommand::new("my-server")
///     .env_policy(EnvPolicy::Minimal)
///     .env("MY_SERVER_TOKEN", "…");
/// # let _ = cmd;
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum EnvPolicy {
    /// Everything the caller has.
    #[default]
    Inherit,
    /// Only [`MINIMAL_ENV_VARS`] (on Unix `HOME`, `LOGNAME`, `PATH`,
    /// `SHELL`, `TERM`, `USER`), skipping values that start with `()`
    /// (exported shell functions).
    Minimal,
    /// Only the named variables, when the caller has them.
    AllowList(Vec<String>),
    /// Nothing: only the variables given with [`StdioCommand::env`].
    Empty,
}

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
///   and reaps the child synchronously: no orphans, no zombies.
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
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    env_policy: EnvPolicy,
    current_dir: Option<PathBuf>,
    name: Option<String>,
    max_message_size: usize,
    close_grace: Duration,
    term_grace: Duration,
    exit_linger: Duration,
    stderr_tail_bytes: usize,
    stderr_tail_lines: usize,
    on_stderr: Option<StderrCallback>,
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

    /// Calls `callback` with each line the server writes to stderr, on the
    /// task that drains it: keep it quick (a slow callback slows the
    /// draining; a panic is caught and logged).
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

    fn command(&self) -> tokio::process::Command {
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
                        "could not start {:?}: {e}",
                        command.program
                    )))
                })
        })
    }
}

/// What the process's tasks share with the transport.
struct Process {
    pid: Option<u32>,
    name: Arc<str>,
    /// True once the child was reaped (or waiting for it failed).
    exited: watch::Sender<bool>,
    exit_info: Mutex<Option<ExitInfo>>,
    tail: Arc<Mutex<Tail>>,
    /// True once stderr reached its end.
    stderr_done: watch::Sender<bool>,
}

impl Process {
    fn set_exit(&self, status: std::io::Result<std::process::ExitStatus>) {
        match status {
            Ok(status) => {
                let info = exit_info(status);
                tracing::debug!(?info, "the server process ended");
                *self.exit_info.lock().unwrap_or_else(|p| p.into_inner()) = info;
            }
            Err(e) => tracing::debug!(error = %e, "waiting for the server process failed"),
        }
        // Whatever is left of its group (grandchildren that outlived it,
        // such as the real server behind a wrapper that died) goes now:
        // right after the reap, when the group id cannot have been reused
        // (it stays reserved while any member lives). Later, it could be.
        #[cfg(unix)]
        if let Some(pid) = self.pid
            && sys::kill_group(pid, libc::SIGKILL)
        {
            tracing::debug!("killed what was left of the server's process group");
        }
        self.exited.send_replace(true);
    }

    fn exit_info(&self) -> Option<ExitInfo> {
        *self.exit_info.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn tail(&self) -> String {
        self.tail
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .snapshot()
    }

    fn has_exited(&self) -> bool {
        *self.exited.borrow()
    }
}

fn exit_info(status: std::process::ExitStatus) -> Option<ExitInfo> {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return Some(ExitInfo::signal(signal));
        }
    }
    status.code().map(ExitInfo::code)
}

/// Why the supervisor should look at the process.
#[derive(Debug)]
enum Cause {
    StdoutClosed,
    ReadFailed(std::io::Error),
    WriteFailed(std::io::Error),
}

impl Cause {
    fn describe(&self) -> String {
        match self {
            Cause::StdoutClosed => "the server closed its stdout".to_owned(),
            Cause::ReadFailed(e) => format!("reading the server's stdout failed: {e}"),
            Cause::WriteFailed(e) => format!("writing to the server's stdin failed: {e}"),
        }
    }
}

/// One running MCP server process: a [`Transport`] over its stdin and
/// stdout. Made by [`StdioCommand::spawn`]; see [`StdioCommand`] for what it
/// guarantees.
///
/// Dropping it without [`close`](Transport::close) kills the server's
/// process group with `SIGKILL` and reaps the server at once, synchronously
/// (no task is spawned: this works during runtime shutdown too).
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
    fn start(command: &StdioCommand, handlers: ConnectionHandlers) -> std::io::Result<Self> {
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
        let (engine, outbound) = Engine::new(handlers);
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

fn spawn_writer(
    stdin: ChildStdin,
    outbound: mcp_transport::OutboundReceiver,
    engine: &Engine,
    causes: mpsc::UnboundedSender<Cause>,
    span: &tracing::Span,
) -> JoinHandle<()> {
    let shutdown = engine.shutdown_token();
    tokio::spawn(
        async move {
            if let Err(e) = write_loop(stdin, outbound, shutdown.clone()).await
                && !shutdown.is_cancelled()
            {
                tracing::warn!(error = %e, "writing to the server's stdin failed");
                let _ = causes.send(Cause::WriteFailed(e));
            }
        }
        .instrument(span.clone()),
    )
}

fn spawn_reader(
    stdout: ChildStdout,
    engine: &Engine,
    max: usize,
    causes: mpsc::UnboundedSender<Cause>,
    span: &tracing::Span,
) -> AbortHandle {
    let engine = engine.clone();
    tokio::spawn(
        async move {
            let cause = match read_loop(stdout, engine, max).await {
                ReadEnd::Eof => Cause::StdoutClosed,
                ReadEnd::Failed(e) => Cause::ReadFailed(e),
            };
            let _ = causes.send(cause);
        }
        .instrument(span.clone()),
    )
    .abort_handle()
}

fn spawn_stderr(
    stderr: ChildStderr,
    process: &Arc<Process>,
    callback: Option<StderrCallback>,
    span: &tracing::Span,
) -> AbortHandle {
    let process = process.clone();
    tokio::spawn(
        async move {
            stderr::drain(stderr, process.tail.clone(), process.name.clone(), callback).await;
            process.stderr_done.send_replace(true);
        }
        .instrument(span.clone()),
    )
    .abort_handle()
}

/// Owns the child: notices its death (exit, stdout's end, a failed write),
/// gathers what is known, fails pending requests, and reaps it.
async fn supervise(
    mut child: Child,
    process: Arc<Process>,
    engine: Engine,
    mut causes: mpsc::UnboundedReceiver<Cause>,
    linger: Duration,
) {
    let mut exited = false;
    let mut stdout_closed = false;
    let reason = tokio::select! {
        status = child.wait() => {
            process.set_exit(status);
            exited = true;
            "the server exited".to_owned()
        }
        Some(cause) = causes.recv() => {
            stdout_closed = matches!(cause, Cause::StdoutClosed | Cause::ReadFailed(_));
            cause.describe()
        }
    };
    // The rest usually follows within milliseconds: the exit status, the
    // answers still in the stdout pipe, the last stderr lines.
    let started = tokio::time::Instant::now();
    let _ = timeout(linger, async {
        if !exited {
            process.set_exit(child.wait().await);
            exited = true;
        }
        while !stdout_closed {
            match causes.recv().await {
                Some(Cause::StdoutClosed | Cause::ReadFailed(_)) | None => stdout_closed = true,
                Some(Cause::WriteFailed(_)) => {}
            }
        }
        let _ = process.stderr_done.subscribe().wait_for(|done| *done).await;
    })
    .await;
    if !engine.shutdown_token().is_cancelled() {
        let exit = process.exit_info();
        // An exit explains the rest (a closed stdout, a broken pipe).
        let reason = if exit.is_some() {
            "the server exited".to_owned()
        } else {
            reason
        };
        let mut info = GoneInfo::new(reason).with_stderr_tail(process.tail());
        if let Some(exit) = exit {
            info = info.with_exit(exit);
        }
        tracing::warn!(
            exit = ?info.exit,
            waited = ?started.elapsed(),
            last_stderr = info.stderr_tail.as_deref().and_then(|t| t.lines().last()),
            "the server is gone: {}",
            info.reason
        );
        engine.peer_gone(info);
    }
    if !exited {
        // It closed its stdout but runs on: reap it when it ends (by close
        // or drop, at the latest).
        process.set_exit(child.wait().await);
    }
}

impl Transport for ChildTransport {
    fn request(&self, request: Request, options: RequestOptions) -> ResponseFuture {
        self.engine.request(request, options)
    }

    fn notify(&self, notification: Notification) -> Result<(), TransportError> {
        self.engine.notify(notification)
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
                    self.kill_now();
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
}

async fn shutdown(
    process: Arc<Process>,
    writer: Option<JoinHandle<()>>,
    readers: [AbortHandle; 2],
    supervisor: AbortHandle,
    close_grace: Duration,
    term_grace: Duration,
    closed: Arc<watch::Sender<bool>>,
) {
    let started = tokio::time::Instant::now();
    // Close stdin: the writer owns it. It may be blocked on a server that
    // does not read; it is abandoned, not waited for.
    if let Some(writer) = writer {
        writer.abort();
        let _ = timeout(Duration::from_millis(100), writer).await;
    }
    let mut exited = process.exited.subscribe();
    let mut how = "on EOF";
    if !wait_exit(&mut exited, close_grace).await {
        how = "on SIGTERM";
        tracing::info!(grace = ?close_grace, "the server did not exit after its stdin was closed; sending SIGTERM to its process group");
        signal(&process, Signal::Term);
        if !wait_exit(&mut exited, term_grace).await {
            how = "on SIGKILL";
            tracing::warn!(grace = ?term_grace, "the server did not exit on SIGTERM; sending SIGKILL to its process group");
            signal(&process, Signal::Kill);
            if !wait_exit(&mut exited, KILL_WAIT).await {
                how = "not at all";
                tracing::error!("the server did not exit on SIGKILL");
            }
        }
    }
    tracing::debug!(elapsed = ?started.elapsed(), "the server exited {how}");
    let mut stderr_done = process.stderr_done.subscribe();
    let _ = timeout(DRAIN_WAIT, stderr_done.wait_for(|d| *d)).await;
    for task in readers {
        task.abort();
    }
    if process.has_exited() {
        supervisor.abort();
    }
    closed.send_replace(true);
}

/// Whether the process was reaped within `limit`.
async fn wait_exit(exited: &mut watch::Receiver<bool>, limit: Duration) -> bool {
    timeout(limit, exited.wait_for(|e| *e))
        .await
        .is_ok_and(|r| r.is_ok())
}

#[derive(Clone, Copy, Debug)]
enum Signal {
    Term,
    Kill,
}

/// Sends `signal` to the server's process group, and to the server itself
/// in case it left the group. Nothing is sent once the server was reaped:
/// its pid, and its group's id once the group is empty, may have been
/// reused by then (and what was left of the group was killed at the reap).
fn signal(process: &Process, signal: Signal) {
    #[cfg(unix)]
    if let (Some(pid), false) = (process.pid, process.has_exited()) {
        let sig = match signal {
            Signal::Term => libc::SIGTERM,
            Signal::Kill => libc::SIGKILL,
        };
        sys::kill_group(pid, sig);
        sys::kill(pid, sig);
    }
}

impl ChildTransport {
    /// Kills the group and reaps the child, synchronously.
    fn kill_now(&self) {
        signal(&self.process, Signal::Kill);
        #[cfg(unix)]
        if let (Some(pid), false) = (self.process.pid, self.process.has_exited()) {
            sys::reap(pid, KILL_WAIT);
        }
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
            self.kill_now();
        }
        self.supervisor.abort();
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

#[cfg(unix)]
mod sys {
    //! The few system calls tokio does not offer: signals to a process
    //! group, and a synchronous reap for `Drop`. `libc` is used for them.

    use std::time::{Duration, Instant};

    fn pid_t(pid: u32) -> Option<libc::pid_t> {
        // 0 and 1 would mean "our own group" and "everyone" to kill(2).
        libc::pid_t::try_from(pid).ok().filter(|p| *p > 1)
    }

    /// `kill(-pgid, sig)`; false when nothing was signalled.
    pub(super) fn kill_group(pgid: u32, sig: libc::c_int) -> bool {
        let Some(pgid) = pid_t(pgid) else {
            return false;
        };
        // SAFETY: kill(2) has no memory-safety preconditions; a negative
        // pid addresses the process group the child leads (it was spawned
        // with process_group(0), so its pgid is its pid, never ours).
        unsafe { libc::kill(-pgid, sig) == 0 }
    }

    /// `kill(pid, sig)`; false when nothing was signalled.
    pub(super) fn kill(pid: u32, sig: libc::c_int) -> bool {
        let Some(pid) = pid_t(pid) else {
            return false;
        };
        // SAFETY: kill(2) has no memory-safety preconditions.
        unsafe { libc::kill(pid, sig) == 0 }
    }

    /// Reaps `pid` with `waitpid`, polling for at most `limit` (a process
    /// stuck in the kernel ignores even `SIGKILL` for a while). Returns
    /// whether it was reaped here or had been already.
    pub(super) fn reap(pid: u32, limit: Duration) -> bool {
        let Some(pid) = pid_t(pid) else {
            return false;
        };
        let deadline = Instant::now() + limit;
        loop {
            let mut status = 0;
            // SAFETY: `status` is a valid, writable c_int for the call.
            let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            if r == pid {
                return true;
            }
            if r < 0 {
                let err = std::io::Error::last_os_error();
                if err.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                // ECHILD: tokio's reaper got it first.
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}
