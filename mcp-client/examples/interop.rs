//! Runs the client against real MCP servers over stdio, through the public
//! API only, and prints a table of server × era × check with timings.
//!
//! `cargo xtask interop` installs the servers (pinned, into `.cache/interop`)
//! and runs this. By hand, after one `cargo xtask interop`:
//!
//! ```text
//! cargo run -p mcp-client --example interop -- \
//!     --node node --everything .cache/interop/npm \
//!     --python .cache/interop/venv/bin/python --script interop/python_server.py
//! ```
//!
//! Options: `--only python|everything`, `--mode legacy|modern|auto` (each
//! repeatable), `--wire-log DIR` (every connection's traffic, through
//! `interop/wiretap.py`, into `DIR/<server>-<mode>.log`).
//!
//! Servers:
//!
//! * `@modelcontextprotocol/server-everything` (legacy era only: it answers
//!   `server/discover` with `-32601`). It sends `tools/list_changed` right
//!   after `initialized`, asks for roots 350 ms later, and keeps sending
//!   progress for a call that was cancelled.
//! * `interop/python_server.py` on the Python SDK (`mcp==2.3.0`), which
//!   speaks both eras.
//!
//! For each server and each era mode (pinned legacy, pinned modern, auto),
//! one connection runs every check; each check compares real results. The
//! process exits non-zero when a check fails. Pinned modern against a
//! legacy-only server must fail to connect with a typed error; its other
//! checks are "n/a".

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_client::handlers::{HandlerError, elicitation_fn};
use mcp_client::protocol::types::{
    CallToolRequestParams, CallToolResult, ContentBlock, ElicitAction, ElicitRequestParams,
    ElicitResult, ReadResourceResult, ResourceContents, Root,
};
use mcp_client::protocol::{Era, ProtocolVersion};
use mcp_client::transport::{CancellationToken, TransportError};
use mcp_client::{
    CallOptions, Client, ClientError, EraMode, ErrorKind, Reached, ServerEvent, Verdict, Watch,
};
use mcp_transport_stdio::StdioCommand;
use serde_json::{Map, Value, json};
use tokio::sync::Notify;

/// The checks, in the order they run on each connection.
const CHECKS: &[&str] = &[
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
const CHECK_LIMIT: Duration = Duration::from_secs(30);

/// The root the client offers; servers must hand it back.
const ROOT_URI: &str = "file:///tmp/mcp-interop-root";

/// What the Python server's `interop://text` holds (see python_server.py).
const PY_TEXT: &str = "interop text: héllo wörld ✓ 🦀\nsecond line\n";

/// Which server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Python,
    Everything,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Python => "python",
            Kind::Everything => "everything",
        }
    }

    /// The era a server really speaks, which `Auto` must find.
    fn native_era(self) -> Era {
        match self {
            Kind::Python => Era::Modern,
            Kind::Everything => Era::Legacy,
        }
    }

    /// Whether the server speaks the modern era at all.
    fn speaks_modern(self) -> bool {
        self == Kind::Python
    }
}

/// How the client is told to find the era.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Legacy,
    Modern,
    Auto,
}

impl Mode {
    const ALL: [Mode; 3] = [Mode::Legacy, Mode::Modern, Mode::Auto];

    fn label(self) -> &'static str {
        match self {
            Mode::Legacy => "legacy",
            Mode::Modern => "modern",
            Mode::Auto => "auto",
        }
    }

    fn era_mode(self) -> EraMode {
        match self {
            Mode::Legacy => EraMode::Legacy,
            Mode::Modern => EraMode::Modern,
            Mode::Auto => EraMode::Auto,
        }
    }
}

/// A server to start, and how.
struct Target {
    kind: Kind,
    program: OsString,
    args: Vec<OsString>,
    /// server-everything's `docs/` folder, whose files are its resources.
    docs: Option<PathBuf>,
}

/// The command line.
struct Options {
    targets: Vec<Target>,
    modes: Vec<Mode>,
    wire_log: Option<PathBuf>,
    /// A Python to run `wiretap.py` with, and where that script is.
    tap: Option<(OsString, PathBuf)>,
}

/// How one check went.
enum Outcome {
    Pass(String),
    Fail(String),
    NotApplicable(String),
}

/// One cell of the table.
struct Cell {
    outcome: Outcome,
    elapsed: Duration,
}

