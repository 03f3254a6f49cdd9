//! The few system calls tokio does not offer: signals to a process
//! group, and a synchronous reap for `Drop`. `libc` is used for them.

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

/// Reaps `pid` with `waitpid`, polling for at most `limit` (a process
/// stuck in the kernel ignores even `SIGKILL` for a while). Returns
/// whether it was reaped here or had been already.
pub(super) fn reap(pid: u32, limit: Duration) -> bool {
    let Some(pid) = pid_t(pid) else {
        return false;
    };
    let deadline = Instant::now() + limit;
    loop {
        let mut status = 0;
        // SAFETY: `status` is a valid, writable c_int for the call.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            return true;
        }
        if r < 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            // ECHILD: tokio's reaper got it first.
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}
