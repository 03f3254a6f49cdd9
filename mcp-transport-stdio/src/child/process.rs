//! What the child's tasks share with the transport, and the tasks: the
//! stdin writer, the stdout reader, the stderr drain, and the supervisor
//! that notices the server's death and reaps it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_transport::{Engine, ExitInfo, GoneInfo};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::{mpsc, watch};
use tokio::task::{AbortHandle, JoinHandle};
use tokio::time::timeout;
use tracing::Instrument;

#[cfg(unix)]
use super::sys;
use crate::stderr::{self, StderrCallback, Tail};
use crate::wire::{ReadEnd, read_loop, write_loop};

/// What the process's tasks share with the transport.
pub(super) struct Process {
    pub(super) pid: Option<u32>,
    pub(super) name: Arc<str>,
    /// True once the child was reaped (or waiting for it failed).
    pub(super) exited: watch::Sender<bool>,
    pub(super) exit_info: Mutex<Option<ExitInfo>>,
    pub(super) tail: Arc<Mutex<Tail>>,
    /// True once stderr reached its end.
    pub(super) stderr_done: watch::Sender<bool>,
}

impl Process {
    fn set_exit(&self, status: std::io::Result<std::process::ExitStatus>) {
        match status {
            Ok(status) => self.record_exit(exit_info(status)),
            Err(e) => {
                tracing::debug!(error = %e, "waiting for the server process failed");
                self.record_exit(None);
            }
        }
    }

    fn record_exit(&self, info: Option<ExitInfo>) {
        if info.is_some() {
            tracing::debug!(?info, "the server process ended");
            *self.exit_info.lock().unwrap_or_else(|p| p.into_inner()) = info;
        }
        // Whatever is left of its group (grandchildren that outlived it,
        // such as the real server behind a wrapper that died) goes now:
        // right after the reap, when the group id cannot have been reused
        // (it stays reserved while any member lives). Later, it could be.
        #[cfg(unix)]
        if let Some(pid) = self.pid
            && sys::kill_group(pid, libc::SIGKILL)
        {
            tracing::debug!("killed what was left of the server's process group");
        }
        self.exited.send_replace(true);
    }

    pub(super) fn exit_info(&self) -> Option<ExitInfo> {
        *self.exit_info.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn tail(&self) -> String {
        self.tail
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .snapshot()
    }

    pub(super) fn has_exited(&self) -> bool {
        *self.exited.borrow()
    }
}

fn exit_info(status: std::process::ExitStatus) -> Option<ExitInfo> {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return Some(ExitInfo::signal(signal));
        }
    }
    status.code().map(ExitInfo::code)
}

/// Why the supervisor should look at the process.
#[derive(Debug)]
pub(super) enum Cause {
    StdoutClosed,
    ReadFailed(std::io::Error),
    WriteFailed(std::io::Error),
}

impl Cause {
    fn describe(&self) -> String {
        match self {
            Cause::StdoutClosed => "the server closed its stdout".to_owned(),
            Cause::ReadFailed(e) => format!("reading the server's stdout failed: {e}"),
            Cause::WriteFailed(e) => format!("writing to the server's stdin failed: {e}"),
        }
    }
}

pub(super) fn spawn_writer(
    stdin: ChildStdin,
    outbound: mcp_transport::OutboundReceiver,
    engine: &Engine,
    causes: mpsc::UnboundedSender<Cause>,
    span: &tracing::Span,
) -> JoinHandle<()> {
    let shutdown = engine.shutdown_token();
    tokio::spawn(
        async move {
            let mut outbound = outbound;
            if let Err(e) = write_loop(stdin, &mut outbound, shutdown.clone()).await
                && !shutdown.is_cancelled()
            {
                tracing::warn!(error = %e, "writing to the server's stdin failed");
                let _ = causes.send(Cause::WriteFailed(e));
                drop(causes);
                // The supervisor ends the connection with what it learns
                // of the exit; the receiver is kept until then, since
                // dropping it would end the connection with less.
                shutdown.cancelled().await;
            }
            drop(outbound);
        }
        .instrument(span.clone()),
    )
}

pub(super) fn spawn_reader(
    stdout: ChildStdout,
    engine: &Engine,
    max: usize,
    causes: mpsc::UnboundedSender<Cause>,
    span: &tracing::Span,
) -> AbortHandle {
    let engine = engine.clone();
    tokio::spawn(
        async move {
            let cause = match read_loop(stdout, engine, max).await {
                ReadEnd::Eof => Cause::StdoutClosed,
                ReadEnd::Failed(e) => Cause::ReadFailed(e),
            };
            let _ = causes.send(cause);
        }
        .instrument(span.clone()),
    )
    .abort_handle()
}

