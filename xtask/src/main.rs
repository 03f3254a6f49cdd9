//! The workspace's own automation, run as `cargo xtask <task>`.
//!
//! - `cargo xtask test`: everything CI checks: formatting, clippy with
//!   warnings denied, docs without warnings (all features), the dependency
//!   rules between crates, `cargo package` of every published crate, every
//!   test (unit, integration, doc), the examples, a quick run of
//!   the benchmarks (`bench --quick`), and at the end the interop suite,
//!   then the conformance suite.
//! - `cargo xtask deps`: only the dependency rules (see [`deps`]).
//! - `cargo xtask modules`: no import circle among the files of
//!   `mcp-auth`, `mcp-transport-http` and `mcp-client` (see [`modules`]);
//!   `test` runs it next to the dependency rules.
//! - `cargo xtask sizes [-- --report]`: the longest functions and files of
//!   the library crates, failing when too many functions are long (see
//!   [`sizes`]); `test` runs it next to `modules`.
//! - `cargo xtask interop [-- RUNNER ARGS]`: installs pinned real servers
//!   into `.cache/interop/` (only when missing; a second run needs no
//!   network, which the task proves), then runs the library and the `mcp`
//!   command line against each of them over stdio, Streamable HTTP and
//!   HTTP+SSE in each era, and prints a table of server × era × check per
//!   wire (see [`interop`]).
//! - `cargo xtask interop-install [--offline]`: only the install step; with
//!   `--offline`, fails if anything would need installing.
//! - `cargo xtask interop-bridge`: only the interop task's step where the
//!   official TypeScript and Python SDKs' clients drive `mcp bridge` in
//!   front of each server (see [`bridge_interop`]); installs what is
//!   missing and builds only the `mcp` binary.
//! - `cargo xtask interop-cli-http --mcp MCP --node NODE --python PYTHON`:
//!   the interop task's CLI checks over HTTP, which it runs in a network
//!   namespace of their own (see [`cli_http`]).
//! - `cargo xtask interop-oauth --mcp MCP --node NODE --python PYTHON`:
//!   the interop task's OAuth rows (`mcp login` at oidc-provider, in front
//!   of the Python SDK's server), which it runs in a network namespace of
//!   their own (see [`cli_oauth`]).
//! - `cargo xtask conformance`: installs the official MCP conformance suite
//!   (pinned, with Node 22) into `.cache/conformance/` when missing, and runs
//!   it against `mcp-conformance-client`: the requirements of 2025-11-25 and
//!   2026-07-28, then `--suite all` at each revision, then its server
//!   scenarios of both revisions against the reference server
//!   (`--conformance`); prints a table of every scenario and check (see
//!   [`conformance`]). Only `auth/…` scenarios may fail, as listed in
//!   `xtask/conformance/expected-failures.yml`.
//! - `cargo xtask conformance-install [--offline]`: only its install step.
//! - `cargo xtask conformance-server`: only the server legs.
//! - `cargo xtask bench [-- --quick]`: every benchmark row (stdio and HTTP
//!   latency and throughput, memory, large results, connect, idle
//!   connections, protocol micro-benchmarks) against the limit and against
//!   rmcp (see [`mod@bench`]); writes `BENCHMARKS.md`. `--quick`: a tiny run
//!   of every row without rmcp, into `target-bench/bench-quick.md`.
//! - `cargo xtask fuzz [--seconds N] [--planted] [TARGET...]`: each fuzz
//!   target of `fuzz/` for N seconds with `cargo +nightly fuzz` (installed
//!   into `.cache/cargo-fuzz/` when missing), its corpus minimized, a
//!   crash's input kept in `fuzz/regressions/`; prints executions, `cov`,
//!   `ft` and corpus size per target (see [`fuzz`]). `test` replays every
//!   committed input on stable, in the tests of `xtask/fuzz-checks`.

mod bench;
mod bridge_interop;
mod cli;
mod cli_http;
mod cli_oauth;
mod conformance;
mod deps;
mod fuzz;
mod interop;
mod modules;
mod sizes;

use std::process::{Command, ExitCode};
use std::time::Instant;

