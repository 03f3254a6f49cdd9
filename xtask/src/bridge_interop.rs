//! Clients written by others in front of `mcp bridge`: the official
//! TypeScript SDK's `Client` (`xtask/interop/bridge_client.mjs`, the SDK in
//! server-everything's `node_modules`) and the official Python SDK's
//! (`xtask/interop/bridge_client.py`, in the virtualenv) each start
//! `mcp -v bridge -- …` as their stdio server and drive it: list tools,
//! call `echo`, answer an elicitation, see a call's progress, cancel a
//! call, call again, close. Over HTTP (`mcp bridge --serve http`, which
//! the script starts itself): the Python client in both eras, and two
//! TypeScript clients at once, each answering its own elicitation; each
//! ends with SIGTERM, which must stop the bridge within 5 s. Across the
//! eras: the TypeScript client (legacy only) through `mcp --era modern
//! bridge`, which speaks 2026-07-28 to the Python server and translates,
//! and the Python client speaking 2026-07-28 through `mcp --era legacy
//! bridge` to server-everything (which speaks only the handshake era).
//!
//! Behind each bridge, `wiretap.py` logs what the bridge sends the server,
//! so a cancel check passes only when the bridge sent the server
//! `notifications/cancelled` (and, for the Python server, when that server
//! says on its stderr, which `mcp -v` shows, that it stopped the call).
//! Everything runs with no network (see
//! [`crate::interop::offline_command`]).
//!
//! Each script prints `ok <check>: what was seen` or `FAIL <check>: why`
//! per check; this prints the table of client × server × check.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::Result;
use crate::interop::{Installed, Paths, ms, os};

/// The checks each client reports, in order.
const CHECKS: [&str; 8] = [
    "connect",
    "list-tools",
    "echo",
    "elicitation",
    "progress",
    "cancel",
    "after-cancel",
    "close",
];

/// How long one client's whole run may take.
const LIMIT: Duration = Duration::from_secs(120);

/// One client against one server through the bridge.
struct Row {
    client: &'static str,
    server: &'static str,
    /// The client's program and arguments up to its `--`.
    program: OsString,
    args: Vec<OsString>,
    /// The server's command line (behind the wire tap and the bridge).
    server_command: Vec<OsString>,
    /// Whether the client reaches the bridge over Streamable HTTP (the
    /// client starts `mcp bridge --serve http` itself) rather than stdio.
    http: bool,
    /// The era the bridge speaks to the server whatever the client speaks
    /// (`--era modern`: a legacy client translated; `--era legacy`: a
    /// 2026-07-28 client translated), or `None` for the client's own.
    upstream_era: Option<&'static str>,
}

