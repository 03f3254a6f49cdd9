//! `mcp-bench`: the benchmarks that `cargo xtask bench` runs.
//!
//! Every number is measured in one run, against the same reference server
//! binary (`mcp-reference-server`), three ways:
//!
//! - **ours**: `mcp-client` over `mcp-transport-stdio`;
//! - **rmcp**: the official Rust SDK's client over its child-process
//!   transport;
//! - **limit**: a bare pipe, plain tokio I/O moving the same bytes our
//!   client sends (captured from it once, through `tee`, at the start of the
//!   run) with no client library: pre-serialized request lines with
//!   incrementing ids, one answer line read per request.
//!
//! The rows: latency of one `tools/call echo` round trip (small and 16 KiB),
//! throughput of concurrent callers on one connection (stdio, and HTTP over
//! loopback with JSON and SSE answers), the same bytes through `mcp bridge`
//! against a bare relay of two pipes, peak memory on a large echo and on
//! large results (each case in a child process of its own, so that peaks do
//! not mix), connect time (stdio and HTTP, pinned, probing, and with a
//! saved verdict), many idle connections, and protocol micro-benchmarks.
//! Built without the default `rmcp` feature, every row runs with ours and
//! the limit only (what `cargo xtask bench --quick` does in CI).
//!
//! Usage: `mcp-bench --server PATH [--out FILE] [--quick] [--only ROW,...]`.

mod bare;
mod bridge;
/// The rmcp side of `docs/coming-from-rmcp.md`, compiled (never run).
#[cfg(feature = "rmcp")]
#[allow(dead_code)]
mod coming_from_rmcp {
    include!(concat!(env!("OUT_DIR"), "/coming_from_rmcp.rs"));
}
mod cases;
mod http;
mod idle;
mod large;
mod memory;
mod micro;
mod report;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use report::Report;

#[global_allocator]
static ALLOCATOR: memory::Counting = memory::Counting;

/// What one run is asked to do.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The `mcp-reference-server` binary.
    pub server: PathBuf,
    /// A `--quick` run.
    pub quick: bool,
    /// Sequential calls measured per latency case.
    pub calls: usize,
    /// Calls made before measuring.
    pub warmup: usize,
    /// The calls a throughput case makes, at most.
    pub throughput_calls: usize,
    /// The time a throughput case may take, at most.
    pub throughput_time: Duration,
    /// The concurrent callers of the stdio throughput cases.
    pub callers: Vec<usize>,
    /// The calls an HTTP throughput case makes, at most.
    pub http_calls: usize,
    /// The concurrent callers of the HTTP cases.
    pub http_callers: Vec<usize>,
    /// Connects measured per connect case.
    pub connects: usize,
    /// The size of the large echo.
    pub large: usize,
    /// The blob of the large `resources/read`.
    pub large_blob: usize,
    /// The text of the large `tools/call`.
    pub large_text: usize,
    /// The extra tools of the large `tools/list`.
    pub large_tools: usize,
    /// Runs of each memory and large case (the median is reported).
    pub memory_runs: usize,
    /// Idle HTTP clients.
    pub idle_http: usize,
    /// Idle stdio clients.
    pub idle_stdio: usize,
    /// Iterations per round of the cheaper micro-benchmarks.
    pub micro_iters: usize,
    /// Only these rows (`--only a,b`; empty: all), to profile one.
    pub only: Vec<String>,
    /// Only this era in the throughput rows (`--era modern`).
    pub era: Option<bare::Era>,
}

impl Settings {
    /// Whether the row `name` runs.
    pub fn runs(&self, name: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|o| o == name)
    }

    /// The eras the throughput rows run in: both, or the one `--era` names.
    pub fn eras(&self) -> impl Iterator<Item = bare::Era> + '_ {
        bare::Era::BOTH
            .into_iter()
            .filter(|e| self.era.is_none_or(|only| *e == only))
    }
}

