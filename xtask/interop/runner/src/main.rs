//! Runs the client against real MCP servers over stdio and HTTP, through
//! the public API only, and prints a table of server × era × check with
//! timings, one per wire.
//!
//! `cargo xtask interop` installs the servers (pinned, into `.cache/interop`)
//! and runs this. By hand, after one `cargo xtask interop`:
//!
//! ```text
//! cargo run -p mcp-interop-runner -- \
//!     --node node --everything .cache/interop/npm \
//!     --python .cache/interop/venv/bin/python --script xtask/interop/python_server.py
//! ```
//!
//! Options: `--only python|everything`, `--mode legacy|modern|auto`,
//! `--wire stdio|http|http-stateless|sse` (each repeatable; stdio alone by
//! default), `--url python=URL` or `--url everything=URL` (a server already
//! listening, reached over Streamable HTTP, or HTTP+SSE when the path ends
//! in `/sse`; only those run), `--wire-log DIR` (every stdio connection's
//! traffic, through `xtask/interop/wiretap.py`, into
//! `DIR/<server>-stdio-<mode>.log`; by default a folder of the temporary
//! directory).
//!
//! Wires: `stdio` starts a server per connection. The HTTP wires start one
//! server per server and wire on a free loopback port, wait (30 s at most)
//! until it listens, and connect to it once per era mode: `http` is
//! Streamable HTTP with legacy sessions (server-everything's
//! `streamableHttp` mode, the Python server's `streamable-http`),
//! `http-stateless` the Python server's stateless Streamable HTTP (no
//! session: it cannot ask the client anything in legacy, nor tell it of
//! changes), `sse` the 2024-11-05 HTTP+SSE transport of both (legacy only).
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
//! For each server, wire and era mode (pinned legacy, pinned modern, auto),
//! one connection runs every check; each check compares real results. The
//! process exits non-zero when a check fails. Pinned modern against a
//! legacy-only server must fail to connect as `NotModern`, naming the
//! server's `-32601` to `server/discover`; its other checks are "n/a". Every connection goes
//! through the wire tap when `--python` is given (into `--wire-log DIR`, else
//! a temporary folder): the cancel check reads the log.

mod args;
mod checks;
mod column;
mod model;
mod servers;
mod table;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::args::{parse_args, usage};
use crate::column::{default_wire_dir, run_column};
use crate::model::{Cell, Column, Outcome};
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
        let label = format!("{} over {}", target.kind.label(), target.wire.label());
        let server = if target.wire.is_http() {
            match servers::start(target) {
                Ok(running) => {
                    if target.url.is_some() {
                        eprintln!("interop: {label}: at {} (given)", running.url);
                    } else {
                        eprintln!(
                            "interop: {label}: listening at {} after {}",
                            running.url,
                            table::ms(running.started_in)
                        );
                    }
                    Some(running)
                }
                Err(why) => {
                    eprintln!("interop: {label}: {why}");
                    for &mode in &options.modes {
                        columns.push(unstarted(target, mode, &why));
                    }
                    continue;
                }
            }
        } else {
            None
        };
        for &mode in &options.modes {
            eprintln!("interop: {label} × {} …", mode.label());
            let column = run_column(target, mode, &options, server.as_ref()).await;
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

/// The column of a server that did not start: its connect fails with why.
fn unstarted(target: &model::Target, mode: model::Mode, why: &str) -> Column {
    Column {
        kind: target.kind,
        wire: target.wire,
        mode,
        verdict: None,
        cells: vec![(
            "connect",
            Cell {
                outcome: Outcome::Fail(format!("the server did not start: {why}")),
                elapsed: Duration::ZERO,
            },
        )],
        stderr_tail: Vec::new(),
    }
}
