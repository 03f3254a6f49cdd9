//! `cargo xtask fuzz [--seconds N] [--planted] [TARGET...]`: runs each
//! fuzz target of `fuzz/` (every one, or those named) for N seconds (60
//! by default) with `cargo +nightly fuzz run`, then minimizes its corpus
//! (`cargo fuzz cmin`), and prints per target the executions, libFuzzer's
//! final coverage figures (`cov`: edges reached, `ft`: features) and the
//! corpus's size.
//!
//! - Each target starts from its seeds, `fuzz/seeds/<target>/` (inputs
//!   written by hand, never changed by a run), and its corpus,
//!   `fuzz/corpus/<target>/`, where libFuzzer adds what it finds; both are
//!   committed (20 MiB at most in all, which the task checks; inputs of
//!   at most 4 KiB each).
//! - A crash's input is copied from libFuzzer's `fuzz/artifacts/<target>/`
//!   to `fuzz/regressions/<target>/`, to be committed with its fix: the
//!   replay test of `xtask/fuzz-checks` (part of `cargo xtask test`, on stable)
//!   feeds every corpus and regression input to the same checks.
//! - `--planted` builds the library with `--cfg fuzz_planted`, which plants
//!   one bug for each target to find, into a target folder of its own,
//!   runs the targets that have a planted bug from their seeds alone, and
//!   prints how long each took to find it; nothing of that run is kept.
//!   The bugs: a size bound off by one in `mcp_protocol::framing`
//!   (`framing`) and in the HTTP transport's SSE reader (`sse`); the
//!   JSON-RPC fast path reading only the major version of `jsonrpc`
//!   (`jsonrpc`); DEL sent unencoded in a header value (`headers`); a
//!   quoted string's escaped backslash before its closing quote read as
//!   an escaped quote (`www_authenticate`); a registration's secret method
//!   kept without a secret (`oauth`); a cassette's lines split at `\n`
//!   alone, keeping a `\r` (`cassette`); a `$$` that ends a value of a
//!   servers file not read as a `$` (`mcp_servers`); a dropped request's
//!   entry left in the engine's pending table (`engine`); a `Host` with an
//!   empty port taken for loopback by `mcp bridge --serve http`
//!   (`bridge_http`).
//!
//! cargo-fuzz is installed into `.cache/cargo-fuzz/` when it is not on the
//! `PATH` (`cargo install cargo-fuzz --locked`); the targets go through
//! clippy, then build with the nightly toolchain, without a sanitizer (the
//! code under test is safe Rust; libFuzzer's coverage is all it needs),
//! into `fuzz/target/`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::{Result, run};

/// The targets with a bug behind `--cfg fuzz_planted`.
const PLANTED: &[&str] = &[
    "framing",
    "jsonrpc",
    "sse",
    "headers",
    "www_authenticate",
    "oauth",
    "cassette",
    "mcp_servers",
    "engine",
    "bridge_http",
];

/// The most the committed corpora may weigh, in all.
const MAX_CORPUS_BYTES: u64 = 20 << 20;

/// What the task was asked.
struct Options {
    seconds: u64,
    planted: bool,
    targets: Vec<String>,
}

fn options(args: &[String]) -> Result<Options> {
    let mut options = Options {
        seconds: 60,
        planted: false,
        targets: Vec::new(),
    };
    let mut args = args.iter().filter(|a| *a != "--");
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seconds" => {
                let n = args.next().ok_or("--seconds needs a number")?;
                options.seconds = n
                    .parse()
                    .map_err(|_| format!("--seconds {n:?} is not a number"))?;
            }
            "--planted" => options.planted = true,
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag}")),
            target => options.targets.push(target.to_owned()),
        }
    }
    Ok(options)
}