fn main() -> ExitCode {
    // `cargo run` (which `cargo xtask` is) sets this for the task; the
    // cargo commands the task runs must not inherit it: build scripts that
    // watch it (ring's) would rerun, and the workspace be rebuilt, whenever
    // a build alternates between the task and a shell.
    // SAFETY: first thing in `main`, before any thread is started.
    unsafe { std::env::remove_var("CARGO_MANIFEST_DIR") };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let task = args.first().map(String::as_str).unwrap_or("help");
    let result = match task {
        "test" => test(),
        "deps" => deps::deps(),
        "modules" => modules::modules(),
        "sizes" => sizes::sizes(&args[1..]),
        "interop" => interop::interop(&args[1..]),
        "interop-install" => interop::install_only(&args[1..]),
        "interop-bridge" => bridge_interop::bridge_only(),
        "interop-cli-http" => cli_http::serve_and_check(&args[1..]),
        "interop-oauth" => cli_oauth::serve_and_check(&args[1..]),
        "conformance" => conformance::conformance(&args[1..]),
        "conformance-install" => conformance::install_only(&args[1..]),
        "conformance-server" => conformance::conformance_server(&args[1..]),
        "bench" => bench::bench(&args[1..]),
        "fuzz" => fuzz::fuzz(&args[1..]),
        _ => {
            eprintln!(
                "usage: cargo xtask <task>\n\ntasks:\n  test              fmt, clippy, docs, dependency rules, packaging, every test, bench --quick, then interop and conformance\n  deps              the dependency rules only\n  modules           no import circle among the files of mcp-auth, mcp-transport-http, mcp-client and mcp-bridge\n  sizes             the longest functions and files of the library crates (`-- --report`: never fail)\n  interop           real servers (installed into .cache/interop) against the library and the CLI\n                    (`cargo xtask interop -- --help` for the runner's options)\n  interop-install   only install them (--offline: fail if that would need the network)\n  interop-bridge    only the TypeScript and Python SDKs' clients through `mcp bridge` (installs when missing)\n  conformance       the official MCP conformance suite (installed into .cache/conformance) against the client\n  conformance-install  only install it (--offline: fail if that would need the network)\n  conformance-server   only its server legs: the suite's server scenarios against the reference server\n  bench             every benchmark row vs the limit and rmcp, written to BENCHMARKS.md\n                    (built in target-bench/; `-- --quick`: a tiny run without rmcp, as CI does)\n  fuzz              each fuzz target for --seconds N (60), with cargo +nightly fuzz; [TARGET...] [--planted]"
            );
            return if task == "help" || task == "--help" {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            };
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask {task}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// What every task returns: an error is a message for the user.
type Result<T = ()> = std::result::Result<T, String>;

/// Runs a command, echoing it, and fails if it fails.
/// Builds every target of the workspace with every feature, as the tests
/// are built: the binaries and examples the later steps run then come from
/// the same build (and cost nothing after the tests), instead of each
/// `-p` build resolving features (and dev-dependency features) its own way
/// and rebuilding half the graph.
pub(crate) fn build_all() -> Result {
    run(
        "cargo",
        &[
            "build",
            "--quiet",
            "--workspace",
            "--all-features",
            "--all-targets",
        ],
        &[],
    )
}

fn run(program: &str, args: &[&str], envs: &[(&str, &str)]) -> Result {
    let shown = format!("{program} {}", args.join(" "));
    eprintln!("\n==> {shown}");
    let start = Instant::now();
    let status = Command::new(program)
        .args(args)
        .envs(envs.iter().copied())
        .status()
        .map_err(|e| format!("could not start `{shown}`: {e}"))?;
    eprintln!("<== {shown}: {status} in {:.1?}", start.elapsed());
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{shown}` failed ({status})"))
    }
}

/// Runs a command quietly and returns its stdout; fails if it fails.
fn output(program: &str, args: &[&str]) -> Result<String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("could not start `{program}`: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`{program} {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn has_nextest() -> bool {
    Command::new("cargo")
        .args(["nextest", "--version"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn test() -> Result {
    run("cargo", &["fmt", "--all", "--check"], &[])?;
    // The bench is a workspace of its own, which `--all` does not reach.
    run(
        "cargo",
        &[
            "fmt",
            "--manifest-path",
            "xtask/bench/Cargo.toml",
            "--check",
        ],
        &[],
    )?;
    // The fuzz targets are a workspace of their own too (their checks,
    // `xtask/fuzz-checks`, are a member of this one).
    run(
        "cargo",
        &["fmt", "--manifest-path", "fuzz/Cargo.toml", "--check"],
        &[],
    )?;
    run(
        "cargo",
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--all-features",
            "--",
            "-D",
            "warnings",
        ],
        &[],
    )?;
    deps::deps()?;
    modules::modules()?;
    sizes::sizes(&[])?;
    run(
        "cargo",
        &["doc", "--workspace", "--no-deps", "--all-features"],
        &[("RUSTDOCFLAGS", "-D warnings")],
    )?;
    // The client's private docs too: `call/mod.rs` links each step of a
    // request's path, which ARCHITECTURE.md names.
    run(
        "cargo",
        &[
            "doc",
            "-p",
            "mcp-steady-client",
            "--no-deps",
            "--all-features",
            "--document-private-items",
        ],
        &[("RUSTDOCFLAGS", "-D warnings")],
    )?;
    client_docs_per_feature_set()?;
    package()?;
    if has_nextest() {
        run(
            "cargo",
            &[
                "nextest",
                "run",
                "--workspace",
                "--all-features",
                "--no-fail-fast",
            ],
            &[],
        )?;
    } else {
        eprintln!("cargo-nextest is not installed; running cargo test instead");
        run(
            "cargo",
            &[
                "test",
                "--workspace",
                "--all-features",
                "--lib",
                "--bins",
                "--tests",
            ],
            &[],
        )?;
    }
    // nextest does not run doctests.
    run(
        "cargo",
        &["test", "--workspace", "--all-features", "--doc"],
        &[],
    )?;
    // The examples the README points at build and run, each asserting
    // what it shows, against the reference server.
    build_all()?;
    run_examples()?;
    // The benchmarks keep building and running: every row, tiny, without
    // rmcp (figures not published).
    bench::bench(&["--quick".to_owned()])?;
    // Last: real servers, then the conformance suite, installed on first use.
    interop::interop(&[])?;
    conformance::conformance(&[])
}

/// The client's docs in each feature set users pick: a link to an item
/// behind a feature must not break when the feature is off.
fn client_docs_per_feature_set() -> Result {
    let sets: [&[&str]; 4] = [
        &["--no-default-features"],
        &[],
        &["--no-default-features", "--features", "http"],
        &["--no-default-features", "--features", "oauth"],
    ];
    for set in sets {
        let mut args = vec!["doc", "-p", "mcp-steady-client", "--no-deps"];
        args.extend_from_slice(set);
        run("cargo", &args, &[("RUSTDOCFLAGS", "-D warnings")])?;
    }
    Ok(())
}

/// The client's examples, run with no argument (each then serves itself
/// the reference server), in the order a newcomer reads them.
const EXAMPLES: [&str; 9] = [
    "quickstart",
    "http",
    "oauth",
    "handlers",
    "progress",
    "supervised",
    "host",
    "replay",
    "tools_for_a_model",
];

fn run_examples() -> Result {
    let dir = interop::target_dir()?.join("debug").join("examples");
    let start = Instant::now();
    for example in EXAMPLES {
        let binary = dir.join(format!("{example}{}", std::env::consts::EXE_SUFFIX));
        run(&binary.to_string_lossy(), &[], &[])?;
    }
    eprintln!("examples: {} in {:.1?}", EXAMPLES.len(), start.elapsed());
    Ok(())
}

/// `cargo package` for every published crate, each built from its packaged
/// sources alone. Cargo packages them in dependency order and verifies each
/// against the workspace's own packages through a temporary local registry
/// (`target/package/tmp-registry`), never against a same-named crate on
/// crates.io. `--allow-dirty` so that it also runs on a work tree with
/// uncommitted changes; a fresh clone is clean anyway. `cargo package` does
/// not skip `publish = false` members, so those are excluded by name.
fn package() -> Result {
    // Cargo takes a registry crate of a given name and version as never
    // changing, so a verification build would reuse what it compiled from
    // an earlier packaging of the workspace's own crates (they are 0.1.0
    // every time). Verification builds go to a folder of their own, from
    // which the workspace's crates are forgotten before each run; the
    // third-party crates stay compiled there.
    let target = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target");
    let verify = target.join("package-verify");
    // Cargo also unpacks a local registry's crates into
    // `$CARGO_HOME/registry/src/-<hash of the registry's path>/` once and
    // reuses them: the workspace's crates are forgotten there too.
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cargo")));
    let mut dirs = vec![
        target.join("package"),
        verify.join("package"),
        verify.join("debug/.fingerprint"),
    ];
    if let Some(home) = cargo_home
        && let Ok(sources) = std::fs::read_dir(home.join("registry/src"))
    {
        // Local registries' folders start with `-` (they have no host name).
        dirs.extend(
            sources
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with('-'))
                .map(|e| e.path()),
        );
    }
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with("mcp-steady-")
            {
                let path = entry.path();
                let removed = if path.is_dir() {
                    std::fs::remove_dir_all(&path)
                } else {
                    std::fs::remove_file(&path)
                };
                removed.map_err(|e| format!("cannot clear {}: {e}", path.display()))?;
            }
        }
    }
    let verify = verify.to_string_lossy().into_owned();
    run(
        "cargo",
        &[
            "package",
            "--workspace",
            "--exclude",
            "xtask",
            "--exclude",
            "mcp-steady-conformance",
            "--exclude",
            "mcp-architecture",
            "--exclude",
            "mcp-interop-runner",
            "--exclude",
            "mcp-fuzz-checks",
            "--allow-dirty",
            "--target-dir",
            &verify,
        ],
        &[],
    )
}
