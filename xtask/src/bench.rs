//! `cargo xtask bench`: latency, throughput, memory and connect time of the
//! client over stdio, against the limit (a bare pipe moving the same bytes)
//! and against rmcp, the official Rust SDK, in the same run.
//!
//! The benchmarks live in `xtask/bench/`, a crate of its own workspace (not a
//! member of this one), so that `cargo xtask test` never compiles rmcp. This
//! task builds it and the reference server `mcp-testkit-server` in release
//! mode into `target-bench/`, in one cargo invocation (so that both share one
//! feature resolution and compile the workspace crates once), runs it, and
//! writes its table to `target-bench/bench.md`.

use std::path::PathBuf;

use crate::{Result, run};

/// Builds and runs the benchmarks; `args` go to the bench binary (`--quick`
/// for a short run).
pub(crate) fn bench(args: &[String]) -> Result {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("xtask has no parent directory")?
        .to_path_buf();
    let manifest = root.join("xtask/bench/Cargo.toml");
    let target = root.join("target-bench");
    let manifest_arg = manifest.to_string_lossy().into_owned();
    let target_arg = target.to_string_lossy().into_owned();
    run(
        "cargo",
        &[
            "build",
            "--release",
            "--locked",
            "--manifest-path",
            &manifest_arg,
            "--target-dir",
            &target_arg,
            "-p",
            "mcp-bench",
            "-p",
            "mcp-steady-testkit",
            "--bin",
            "mcp-bench",
            "--bin",
            "mcp-testkit-server",
        ],
        &[],
    )?;
    let release = target.join("release");
    let bench = release.join(format!("mcp-bench{}", std::env::consts::EXE_SUFFIX));
    let server = release.join(format!(
        "mcp-testkit-server{}",
        std::env::consts::EXE_SUFFIX
    ));
    let out = target.join("bench.md").to_string_lossy().into_owned();
    let server = server.to_string_lossy().into_owned();
    let mut bench_args = vec!["--server", server.as_str(), "--out", out.as_str()];
    // `cargo xtask bench -- --quick` passes the `--` on.
    bench_args.extend(args.iter().map(String::as_str).filter(|a| *a != "--"));
    run(&bench.to_string_lossy(), &bench_args, &[])
}