/// The task.
pub(crate) fn fuzz(args: &[String]) -> Result {
    let options = options(args)?;
    let root = root()?;
    let all = targets(&root)?;
    let chosen: Vec<String> = if options.targets.is_empty() {
        all.clone()
    } else {
        options.targets.clone()
    };
    if let Some(unknown) = chosen.iter().find(|t| !all.contains(t)) {
        return Err(format!(
            "no fuzz target {unknown:?} (targets: {})",
            all.join(", ")
        ));
    }
    let path = cargo_fuzz_path(&root)?;
    if options.planted {
        return planted(&root, &path, &chosen, options.seconds);
    }
    let target_dir = root.join("fuzz/target");
    clippy(&root, &target_dir)?;
    build(&root, &path, &target_dir, &[])?;
    let mut figures = Vec::new();
    let mut crashed = Vec::new();
    for target in &chosen {
        let found = run_target(&root, &path, &target_dir, target, options.seconds)?;
        if found.crashed {
            crashed.push(target.clone());
            keep_crashes(&root, target)?;
        }
        minimize(&root, &path, &target_dir, target)?;
        let (files, bytes) = corpus_size(&root.join("fuzz/corpus").join(target));
        figures.push((target.clone(), found, files, bytes));
    }
    report(&figures);
    let (_, total) = corpus_size(&root.join("fuzz/corpus"));
    if total > MAX_CORPUS_BYTES {
        return Err(format!(
            "the corpora weigh {total} bytes, over {MAX_CORPUS_BYTES}"
        ));
    }
    if crashed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "crashes in {}: their inputs are in fuzz/regressions/ (replayed by the tests)",
            crashed.join(", ")
        ))
    }
}

fn root() -> Result<PathBuf> {
    Ok(Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("xtask has no parent directory")?
        .to_path_buf())
}

/// The targets, from `fuzz/fuzz_targets/*.rs`.
fn targets(root: &Path) -> Result<Vec<String>> {
    let dir = root.join("fuzz/fuzz_targets");
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".rs").map(str::to_owned)
        })
        .collect();
    names.sort();
    Ok(names)
}

/// A `PATH` on which `cargo fuzz` is found: as it is, or with
/// `.cache/cargo-fuzz/bin` first, after installing it there if needed.
fn cargo_fuzz_path(root: &Path) -> Result<String> {
    let cache = root.join(".cache/cargo-fuzz");
    let bin = cache.join("bin");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![bin.clone()];
    dirs.extend(std::env::split_paths(&path));
    let path = std::env::join_paths(dirs)
        .map_err(|e| format!("PATH: {e}"))?
        .to_string_lossy()
        .into_owned();
    let found = Command::new("cargo")
        .args(["fuzz", "--version"])
        .env("PATH", &path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        let root_arg = cache.to_string_lossy().into_owned();
        run(
            "cargo",
            &["install", "cargo-fuzz", "--locked", "--root", &root_arg],
            &[],
        )?;
    }
    Ok(path)
}

/// `cargo +nightly fuzz SUBCOMMAND` from the root, with `PATH` and the
/// build's flags.
fn cargo_fuzz(path: &str, target_dir: &Path, rustflags: &[(&str, &str)]) -> Command {
    let mut command = Command::new("cargo");
    command
        .arg("+nightly")
        .env("PATH", path)
        .env("CARGO_INCREMENTAL", "0")
        .env("CARGO_TARGET_DIR", target_dir)
        .envs(rustflags.iter().copied());
    command
}

/// The build options every `cargo fuzz` subcommand takes.
fn build_args(target_dir: &Path) -> Vec<String> {
    vec![
        "--fuzz-dir".into(),
        "fuzz".into(),
        "--sanitizer".into(),
        "none".into(),
        "--target-dir".into(),
        target_dir.to_string_lossy().into_owned(),
    ]
}

