//! The interop checks through the `mcp` command line (crate `mcp-cli`).
//!
//! The CLI must build and its help must list the commands used here, or
//! the run fails.
//!
//! Over stdio, each check starts the server through the CLI (`mcp … --
//! PROGRAM ARGS`) with the network off; over HTTP, the CLI connects with
//! `--url` to servers started once per wire (see [`crate::cli_http`]).
//! Each compares what the CLI prints with what the server holds: an echoed
//! text, a resource's exact bytes (the CLI writes a resource's decoded
//! contents when stdout is not a terminal), a prompt's text, an elicitation
//! answered from `--elicit-json`.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::Result;
use crate::interop::{Installed, Paths, os};

/// One CLI invocation and what its output must be.
pub(crate) struct CliCheck {
    server: &'static str,
    wire: &'static str,
    era: &'static str,
    name: &'static str,
    args: Vec<OsString>,
    expect: Expect,
}

/// What a CLI invocation must print or do.
pub(crate) enum Expect {
    /// Exit 0, stdout contains all of these.
    Contains(Vec<String>),
    /// Exit 0, stdout is exactly these bytes.
    Bytes(Vec<u8>),
    /// A non-zero exit whose stderr contains this.
    Fails(String),
}

/// Runs the CLI checks over stdio, then over HTTP; a CLI that does not
/// build, or lacks a command the checks use, fails the run.
pub(crate) fn run(paths: &Paths, installed: &Installed) -> Result {
    eprintln!("\n==> interop through the `mcp` CLI");
    let mcp = build()?;
    let checks = checks(paths, installed)?;
    let failures = run_and_print(
        &mcp,
        &checks,
        true,
        "through the `mcp` CLI over stdio (one server process per call)",
    );
    let http = crate::cli_http::run(installed, &mcp);
    if failures > 0 {
        return Err(format!(
            "{failures} interop check(s) through the mcp CLI over stdio failed"
        ));
    }
    http
}

/// Builds the CLI and checks that its help offers what the checks use.
fn build() -> Result<std::path::PathBuf> {
    crate::build_all().map_err(|e| format!("the mcp CLI does not build: {e}"))?;
    let mcp = crate::interop::target_dir()?.join("debug").join("mcp");
    let help = Command::new(&mcp)
        .arg("--help")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let needed = [
        "tools",
        "resources",
        "prompts",
        "--era",
        "--elicit-json",
        "--url",
    ];
    let lacking: Vec<&str> = needed.into_iter().filter(|n| !help.contains(n)).collect();
    if !lacking.is_empty() {
        return Err(format!("`mcp --help` does not offer {lacking:?}"));
    }
    Ok(mcp)
}

/// Runs `checks` (each in a namespace with no network when `offline`, else
/// as they are), prints their table under `title`, and counts failures.
pub(crate) fn run_and_print(mcp: &Path, checks: &[CliCheck], offline: bool, title: &str) -> usize {
    let mut failures = 0;
    let mut rows = Vec::new();
    for check in checks {
        let (ok, took, detail) = run_check(mcp, check, offline);
        if !ok {
            failures += 1;
            eprintln!(
                "    FAIL {} × {} × {} × {}: {detail}",
                check.server, check.wire, check.era, check.name
            );
        }
        rows.push((check, ok, took));
    }
    println!("\n{title}:\n");
    println!("| server     | wire           | era    | check       | result      |");
    println!("|------------|----------------|--------|-------------|-------------|");
    for (check, ok, took) in rows {
        let result = format!(
            "{} {}",
            if ok { "ok" } else { "FAIL" },
            crate::interop::ms(took)
        );
        println!(
            "| {:<10} | {:<14} | {:<6} | {:<11} | {:<11} |",
            check.server, check.wire, check.era, check.name, result
        );
    }
    println!("\n{} CLI checks, {failures} failed", checks.len());
    failures
}

/// The checks, per server and era, over stdio.
fn checks(paths: &Paths, installed: &Installed) -> Result<Vec<CliCheck>> {
    let python_server: Vec<OsString> = vec![os(&installed.python), os(&paths.python_script())];
    let everything_server: Vec<OsString> = vec![
        os(&installed.node),
        os(&paths.everything_entry()),
        "stdio".into(),
    ];
    let instructions = everything_instructions(paths)?;
    let mut checks = Vec::new();
    for era in ERAS {
        let mut reach: Vec<OsString> = vec!["--".into()];
        reach.extend(python_server.iter().cloned());
        checks.extend(server_checks(
            Server::Python,
            "stdio",
            era,
            &reach,
            &instructions,
        ));
    }
    for era in ERAS {
        let mut reach: Vec<OsString> = vec!["--".into()];
        reach.extend(everything_server.iter().cloned());
        checks.extend(server_checks(
            Server::Everything,
            "stdio",
            era,
            &reach,
            &instructions,
        ));
    }
    Ok(checks)
}

/// The era modes each server is driven in.
pub(crate) const ERAS: [&str; 3] = ["legacy", "modern", "auto"];

/// The servers the CLI is driven against.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Server {
    /// `xtask/interop/python_server.py`.
    Python,
    /// server-everything.
    Everything,
}

