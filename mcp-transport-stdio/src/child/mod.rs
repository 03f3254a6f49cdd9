//! A server run as a child process, spoken to over its stdin and stdout.
//!
//! * `command`: [`StdioCommand`], how to start the server, and the
//!   transport's settings; it is also the
//!   [`Connector`](mcp_transport::Connector) that starts it again.
//! * `env`: [`EnvPolicy`], which of the caller's variables the server
//!   inherits.
//! * `transport`: [`ChildTransport`], the running server, and what happens
//!   when it is dropped.
//! * `process`: what the process's tasks share, and the tasks themselves
//!   (stdin writer, stdout reader, stderr drain, the supervisor that
//!   notices the server's death).
//! * `shutdown`: the close sequence (stdin closed, grace, `SIGTERM`,
//!   grace, `SIGKILL`, to the whole process group).
//! * `sys` (Unix): the few system calls tokio does not offer.

use std::time::Duration;

mod command;
mod env;
mod process;
mod shutdown;
#[cfg(unix)]
mod sys;
mod transport;

pub use command::StdioCommand;
pub use env::{EnvPolicy, MINIMAL_ENV_VARS};
pub use transport::ChildTransport;

/// How long [`close`](mcp_transport::Transport::close) waits for the
/// server to exit after its stdin is closed, before `SIGTERM` (2 s, as the
/// TypeScript and Python SDKs do).
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
/// How long [`close`](mcp_transport::Transport::close) waits after
/// `SIGTERM` before `SIGKILL`.
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
/// [`GoneInfo::stderr_tail`](mcp_transport::GoneInfo::stderr_tail).
///
/// ```
/// use mcp_transport_stdio::{DEFAULT_STDERR_TAIL_BYTES, DEFAULT_STDERR_TAIL_LINES, StdioCommand};
/// let more = StdioCommand::new("server")
///     .stderr_tail(4 * DEFAULT_STDERR_TAIL_BYTES, 4 * DEFAULT_STDERR_TAIL_LINES);
/// # let _ = more;
/// ```
pub const DEFAULT_STDERR_TAIL_BYTES: usize = 64 * 1024;
/// How many lines of the server's stderr are kept for
/// [`GoneInfo::stderr_tail`](mcp_transport::GoneInfo::stderr_tail).
///
/// ```
/// assert_eq!(mcp_transport_stdio::DEFAULT_STDERR_TAIL_LINES, 50);
/// ```
pub const DEFAULT_STDERR_TAIL_LINES: usize = 50;