/// One connection's results: a column of the table.
struct Column {
    kind: Kind,
    mode: Mode,
    verdict: Option<Verdict>,
    cells: Vec<(&'static str, Cell)>,
    stderr_tail: Vec<String>,
}

/// What a connection's callbacks saw.
#[derive(Clone, Default)]
struct Seen {
    events: Arc<Mutex<Vec<ServerEvent>>>,
    event_arrived: Arc<Notify>,
    elicitations: Arc<Mutex<Vec<ElicitRequestParams>>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl Seen {
    fn events(&self) -> Vec<ServerEvent> {
        self.events.lock().unwrap().clone()
    }

    /// Waits until an event matching `want` has been seen (also one seen
    /// before the call).
    async fn wait_event(
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

type Check = Result<String, String>;

#[tokio::main]
async fn main() -> ExitCode {
    let options = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("interop: {e}\n\n{}", usage());
            return ExitCode::from(2);
        }
    };
    if options.targets.is_empty() {
        eprintln!("interop: no server given\n\n{}", usage());
        return ExitCode::from(2);
    }
    let started = Instant::now();
    let mut columns = Vec::new();
    for target in &options.targets {
        for &mode in &options.modes {
            eprintln!("interop: {} × {} …", target.kind.label(), mode.label());
            let column = run_column(target, mode, &options).await;
            for (name, cell) in &column.cells {
                if let Outcome::Fail(why) = &cell.outcome {
                    eprintln!("  FAIL {name}: {why}");
                }
            }
            columns.push(column);
        }
    }
    let report = render(&columns, started.elapsed());
    println!("{report}");
    let failed = columns
        .iter()
        .flat_map(|c| &c.cells)
        .any(|(_, cell)| matches!(cell.outcome, Outcome::Fail(_)));
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn usage() -> &'static str {
    "usage: interop [--node NODE] [--everything NPM_PREFIX] [--python PYTHON --script python_server.py]\n\
     \x20              [--only python|everything]... [--mode legacy|modern|auto]... [--wire-log DIR]"
}

fn parse_args() -> Result<Options, String> {
    let mut node = OsString::from("node");
    let mut everything = None;
    let mut python = None;
    let mut script = None;
    let mut only = Vec::new();
    let mut modes = Vec::new();
    let mut wire_log = None;
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        let arg = arg.to_string_lossy().into_owned();
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--node" => node = value()?,
            "--everything" => everything = Some(PathBuf::from(value()?)),
            "--python" => python = Some(value()?),
            "--script" => script = Some(PathBuf::from(value()?)),
            "--wire-log" => wire_log = Some(PathBuf::from(value()?)),
            "--only" => only.push(value()?.to_string_lossy().into_owned()),
            "--mode" => {
                let v = value()?;
                let mode = Mode::ALL
                    .into_iter()
                    .find(|m| v.to_str() == Some(m.label()))
                    .ok_or_else(|| format!("unknown mode {v:?}"))?;
                modes.push(mode);
            }
            "-h" | "--help" => {
                println!("{}", usage());
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let wanted = |k: Kind| only.is_empty() || only.iter().any(|o| o == k.label());
    let mut targets = Vec::new();
    let mut tap = None;
    if let (Some(python), Some(script)) = (&python, &script) {
        let script = absolute(script);
        if let Some(dir) = script.parent() {
            tap = Some((python.clone(), dir.join("wiretap.py")));
        }
        if wanted(Kind::Python) {
            targets.push(Target {
                kind: Kind::Python,
                program: python.clone(),
                args: vec![script.into_os_string()],
                docs: None,
            });
        }
    } else if python.is_some() || script.is_some() {
        return Err("--python and --script go together".into());
    }
    if let Some(prefix) = everything
        && wanted(Kind::Everything)
    {
        let dist =
            absolute(&prefix).join("node_modules/@modelcontextprotocol/server-everything/dist");
        targets.push(Target {
            kind: Kind::Everything,
            program: node,
            args: vec![dist.join("index.js").into_os_string(), "stdio".into()],
            docs: Some(dist.join("docs")),
        });
    }
    if modes.is_empty() {
        modes = Mode::ALL.to_vec();
    }
    Ok(Options {
        targets,
        modes,
        wire_log,
        tap,
    })
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

/// The command that starts `target`, behind the wire tap when asked.
fn command(target: &Target, mode: Mode, options: &Options, seen: &Seen) -> StdioCommand {
    let name = format!("{}-{}", target.kind.label(), mode.label());
    let mut cmd = match (&options.wire_log, &options.tap) {
        (Some(dir), Some((python, tap))) => {
            let _ = std::fs::create_dir_all(dir);
            let log = dir.join(format!("{name}.log"));
            let _ = std::fs::remove_file(&log);
            StdioCommand::new(python)
                .arg(tap)
                .arg(log)
                .arg("--")
                .arg(&target.program)
                .args(&target.args)
        }
        _ => StdioCommand::new(&target.program).args(&target.args),
    };
    cmd = cmd.name(name).env("PYTHONDONTWRITEBYTECODE", "1");
    let stderr = seen.stderr.clone();
    cmd.on_stderr(move |line| {
        let mut tail = stderr.lock().unwrap();
        if tail.len() == 40 {
            tail.pop_front();
        }
        tail.push_back(line.to_owned());
    })
}

/// Times a check and bounds it.
async fn timed(check: impl Future<Output = Check>) -> Cell {
    let start = Instant::now();
    let outcome = match tokio::time::timeout(CHECK_LIMIT, check).await {
        Ok(Ok(detail)) => Outcome::Pass(detail),
        Ok(Err(why)) => Outcome::Fail(why),
        Err(_) => Outcome::Fail(format!("no result after {CHECK_LIMIT:?}")),
    };
    Cell {
        outcome,
        elapsed: start.elapsed(),
    }
}

async fn run_column(target: &Target, mode: Mode, options: &Options) -> Column {
    let seen = Seen::default();
    let mut column = Column {
        kind: target.kind,
        mode,
        verdict: None,
        cells: Vec::new(),
        stderr_tail: Vec::new(),
    };
    let kind = target.kind;

    let events = seen.events.clone();
    let arrived = seen.event_arrived.clone();
    let elicitations = seen.elicitations.clone();
    let builder = Client::builder()
        .client_info("mcp-client-interop", env!("CARGO_PKG_VERSION"))
        .server_name(format!("{}-{}", kind.label(), mode.label()))
        .era(mode.era_mode())
        .request_timeout(Duration::from_secs(20))
        .roots(vec![Root::new(ROOT_URI).with_name("interop")])
        .on_event(move |e| {
            events.lock().unwrap().push(e.clone());
            arrived.notify_waiters();
        })
        .elicitation_handler(elicitation_fn(move |params: ElicitRequestParams| {
            elicitations.lock().unwrap().push(params.clone());
            async move { answer_elicitation(&params) }
        }));

    let start = Instant::now();
    let connected = tokio::time::timeout(
        CHECK_LIMIT,
        builder.connect(command(target, mode, options, &seen)),
    )
    .await;
    let elapsed = start.elapsed();
    let client = match (connected, mode, kind.speaks_modern()) {
        (Ok(Err(e)), Mode::Modern, false) => {
            // A legacy-only server and a client pinned to modern: the
            // connect must fail, with a typed error that says why.
            let outcome = match e.kind() {
                ErrorKind::Server { code, .. } => Outcome::Pass(format!(
                    "refused as it must: the server answered server/discover with {code} ({e})"
                )),
                ErrorKind::Negotiation { .. } | ErrorKind::NotInRevision { .. } => {
                    Outcome::Pass(format!("refused as it must: {e}"))
                }
                other => Outcome::Fail(format!(
                    "pinned modern against a legacy-only server failed, but not with a clear typed error: {other:?} ({e})"
                )),
            };
            column.cells.push(("connect", Cell { outcome, elapsed }));
            for check in &CHECKS[1..] {
                column.cells.push((
                    check,
                    Cell {
                        outcome: Outcome::NotApplicable("legacy-only server".into()),
                        elapsed: Duration::ZERO,
                    },
                ));
            }
            column.stderr_tail = seen.stderr.lock().unwrap().iter().cloned().collect();
            return column;
        }
        (Ok(Ok(client)), Mode::Modern, false) => {
            let outcome = Outcome::Fail(format!(
                "pinned modern connected to a legacy-only server: {:?}",
                client.verdict()
            ));
            client.close().await;
            column.cells.push(("connect", Cell { outcome, elapsed }));
            return column;
        }
        (Ok(Ok(client)), _, _) => client,
        (Ok(Err(e)), _, _) => {
            column.cells.push((
                "connect",
                Cell {
                    outcome: Outcome::Fail(format!("{e} ({:?})", e.kind())),
                    elapsed,
                },
            ));
            column.stderr_tail = seen.stderr.lock().unwrap().iter().cloned().collect();
            return column;
        }
        (Err(_), _, _) => {
            column.cells.push((
                "connect",
                Cell {
                    outcome: Outcome::Fail(format!("no connection after {CHECK_LIMIT:?}")),
                    elapsed,
                },
            ));
            column.stderr_tail = seen.stderr.lock().unwrap().iter().cloned().collect();
            return column;
        }
    };
    let verdict = client.verdict();
    column.verdict = Some(verdict.clone());
    column.cells.push((
        "connect",
        Cell {
            outcome: match check_verdict(kind, mode, &verdict) {
                Ok(d) => Outcome::Pass(d),
                Err(e) => Outcome::Fail(e),
            },
            elapsed,
        },
    ));

    let c = &client;
    let s = &seen;
    column
        .cells
        .push(("list-tools", timed(check_list_tools(c, kind)).await));
    column
        .cells
        .push(("echo", timed(check_echo(c, kind)).await));
    column
        .cells
        .push(("elicitation", timed(check_elicitation(c, kind, s)).await));
    column
        .cells
        .push(("progress", timed(check_progress(c, kind)).await));
    column
        .cells
        .push(("resource", timed(check_resource(c, target)).await));
    column
        .cells
        .push(("prompt", timed(check_prompt(c, kind)).await));
    column
        .cells
        .push(("list-changed", timed(check_list_changed(c, kind, s)).await));
    column
        .cells
        .push(("roots", timed(check_roots(c, kind, s)).await));
    column
        .cells
        .push(("errors", timed(check_errors(c, kind)).await));
    column
        .cells
        .push(("concurrent", timed(check_concurrent(c, kind)).await));
    column
        .cells
        .push(("cancel", timed(check_cancel(c, kind, s)).await));
    column.cells.push(("close", timed(check_close(c)).await));
    column.stderr_tail = seen.stderr.lock().unwrap().iter().cloned().collect();
    column
}

/// The elicitation handler: accepts every form, filling `name` (and
/// `check`, which server-everything's form has) and leaving the rest to the
/// schema's defaults, which the client must fill in.
fn answer_elicitation(params: &ElicitRequestParams) -> Result<ElicitResult, HandlerError> {
    let ElicitRequestParams::Form(form) = params else {
        return Ok(ElicitResult::new(ElicitAction::Decline));
    };
    let mut content = Map::new();
    if form.requested_schema.properties.contains_key("name") {
        content.insert("name".into(), json!("Ada Lovelace"));
    }
    if form.requested_schema.properties.contains_key("check") {
        content.insert("check".into(), json!(true));
    }
    Ok(ElicitResult::accept(content))
}

fn check_verdict(kind: Kind, mode: Mode, v: &Verdict) -> Check {
    let want = match mode {
        Mode::Legacy => Era::Legacy,
        Mode::Modern => Era::Modern,
        Mode::Auto => kind.native_era(),
    };
    if v.era != want {
        return Err(format!(
            "era {} (version {}, reached {:?}); expected {want}",
            v.era, v.version, v.reached
        ));
    }
    let want_version = match want {
        Era::Legacy => ProtocolVersion::V2025_11_25,
        _ => ProtocolVersion::V2026_07_28,
    };
    if v.version != want_version {
        return Err(format!("version {}; expected {want_version}", v.version));
    }
    let reached_ok = match (mode, kind) {
        (Mode::Legacy, _) => v.reached == Reached::PinnedLegacy,
        (Mode::Modern, _) => v.reached == Reached::PinnedModern,
        (Mode::Auto, Kind::Python) => v.reached == Reached::Discover,
        (Mode::Auto, Kind::Everything) => {
            v.reached == Reached::LegacyAfterProbeError { code: -32601 }
        }
    };
    if !reached_ok {
        return Err(format!(
            "reached {:?}, which is not how this server should be found",
            v.reached
        ));
    }
    let name = v
        .server_info
        .as_ref()
        .map(|i| i.name.as_str())
        .unwrap_or("?");
    Ok(format!(
        "{} {} ({}), {:?}",
        v.era, v.version, name, v.reached
    ))
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect::<Vec<_>>()
        .join("\n")
}

fn err(e: ClientError) -> String {
    format!("{e} [{:?}]", e.kind())
}

async fn call(client: &Client, name: &str, args: Value) -> Result<CallToolResult, String> {
    let result = client.call_tool(name, args).await.map_err(err)?;
    if result.is_error() {
        return Err(format!("{name} returned isError: {}", text_of(&result)));
    }
    Ok(result)
}

async fn tool_names(client: &Client) -> Result<Vec<String>, String> {
    Ok(client
        .list_all_tools()
        .await
        .map_err(err)?
        .into_iter()
        .map(|t| t.name)
        .collect())
}

fn missing<'a>(names: &[String], want: &[&'a str]) -> Vec<&'a str> {
    want.iter()
        .copied()
        .filter(|w| !names.iter().any(|n| n == w))
        .collect()
}

async fn check_list_tools(client: &Client, kind: Kind) -> Check {
    let names = tool_names(client).await?;
    let want: &[&str] = match kind {
        Kind::Python => &["echo", "greet", "roots", "count", "slow", "add_tool"],
        Kind::Everything => &["echo", "get-sum", "trigger-long-running-operation"],
    };
    let lost = missing(&names, want);
    if !lost.is_empty() {
        return Err(format!("missing {lost:?} from {names:?}"));
    }
    Ok(format!("{} tools", names.len()))
}

async fn check_echo(client: &Client, kind: Kind) -> Check {
    let text = "héllo ✓ 🦀 \"quoted\"\nline 2";
    match kind {
        Kind::Python => {
            let r = call(client, "echo", json!({ "text": text })).await?;
            if text_of(&r) != text {
                return Err(format!("content {:?}, sent {text:?}", text_of(&r)));
            }
            if r.structured_content != Some(json!({ "result": text })) {
                return Err(format!("structuredContent {:?}", r.structured_content));
            }
            Ok("text and structuredContent round-trip".into())
        }
        Kind::Everything => {
            let r = call(client, "echo", json!({ "message": text })).await?;
            let want = format!("Echo: {text}");
            if text_of(&r) != want {
                return Err(format!("content {:?}, expected {want:?}", text_of(&r)));
            }
            Ok("text round-trips".into())
        }
    }
}

async fn check_elicitation(client: &Client, kind: Kind, seen: &Seen) -> Check {
    let before = seen.elicitations.lock().unwrap().len();
    let (tool, args, wants): (&str, Value, &[&str]) = match kind {
        Kind::Python => (
            "greet",
            json!({ "greeting": "Welcome" }),
            &["Welcome, Ada Lovelace!"],
        ),
        Kind::Everything => (
            "trigger-elicitation-request",
            json!({}),
            // The integer is the schema's default: the client filled it in.
            &[
                "- Name: Ada Lovelace",
                "- Agreed to terms: true",
                "- Favorite Integer: 42",
            ],
        ),
    };
    let r = call(client, tool, args).await?;
    let text = text_of(&r);
    let asked = seen.elicitations.lock().unwrap()[before..].to_vec();
    if asked.len() != 1 {
        return Err(format!(
            "the handler ran {} times (once expected)",
            asked.len()
        ));
    }
    for want in wants {
        if !text.contains(want) {
            return Err(format!("result {text:?} lacks {want:?}"));
        }
    }
    let how = match client.era() {
        Era::Modern => "input_required round trip",
        _ => "elicitation/create request",
    };
    Ok(format!(
        "{how}: {:?}",
        asked[0].message().unwrap_or_default()
    ))
}

async fn check_progress(client: &Client, kind: Kind) -> Check {
    let (tool, args, steps) = match kind {
        Kind::Python => ("count", json!({ "steps": 4 }), 4),
        Kind::Everything => (
            "trigger-long-running-operation",
            json!({ "duration": 0.4, "steps": 4 }),
            4,
        ),
    };
    let got = Arc::new(Mutex::new(Vec::new()));
    let sink = got.clone();
    let options = CallOptions::new().on_progress(move |p| {
        sink.lock().unwrap().push((p.progress_f64(), p.total_f64()));
    });
    let params = CallToolRequestParams::new(tool).with_arguments(object(args));
    let r = client.call_tool_with(params, &options).await.map_err(err)?;
    if r.is_error() {
        return Err(format!("isError: {}", text_of(&r)));
    }
    let got = got.lock().unwrap().clone();
    let want: Vec<(f64, Option<f64>)> = (1..=steps)
        .map(|i| (f64::from(i), Some(f64::from(steps))))
        .collect();
    if got != want {
        return Err(format!("progress {got:?}, expected {want:?}"));
    }
    Ok(format!("{steps} notifications, in order"))
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

async fn check_resource(client: &Client, target: &Target) -> Check {
    match target.kind {
        Kind::Python => {
            let text = read_one(client, "interop://text").await?;
            let ResourceContents::Text(t) = &text else {
                return Err(format!("interop://text came as {text:?}"));
            };
            if t.text.as_bytes() != PY_TEXT.as_bytes() {
                return Err(format!("text {:?}, expected {PY_TEXT:?}", t.text));
            }
            let blob = read_one(client, "interop://blob").await?;
            let ResourceContents::Blob(b) = &blob else {
                return Err(format!("interop://blob came as {blob:?}"));
            };
            let bytes = base64_decode(&b.blob).ok_or("the blob is not valid base64")?;
            let want: Vec<u8> = (0..=255).collect();
            if bytes != want {
                return Err(format!(
                    "blob decodes to {} bytes, not 0..=255",
                    bytes.len()
                ));
            }
            Ok(format!("text {} B and blob 256 B identical", PY_TEXT.len()))
        }
        Kind::Everything => {
            let docs = target.docs.as_ref().ok_or("no docs folder")?;
            let file = std::fs::read(docs.join("instructions.md"))
                .map_err(|e| format!("reading the server's own file: {e}"))?;
            let uri = "demo://resource/static/document/instructions.md";
            let contents = read_one(client, uri).await?;
            let ResourceContents::Text(t) = &contents else {
                return Err(format!("{uri} came as {contents:?}"));
            };
            if t.text.as_bytes() != file.as_slice() {
                return Err(format!(
                    "{} bytes read, the file has {}",
                    t.text.len(),
                    file.len()
                ));
            }
            if t.mime_type.as_deref() != Some("text/markdown") {
                return Err(format!("mimeType {:?}", t.mime_type));
            }
            Ok(format!("{} B identical to the file", file.len()))
        }
    }
}

async fn read_one(client: &Client, uri: &str) -> Result<ResourceContents, String> {
    let ReadResourceResult { contents, .. } = client.read_resource(uri).await.map_err(err)?;
    let [one] = <[ResourceContents; 1]>::try_from(contents)
        .map_err(|c| format!("{uri}: {} contents, one expected", c.len()))?;
    if one.uri() != Some(uri) {
        return Err(format!("{uri}: contents for {:?}", one.uri()));
    }
    Ok(one)
}

async fn check_prompt(client: &Client, kind: Kind) -> Check {
    let (name, args, want) = match kind {
        Kind::Python => (
            "review",
            vec![("code".to_owned(), "fn main() {}".to_owned())],
            "Please review this code:\n\nfn main() {}".to_owned(),
        ),
        Kind::Everything => (
            "args-prompt",
            vec![
                ("city".to_owned(), "Zürich".to_owned()),
                ("state".to_owned(), "ZH".to_owned()),
            ],
            "What's weather in Zürich, ZH?".to_owned(),
        ),
    };
    let r = client.get_prompt(name, args).await.map_err(err)?;
    let texts: Vec<&str> = r
        .messages
        .iter()
        .filter_map(|m| m.content.as_text())
        .collect();
    if texts != [want.as_str()] {
        return Err(format!("messages {texts:?}, expected [{want:?}]"));
    }
    Ok(format!("{} message(s) as expected", r.messages.len()))
}

async fn check_list_changed(client: &Client, kind: Kind, seen: &Seen) -> Check {
    match kind {
        Kind::Everything => {
            // Sent right after `initialized`: the on_event callback, which
            // sees events from the first message on, must have it.
            seen.wait_event(Duration::from_secs(5), |e| {
                *e == ServerEvent::ToolsListChanged
            })
            .await
            .ok_or("no tools/list_changed after initialized")?;
            // Listed again, the tools registered on `initialized` are there
            // (a list cached before the notification was dropped).
            let names = tool_names(client).await?;
            let lost = missing(&names, &["trigger-elicitation-request", "get-roots-list"]);
            if !lost.is_empty() {
                return Err(format!(
                    "after list_changed, {lost:?} missing from {names:?}"
                ));
            }
            Ok(format!("event seen; {} tools after it", names.len()))
        }
        Kind::Python => {
            let mut subscription = client.subscribe(Watch::new().tools()).await.map_err(err)?;
            let before = tool_names(client).await?;
            let r = call(client, "add_tool", json!({})).await?;
            let added = text_of(&r);
            let event = tokio::time::timeout(Duration::from_secs(10), subscription.recv())
                .await
                .map_err(|_| "no tools list change within 10 s".to_owned())?;
            if event != Some(ServerEvent::ToolsListChanged) {
                return Err(format!("subscription gave {event:?}"));
            }
            let after = tool_names(client).await?;
            if before.contains(&added) || !after.contains(&added) {
                return Err(format!("{added:?}: before {before:?}, after {after:?}"));
            }
            let how = match client.era() {
                Era::Modern => "subscriptions/listen",
                _ => "notification",
            };
            Ok(format!("{how}; {added} listed after it"))
        }
    }
}

async fn check_roots(client: &Client, kind: Kind, seen: &Seen) -> Check {
    match kind {
        Kind::Everything => {
            // The server asks for roots 350 ms after `initialized`, then
            // logs how many it got.
            let log = seen
                .wait_event(Duration::from_secs(5), |e| {
                    matches!(e, ServerEvent::Log(l) if l.data.as_str().is_some_and(|d| d.starts_with("Roots updated")))
                })
                .await
                .ok_or("the server did not log that it got the roots")?;
            let ServerEvent::Log(log) = log else {
                unreachable!()
            };
            let said = log.data.as_str().unwrap_or_default().to_owned();
            if !said.contains("1 root(s)") {
                return Err(format!("the server logged {said:?}"));
            }
            let r = call(client, "get-roots-list", json!({})).await?;
            if !text_of(&r).contains(ROOT_URI) {
                return Err(format!("get-roots-list said {:?}", text_of(&r)));
            }
            Ok("roots/list answered; the server lists our root".into())
        }
        Kind::Python => {
            let r = call(client, "roots", json!({})).await?;
            if text_of(&r) != ROOT_URI {
                return Err(format!("roots tool said {:?}", text_of(&r)));
            }
            let how = match client.era() {
                Era::Modern => "input_required round trip",
                _ => "roots/list request",
            };
            Ok(format!("{how}; our root came back"))
        }
    }
}

async fn check_errors(client: &Client, kind: Kind) -> Check {
    // A tool that fails is a result with isError (and is not checked
    // against the tool's output schema: the Python echo has one).
    let r = client.call_tool("echo", json!({})).await.map_err(err)?;
    if !r.is_error() || text_of(&r).is_empty() {
        return Err(format!("echo without its argument gave {r:?}"));
    }
    let uri = match kind {
        Kind::Python => "interop://missing",
        Kind::Everything => "demo://resource/static/document/missing.md",
    };
    match client.read_resource(uri).await {
        Err(e) if e.code() == Some(-32602) => {}
        other => return Err(format!("reading {uri} gave {other:?}, not a -32602 error")),
    }
    if !client.is_alive() {
        return Err("the connection died".into());
    }
    Ok("tool error as isError result; unknown resource as -32602".into())
}

async fn check_concurrent(client: &Client, kind: Kind) -> Check {
    let calls = (0..16).map(|i| {
        let client = client.clone();
        async move {
            let text = format!("call {i}");
            let r = call(&client, "echo", echo_args(kind, &text)).await?;
            if text_of(&r).ends_with(&text) {
                Ok(())
            } else {
                Err(format!("call {i} got {:?}", text_of(&r)))
            }
        }
    });
    let results = futures::future::join_all(calls).await;
    let wrong: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    if !wrong.is_empty() {
        return Err(wrong.join("; "));
    }
    Ok("16 echo calls at once, each answered with its own text".into())
}

async fn check_cancel(client: &Client, kind: Kind, seen: &Seen) -> Check {
    let (tool, args) = match kind {
        Kind::Python => ("slow", json!({ "seconds": 30 })),
        Kind::Everything => (
            "trigger-long-running-operation",
            json!({ "duration": 6, "steps": 30 }),
        ),
    };
    let token = CancellationToken::new();
    let first = Arc::new(Notify::new());
    let count = Arc::new(AtomicUsize::new(0));
    let (f, n) = (first.clone(), count.clone());
    let options = CallOptions::new()
        .cancellation(token.clone())
        .on_progress(move |_| {
            n.fetch_add(1, Ordering::SeqCst);
            f.notify_one();
        });
    let params = CallToolRequestParams::new(tool).with_arguments(object(args));
    let events_before = seen.events().len();
    let c = client.clone();
    let mut pending = tokio::spawn(async move { c.call_tool_with(params, &options).await });
    tokio::select! {
        _ = first.notified() => {}
        r = &mut pending => return Err(format!("the call ended before any progress: {r:?}")),
        _ = tokio::time::sleep(Duration::from_secs(10)) => {
            pending.abort();
            return Err("no progress within 10 s".into());
        }
    }
    token.cancel();
    let cancelled_at = Instant::now();
    let r = tokio::time::timeout(Duration::from_secs(5), pending)
        .await
        .map_err(|_| "the call did not end within 5 s of the cancel".to_owned())?
        .map_err(|e| format!("the call's task failed: {e}"))?;
    let took = cancelled_at.elapsed();
    match r {
        Err(e) if matches!(e.transport_error(), Some(TransportError::Cancelled)) => {}
        other => return Err(format!("expected Cancelled, got {other:?}")),
    }
    if took > Duration::from_secs(1) {
        return Err(format!("Cancelled only after {took:?}"));
    }
    // The server may go on working (server-everything does, sending
    // progress): that must not reach the cancelled call's callback, nor
    // hurt the connection.
    let at_cancel = count.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(800)).await;
    let late_callback = count.load(Ordering::SeqCst) - at_cancel;
    let late_events = seen.events()[events_before..]
        .iter()
        .filter(|e| matches!(e, ServerEvent::Progress(_)))
        .count();
    if late_callback > 0 {
        return Err(format!(
            "{late_callback} progress notification(s) reached the cancelled call's callback"
        ));
    }
    let after = call(client, "echo", echo_args(kind, "after cancel")).await?;
    if !text_of(&after).contains("after cancel") {
        return Err(format!("echo after the cancel said {:?}", text_of(&after)));
    }
    Ok(format!(
        "Cancelled in {}; {late_events} late progress as events; echo works after",
        ms(took)
    ))
}

fn echo_args(kind: Kind, text: &str) -> Value {
    match kind {
        Kind::Python => json!({ "text": text }),
        Kind::Everything => json!({ "message": text }),
    }
}

async fn check_close(client: &Client) -> Check {
    client.close().await;
    if client.is_alive() {
        return Err("still alive after close".into());
    }
    match client.call_tool("echo", json!({})).await {
        Err(e) if matches!(e.transport_error(), Some(TransportError::Closed)) => {
            Ok("closed; later calls fail with Closed".into())
        }
        other => Err(format!("a call after close gave {other:?}")),
    }
}

/// Decodes standard base64 (with padding), as resource blobs are sent.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    fn value(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    let bytes = s.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for chunk in bytes.chunks(4) {
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        let mut n = 0u32;
        for &c in &chunk[..4 - pad] {
            n = (n << 6) | value(c)?;
        }
        n <<= 6 * pad as u32;
        let three = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&three[..3 - pad]);
    }
    Some(out)
}

