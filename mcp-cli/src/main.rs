//! `mcp`: inspect and drive any MCP server from a terminal.
//!
//! Built on the public API of `mcp_client` (package `mcp-steady-client`)
//! only. With no server given, it serves the embedded reference server
//! (`mcp_reference_server`, both eras) in process, so it works on a fresh
//! machine with nothing else installed.
//!
//! # Usage
//!
//! ```text
//! mcp [OPTIONS] [COMMAND] [ARGS]... [-- PROGRAM [ARGS]...]
//! ```
//!
//! The server: `--stdio 'COMMAND LINE'` (split like a shell would) or
//! everything after `--` runs as a child process speaking stdio
//! (`--env K=V`, `--cwd DIR`); `--era auto|legacy|modern` and
//! `--protocol-version V` choose how to speak; `--timeout SECS` bounds each
//! call (progress notifications restart it).
//!
//! ```text
//! mcp inspect                                   # the embedded server
//! mcp tools list -- npx -y @modelcontextprotocol/server-everything
//! mcp --stdio 'uvx my-server --flag' --json tools list
//! mcp tools call structured a=2 b=3             # a and b typed by the input schema
//! mcp tools call echo --args '{"text": "hi"}'
//! mcp resources read fake://text/hello
//! mcp prompts get greeting name=Ada
//! mcp complete prompt greeting name A
//! mcp ping
//! mcp watch -- ./my-server                      # change notifications, until Ctrl-C
//! mcp --record s.jsonl tools call echo text=hi  # the exchange as a cassette
//! ```
//!
//! `--record FILE` writes the whole exchange as JSON Lines (a cassette
//! `mcp_testkit::cassette` replays in tests with no server): every message
//! both ways with a relative timestamp, the era and verdict in the first
//! line, each HTTP request's headers; `Authorization` and the other
//! credentials are redacted, as is any header or field named with
//! `--redact NAME`, the URL's user:password and query values (keep one with
//! `--keep-query NAME`), and a servers file's header and env values. The
//! file is readable by its owner only.
//!
//! Commands: `inspect` (the default), `tools list`, `tools call NAME
//! [KEY=VALUE…] [--args JSON]`, `resources list|templates|read URI`,
//! `prompts list|get NAME [KEY=VALUE…]`, `skills list|get URI|read URI
//! [FILE]` (the Skills extension; `read` verifies what it prints against
//! the skill's entry), `complete prompt|resource REF ARGUMENT [VALUE]`,
//! `ping`, `watch`, `bridge` (the server served on stdio to a client that
//! starts commands, every message relayed within the era both speak).
//!
//! # Output
//!
//! Tables and text for people; `--json` prints exactly the typed result
//! as JSON (lists as `{"tools": […]}` and so on, every page fetched;
//! `inspect` as `{"verdict", "tools", "resources", "resourceTemplates",
//! "prompts"}`; `watch` one notification per line). Errors go to stderr.
//! A tool result with `isError: true` is a result: printed (marked on a
//! terminal), exit code 0. On a terminal, a progress bar follows the
//! server's progress notifications.
//!
//! # What the CLI offers the server
//!
//! Only what it can do: elicitation when stdin is a terminal (a prompt per
//! form field, with defaults and choices) or `--elicit-json JSON` is given;
//! sampling only with `--sampling-echo` (for testing: answers with an
//! echo); roots only with `--root PATH` (repeatable). The server's stderr
//! is captured (its last lines shown if it dies) and shown, prefixed, with
//! `-v` (with the library's warnings); `-vv` adds debug logs.
//!
//! # Exit codes
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success (a tool result with `isError: true` too) |
//! | 1 | the server answered with an error, or an answer that breaks the protocol |
//! | 2 | usage: bad command line or arguments |
//! | 3 | connection: the server could not be started or reached, or went away |
//! | 4 | timeout: no answer in time |
//! | 130 | interrupted: Ctrl-C cancelled the call on the wire and stopped the server |

use std::io::IsTerminal;
use std::process::ExitCode;

use mcp_client::transport::CancellationToken;

/// `eprintln!` that never panics: a client that closed the stderr of the
/// `mcp` it started (a bridge's, say) must not bring it down with the
/// first line written there.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod args;
mod auth;
mod commands;
mod connect;
mod exit;
mod fanout;
mod output;
mod progress;
mod prompts;
mod record;

use args::Cli;
use commands::Ctx;
use exit::{Failure, Outcome};
use output::Output;
use progress::Progress;