/// What one row gave.
struct Outcome {
    /// Each check's result: passed, and what was seen or why not.
    checks: Vec<(&'static str, bool, String)>,
    took: Duration,
    /// What else the client printed (the bridge's stderr on failure).
    notes: Vec<String>,
}

/// Runs every row with `mcp` (the CLI binary) and prints the table; fails
/// if any check failed.
pub(crate) fn run(paths: &Paths, installed: &Installed, mcp: &Path) -> Result {
    let network = if crate::interop::unshare_works() {
        "no network but loopback"
    } else {
        "npm and pip offline"
    };
    eprintln!(
        "\n==> interop: the TypeScript and Python SDKs' clients through `mcp bridge` ({network})"
    );
    let started = Instant::now();
    let sdk = paths.typescript_sdk();
    let sdk_version = version_of(&sdk.join("package.json"));
    let logs = scratch_dir()?;
    let mut results = Vec::new();
    for (i, row) in rows(paths, installed, &sdk).into_iter().enumerate() {
        let wire_log = logs.0.join(format!("wire-{i}.log"));
        let outcome = run_row(mcp, installed, paths, &row, &wire_log);
        results.push((row, outcome));
    }
    let failures = print(&results);
    eprintln!(
        "\n<== interop through `mcp bridge`: TypeScript SDK {sdk_version}, Python SDK {}, in {:.1?}",
        crate::interop::PYTHON_SDK_VERSION,
        started.elapsed()
    );
    if failures > 0 {
        return Err(format!(
            "{failures} check(s) of clients through `mcp bridge` failed"
        ));
    }
    Ok(())
}

/// The rows: the TypeScript client against both servers (it speaks the
/// handshake era), the Python client against the Python server in each of
/// its modes, and against server-everything (`auto`, which falls back to
/// the handshake).
fn rows(paths: &Paths, installed: &Installed, sdk: &Path) -> Vec<Row> {
    let python_server = vec![os(&installed.python), os(&paths.python_script())];
    let everything_server = vec![
        os(&installed.node),
        os(&paths.everything_entry()),
        "stdio".into(),
    ];
    let typescript = |server: &'static str, command: &[OsString]| Row {
        client: "typescript",
        server,
        program: os(&installed.node),
        args: vec![
            os(&paths.bridge_client("mjs")),
            "--sdk".into(),
            os(sdk),
            "--server".into(),
            server.into(),
        ],
        server_command: command.to_vec(),
        http: false,
        upstream_era: None,
    };
    let python = |client: &'static str, mode: &str, era: &str, server, command: &[OsString]| Row {
        client,
        server,
        program: os(&installed.python),
        args: vec![
            os(&paths.bridge_client("py")),
            "--server".into(),
            OsString::from(server),
            "--mode".into(),
            mode.into(),
            "--expect-era".into(),
            era.into(),
        ],
        server_command: command.to_vec(),
        http: false,
        upstream_era: None,
    };
    let over_http = |row: Row| Row { http: true, ..row };
    let pair = Row {
        client: "typescript http ×2",
        ..over_http(typescript("python", &python_server))
    };
    // A legacy-only client in front of a server spoken to in 2026-07-28.
    let translated = Row {
        client: "typescript → 07-28",
        upstream_era: Some("modern"),
        ..typescript("python", &python_server)
    };
    // A 2026-07-28 client in front of a server spoken to in the handshake
    // era: its elicitation comes to it as an `input_required` result.
    let downgraded = Row {
        upstream_era: Some("legacy"),
        ..python(
            "python 07-28 → legacy",
            "2026-07-28",
            "2026-07-28",
            "everything",
            &everything_server,
        )
    };
    vec![
        typescript("everything", &everything_server),
        typescript("python", &python_server),
        pair,
        translated,
        downgraded,
        python(
            "python legacy",
            "legacy",
            "legacy",
            "python",
            &python_server,
        ),
        python(
            "python 2026-07-28",
            "2026-07-28",
            "2026-07-28",
            "python",
            &python_server,
        ),
        python(
            "python auto",
            "auto",
            "2026-07-28",
            "python",
            &python_server,
        ),
        python(
            "python auto",
            "auto",
            "legacy",
            "everything",
            &everything_server,
        ),
        over_http(python(
            "python http legacy",
            "legacy",
            "legacy",
            "python",
            &python_server,
        )),
        over_http(python(
            "python http 07-28",
            "2026-07-28",
            "2026-07-28",
            "python",
            &python_server,
        )),
    ]
}