fn ms(d: Duration) -> String {
    if d >= Duration::from_secs(10) {
        format!("{:.0}s", d.as_secs_f64())
    } else if d >= Duration::from_secs(1) {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// The report: a matrix of checks × (server, mode), then every detail.
fn render(columns: &[Column], total: Duration) -> String {
    let mut header = vec!["check".to_owned()];
    header.extend(
        columns
            .iter()
            .map(|c| format!("{} × {}", c.kind.label(), c.mode.label())),
    );
    let mut rows = vec![header];
    let mut era_row = vec!["era picked".to_owned()];
    for c in columns {
        era_row.push(match &c.verdict {
            Some(v) => {
                let mark = if c.mode == Mode::Auto {
                    if v.era == c.kind.native_era() {
                        " ✓"
                    } else {
                        " ✗"
                    }
                } else {
                    ""
                };
                format!("{} {}{mark}", v.era, v.version)
            }
            None if c.mode == Mode::Modern && !c.kind.speaks_modern() => "n/a (legacy only)".into(),
            None => "none".into(),
        });
    }
    rows.push(era_row);
    for check in CHECKS {
        let mut row = vec![(*check).to_owned()];
        for c in columns {
            row.push(match c.cells.iter().find(|(n, _)| n == check) {
                Some((_, cell)) => match &cell.outcome {
                    Outcome::Pass(_) => format!("ok {}", ms(cell.elapsed)),
                    Outcome::Fail(_) => format!("FAIL {}", ms(cell.elapsed)),
                    Outcome::NotApplicable(_) => "n/a".into(),
                },
                None => "-".into(),
            });
        }
        rows.push(row);
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}", w = *w))
            .collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
        if i == 0 {
            let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
            let _ = writeln!(out, "|-{}-|", rule.join("-|-"));
        }
    }
    let (mut pass, mut fail, mut na) = (0, 0, 0);
    for (_, cell) in columns.iter().flat_map(|c| &c.cells) {
        match cell.outcome {
            Outcome::Pass(_) => pass += 1,
            Outcome::Fail(_) => fail += 1,
            Outcome::NotApplicable(_) => na += 1,
        }
    }
    let _ = writeln!(
        out,
        "\n{pass} passed, {fail} failed, {na} not applicable, in {}",
        ms(total)
    );
    let _ = writeln!(out, "\nDetails:");
    for c in columns {
        let _ = writeln!(out, "\n{} × {}", c.kind.label(), c.mode.label());
        for (name, cell) in &c.cells {
            let (tag, detail) = match &cell.outcome {
                Outcome::Pass(d) => ("ok  ", d),
                Outcome::Fail(d) => ("FAIL", d),
                Outcome::NotApplicable(d) => ("n/a ", d),
            };
            let _ = writeln!(out, "  {tag} {name:<13} {detail}");
        }
        let failed = c
            .cells
            .iter()
            .any(|(_, cell)| matches!(cell.outcome, Outcome::Fail(_)));
        if failed && !c.stderr_tail.is_empty() {
            let _ = writeln!(out, "  server stderr (last lines):");
            for line in &c.stderr_tail {
                let _ = writeln!(out, "    {line}");
            }
        }
    }
    out
}
