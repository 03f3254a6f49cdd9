//! What the runner works with: servers, era modes, the command line, results,
//! and what a connection's callbacks saw.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::protocol::Era;
use mcp_client::protocol::types::ElicitRequestParams;
use mcp_client::{EraMode, Reached, ServerEvent, Verdict};
use tokio::sync::Notify;

/// The checks, in the order they run on each connection.
pub(crate) const CHECKS: &[&str] = &[
    "connect",
    "list-tools",
    "echo",
    "elicitation",
    "progress",
    "resource",
    "prompt",
    "list-changed",
    "roots",
    "errors",
    "concurrent",
    "cancel",
    "close",
];

/// How long one check may take before it counts as hung.
pub(crate) const CHECK_LIMIT: Duration = Duration::from_secs(30);

/// The root the client offers; servers must hand it back.
pub(crate) const ROOT_URI: &str = "file:///tmp/mcp-interop-root";

/// What the Python server's `interop://text` holds (see python_server.py).
pub(crate) const PY_TEXT: &str = "interop text: héllo wörld ✓ 🦀\nsecond line\n";

/// Which server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `xtask/interop/python_server.py`, on the Python SDK.
    Python,
    /// `@modelcontextprotocol/server-everything`.
    Everything,
}

impl Kind {
    /// The server's name in the table and on the command line.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Kind::Python => "python",
            Kind::Everything => "everything",
        }
    }

    /// The era a server really speaks over `wire`, which `Auto` must find.
    pub(crate) fn native_era(self, wire: Wire) -> Era {
        if self.speaks_modern(wire) {
            Era::Modern
        } else {
            Era::Legacy
        }
    }

    /// Whether the server speaks the modern era at all over `wire` (no
    /// server speaks it over the 2024-11-05 HTTP+SSE transport).
    pub(crate) fn speaks_modern(self, wire: Wire) -> bool {
        self == Kind::Python && wire != Wire::Sse
    }

    /// How `Auto` must find this server's era over `wire`.
    pub(crate) fn auto_reached(self, wire: Wire) -> Reached {
        match (self, wire) {
            (Kind::Python, Wire::Sse) => Reached::LegacyAfterProbeError { code: 405 },
            (Kind::Python, _) => Reached::Discover,
            // Its Streamable HTTP front refuses any first POST that is not
            // `initialize` with 400 and -32000; its SSE front has no POST
            // route at /sse.
            (Kind::Everything, Wire::Stdio) => Reached::LegacyAfterProbeError { code: -32601 },
            (Kind::Everything, Wire::Http | Wire::HttpStateless) => {
                Reached::LegacyAfterProbeError { code: -32000 }
            }
            (Kind::Everything, Wire::Sse) => Reached::LegacyAfterProbeError { code: 404 },
        }
    }

    /// What a client pinned to modern must find in the evidence of its
    /// `NotModern` error, for a server that does not speak modern.
    pub(crate) fn not_modern_evidence(self, wire: Wire) -> &'static str {
        match (self, wire) {
            (_, Wire::Stdio) => "-32601",
            (Kind::Everything, Wire::Http | Wire::HttpStateless) => "-32000",
            (Kind::Everything, Wire::Sse) => "404",
            (Kind::Python, _) => "405",
        }
    }
}

impl Kind {
    /// Why the server cannot take part in `check` over `wire` in `era`,
    /// if it cannot.
    pub(crate) fn cannot(self, wire: Wire, era: Era, check: &str) -> Option<&'static str> {
        match (self, wire, era, check) {
            // No session: the SDK refuses to send a request to the client
            // ("no back-channel for server-initiated requests").
            (Kind::Python, Wire::HttpStateless, Era::Legacy, "elicitation" | "roots") => {
                Some("a stateless legacy server cannot send requests to the client")
            }
            // Nor has it a stream for a notification tied to no request.
            (Kind::Python, Wire::HttpStateless, Era::Legacy, "list-changed") => {
                Some("a stateless legacy server has no stream for notifications of its own")
            }
            // It sends tools/list_changed as it takes notifications/initialized,
            // before a client can have opened its GET stream, and keeps it
            // only for a stream resumed with Last-Event-ID.
            (Kind::Everything, Wire::Http, _, "list-changed") => Some(
                "server-everything sends its only list change before the GET stream can be open",
            ),
            _ => None,
        }
    }
}

/// How the client reaches a server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Wire {
    /// A child process, over stdin and stdout.
    #[default]
    Stdio,
    /// Streamable HTTP, with legacy sessions.
    Http,
    /// Streamable HTTP, each legacy POST on its own (no session, so no
    /// server-to-client requests and no GET stream).
    HttpStateless,
    /// The 2024-11-05 HTTP+SSE transport (legacy only).
    Sse,
}

impl Wire {
    /// Every wire, in the order the tables show them.
    pub(crate) const ALL: [Wire; 4] = [Wire::Stdio, Wire::Http, Wire::HttpStateless, Wire::Sse];

    /// The wire's name in the table and on the command line.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Wire::Stdio => "stdio",
            Wire::Http => "http",
            Wire::HttpStateless => "http-stateless",
            Wire::Sse => "sse",
        }
    }

    /// Whether this is one of the HTTP transports.
    pub(crate) fn is_http(self) -> bool {
        self != Wire::Stdio
    }
}

