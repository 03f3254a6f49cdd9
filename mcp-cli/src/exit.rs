//! Exit codes, and the error every command fails with.

use std::fmt;
use std::process::ExitCode;

use mcp_client::transport::TransportError;
use mcp_client::{ClientError, ErrorKind};

/// The exit codes, as `--help` shows them (keep in step with [`Failure`]).
pub(crate) const EXIT_CODES_HELP: &str = "\
Exit codes:
  0    success (a tool result with isError: true is a result too)
  1    the server answered with an error, or an answer that breaks the protocol
  2    usage: bad command line or arguments
  3    connection: the server could not be started or reached, or went away
  4    timeout: no answer in time (see --timeout)
  130  interrupted (Ctrl-C): the call was cancelled and the server stopped";

/// Why a command failed, which decides the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The server answered with an error (exit 1).
    Server,
    /// Bad command line or arguments (exit 2).
    Usage,
    /// The server could not be reached or went away (exit 3).
    Connection,
    /// No answer in time (exit 4).
    Timeout,
    /// Ctrl-C (exit 130).
    Interrupted,
}

impl Kind {
    /// The process exit code.
    pub(crate) fn code(self) -> u8 {
        match self {
            Kind::Server => 1,
            Kind::Usage => 2,
            Kind::Connection => 3,
            Kind::Timeout => 4,
            Kind::Interrupted => 130,
        }
    }
}

/// A failed command: its kind, a message, and hints for the person.
#[derive(Debug)]
pub(crate) struct Failure {
    /// Which kind of failure (the exit code).
    pub(crate) kind: Kind,
    /// What went wrong, in one line.
    pub(crate) message: String,
    /// What to try, or more detail, one line each.
    pub(crate) hints: Vec<String>,
}

impl Failure {
    /// A failure of `kind`.
    pub(crate) fn new(kind: Kind, message: impl Into<String>) -> Self {
        Failure {
            kind,
            message: message.into(),
            hints: Vec::new(),
        }
    }

    /// A usage error (exit 2).
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Failure::new(Kind::Usage, message)
    }

    /// Ctrl-C (exit 130).
    pub(crate) fn interrupted() -> Self {
        Failure::new(
            Kind::Interrupted,
            "interrupted: the call was cancelled and the server stopped",
        )
    }

    /// Adds a line of advice or detail.
    pub(crate) fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    /// A failure to connect: whatever went wrong, the kind is connection,
    /// and a dead server's stderr tail is shown.
    pub(crate) fn connecting(error: ClientError) -> Self {
        let mut failure = Failure::from(error.clone());
        failure.kind = Kind::Connection;
        failure.message = format!("could not connect: {}", failure.message);
        failure
    }

    /// Prints the failure to stderr and gives the exit code.
    pub(crate) fn report(&self) -> ExitCode {
        match self.kind {
            Kind::Interrupted => say!("mcp: {self}"),
            _ => say!("mcp: error: {self}"),
        }
        for hint in &self.hints {
            say!("  {hint}");
        }
        ExitCode::from(self.kind.code())
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<ClientError> for Failure {
    fn from(error: ClientError) -> Self {
        let kind = match error.kind() {
            ErrorKind::Usage { .. } => Kind::Usage,
            ErrorKind::Negotiation { .. } => Kind::Connection,
            ErrorKind::Transport(TransportError::Timeout { .. }) => Kind::Timeout,
            ErrorKind::Transport(TransportError::Cancelled) => Kind::Interrupted,
            ErrorKind::Transport(_) => Kind::Connection,
            _ => Kind::Server,
        };
        let mut failure = Failure::new(kind, error.to_string());
        if let ErrorKind::Server { code, data, .. } = error.kind() {
            if *code == -32021 {
                failure = missing_capabilities(failure, data.as_ref());
            }
            if let Some(data) = data {
                failure = failure.hint(format!("error data: {data}"));
            }
        }
        if kind == Kind::Timeout {
            failure = failure.hint("give it longer with --timeout SECS");
        }
        if let Some(TransportError::ServerGone(gone)) = error.transport_error()
            && let Some(tail) = &gone.stderr_tail
        {
            failure = failure.hint("the server's last stderr lines:");
            for line in tail.trim_end().lines() {
                failure = failure.hint(format!("  | {line}"));
            }
        }
        failure
    }
}

/// Says how to offer each client capability a server asked for (`-32021`).
fn missing_capabilities(mut failure: Failure, data: Option<&serde_json::Value>) -> Failure {
    let required = data
        .and_then(|d| d.get("requiredCapabilities"))
        .and_then(|r| r.as_object());
    let names: Vec<&str> = match required {
        Some(r) => r.keys().map(String::as_str).collect(),
        None => vec!["elicitation", "sampling", "roots"],
    };
    for name in names {
        let hint = match name {
            "elicitation" => {
                "the server asks for elicitation: run on a terminal, or answer with \
                 --elicit-json JSON"
            }
            "sampling" => {
                "the server asks for sampling: this CLI has no language model; \
                 --sampling-echo answers with an echo, for testing"
            }
            "roots" => "the server asks for roots: offer directories with --root PATH",
            _ => continue,
        };
        failure = failure.hint(hint);
    }
    failure
}

/// The result of a command.
pub(crate) type Outcome<T = ()> = Result<T, Failure>;