/// server-everything's `instructions.md`, which its resource must match.
pub(crate) fn everything_instructions(paths: &Paths) -> Result<Vec<u8>> {
    std::fs::read(
        paths
            .everything_entry()
            .parent()
            .map(|d| d.join("docs/instructions.md"))
            .unwrap_or_default(),
    )
    .map_err(|e| format!("reading server-everything's instructions.md: {e}"))
}

/// One server's checks in one era over one wire; `reach` is what the
/// command line ends with to reach it (`-- PROGRAM ARGS`, or `--url URL`).
/// A server that does not speak modern over this wire must be refused
/// naming `refusal`, what it answered `server/discover`.
pub(crate) fn server_checks(
    server: Server,
    wire: &'static str,
    era: &'static str,
    reach: &[OsString],
    instructions: &[u8],
) -> Vec<CliCheck> {
    let text = "hello from the mcp cli";
    let with = |rest: &[&str]| -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["--era".into(), era.into()];
        args.extend(rest.iter().map(OsString::from));
        args.extend(reach.iter().cloned());
        args
    };
    let name = match server {
        Server::Python => "python",
        Server::Everything => "everything",
    };
    let check = |check: &'static str, args: Vec<OsString>, expect: Expect| CliCheck {
        server: name,
        wire,
        era,
        name: check,
        args,
        expect,
    };
    let refusal = match (server, wire) {
        (Server::Python, "sse") => Some("405"),
        (Server::Python, _) => None,
        (Server::Everything, "stdio") => Some("-32601"),
        (Server::Everything, "sse") => Some("404"),
        (Server::Everything, _) => Some("-32000"),
    };
    if era == "modern"
        && let Some(code) = refusal
    {
        return vec![check(
            "refused",
            with(&["tools", "list"]),
            Expect::Fails(code.into()),
        )];
    }
    let mut checks = Vec::new();
    match server {
        Server::Python => {
            checks.push(check(
                "echo",
                with(&["tools", "call", "echo", &format!("text={text}")]),
                Expect::Contains(vec![text.into()]),
            ));
            // A stateless legacy server cannot ask the client anything.
            if !(wire == "http-stateless" && era == "legacy") {
                checks.push(check(
                    "elicitation",
                    with(&[
                        "--elicit-json",
                        r#"{"name":"Ada"}"#,
                        "tools",
                        "call",
                        "greet",
                    ]),
                    Expect::Contains(vec!["Hello, Ada!".into()]),
                ));
            }
            checks.push(check(
                "resource",
                with(&["resources", "read", "interop://blob"]),
                Expect::Bytes((0..=255).collect()),
            ));
            checks.push(check(
                "prompt",
                with(&["prompts", "get", "review", "code=fn main() {}"]),
                Expect::Contains(vec![
                    "Please review this code:".into(),
                    "fn main() {}".into(),
                ]),
            ));
        }
        Server::Everything => {
            checks.push(check(
                "echo",
                with(&["tools", "call", "echo", &format!("message={text}")]),
                Expect::Contains(vec![format!("Echo: {text}")]),
            ));
            checks.push(check(
                "elicitation",
                with(&[
                    "--elicit-json",
                    r#"{"name":"Ada","check":true}"#,
                    "tools",
                    "call",
                    "trigger-elicitation-request",
                ]),
                Expect::Contains(vec!["Name: Ada".into(), "Favorite Integer: 42".into()]),
            ));
            checks.push(check(
                "resource",
                with(&[
                    "resources",
                    "read",
                    "demo://resource/static/document/instructions.md",
                ]),
                Expect::Bytes(instructions.to_vec()),
            ));
            checks.push(check(
                "prompt",
                with(&["prompts", "get", "args-prompt", "city=Paris"]),
                Expect::Contains(vec!["What's weather in Paris?".into()]),
            ));
        }
    }
    checks
}

/// Runs one check (with no network when `offline`); whether it passed, how
/// long, and why not.
fn run_check(mcp: &Path, check: &CliCheck, offline: bool) -> (bool, Duration, String) {
    let mut command = if offline {
        crate::interop::offline_command(mcp)
    } else {
        Command::new(mcp)
    };
    command
        .args(&check.args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let output = match crate::interop::output_within(command, Duration::from_secs(60)) {
        Ok(o) => o,
        Err(e) => return (false, start.elapsed(), e),
    };
    let took = start.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let shown = || {
        let tail: String = stderr
            .chars()
            .rev()
            .take(600)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        format!(
            "exit {}; stdout {:?}; stderr …{tail}",
            output.status,
            truncate(&stdout)
        )
    };
    let ok = match &check.expect {
        Expect::Contains(wants) => {
            output.status.success() && wants.iter().all(|w| stdout.contains(w.as_str()))
        }
        Expect::Bytes(bytes) => output.status.success() && output.stdout == *bytes,
        Expect::Fails(want) => !output.status.success() && stderr.contains(want.as_str()),
    };
    (ok, took, if ok { String::new() } else { shown() })
}

fn truncate(s: &str) -> String {
    if s.chars().count() > 300 {
        format!("{}…", s.chars().take(300).collect::<String>())
    } else {
        s.to_owned()
    }
}
