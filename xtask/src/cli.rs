//! The interop checks through the `mcp` command line (crate `mcp-cli`).
//!
//! The CLI must build and its help must list the commands used here, or
//! the run fails.
//!
//! Each check starts the server through the CLI (`mcp … -- PROGRAM ARGS`)
//! with the network off, and compares what the CLI prints with what the
//! server holds: an echoed text, a resource's exact bytes (the CLI writes a
//! resource's decoded contents when stdout is not a terminal), a prompt's
//! text, an elicitation answered from `--elicit-json`.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::Result;
use crate::interop::{Installed, Paths, os};

/// One CLI invocation and what its output must be.
struct CliCheck {
    server: &'static str,
    era: &'static str,
    name: &'static str,
    args: Vec<OsString>,
    expect: Expect,
}

/// What a CLI invocation must print or do.
enum Expect {
    /// Exit 0, stdout contains all of these.
    Contains(Vec<String>),
    /// Exit 0, stdout is exactly these bytes.
    Bytes(Vec<u8>),
    /// A non-zero exit whose stderr contains this.
    Fails(String),
}

/// Runs the CLI checks; a CLI that does not build, or lacks a command the
/// checks use, fails the run.
pub(crate) fn run(paths: &Paths, installed: &Installed) -> Result {
    eprintln!("\n==> interop through the `mcp` CLI");
    let build = Command::new("cargo")
        .args(["build", "--quiet", "-p", "mcp-steady-cli", "--bin", "mcp"])
        .status();
    if !build.is_ok_and(|s| s.success()) {
        return Err("the mcp CLI does not build".into());
    }
    let mcp = crate::interop::target_dir()?.join("debug").join("mcp");
    let help = Command::new(&mcp)
        .arg("--help")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let needed = ["tools", "resources", "prompts", "--era", "--elicit-json"];
    let lacking: Vec<&str> = needed.into_iter().filter(|n| !help.contains(n)).collect();
    if !lacking.is_empty() {
        return Err(format!("`mcp --help` does not offer {lacking:?}"));
    }
    let checks = checks(paths, installed)?;
    let mut failures = 0;
    let mut rows = Vec::new();
    for check in &checks {
        let (ok, took, detail) = run_check(&mcp, check);
        if !ok {
            failures += 1;
            eprintln!(
                "    FAIL {} × {} × {}: {detail}",
                check.server, check.era, check.name
            );
        }
        rows.push((check, ok, took));
    }
    println!("\nthrough the `mcp` CLI (one server process per call):\n");
    println!("| server     | era    | check       | result      |");
    println!("|------------|--------|-------------|-------------|");
    for (check, ok, took) in rows {
        let result = format!(
            "{} {}",
            if ok { "ok" } else { "FAIL" },
            crate::interop::ms(took)
        );
        println!(
            "| {:<10} | {:<6} | {:<11} | {:<11} |",
            check.server, check.era, check.name, result
        );
    }
    println!("\n{} CLI checks, {failures} failed", checks.len());
    if failures > 0 {
        Err(format!(
            "{failures} interop check(s) through the mcp CLI failed"
        ))
    } else {
        Ok(())
    }
}

/// The checks, per server and era.
fn checks(paths: &Paths, installed: &Installed) -> Result<Vec<CliCheck>> {
    let python_server: Vec<OsString> = vec![os(&installed.python), os(&paths.python_script())];
    let everything_server: Vec<OsString> = vec![
        os(&installed.node),
        os(&paths.everything_entry()),
        "stdio".into(),
    ];
    let instructions = std::fs::read(
        paths
            .everything_entry()
            .parent()
            .map(|d| d.join("docs/instructions.md"))
            .unwrap_or_default(),
    )
    .map_err(|e| format!("reading server-everything's instructions.md: {e}"))?;
    let text = "hello from the mcp cli";
    let mut checks = Vec::new();
    for era in ["legacy", "modern", "auto"] {
        let with = |rest: &[&str]| -> Vec<OsString> {
            let mut args: Vec<OsString> = vec!["--era".into(), era.into()];
            args.extend(rest.iter().map(OsString::from));
            args.push("--".into());
            args.extend(python_server.iter().cloned());
            args
        };
        checks.push(CliCheck {
            server: "python",
            era,
            name: "echo",
            args: with(&["tools", "call", "echo", &format!("text={text}")]),
            expect: Expect::Contains(vec![text.into()]),
        });
        checks.push(CliCheck {
            server: "python",
            era,
            name: "elicitation",
            args: with(&[
                "--elicit-json",
                r#"{"name":"Ada"}"#,
                "tools",
                "call",
                "greet",
            ]),
            expect: Expect::Contains(vec!["Hello, Ada!".into()]),
        });
        checks.push(CliCheck {
            server: "python",
            era,
            name: "resource",
            args: with(&["resources", "read", "interop://blob"]),
            expect: Expect::Bytes((0..=255).collect()),
        });
        checks.push(CliCheck {
            server: "python",
            era,
            name: "prompt",
            args: with(&["prompts", "get", "review", "code=fn main() {}"]),
            expect: Expect::Contains(vec![
                "Please review this code:".into(),
                "fn main() {}".into(),
            ]),
        });
    }
    for era in ["legacy", "modern", "auto"] {
        let with = |rest: &[&str]| -> Vec<OsString> {
            let mut args: Vec<OsString> = vec!["--era".into(), era.into()];
            args.extend(rest.iter().map(OsString::from));
            args.push("--".into());
            args.extend(everything_server.iter().cloned());
            args
        };
        if era == "modern" {
            checks.push(CliCheck {
                server: "everything",
                era,
                name: "refused",
                args: with(&["tools", "list"]),
                expect: Expect::Fails("-32601".into()),
            });
            continue;
        }
        checks.push(CliCheck {
            server: "everything",
            era,
            name: "echo",
            args: with(&["tools", "call", "echo", &format!("message={text}")]),
            expect: Expect::Contains(vec![format!("Echo: {text}")]),
        });
        checks.push(CliCheck {
            server: "everything",
            era,
            name: "elicitation",
            args: with(&[
                "--elicit-json",
                r#"{"name":"Ada","check":true}"#,
                "tools",
                "call",
                "trigger-elicitation-request",
            ]),
            expect: Expect::Contains(vec!["Name: Ada".into(), "Favorite Integer: 42".into()]),
        });
        checks.push(CliCheck {
            server: "everything",
            era,
            name: "resource",
            args: with(&[
                "resources",
                "read",
                "demo://resource/static/document/instructions.md",
            ]),
            expect: Expect::Bytes(instructions.clone()),
        });
        checks.push(CliCheck {
            server: "everything",
            era,
            name: "prompt",
            args: with(&["prompts", "get", "args-prompt", "city=Paris"]),
            expect: Expect::Contains(vec!["What's weather in Paris?".into()]),
        });
    }
    Ok(checks)
}

/// Runs one check with no network; whether it passed, how long, and why not.
fn run_check(mcp: &Path, check: &CliCheck) -> (bool, Duration, String) {
    let mut command = crate::interop::offline_command(mcp);
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