pub(super) fn spawn_stderr(
    stderr: ChildStderr,
    process: &Arc<Process>,
    callback: Option<StderrCallback>,
    span: &tracing::Span,
) -> AbortHandle {
    let process = process.clone();
    tokio::spawn(
        async move {
            // The callback's thread, if any, is left to finish on its own:
            // nothing here waits on user code.
            let _callback =
                stderr::drain(stderr, process.tail.clone(), process.name.clone(), callback).await;
            process.stderr_done.send_replace(true);
        }
        .instrument(span.clone()),
    )
    .abort_handle()
}

/// Owns the child: notices its death (exit, stdout's end, a failed write),
/// gathers what is known, fails pending requests, and reaps it.
pub(super) async fn supervise(
    mut child: Child,
    process: Arc<Process>,
    engine: Engine,
    mut causes: mpsc::UnboundedReceiver<Cause>,
    linger: Duration,
) {
    // Dropped unfinished only when its runtime shuts down (or it panics):
    // the reaping then moves to a thread of its own.
    let _reaper = ReapOnDrop(process.clone());
    let mut exited = false;
    let mut stdout_closed = false;
    let reason = tokio::select! {
        status = child.wait() => {
            process.set_exit(status);
            exited = true;
            "the server exited".to_owned()
        }
        Some(cause) = causes.recv() => {
            stdout_closed = matches!(cause, Cause::StdoutClosed | Cause::ReadFailed(_));
            cause.describe()
        }
    };
    // The rest usually follows within milliseconds: the exit status, the
    // answers still in the stdout pipe, the last stderr lines.
    let started = tokio::time::Instant::now();
    let _ = timeout(linger, async {
        if !exited {
            process.set_exit(child.wait().await);
            exited = true;
        }
        while !stdout_closed {
            match causes.recv().await {
                Some(Cause::StdoutClosed | Cause::ReadFailed(_)) | None => stdout_closed = true,
                Some(Cause::WriteFailed(_)) => {}
            }
        }
        let _ = process.stderr_done.subscribe().wait_for(|done| *done).await;
    })
    .await;
    if !engine.shutdown_token().is_cancelled() {
        let exit = process.exit_info();
        // An exit explains the rest (a closed stdout, a broken pipe).
        let reason = if exit.is_some() {
            "the server exited".to_owned()
        } else {
            reason
        };
        let mut info = GoneInfo::new(reason).with_stderr_tail(process.tail());
        if let Some(exit) = exit {
            info = info.with_exit(exit);
        }
        // Said before it is logged: a log line that fails must not keep
        // the connection's end from being known.
        engine.peer_gone(info.clone());
        tracing::warn!(
            exit = ?info.exit,
            waited = ?started.elapsed(),
            last_stderr = info.stderr_tail.as_deref().and_then(|t| t.lines().last()),
            "the server is gone: {}",
            info.reason
        );
    }
    if !exited {
        // It closed its stdout but runs on: reap it when it ends (by close
        // or drop, at the latest).
        process.set_exit(child.wait().await);
    }
}

/// Takes over the reaping when the supervisor cannot finish it: without
/// its runtime the server is unreachable anyway, so it is killed (the
/// whole group) and reaped on a small detached thread, never on the thread
/// that happens to drop the task.
struct ReapOnDrop(Arc<Process>);

impl Drop for ReapOnDrop {
    fn drop(&mut self) {
        if self.0.has_exited() {
            return;
        }
        super::shutdown::signal(&self.0, super::shutdown::Signal::Kill);
        spawn_reaper(self.0.clone());
    }
}

/// How long the reaper thread waits for a killed server to be reapable
/// (a process stuck in the kernel ignores even `SIGKILL` for a while).
#[cfg(unix)]
const REAPER_LIMIT: Duration = Duration::from_secs(60);

#[cfg(unix)]
fn spawn_reaper(process: Arc<Process>) {
    let Some(pid) = process.pid else { return };
    let reap = move || match sys::reap_blocking(pid, REAPER_LIMIT) {
        Some(sys::Reaped::Status(raw)) => {
            use std::os::unix::process::ExitStatusExt;
            process.record_exit(exit_info(std::process::ExitStatus::from_raw(raw)));
        }
        Some(sys::Reaped::Elsewhere) => process.record_exit(None),
        None => {
            tracing::error!(pid, limit = ?REAPER_LIMIT, "the server did not die on SIGKILL; it is left unreaped")
        }
    };
    let spawned = std::thread::Builder::new()
        .name(format!("mcp-stdio-reaper-{pid}"))
        .spawn(reap);
    if let Err(e) = spawned {
        tracing::error!(pid, error = %e, "could not start a thread to reap the server; it may be left a zombie");
    }
}

#[cfg(not(unix))]
fn spawn_reaper(_process: Arc<Process>) {}
