//! `mcp-bench`: the benchmarks that `cargo xtask bench` runs.
//!
//! Every number is measured in one run, against the same reference server
//! binary (`mcp-testkit-server`), three ways:
//!
//! - **ours**: `mcp-client` over `mcp-transport-stdio`;
//! - **rmcp**: the official Rust SDK's client over its child-process
//!   transport;
//! - **limit**: a bare pipe, plain tokio I/O moving the same bytes our
//!   client sends (captured from it once, through `tee`, at the start of the
//!   run) with no client library: pre-serialized request lines with
//!   incrementing ids, one answer line read per request.
//!
//! Four measurements: latency of one `tools/call echo` round trip,
//! throughput of concurrent callers on one connection, peak memory on a large
//! result (each case in a child process of its own, so that peaks do not
//! mix), and connect time (spawn to the first `tools/list` answer).
//!
//! Usage: `mcp-bench --server PATH [--out FILE] [--quick]`.

mod bare;
mod cases;
mod memory;
mod report;

use std::path::PathBuf;
use std::time::Duration;

use report::Report;

#[global_allocator]
static ALLOCATOR: memory::Counting = memory::Counting;

/// What one run is asked to do.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The `mcp-testkit-server` binary.
    pub server: PathBuf,
    /// Sequential calls measured per latency case.
    pub calls: usize,
    /// Calls made before measuring.
    pub warmup: usize,
    /// The calls a throughput case makes, at most.
    pub throughput_calls: usize,
    /// The time a throughput case may take, at most.
    pub throughput_time: Duration,
    /// The concurrent callers of the throughput cases.
    pub callers: Vec<usize>,
    /// Connects measured per connect case.
    pub connects: usize,
    /// The size of the large result.
    pub large: usize,
}

impl Settings {
    fn new(server: PathBuf, quick: bool) -> Self {
        let scale = if quick { 10 } else { 1 };
        Settings {
            server,
            calls: 2000 / scale,
            warmup: 200 / scale,
            throughput_calls: 20_000 / scale,
            throughput_time: Duration::from_secs(if quick { 1 } else { 4 }),
            callers: vec![1, 16, 64],
            connects: if quick { 5 } else { 60 },
            large: 8 * 1024 * 1024,
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
    let mut server = std::env::var_os("MCP_BENCH_SERVER").map(PathBuf::from);
    let mut out = None;
    let mut quick = false;
    let mut mem_case = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--server" => server = it.next().map(PathBuf::from),
            "--out" => out = it.next().map(PathBuf::from),
            "--quick" => quick = true,
            // Internal: one memory case, in a process of its own.
            "--mem-case" => mem_case = it.next().cloned(),
            "--help" | "-h" => {
                println!("usage: mcp-bench --server PATH [--out FILE] [--quick]");
                return Ok(());
            }
            other => return Err(format!("unknown argument {other:?}").into()),
        }
    }
    let server = server.ok_or("--server PATH (the mcp-testkit-server binary) is required")?;
    let settings = Settings::new(server, quick);
    // The same runtime for every client: tokio's multi-threaded default,
    // one worker per core.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
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
    Ok(())
}

async fn bench(settings: &Settings) -> Result<Report> {
    let mut report = Report {
        load_before: report::load_average(),
        ..Report::default()
    };
    eprintln!("capturing the bytes our client sends ...");
    let wire = bare::Wire::capture(&settings.server).await?;
    report.wire = wire.describe();
    eprintln!("latency ...");
    cases::latency(settings, &wire, &mut report).await?;
    eprintln!("throughput ...");
    cases::throughput(settings, &wire, &mut report).await?;
    eprintln!("memory ...");
    memory::run(settings, &mut report).await?;
    eprintln!("connect ...");
    cases::connect(settings, &wire, &mut report).await?;
    Ok(report)
}
