//! `cargo xtask bench`: every row of the benchmarks (stdio and HTTP latency
//! and throughput, memory, large results, connect, idle connections,
//! protocol micro-benchmarks), our client against the limit (the same bytes
//! moved with no client library) and against rmcp, the official Rust SDK,
//! in the same run; the table goes to `BENCHMARKS.md` at the root.
//!
//! The benchmarks live in `xtask/bench/`, a crate of its own workspace (not a
//! member of this one), so that the workspace's clippy and tests never
//! compile rmcp. This task builds it and the reference server
//! `mcp-reference-server` into `target-bench/`, in one cargo invocation (so
//! that both share one feature resolution and compile the workspace crates
//! once), and runs it.
//!
//! `--quick` (what `cargo xtask test` runs, so that CI keeps the benchmarks
//! building and running) builds without the `rmcp` feature, in the lighter
//! `bench-quick` profile, and runs a tiny version of every row with ours and
//! the limit only; its table goes to `target-bench/bench-quick.md`, never
//! published.

use std::path::PathBuf;

use crate::{Result, run};

/// Builds and runs the benchmarks; `args` go to the bench binary (`--quick`
/// for the short run).
pub(crate) fn bench(args: &[String]) -> Result {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("xtask has no parent directory")?
        .to_path_buf();
    // `cargo xtask bench -- --quick` passes the `--` on.
    let args: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| *a != "--")
        .collect();
    let quick = args.contains(&"--quick");
    let manifest = root.join("xtask/bench/Cargo.toml");
    let target = root.join("target-bench");
    let manifest_arg = manifest.to_string_lossy().into_owned();
    let target_arg = target.to_string_lossy().into_owned();
    let profile = if quick { "bench-quick" } else { "release" };
    let mut build = vec![
        "build",
        "--profile",
        profile,
        "--locked",
        "--manifest-path",
        &manifest_arg,
        "--target-dir",
        &target_arg,
        "-p",
        "mcp-bench",
        "-p",
        "mcp-steady-reference-server",
        "--bin",
        "mcp-bench",
        "--bin",
        "mcp-reference-server",
    ];
    if quick {
        // rmcp's rows need the full run: CI never compiles rmcp.
        build.push("--no-default-features");
    }
    run("cargo", &build, &[])?;
    let dir = target.join(profile);
    let bench = dir.join(format!("mcp-bench{}", std::env::consts::EXE_SUFFIX));
    let server = dir.join(format!(
        "mcp-reference-server{}",
        std::env::consts::EXE_SUFFIX
    ));
    let out = if quick {
        target.join("bench-quick.md")
    } else {
        root.join("BENCHMARKS.md")
    };
    let out = out.to_string_lossy().into_owned();
    let server = server.to_string_lossy().into_owned();
    let mut bench_args = vec!["--server", server.as_str(), "--out", out.as_str()];
    bench_args.extend(args);
    run(&bench.to_string_lossy(), &bench_args, &[])
}