impl Settings {
    fn new(server: PathBuf, quick: bool) -> Self {
        if quick {
            return Settings {
                server,
                quick,
                calls: 100,
                warmup: 20,
                throughput_calls: 1000,
                throughput_time: Duration::from_millis(500),
                callers: vec![1, 16, 64, 256],
                http_calls: 300,
                http_callers: vec![1, 16, 64],
                connects: 2,
                large: 256 * 1024,
                large_blob: 256 * 1024,
                large_text: 256 * 1024,
                large_tools: 100,
                memory_runs: 1,
                idle_http: 20,
                idle_stdio: 5,
                micro_iters: 100,
                only: Vec::new(),
                era: None,
            };
        }
        Settings {
            server,
            quick,
            calls: 2000,
            warmup: 200,
            // 40 rounds of 5,000 calls (some 50 ms): much shorter ones are
            // at the mercy of a virtual machine's stolen milliseconds, and
            // fewer rounds give a median that moves more from run to run.
            throughput_calls: 200_000,
            throughput_time: Duration::from_secs(20),
            callers: vec![1, 16, 64, 256],
            // 10 rounds of 5,000 calls: rounds of 1,000 last some 30 ms at
            // 64 callers, and measure mostly their start and end.
            http_calls: 50_000,
            http_callers: vec![1, 16, 64],
            connects: 40,
            large: 8 * 1024 * 1024,
            large_blob: 64 * 1024 * 1024,
            large_text: 8 * 1024 * 1024,
            large_tools: 5000 - 11,
            memory_runs: 3,
            idle_http: 1000,
            idle_stdio: 200,
            micro_iters: 20_000,
            only: Vec::new(),
            era: None,
        }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// What the bench's steps return.
pub type Result<T = ()> = std::result::Result<T, BoxError>;

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-bench: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(args: &[String]) -> Result {
    // Internal: the middle process of the bridge row.
    for (flag, serve) in [
        (
            "--serve-bridge",
            bridge::Serve::Bridge as fn(PathBuf) -> bridge::Serve,
        ),
        ("--serve-relay", bridge::Serve::Relay),
    ] {
        if let Some(i) = args.iter().position(|a| a == flag) {
            let server = args.get(i + 1).ok_or("the server's path is missing")?;
            return bridge::serve(serve(PathBuf::from(server)), &bridge::era_of(args));
        }
    }
    let mut server = std::env::var_os("MCP_BENCH_SERVER").map(PathBuf::from);
    let mut out = None;
    let mut quick = false;
    let mut mem_case = None;
    let mut only = Vec::new();
    let (mut callers, mut era) = (None, None);
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--server" => server = it.next().map(PathBuf::from),
            "--out" => out = it.next().map(PathBuf::from),
            "--quick" => quick = true,
            // Profiling aids: the throughput rows (stdio and HTTP) with
            // these callers only, in this era only.
            "--callers" => {
                let list = it.next().ok_or("--callers needs a list, such as 16,64")?;
                let parsed: std::result::Result<Vec<usize>, _> =
                    list.split(',').map(str::parse).collect();
                callers = Some(parsed.map_err(|e| format!("--callers {list:?}: {e}"))?);
            }
            "--era" => {
                era = match it.next().map(String::as_str) {
                    Some("legacy") => Some(bare::Era::Legacy),
                    Some("modern") => Some(bare::Era::Modern),
                    other => {
                        return Err(format!("--era takes legacy or modern, not {other:?}").into());
                    }
                }
            }
            "--only" => {
                only = it
                    .next()
                    .map(|o| o.split(',').map(str::to_owned).collect())
                    .unwrap_or_default()
            }
            // Internal: one memory case, in a process of its own.
            "--mem-case" => mem_case = it.next().cloned(),
            "--help" | "-h" => {
                println!(
                    "usage: mcp-bench --server PATH [--out FILE] [--quick] [--only ROW,...]\n\
                     \x20                [--callers N,...] [--era legacy|modern]\n\
                     rows: micro latency throughput http bridge memory large connect idle\n\
                     (and cpu, only by name: the client's CPU time per call)\n\
                     --callers and --era narrow the throughput rows (stdio, http), to profile them"
                );
                return Ok(());
            }
            other => return Err(format!("unknown argument {other:?}").into()),
        }
    }
    let server = server.ok_or("--server PATH (the mcp-reference-server binary) is required")?;
    let mut settings = Settings::new(server, quick);
    settings.only = only;
    if let Some(callers) = callers {
        settings.http_callers.clone_from(&callers);
        settings.callers = callers;
    }
    settings.era = era;
    // The same runtime for every client: tokio's multi-threaded default,
    // one worker per core. The idle cases take the current-thread runtime,
    // the only one whose clock can be paused (see `idle.rs`).
    let runtime = match &mem_case {
        Some(case) if case.starts_with("idle-") => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?,
        _ => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?,
    };
    // Every case runs in a task on a worker thread, as an application's
    // code would, not on the thread blocked in `block_on` (whose wake-ups
    // cost a thread hop per answer).
    let on_worker = |settings: Settings, case: Option<String>| {
        runtime.block_on(async move {
            tokio::spawn(async move {
                match case {
                    Some(case) => memory::child(&settings, &case).await.map(|()| None),
                    None => bench(&settings).await.map(Some),
                }
            })
            .await?
        })
    };
    let Some(report) = on_worker(settings.clone(), mem_case)? else {
        return Ok(());
    };
    let text = report.markdown(&settings);
    println!("{text}");
    if let Some(out) = out {
        if let Some(dir) = out.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&out, &text)?;
        eprintln!("written to {}", out.display());
    }
    if report.failed {
        return Err("a row failed (see the notes at the end of the report)".into());
    }
    Ok(())
}

