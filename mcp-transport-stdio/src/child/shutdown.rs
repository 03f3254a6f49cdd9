//! The close sequence: stdin closed, grace, `SIGTERM`, grace, `SIGKILL`,
//! to the whole process group, then the end of the output pipes.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::{AbortHandle, JoinHandle};
use tokio::time::timeout;

use super::process::Process;
#[cfg(unix)]
use super::sys;

/// How long `SIGKILL` is given to take effect.
pub(super) const KILL_WAIT: Duration = Duration::from_secs(2);
/// How long close lets the writer finish what was queued before it.
const WRITE_WAIT: Duration = Duration::from_millis(100);
/// How long close waits for the output readers to see the end of the
/// pipes once the process group is gone (a process outside the group may
/// hold them open).
const DRAIN_WAIT: Duration = Duration::from_millis(200);

pub(super) async fn shutdown(
    process: Arc<Process>,
    writer: Option<JoinHandle<()>>,
    readers: [AbortHandle; 2],
    supervisor: AbortHandle,
    close_grace: Duration,
    term_grace: Duration,
    closed: Arc<watch::Sender<bool>>,
) {
    let started = tokio::time::Instant::now();
    // Close stdin: the writer owns it, and ends by itself once it has
    // written what was queued before the close (a cancel, a last
    // notification). A writer blocked on a server that does not read is
    // abandoned after a moment, not waited for.
    if let Some(mut writer) = writer
        && timeout(WRITE_WAIT, &mut writer).await.is_err()
    {
        writer.abort();
        let _ = timeout(Duration::from_millis(100), writer).await;
    }
    let mut exited = process.exited.subscribe();
    let mut how = "on EOF";
    if !wait_exit(&mut exited, close_grace).await {
        how = "on SIGTERM";
        tracing::info!(grace = ?close_grace, "the server did not exit after its stdin was closed; sending SIGTERM to its process group");
        signal(&process, Signal::Term);
        if !wait_exit(&mut exited, term_grace).await {
            how = "on SIGKILL";
            tracing::warn!(grace = ?term_grace, "the server did not exit on SIGTERM; sending SIGKILL to its process group");
            signal(&process, Signal::Kill);
            if !wait_exit(&mut exited, KILL_WAIT).await {
                how = "not at all";
                tracing::error!("the server did not exit on SIGKILL");
            }
        }
    }
    tracing::debug!(elapsed = ?started.elapsed(), "the server exited {how}");
    let mut stderr_done = process.stderr_done.subscribe();
    let _ = timeout(DRAIN_WAIT, stderr_done.wait_for(|d| *d)).await;
    for task in readers {
        task.abort();
    }
    if process.has_exited() {
        supervisor.abort();
    }
    closed.send_replace(true);
}

/// Whether the process was reaped within `limit`.
async fn wait_exit(exited: &mut watch::Receiver<bool>, limit: Duration) -> bool {
    timeout(limit, exited.wait_for(|e| *e))
        .await
        .is_ok_and(|r| r.is_ok())
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Signal {
    Term,
    Kill,
}

/// Sends `signal` to the server's process group, and to the server itself
/// in case it left the group. Nothing is sent once the server was reaped:
/// its pid, and its group's id once the group is empty, may have been
/// reused by then (and what was left of the group was killed at the reap).
pub(super) fn signal(process: &Process, signal: Signal) {
    #[cfg(unix)]
    if let (Some(pid), false) = (process.pid, process.has_exited()) {
        let sig = match signal {
            Signal::Term => libc::SIGTERM,
            Signal::Kill => libc::SIGKILL,
        };
        sys::kill_group(pid, sig);
        sys::kill(pid, sig);
    }
}