fn main() -> ExitCode {
    let cli = Cli::parse_args(std::env::args_os());
    init_logs(cli.verbose);
    // Two worker threads, `mcp bridge` included. On one thread the bridge
    // is faster (more messages go out in each write), but then a call's
    // last progress and its answer reach the client in one read, and the
    // TypeScript SDK's client drops such progress (it handles the answer
    // first).
    let built = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build();
    let runtime = match built {
        Ok(runtime) => runtime,
        Err(e) => {
            say!("mcp: error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(run(cli));
    // A prompt may still be blocked reading stdin: do not wait for it.
    runtime.shutdown_background();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.report(),
    }
}

async fn run(cli: Cli) -> Outcome {
    let interrupted = on_interrupt();
    let progress = Progress::new(std::io::stderr().is_terminal());
    let out = Output {
        json: cli.json,
        terminal: std::io::stdout().is_terminal(),
    };
    if matches!(cli.command, Some(args::Command::Servers)) {
        if cli.server.record.is_some() {
            return Err(Failure::usage(
                "--record records one server; give it with --server NAME instead of `servers`",
            ));
        }
        let file = connect::servers_file(&cli)?;
        // Many servers at once: none of them may ask on the terminal.
        let builder = connect::builder(&cli, &progress, false)?;
        return tokio::select! {
            outcome = commands::servers::run(&file, builder, &out) => outcome,
            () = interrupted.cancelled() => Err(Failure::interrupted()),
        };
    }
    let server = connect::Server::from_cli(&cli)?;
    if let Some(command @ (args::Command::Login | args::Command::Logout)) = &cli.command {
        let connect::Server::Http(url) = &server else {
            return Err(Failure::usage("login and logout need --url"));
        };
        let http = connect::http(&cli, url)?;
        let done = async {
            match command {
                args::Command::Login => auth::login(url, http).await,
                _ => auth::logout(url, http).await,
            }
        };
        // A login waits for the browser (minutes): Ctrl-C ends it, and
        // dropping it closes the loopback listener.
        return tokio::select! {
            outcome = done => outcome,
            () = interrupted.cancelled() => Err(Failure::new(
                exit::Kind::Interrupted,
                match command {
                    args::Command::Login => "interrupted: the login did not complete",
                    _ => "interrupted: the logout did not complete",
                },
            )),
        };
    }
    if let Some(args::Command::Bridge(bridge)) = &cli.command {
        if bridge.login {
            let connect::Server::Http(url) = &server else {
                return Err(Failure::usage("bridge --login needs --url"));
            };
            if !auth::logged_in(url)? {
                // Before serving: stdin is the protocol's once serving starts.
                tokio::select! {
                    outcome = auth::login(url, connect::http(&cli, url)?) => outcome?,
                    () = interrupted.cancelled() => return Err(Failure::interrupted()),
                }
            }
        }
        let recorder = record::recorder(&cli)?;
        let upstream = connect::upstream(&cli, server, recorder.as_ref())?;
        // `--era` names the era spoken to the server; a client of the
        // other era is translated.
        let era = match cli.server.era {
            args::EraArg::Auto => mcp_bridge::UpstreamEra::AsTheClient,
            args::EraArg::Legacy => mcp_bridge::UpstreamEra::Legacy,
            args::EraArg::Modern => mcp_bridge::UpstreamEra::Modern,
        };
        let outcome = commands::bridge::run(upstream, bridge, era, interrupted).await;
        return match (&recorder, cli.server.record.clone()) {
            (Some(recorder), Some(path)) => record::finish(recorder, &path, outcome),
            _ => outcome,
        };
    }
    let builder = connect::builder(&cli, &progress, std::io::stdin().is_terminal())?;
    let recorder = record::recorder(&cli)?;
    let path = cli.server.record.clone();
    let outcome = session(
        cli,
        server,
        builder,
        recorder.as_ref(),
        out,
        progress,
        interrupted,
    )
    .await;
    match (&recorder, path) {
        (Some(recorder), Some(path)) => record::finish(recorder, &path, outcome),
        _ => outcome,
    }
}

/// Connects, runs the command, and closes.
async fn session(
    cli: Cli,
    server: connect::Server,
    builder: mcp_client::ClientBuilder,
    recorder: Option<&mcp_client::transport::record::Recorder>,
    out: Output,
    progress: Progress,
    interrupted: CancellationToken,
) -> Outcome {
    let client = tokio::select! {
        client = connect::connect(&cli, server, builder, recorder) => client?,
        // Dropping the connect future stops a server being started.
        () = interrupted.cancelled() => return Err(Failure::interrupted()),
    };
    if let Some(recorder) = recorder {
        record::connected(recorder, &client);
    }
    let ctx = Ctx {
        client,
        out,
        progress,
        cancel: CancellationToken::new(),
        timeout: cli.server.timeout,
    };
    let outcome = tokio::select! {
        outcome = commands::run(&ctx, cli.command) => outcome,
        () = interrupted.cancelled() => {
            // Cancels the call in flight on the wire (dropping it would too).
            ctx.cancel.cancel();
            Err(Failure::interrupted())
        }
    };
    ctx.progress.clear();
    ctx.client.close().await;
    outcome
}

/// A token cancelled at the first Ctrl-C (SIGINT), which no longer ends the
/// process by itself.
fn on_interrupt() -> CancellationToken {
    let token = CancellationToken::new();
    let cancel = token.clone();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        // Installed now, not at the first poll, so no Ctrl-C is missed.
        // SIGTERM (how a desktop client stops a server it started) is
        // taken the same way, so that a server of ours is shut down too.
        for kind in [SignalKind::interrupt(), SignalKind::terminate()] {
            if let Ok(mut signal) = signal(kind) {
                let cancel = cancel.clone();
                tokio::spawn(async move {
                    signal.recv().await;
                    cancel.cancel();
                });
            }
        }
    }
    #[cfg(not(unix))]
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            cancel.cancel();
        }
    });
    token
}

/// The library's errors by default, warnings with `-v`, debug logs with
/// `-vv` (`MCP_LOG` overrides, as an env-filter). Server stderr lines are shown
/// by the stdio transport's callback (`-v`), not through the logs.
fn init_logs(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let default = match verbose {
        0 => "error",
        1 => "warn",
        2 => "debug",
        _ => "trace",
    };
    let filter = std::env::var("MCP_LOG").unwrap_or_else(|_| default.to_owned());
    let filter = format!("{filter},{}=off", mcp_transport_stdio::STDERR_TARGET);
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal())
        // A log line that cannot be written (a client closed the stderr of
        // the bridge it started) is dropped; by default the subscriber
        // reports it with `eprintln!`, which panics the task that logged.
        .log_internal_errors(false)
        .init();
}