/// Runs one client, with no network, against `mcp -v bridge -- wiretap
/// -- SERVER`, and reads its report.
fn run_row(
    mcp: &Path,
    installed: &Installed,
    paths: &Paths,
    row: &Row,
    wire_log: &Path,
) -> Outcome {
    let mut command = crate::interop::offline_command(Path::new(&row.program));
    command.args(&row.args).arg("--wire-log").arg(wire_log);
    let era: Vec<&str> = match row.upstream_era {
        Some(era) => vec!["--era", era],
        None => Vec::new(),
    };
    let bridge: Vec<String> = match row.http {
        false => ["-v", "bridge"]
            .iter()
            .chain(&era)
            .chain(&["--"])
            .map(|s| s.to_string())
            .collect(),
        true => {
            let port = match crate::interop::serve::free_port() {
                Ok(port) => port,
                Err(e) => {
                    return Outcome {
                        checks: CHECKS
                            .map(|c| (c, false, format!("no free port: {e}")))
                            .to_vec(),
                        took: Duration::ZERO,
                        notes: Vec::new(),
                    };
                }
            };
            command.args(["--http", &port.to_string()]);
            ["-v", "bridge", "--serve", "http", "--listen"]
                .map(str::to_owned)
                .into_iter()
                .chain([format!("127.0.0.1:{port}"), "--".to_owned()])
                .collect()
        }
    };
    command
        .arg("--")
        .arg(mcp)
        .args(&bridge)
        .arg(&installed.python)
        .arg(paths.wiretap())
        .arg(wire_log)
        .arg("--")
        .args(&row.server_command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let output = crate::interop::output_within(command, LIMIT);
    let took = start.elapsed();
    let (stdout, mut notes) = match output {
        Ok(output) => {
            let mut notes = Vec::new();
            let stderr = String::from_utf8_lossy(&output.stderr);
            if !output.status.success() {
                notes.push(format!("the client: {}", output.status));
                if !stderr.trim().is_empty() {
                    notes.push(format!("stderr: {}", tail(&stderr)));
                }
            }
            (String::from_utf8_lossy(&output.stdout).into_owned(), notes)
        }
        Err(e) => (String::new(), vec![e]),
    };
    let mut checks = Vec::new();
    for name in CHECKS {
        let reported = stdout.lines().find_map(|line| {
            if let Some(rest) = line.strip_prefix("ok ") {
                let seen = rest.strip_prefix(name)?.strip_prefix(':')?;
                Some((true, seen.trim().to_owned()))
            } else if let Some(rest) = line.strip_prefix("FAIL ") {
                let why = rest.strip_prefix(name)?.strip_prefix(':')?;
                Some((false, why.trim().to_owned()))
            } else {
                None
            }
        });
        let (ok, seen) = reported.unwrap_or((false, "not reported".to_owned()));
        checks.push((name, ok, seen));
    }
    notes.extend(
        stdout
            .lines()
            .filter(|l| {
                !l.starts_with("ok ")
                    && !CHECKS.iter().any(|c| l.starts_with(&format!("FAIL {c}:")))
            })
            .map(str::to_owned),
    );
    if let Some(era) = row.upstream_era {
        spoke(era, &mut checks, wire_log);
    }
    Outcome {
        checks,
        took,
        notes,
    }
}

/// A translated row's `connect` holds only if the bridge spoke the era it
/// was told to the server: for `modern`, `server/discover` sent and never
/// `initialize`; for `legacy`, the other way round.
fn spoke(era: &str, checks: &mut [(&'static str, bool, String)], wire_log: &Path) {
    let sent: Vec<String> = std::fs::read_to_string(wire_log)
        .unwrap_or_default()
        .lines()
        .filter(|l| {
            l.trim_start()
                .split_once(' ')
                .is_some_and(|(_, rest)| rest.starts_with("> "))
        })
        .map(str::to_owned)
        .collect();
    let sent_method = |m: &str| {
        sent.iter()
            .any(|l| l.contains(&format!("\"method\":\"{m}\"")))
    };
    let Some(connect) = checks.iter_mut().find(|(name, ..)| *name == "connect") else {
        return;
    };
    let (spoken, unspoken, revision) = match era {
        "modern" => ("server/discover", "initialize", "2026-07-28"),
        _ => ("initialize", "server/discover", "the handshake era"),
    };
    if sent_method(unspoken) || !sent_method(spoken) {
        connect.1 = false;
        connect.2 = format!(
            "the bridge did not speak {revision} to the server ({spoken} sent: {}, {unspoken} sent: {})",
            sent_method(spoken),
            sent_method(unspoken)
        );
    } else {
        connect
            .2
            .push_str(&format!("; to the server: {spoken}, never {unspoken}"));
    }
}

/// Prints the table, then what each check saw; returns the failures.
fn print(results: &[(Row, Outcome)]) -> usize {
    println!("\nclients written by others through `mcp bridge` (a client process per row):\n");
    println!("| client              | server     | check        | result |");
    println!("|---------------------|------------|--------------|--------|");
    let mut failures = 0;
    for (row, outcome) in results {
        for (check, ok, _) in &outcome.checks {
            if !ok {
                failures += 1;
            }
            println!(
                "| {:<19} | {:<10} | {:<12} | {:<6} |",
                row.client,
                row.server,
                check,
                if *ok { "ok" } else { "FAIL" }
            );
        }
    }
    println!();
    for (row, outcome) in results {
        println!("{} × {} ({}):", row.client, row.server, ms(outcome.took));
        for (check, ok, seen) in &outcome.checks {
            if *ok {
                println!("  - {check}: {seen}");
            } else {
                println!("  - {check}: FAIL: {seen}");
            }
        }
        for note in &outcome.notes {
            println!("  - {note}");
        }
    }
    let total: usize = results.iter().map(|(_, o)| o.checks.len()).sum();
    println!("\n{total} checks through the bridge, {failures} failed");
    failures
}

/// A package's `"version"`, or `?`.
fn version_of(package_json: &Path) -> String {
    let text = std::fs::read_to_string(package_json).unwrap_or_default();
    text.split("\"version\"")
        .nth(1)
        .and_then(|rest| rest.split('"').nth(1))
        .unwrap_or("?")
        .to_owned()
}

/// The last part of a long text, on one line.
fn tail(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let start = chars.len().saturating_sub(600);
    chars[start..]
        .iter()
        .collect::<String>()
        .replace('\n', " | ")
}

/// A directory removed when dropped, for the wire logs.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch_dir() -> Result<TempDir> {
    let dir = std::env::temp_dir().join(format!("xtask-bridge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    Ok(TempDir(dir))
}

/// `cargo xtask interop-bridge`: only this step (installing the pinned
/// software when missing, building only the `mcp` binary).
pub(crate) fn bridge_only() -> Result {
    let paths = Paths::new();
    let installed = crate::interop::install_and_show(&paths)?;
    crate::run(
        "cargo",
        &["build", "--quiet", "-p", "mcp-steady-cli", "--bin", "mcp"],
        &[],
    )?;
    let mcp = crate::interop::target_dir()?
        .join("debug")
        .join(format!("mcp{}", std::env::consts::EXE_SUFFIX));
    run(&paths, &installed, &mcp)
}
