//! The bridge row: the same bytes through `mcp bridge` (ours) and through a
//! bare relay of two pipes (the limit), at 1 and 16 callers, each era.
//!
//! Both sides are driven by the limit's own client (pre-serialized request
//! lines, answers read as they come, no JSON handled), so the ratio is the
//! bridge's cost alone. The bench binary runs as either middle process:
//! `mcp-bench --era ERA --serve-bridge SERVER` serves the reference
//! server through `mcp_bridge::Bridge` on its stdio, as `mcp bridge` does;
//! `--serve-relay SERVER` copies bytes between its stdio and the server's
//! with `std::io::copy` on two threads (which the kernel does with
//! `splice` between pipes).

use std::path::{Path, PathBuf};

use crate::bare::{Bare, Era, Wire};
use crate::cases::{Loads, THROUGHPUT_ROUNDS, check_answer, pipelined};
use crate::report::{Report, Who};
use crate::{Result, Settings};

/// The callers of the bridge row.
const CALLERS: [usize; 2] = [1, 16];

/// How the bench binary serves, when started as the middle process.
pub enum Serve {
    /// `--serve-bridge SERVER`.
    Bridge(PathBuf),
    /// `--serve-relay SERVER`.
    Relay(PathBuf),
}

/// The middle process: serves until its stdin ends.
pub fn serve(how: Serve, era: &str) -> Result {
    match how {
        Serve::Bridge(server) => {
            // As the `mcp` command runs it: two worker threads.
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()?;
            let command = mcp_transport_stdio::StdioCommand::new(server).args(["--era", era]);
            runtime.block_on(mcp_bridge::Bridge::new(command).serve_stdio())?;
            Ok(())
        }
        Serve::Relay(server) => relay(&server, era),
    }
}

/// Two pipes joined by two threads copying bytes, nothing else.
fn relay(server: &Path, era: &str) -> Result {
    use std::process::{Command, Stdio};
    let mut child = Command::new(server)
        .args(["--era", era])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut to_server = child.stdin.take().ok_or("no stdin")?;
    let mut from_server = child.stdout.take().ok_or("no stdout")?;
    let up = std::thread::spawn(move || {
        // At stdin's end the server's stdin closes too, and it exits.
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut to_server);
    });
    let _ = std::io::copy(&mut from_server, &mut std::io::stdout().lock());
    let _ = up.join();
    child.wait()?;
    Ok(())
}

/// The bridge row, into `report` as throughput rows of transport "bridge"
/// (one caller: its latency).
pub async fn run(settings: &Settings, wire: &Wire, report: &mut Report) -> Result {
    let exe = std::env::current_exe()?;
    let server = settings.server.to_string_lossy().into_owned();
    let rounds = THROUGHPUT_ROUNDS;
    let per_round = settings.throughput_calls.div_ceil(rounds).min(5_000);
    for era in settings.eras() {
        let mut middles = Vec::new();
        for (who, flag) in [(Who::Ours, "--serve-bridge"), (Who::Limit, "--serve-relay")] {
            let mut bare = Bare::spawn_with(&exe, era, &[flag.to_owned(), server.clone()])?;
            bare.replay(&wire.era(era).connect).await?;
            let check = bare
                .round_trip(&wire.era(era).call.render(999, "hello"))
                .await?;
            check_answer(check, 999, "hello")?;
            middles.push((who, bare));
        }
        let template = &wire.era(era).call;
        let mut next_id = 10_000;
        for callers in CALLERS {
            let mut loads: Vec<Loads> = middles.iter().map(|_| Loads::default()).collect();
            for _ in 0..rounds {
                for ((_, bare), loads) in middles.iter_mut().zip(loads.iter_mut()) {
                    let lines = template.lines(next_id, per_round, "hello");
                    next_id += per_round as u64;
                    loads.add(pipelined(bare, callers, &lines).await?);
                }
            }
            for ((who, _), load) in middles.iter().zip(loads) {
                report
                    .throughput
                    .push(load.row("bridge", "", era, callers, *who));
            }
        }
        for (_, bare) in middles {
            bare.close().await?;
        }
    }
    Ok(())
}

/// The era flag a middle process was given (`--era E`).
pub fn era_of(args: &[String]) -> String {
    args.iter()
        .position(|a| a == "--era")
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| Era::Legacy.flag().to_owned())
}