/// Clippy over the targets, on nightly as they are built (their checks,
/// a member of the root workspace, go through its own clippy).
fn clippy(root: &Path, target_dir: &Path) -> Result {
    let target = target_dir.join("clippy").to_string_lossy().into_owned();
    let manifest = root.join("fuzz/Cargo.toml").to_string_lossy().into_owned();
    run(
        "cargo",
        &[
            "+nightly",
            "clippy",
            "--manifest-path",
            &manifest,
            "--all-targets",
            "--target-dir",
            &target,
            "--",
            "-D",
            "warnings",
        ],
        &[("CARGO_INCREMENTAL", "0")],
    )
}

fn build(root: &Path, path: &str, target_dir: &Path, env: &[(&str, &str)]) -> Result {
    let start = Instant::now();
    eprintln!("\n==> cargo +nightly fuzz build");
    let status = cargo_fuzz(path, target_dir, env)
        .current_dir(root)
        .args(["fuzz", "build"])
        .args(build_args(target_dir))
        .status()
        .map_err(|e| format!("could not start cargo +nightly fuzz: {e}"))?;
    eprintln!("<== built in {:.1?}", start.elapsed());
    if status.success() {
        Ok(())
    } else {
        Err(format!("cargo +nightly fuzz build failed ({status})"))
    }
}

/// What one run of a target showed.
#[derive(Default)]
struct Found {
    executions: Option<u64>,
    cov: Option<u64>,
    ft: Option<u64>,
    crashed: bool,
    elapsed: Duration,
}

/// Runs a target on `corpus` (where new inputs go) and its seeds
/// (libFuzzer's own output goes to `fuzz/target/logs/<target>.log`), and
/// reads its figures.
fn fuzz_run(
    root: &Path,
    command: Command,
    target: &str,
    corpus: &Path,
    extra: &[String],
) -> Result<Found> {
    let seeds = root.join("fuzz/seeds").join(target);
    let logs = root.join("fuzz/target/logs");
    std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    let log_path = logs.join(format!("{target}.log"));
    let log =
        std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    let mut command = command;
    command
        .current_dir(root)
        .arg(corpus)
        .arg(seeds)
        .arg("--")
        .args(extra)
        .args(["-print_final_stats=1", "-max_len=4096", "-timeout=10"])
        .stderr(log);
    eprintln!("\n==> fuzz {target} ({})", log_path.display());
    let start = Instant::now();
    let status = command
        .status()
        .map_err(|e| format!("could not start cargo +nightly fuzz run: {e}"))?;
    let elapsed = start.elapsed();
    let text = std::fs::read_to_string(&log_path).unwrap_or_default();
    let mut found = figures(&text);
    found.crashed = !status.success();
    found.elapsed = elapsed;
    Ok(found)
}

fn run_target(
    root: &Path,
    path: &str,
    target_dir: &Path,
    target: &str,
    seconds: u64,
) -> Result<Found> {
    let mut command = cargo_fuzz(path, target_dir, &[]);
    command
        .args(["fuzz", "run"])
        .args(build_args(target_dir))
        .arg(target);
    let corpus = root.join("fuzz/corpus").join(target);
    std::fs::create_dir_all(&corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
    let found = fuzz_run(
        root,
        command,
        target,
        &corpus,
        &[format!("-max_total_time={seconds}")],
    )?;
    Ok(found)
}

/// The figures of libFuzzer's log: executions from its final stats, and
/// `cov` and `ft` from the last status line that has them.
fn figures(log: &str) -> Found {
    let mut found = Found::default();
    let number = |line: &str, key: &str| -> Option<u64> {
        let rest = &line[line.find(key)? + key.len()..];
        let digits: String = rest
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    };
    let mut last_status = None;
    for line in log.lines() {
        if let Some(n) = number(line, "stat::number_of_executed_units:") {
            found.executions = Some(n);
        }
        if line.starts_with('#') && line.contains(" cov: ") {
            found.cov = number(line, " cov:").or(found.cov);
            found.ft = number(line, " ft:").or(found.ft);
            // `#N` counts executions too, for a run that stopped early.
            last_status = number(line, "#").or(last_status);
        }
    }
    found.executions = found.executions.or(last_status);
    found
}

/// Copies libFuzzer's crash inputs of `target` into its regressions.
fn keep_crashes(root: &Path, target: &str) -> Result {
    let artifacts = root.join("fuzz/artifacts").join(target);
    let regressions = root.join("fuzz/regressions").join(target);
    std::fs::create_dir_all(&regressions).map_err(|e| format!("{}: {e}", regressions.display()))?;
    for entry in std::fs::read_dir(&artifacts)
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = entry.file_name();
        let to = regressions.join(&name);
        std::fs::copy(entry.path(), &to).map_err(|e| format!("{}: {e}", to.display()))?;
        eprintln!("crash input kept: {}", to.display());
    }
    Ok(())
}

