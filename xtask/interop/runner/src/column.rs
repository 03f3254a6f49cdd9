//! One column of the table: a connection to a server in one era mode, over
//! one wire, and every check run on it.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mcp_client::handlers::{HandlerError, elicitation_fn};
use mcp_client::protocol::types::{ElicitAction, ElicitRequestParams, ElicitResult, Root};
use mcp_client::{Client, ClientBuilder, ClientError, ErrorKind, HttpTransportBuilder};
use mcp_transport_stdio::StdioCommand;
use serde_json::{Map, json};

use crate::checks::{
    check_cancel, check_close, check_concurrent, check_echo, check_elicitation, check_errors,
    check_list_changed, check_list_tools, check_progress, check_prompt, check_resource,
    check_roots, check_verdict,
};
use crate::model::{
    CHECK_LIMIT, CHECKS, Cell, Check, Column, Mode, Options, Outcome, ROOT_URI, Seen, Target,
};
use crate::servers::Running;

/// Where a connection's traffic is logged: `--wire-log DIR`, else a folder
/// of the system's temporary directory (the cancel check reads the log).
/// `None` when there is no wire tap (no `--python`).
fn wire_log(target: &Target, mode: Mode, options: &Options) -> Option<PathBuf> {
    options.tap.as_ref()?;
    let dir = options.wire_log.clone().unwrap_or_else(default_wire_dir);
    let _ = std::fs::create_dir_all(&dir);
    let log = dir.join(format!(
        "{}-{}-{}.log",
        target.kind.label(),
        target.wire.label(),
        mode.label()
    ));
    let _ = std::fs::remove_file(&log);
    Some(log)
}

/// The wire logs' folder when `--wire-log` is not given (removed at the end).
pub(crate) fn default_wire_dir() -> PathBuf {
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
            .args(&target.args)
            .arg("stdio"),
        _ => StdioCommand::new(&target.program)
            .args(&target.args)
            .arg("stdio"),
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

/// A check the server cannot take part in over this wire is not run: "n/a"
/// with why; any other is timed.
async fn unless(why: Option<&str>, check: impl Future<Output = Check>) -> Cell {
    match why {
        Some(why) => Cell {
            outcome: Outcome::NotApplicable(why.to_owned()),
            elapsed: Duration::ZERO,
        },
        None => timed(check).await,
    }
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

/// Connects to `target` in `mode` (over `server` when it is an HTTP one)
/// and runs every check on the connection.
pub(crate) async fn run_column(
    target: &Target,
    mode: Mode,
    options: &Options,
    server: Option<&Running>,
) -> Column {
    let mut seen = Seen {
        wire: target.wire,
        ..Seen::default()
    };
    match server {
        Some(running) => {
            // One server serves the wire's columns: what it said for an
            // earlier one must not count for this one.
            running.output.lock().unwrap().clear();
            seen.stderr = running.output.clone();
        }
        None => seen.wire_log = wire_log(target, mode, options),
    }
    let mut column = Column {
        kind: target.kind,
        wire: target.wire,
        mode,
        verdict: None,
        cells: Vec::new(),
        stderr_tail: Vec::new(),
    };
    let kind = target.kind;
    let builder = builder(target, mode, &seen);
    let start = Instant::now();
    let connecting = async {
        match server {
            Some(running) => {
                builder
                    .connect(HttpTransportBuilder::new(running.url.clone()))
                    .await
            }
            None => builder.connect(command(target, mode, options, &seen)).await,
        }
    };
    let connected = tokio::time::timeout(CHECK_LIMIT, connecting).await;
    let elapsed = start.elapsed();
    let tail = |seen: &Seen| seen.stderr.lock().unwrap().iter().cloned().collect();
    let speaks_modern = kind.speaks_modern(target.wire);
    let client = match (connected, mode, speaks_modern) {
        (Ok(Err(e)), Mode::Modern, false) => {
            let outcome = refused(target, &e);
            column.cells.push(("connect", Cell { outcome, elapsed }));
            for check in &CHECKS[1..] {
                column.cells.push((
                    check,
                    Cell {
                        outcome: Outcome::NotApplicable(format!(
                            "legacy-only server over {}",
                            target.wire.label()
                        )),
                        elapsed: Duration::ZERO,
                    },
                ));
            }
            column.stderr_tail = tail(&seen);
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
            column.stderr_tail = tail(&seen);
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
            column.stderr_tail = tail(&seen);
            return column;
        }
    };
    let verdict = client.verdict();
    column.verdict = Some(verdict.clone());
    column.cells.push((
        "connect",
        Cell {
            outcome: match check_verdict(kind, target.wire, mode, &verdict) {
                Ok(d) => Outcome::Pass(d),
                Err(e) => Outcome::Fail(e),
            },
            elapsed,
        },
    ));

    let c = &client;
    let s = &seen;
    let era = client.era();
    let skip = |check| kind.cannot(target.wire, era, check);
    column
        .cells
        .push(("list-tools", timed(check_list_tools(c, kind)).await));
    column
        .cells
        .push(("echo", timed(check_echo(c, kind)).await));
    column.cells.push((
        "elicitation",
        unless(skip("elicitation"), check_elicitation(c, kind, s)).await,
    ));
    column
        .cells
        .push(("progress", timed(check_progress(c, kind)).await));
    column
        .cells
        .push(("resource", timed(check_resource(c, target)).await));
    column
        .cells
        .push(("prompt", timed(check_prompt(c, kind)).await));
    column.cells.push((
        "list-changed",
        unless(skip("list-changed"), check_list_changed(c, kind, s)).await,
    ));
    column.cells.push((
        "roots",
        unless(skip("roots"), check_roots(c, kind, s)).await,
    ));
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
    column.stderr_tail = tail(&seen);
    column
}

/// The client's settings: its era mode, roots, and callbacks that record
/// into `seen`.
fn builder(target: &Target, mode: Mode, seen: &Seen) -> ClientBuilder {
    let events = seen.events.clone();
    let arrived = seen.event_arrived.clone();
    let elicitations = seen.elicitations.clone();
    Client::builder()
        .client_info("mcp-client-interop", env!("CARGO_PKG_VERSION"))
        .server_name(format!(
            "{}-{}-{}",
            target.kind.label(),
            target.wire.label(),
            mode.label()
        ))
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
        }))
}

/// A legacy-only server and a client pinned to modern: the connect must
/// fail with the kind that says so, naming the server's own refusal of
/// `server/discover` (as the CLI check requires too).
fn refused(target: &Target, e: &ClientError) -> Outcome {
    let want = target.kind.not_modern_evidence(target.wire);
    match e.kind() {
        ErrorKind::NotModern { evidence } if evidence.contains(want) => Outcome::Pass(format!(
            "refused as it must: not a modern server, it answered server/discover with {want} ({e})"
        )),
        other => Outcome::Fail(format!(
            "pinned modern against a legacy-only server must fail as NotModern naming the server's {want} to server/discover, got {other:?} ({e})"
        )),
    }
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
