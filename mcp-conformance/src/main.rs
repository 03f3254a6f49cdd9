//! `mcp-conformance-client`: the client the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`) drives, built on `mcp-client`'s
//! public API alone.
//!
//! The suite starts a mock server per scenario and runs
//! `mcp-conformance-client <server URL>` with:
//!
//! - `MCP_CONFORMANCE_SCENARIO`: the scenario's name (`tools_call`, ...);
//! - `MCP_CONFORMANCE_PROTOCOL_VERSION`: the revision the mock speaks;
//! - `MCP_CONFORMANCE_CONTEXT`: JSON data some scenarios give (the tool
//!   calls to make, credentials), when there is any.
//!
//! The binary connects as any user of the library would, pinning the era
//! and version the suite names (a user who knows the server would), does
//! what the scenario asks of a client (see [`scenarios`]), and exits: 0 when
//! the flow went through, 1 when it did not, 1 as well after 25 seconds
//! whatever it was doing, before the suite's own 30-second kill. What the
//! suite checks on the wire is the library's own behaviour; nothing here
//! shapes a request for a scenario.
//!
//! `MCP_LOG` (an env-filter, e.g. `debug`) turns on the library's logs on
//! stderr, which the suite saves per scenario.

mod auth;
mod context;
mod scenarios;

use std::process::ExitCode;
use std::time::Duration;

use context::Run;

/// The overall limit: the suite kills a client at 30 s, and a killed client
/// leaves its scenario without a verdict.
const OVERALL: Duration = Duration::from_secs(25);

fn main() -> ExitCode {
    init_logs();
    let run = match Run::from_env(std::env::args().skip(1).collect()) {
        Ok(run) => run,
        Err(e) => {
            eprintln!("mcp-conformance-client: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("mcp-conformance-client: no runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!(
        "mcp-conformance-client: scenario {} at {} against {}",
        run.scenario, run.version, run.url
    );
    let outcome =
        runtime.block_on(async { tokio::time::timeout(OVERALL, scenarios::run(&run)).await });
    // Whatever is still running (a stream, a handler) must not hold the exit.
    runtime.shutdown_timeout(Duration::from_millis(500));
    match outcome {
        Ok(Ok(())) => {
            eprintln!("mcp-conformance-client: {} done", run.scenario);
            ExitCode::SUCCESS
        }
        Ok(Err(e)) => {
            eprintln!("mcp-conformance-client: {} failed: {e}", run.scenario);
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!(
                "mcp-conformance-client: {} did not finish within {OVERALL:?}",
                run.scenario
            );
            ExitCode::FAILURE
        }
    }
}

/// The library's warnings on stderr by default; `MCP_LOG` overrides.
fn init_logs() {
    use tracing_subscriber::EnvFilter;
    let filter = std::env::var("MCP_LOG").unwrap_or_else(|_| "warn".to_owned());
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(false)
        .init();
}
