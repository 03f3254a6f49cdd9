//! The few system calls tokio does not offer: signals to a process
//! group, and a blocking reap for the reaper thread that takes over when
//! no runtime is left to reap a child. `libc` is used for them.

use std::time::{Duration, Instant};

fn pid_t(pid: u32) -> Option<libc::pid_t> {
    // 0 and 1 would mean "our own group" and "everyone" to kill(2).
    libc::pid_t::try_from(pid).ok().filter(|p| *p > 1)
}

/// `kill(-pgid, sig)`; false when nothing was signalled.
pub(super) fn kill_group(pgid: u32, sig: libc::c_int) -> bool {
    let Some(pgid) = pid_t(pgid) else {
        return false;
    };
    // SAFETY: kill(2) has no memory-safety preconditions; a negative
    // pid addresses the process group the child leads (it was spawned
    // with process_group(0), so its pgid is its pid, never ours).
    unsafe { libc::kill(-pgid, sig) == 0 }
}

/// `kill(pid, sig)`; false when nothing was signalled.
pub(super) fn kill(pid: u32, sig: libc::c_int) -> bool {
    let Some(pid) = pid_t(pid) else {
        return false;
    };
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe { libc::kill(pid, sig) == 0 }
}

/// What a blocking reap found.
#[derive(Debug)]
pub(super) enum Reaped {
    /// Reaped here, with its raw wait status.
    Status(libc::c_int),
    /// Already reaped elsewhere (`ECHILD`: tokio's reaper got it first).
    Elsewhere,
}

/// Reaps `pid` with `waitpid`, polling for at most `limit` (a process
/// stuck in the kernel ignores even `SIGKILL` for a while). `None` when
/// it was still there at the limit. Blocks: only for a thread of its own.
pub(super) fn reap_blocking(pid: u32, limit: Duration) -> Option<Reaped> {
    let pid = pid_t(pid)?;
    let deadline = Instant::now() + limit;
    let mut pause = Duration::from_millis(1);
    loop {
        let mut status = 0;
        // SAFETY: `status` is a valid, writable c_int for the call.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            return Some(Reaped::Status(status));
        }
        if r < 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Some(Reaped::Elsewhere);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(pause);
        // Most children are gone within a millisecond of SIGKILL; one
        // that is not may take long, and is not worth a busy thread.
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}
