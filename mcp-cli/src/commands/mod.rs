//! The commands, one module each, on the client's public API.

use std::time::Duration;

use mcp_client::transport::CancellationToken;
use mcp_client::{CallOptions, Client};

use crate::args::Command;
use crate::exit::Outcome;
use crate::output::Output;
use crate::progress::Progress;

pub(crate) mod bridge;
mod complete;
mod inspect;
mod ping;
mod prompts;
mod resources;
pub(crate) mod servers;
mod skills;
mod tools;
mod watch;

/// What every command works with.
pub(crate) struct Ctx {
    /// The connected client.
    pub(crate) client: Client,
    /// How to print.
    pub(crate) out: Output,
    /// The progress bar (drawn on a terminal only).
    pub(crate) progress: Progress,
    /// Cancelled on Ctrl-C: cancels the call in flight on the wire.
    pub(crate) cancel: CancellationToken,
    /// `--timeout`.
    pub(crate) timeout: Option<Duration>,
}

impl Ctx {
    /// Options for one call: cancellable, with `--timeout`, which progress
    /// notifications restart.
    pub(crate) fn options(&self) -> CallOptions {
        let options = CallOptions::new()
            .cancellation(self.cancel.clone())
            .reset_timeout_on_progress();
        match self.timeout {
            Some(timeout) => options.timeout(timeout),
            None => options,
        }
    }

    /// [`options`](Self::options) with the progress bar following the
    /// server's progress notifications.
    pub(crate) fn options_with_progress(&self) -> CallOptions {
        let progress = self.progress.clone();
        self.options().on_progress(move |p| progress.update(&p))
    }
}

/// Runs one command (`inspect` when none is given).
pub(crate) async fn run(ctx: &Ctx, command: Option<Command>) -> Outcome {
    match command.unwrap_or(Command::Inspect) {
        Command::Inspect => inspect::run(ctx).await,
        Command::Tools(c) => tools::run(ctx, c).await,
        Command::Resources(c) => resources::run(ctx, c).await,
        Command::Prompts(c) => prompts::run(ctx, c).await,
        Command::Skills(c) => skills::run(ctx, c).await,
        Command::Complete(args) => complete::run(ctx, args).await,
        Command::Ping => ping::run(ctx).await,
        Command::Watch(args) => watch::run(ctx, args).await,
        // Many servers, no single connection: `main` runs it before
        // connecting, so it never gets here.
        Command::Servers => Err(crate::exit::Failure::usage(
            "`mcp servers` connects to a servers file's servers itself",
        )),
        Command::Login | Command::Logout => Err(crate::exit::Failure::usage(
            "`mcp login` and `mcp logout` run before connecting",
        )),
        Command::Bridge(_) => Err(crate::exit::Failure::usage(
            "`mcp bridge` serves the server itself, with no client of its own",
        )),
    }
}
