//! Running without network: the offline proof of the install step, and
//! commands in a network namespace of their own (`unshare -rn`).

use std::path::Path;
use std::process::Command;

use crate::Result;

/// Re-runs an install step (the xtask task `install_task`, given
/// `--offline`) with no network and fails if it needs any.
pub(crate) fn offline_proof(install_task: &str) -> Result {
    let me = copy_of_self("offline")?;
    let _cleanup = RemoveOnDrop(me.clone());
    let mut command = offline_command(&me);
    command.args([install_task, "--offline"]);
    let how = if unshare_works() {
        "unshare -rn (no network at all)"
    } else {
        "npm_config_offline=true PIP_NO_INDEX=1 (unshare -rn is not allowed here)"
    };
    eprintln!("\n==> {install_task}: the install step again, offline, via {how}");
    let status = command
        .status()
        .map_err(|e| format!("could not start the offline install check: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "the install step is not offline-ready: run again it would need the network ({status})"
        ))
    }
}

/// A copy of this very program, to run again as a child: the file it was
/// started from may have been replaced since (a build of every target
/// rebuilds xtask), and `/proc/self/exe` still reads the running one.
pub(crate) fn copy_of_self(tag: &str) -> Result<std::path::PathBuf> {
    let running = if Path::new("/proc/self/exe").exists() {
        std::path::PathBuf::from("/proc/self/exe")
    } else {
        std::env::current_exe().map_err(|e| format!("where is xtask? {e}"))?
    };
    let copy = std::env::temp_dir().join(format!("xtask-{tag}-{}", std::process::id()));
    std::fs::copy(&running, &copy)
        .map_err(|e| format!("copying {} to {}: {e}", running.display(), copy.display()))?;
    Ok(copy)
}

/// Removes a file when dropped.
pub(crate) struct RemoveOnDrop(pub(crate) std::path::PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A command for `program` with no network: in a fresh network namespace
/// when `unshare -rn` works here, and with npm and pip told to stay offline
/// in any case.
///
/// The namespace's loopback is brought up first (it starts down), so that
/// servers over HTTP on 127.0.0.1 can be reached from inside it; nothing
/// outside is reachable.
pub(crate) fn offline_command(program: &Path) -> Command {
    let mut command = if unshare_works() {
        let mut c = Command::new("unshare");
        c.args([
            "-rn",
            "sh",
            "-c",
            "ip link set lo up 2>/dev/null || ifconfig lo up 2>/dev/null; exec \"$@\"",
            "sh",
        ])
        .arg(program);
        c
    } else {
        Command::new(program)
    };
    command
        .env("npm_config_offline", "true")
        .env("PIP_NO_INDEX", "1");
    command
}

/// Whether `unshare -rn` (a user and network namespace) is allowed here.
pub(crate) fn unshare_works() -> bool {
    static WORKS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WORKS.get_or_init(|| {
        Command::new("unshare")
            .args(["-rn", "true"])
            .stderr(std::process::Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    })
}