async fn bench(settings: &Settings) -> Result<Report> {
    let started = Instant::now();
    let mut report = Report {
        load_before: report::load_average(),
        ..Report::default()
    };
    let step = |name: &str| eprintln!("[{:>5.1} s] {name} ...", started.elapsed().as_secs_f64());
    step("capturing the bytes our client sends");
    let wire = bare::Wire::capture(&settings.server).await?;
    report.wire = wire.describe();
    if settings.runs("micro") {
        step("micro-benchmarks");
        let outcome = micro::run(settings, &mut report);
        failed(&mut report, outcome);
    }
    if settings.runs("latency") {
        step("stdio latency");
        let outcome = cases::latency(settings, &wire, &mut report).await;
        failed(&mut report, outcome);
    }
    if settings.runs("throughput") {
        step("stdio throughput");
        let outcome = cases::throughput(settings, &wire, &mut report).await;
        failed(&mut report, outcome);
    }
    // Only when asked for by name: a profiling aid, not a row.
    if settings.only.iter().any(|o| o == "cpu") {
        step("client CPU per call");
        let outcome = cases::cpu_per_call(settings, &wire).await;
        failed(&mut report, outcome);
    }
    if settings.runs("http") {
        step("HTTP throughput");
        let outcome = http::throughput(settings, &wire, &mut report).await;
        failed(&mut report, outcome);
    }
    if settings.runs("bridge") {
        step("through the bridge");
        let outcome = bridge::run(settings, &wire, &mut report).await;
        failed(&mut report, outcome);
    }
    if settings.runs("memory") {
        step("memory on the large echo");
        let outcome = memory::run(settings, &mut report).await;
        failed(&mut report, outcome);
    }
    if settings.runs("large") {
        step("large results");
        let outcome = large::run(settings, &mut report).await;
        failed(&mut report, outcome);
    }
    if settings.runs("connect") {
        step("connect over stdio");
        let outcome = cases::connect(settings, &wire, &mut report).await;
        failed(&mut report, outcome);
        let outcome = saved_verdict_lines(settings, &mut report).await;
        failed(&mut report, outcome);
        step("connect over HTTP");
        let outcome = http::connect(settings, &wire, &mut report).await;
        failed(&mut report, outcome);
    }
    if settings.runs("idle") {
        step("many idle connections");
        let outcome = idle::run(settings, &mut report).await;
        failed(&mut report, outcome);
    }
    report.took = started.elapsed();
    step("done");
    Ok(report)
}

/// A row that failed is told in the report's notes (and makes the run
/// fail at the end), and the rows after it still run.
fn failed(report: &mut Report, outcome: Result) {
    if let Err(e) = outcome {
        eprintln!("mcp-bench: a row failed: {e}");
        report.notes.push(format!("a row failed: {e}"));
        report.failed = true;
    }
}

/// Counts what our client sends before its first request, with a saved
/// verdict and pinned, on a modern and a legacy server.
async fn saved_verdict_lines(settings: &Settings, report: &mut Report) -> Result {
    use mcp_client::EraMode;
    for (era, mode) in [("modern", EraMode::Modern), ("legacy", EraMode::Legacy)] {
        let conn = cases::Conn::connect(
            cases::ClientKind::Ours(EraMode::Auto),
            &settings.server,
            era,
        )
        .await?;
        let verdict = conn.ours().map(mcp_client::Client::verdict).ok_or("ours")?;
        conn.close().await?;
        let saved =
            bare::messages_before_list(&settings.server, era, EraMode::Auto, Some(verdict)).await?;
        let pinned = bare::messages_before_list(&settings.server, era, mode, None).await?;
        report.saved_verdict_lines.push((era, saved, pinned));
    }
    Ok(())
}
