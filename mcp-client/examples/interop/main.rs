//! Runs the client against real MCP servers over stdio, through the public
//! API only, and prints a table of server × era × check with timings.
//!
//! `cargo xtask interop` installs the servers (pinned, into `.cache/interop`)
//! and runs this. By hand, after one `cargo xtask interop`:
//!
//! ```text
//! cargo run -p mcp-steady-client --example interop -- \
//!     --node node --everything .cache/interop/npm \
//!     --python .cache/interop/venv/bin/python --script xtask/interop/python_server.py
//! ```
//!
//! Options: `--only python|everything`, `--mode legacy|modern|auto` (each
//! repeatable), `--wire-log DIR` (every connection's traffic, through
//! `xtask/interop/wiretap.py`, into `DIR/<server>-<mode>.log`; by default a
//! folder of the temporary directory).
//!
//! Servers:
//!
//! * `@modelcontextprotocol/server-everything` (legacy era only: it answers
//!   `server/discover` with `-32601`). It sends `tools/list_changed` right
//!   after `initialized`, asks for roots 350 ms later, and keeps sending
//!   progress for a call that was cancelled.
//! * `xtask/interop/python_server.py` on the Python SDK (`mcp==2.3.0`), which
//!   speaks both eras.
//!
//! For each server and each era mode (pinned legacy, pinned modern, auto),
//! one connection runs every check; each check compares real results. The
//! process exits non-zero when a check fails. Pinned modern against a
//! legacy-only server must fail to connect as `NotModern`, naming the
//! server's `-32601` to `server/discover`; its other checks are "n/a". Every connection goes
//! through the wire tap when `--python` is given (into `--wire-log DIR`, else
//! a temporary folder): the cancel check reads the log.

mod checks;
mod model;
mod table;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use mcp_client::handlers::{HandlerError, elicitation_fn};
use mcp_client::protocol::types::{ElicitAction, ElicitRequestParams, ElicitResult, Root};
use mcp_client::{Client, ErrorKind};
use mcp_transport_stdio::StdioCommand;
use serde_json::{Map, json};

use crate::checks::{
    check_cancel, check_close, check_concurrent, check_echo, check_elicitation, check_errors,
    check_list_changed, check_list_tools, check_progress, check_prompt, check_resource,
    check_roots, check_verdict,
};
use crate::model::{
    CHECK_LIMIT, CHECKS, Cell, Check, Column, Kind, Mode, Options, Outcome, ROOT_URI, Seen, Target,
};
use crate::table::render;

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
    if options.wire_log.is_none() {
        let _ = std::fs::remove_dir_all(default_wire_dir());
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

/// Where a connection's traffic is logged: `--wire-log DIR`, else a folder
/// of the system's temporary directory (the cancel check reads the log).
/// `None` when there is no wire tap (no `--python`).
fn wire_log(target: &Target, mode: Mode, options: &Options) -> Option<PathBuf> {
    options.tap.as_ref()?;
    let dir = options.wire_log.clone().unwrap_or_else(default_wire_dir);
    let _ = std::fs::create_dir_all(&dir);
    let log = dir.join(format!("{}-{}.log", target.kind.label(), mode.label()));
    let _ = std::fs::remove_file(&log);
    Some(log)
}

/// The wire logs' folder when `--wire-log` is not given (removed at the end).
fn default_wire_dir() -> PathBuf {
    std::env::temp_dir().join(format!("mcp-interop-wire-{}", std::process::id()))
}

/// The command that starts `target`, behind the wire tap when there is
/// one, logging to `seen.wire_log`.
fn command(target: &Target, mode: Mode, options: &Options, seen: &Seen) -> StdioCommand {
    let name = format!("{}-{}", target.kind.label(), mode.label());
    let mut cmd = match (&seen.wire_log, &options.tap) {
        (Some(log), Some((python, tap))) => StdioCommand::new(python)
            .arg(tap)
            .arg(log)
            .arg("--")
            .arg(&target.program)
            .args(&target.args),
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
    let seen = Seen {
        wire_log: wire_log(target, mode, options),
        ..Seen::default()
    };
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
            // connect must fail with the kind that says so, naming the
            // server's own refusal of server/discover, -32601 (as the CLI
            // check requires too).
            let outcome = match e.kind() {
                ErrorKind::NotModern { evidence } if evidence.contains("-32601") => {
                    Outcome::Pass(format!(
                        "refused as it must: not a modern server, it answered server/discover with -32601 ({e})"
                    ))
                }
                other => Outcome::Fail(format!(
                    "pinned modern against a legacy-only server must fail as NotModern naming the server's -32601 to server/discover, got {other:?} ({e})"
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