/// `cargo fuzz cmin`: the corpus cut to the inputs that reach something
/// no other does.
fn minimize(root: &Path, path: &str, target_dir: &Path, target: &str) -> Result {
    let status = cargo_fuzz(path, target_dir, &[])
        .current_dir(root)
        .args(["fuzz", "cmin"])
        .args(build_args(target_dir))
        .arg(target)
        .arg("--")
        .arg("-max_len=4096")
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("could not start cargo +nightly fuzz cmin: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("cargo fuzz cmin {target} failed ({status})"))
    }
}

/// Files and bytes under `dir`, recursively.
fn corpus_size(dir: &Path) -> (u64, u64) {
    let mut files = 0;
    let mut bytes = 0;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            let (f, b) = corpus_size(&path);
            files += f;
            bytes += b;
        } else if let Ok(meta) = entry.metadata() {
            files += 1;
            bytes += meta.len();
        }
    }
    (files, bytes)
}

fn show(n: Option<u64>) -> String {
    n.map_or_else(|| "?".to_owned(), |n| n.to_string())
}

fn report(figures: &[(String, Found, u64, u64)]) {
    println!(
        "\n| target | seconds | executions | cov | ft | corpus files | corpus bytes | crash |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---|");
    for (target, found, files, bytes) in figures {
        println!(
            "| {target} | {:.0} | {} | {} | {} | {files} | {bytes} | {} |",
            found.elapsed.as_secs_f64(),
            show(found.executions),
            show(found.cov),
            show(found.ft),
            if found.crashed { "yes" } else { "no" }
        );
    }
}

/// The planted bugs: each target that has one, from its seeds alone,
/// until it crashes or `seconds` pass.
fn planted(root: &Path, path: &str, chosen: &[String], seconds: u64) -> Result {
    let target_dir = root.join("fuzz/target/planted");
    let flags = [("RUSTFLAGS", "--cfg fuzz_planted")];
    build(root, path, &target_dir, &flags)?;
    let mut missed = Vec::new();
    println!("\n| target | planted bug found | seconds | executions |");
    println!("|---|---|---:|---:|");
    for target in chosen.iter().filter(|t| PLANTED.contains(&t.as_str())) {
        let scratch = target_dir.join("scratch").join(target);
        let _ = std::fs::remove_dir_all(&scratch);
        let corpus = scratch.join("corpus");
        std::fs::create_dir_all(&corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
        let mut command = cargo_fuzz(path, &target_dir, &flags);
        command
            .args(["fuzz", "run"])
            .args(build_args(&target_dir))
            .arg(target);
        let extra = [
            format!("-max_total_time={seconds}"),
            format!("-artifact_prefix={}/", scratch.display()),
        ];
        let found = fuzz_run(root, command, target, &corpus, &extra)?;
        println!(
            "| {target} | {} | {:.1} | {} |",
            if found.crashed { "yes" } else { "no" },
            found.elapsed.as_secs_f64(),
            show(found.executions)
        );
        if !found.crashed {
            missed.push(target.clone());
        }
    }
    if missed.is_empty() {
        Ok(())
    } else {
        Err(format!("planted bugs not found: {}", missed.join(", ")))
    }
}