/// How the client is told to find the era.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Pinned to the legacy era.
    Legacy,
    /// Pinned to the modern era.
    Modern,
    /// Probed: the client finds the era.
    Auto,
}

impl Mode {
    /// Every mode, in the order the columns run.
    pub(crate) const ALL: [Mode; 3] = [Mode::Legacy, Mode::Modern, Mode::Auto];

    /// The mode's name in the table and on the command line.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Mode::Legacy => "legacy",
            Mode::Modern => "modern",
            Mode::Auto => "auto",
        }
    }

    /// The client's setting for this mode.
    pub(crate) fn era_mode(self) -> EraMode {
        match self {
            Mode::Legacy => EraMode::Legacy,
            Mode::Modern => EraMode::Modern,
            Mode::Auto => EraMode::Auto,
        }
    }
}

/// A server to start, and how.
pub(crate) struct Target {
    /// Which server this is.
    pub(crate) kind: Kind,
    /// How it is reached.
    pub(crate) wire: Wire,
    /// The program to run.
    pub(crate) program: OsString,
    /// Its arguments before the transport's (the script or entry point).
    pub(crate) args: Vec<OsString>,
    /// A server already listening (`--url`): nothing is started.
    pub(crate) url: Option<String>,
    /// server-everything's `docs/` folder, whose files are its resources.
    pub(crate) docs: Option<PathBuf>,
}

/// The command line.
pub(crate) struct Options {
    /// The servers to run, in order.
    pub(crate) targets: Vec<Target>,
    /// The era modes to run each server in, in order.
    pub(crate) modes: Vec<Mode>,
    /// Where to write each connection's traffic, if anywhere.
    pub(crate) wire_log: Option<PathBuf>,
    /// A Python to run `wiretap.py` with, and where that script is.
    pub(crate) tap: Option<(OsString, PathBuf)>,
}

/// How one check went.
pub(crate) enum Outcome {
    /// Passed, with what was seen.
    Pass(String),
    /// Failed, with why.
    Fail(String),
    /// Does not apply to this column, with why.
    NotApplicable(String),
}

/// One cell of the table.
pub(crate) struct Cell {
    /// How the check went.
    pub(crate) outcome: Outcome,
    /// How long it took.
    pub(crate) elapsed: Duration,
}

/// One connection's results: a column of the table.
pub(crate) struct Column {
    /// The server.
    pub(crate) kind: Kind,
    /// How it was reached.
    pub(crate) wire: Wire,
    /// The era mode the client ran in.
    pub(crate) mode: Mode,
    /// The era the client settled on, when it connected.
    pub(crate) verdict: Option<Verdict>,
    /// Each check's name and result, in the order they ran.
    pub(crate) cells: Vec<(&'static str, Cell)>,
    /// The server's last lines of stderr.
    pub(crate) stderr_tail: Vec<String>,
}

/// What a connection's callbacks saw.
#[derive(Clone, Default)]
pub(crate) struct Seen {
    /// Every server event, in arrival order.
    pub(crate) events: Arc<Mutex<Vec<ServerEvent>>>,
    /// Woken whenever an event arrives.
    pub(crate) event_arrived: Arc<Notify>,
    /// Every elicitation the handler was asked.
    pub(crate) elicitations: Arc<Mutex<Vec<ElicitRequestParams>>>,
    /// The server's last 40 lines of stderr.
    pub(crate) stderr: Arc<Mutex<VecDeque<String>>>,
    /// The wire log of the connection, when it goes through the wire tap.
    pub(crate) wire_log: Option<PathBuf>,
    /// How the connection reaches the server.
    pub(crate) wire: Wire,
}

impl Seen {
    /// Whether a line of the server's stderr (of the last 40) contains `text`.
    pub(crate) fn stderr_has(&self, text: &str) -> bool {
        self.stderr.lock().unwrap().iter().any(|l| l.contains(text))
    }

    /// The messages of the wire log so far, each with its direction (`>`
    /// from the client, `<` from the server) and milliseconds since the
    /// start.
    pub(crate) fn wire(&self) -> Vec<(f64, char, serde_json::Value)> {
        let Some(path) = &self.wire_log else {
            return Vec::new();
        };
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| {
                let (stamp, rest) = line.trim_start().split_once(' ')?;
                let (dir, json) = rest.split_once(' ')?;
                let dir = dir.chars().next().filter(|d| *d == '>' || *d == '<')?;
                Some((stamp.parse().ok()?, dir, serde_json::from_str(json).ok()?))
            })
            .collect()
    }

    /// The events seen so far.
    pub(crate) fn events(&self) -> Vec<ServerEvent> {
        self.events.lock().unwrap().clone()
    }

    /// Waits until an event matching `want` has been seen (also one seen
    /// before the call).
    pub(crate) async fn wait_event(
        &self,
        limit: Duration,
        want: impl Fn(&ServerEvent) -> bool,
    ) -> Option<ServerEvent> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let arrived = self.event_arrived.notified();
            if let Some(e) = self.events().into_iter().find(|e| want(e)) {
                return Some(e);
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                return None;
            }
        }
    }
}

/// What a check gives: what it saw when it passed, or why it failed.
pub(crate) type Check = Result<String, String>;
