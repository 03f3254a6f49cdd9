//! Running without network: the offline proof of the install step, and
//! commands in a network namespace of their own (`unshare -rn`).

use std::path::Path;
use std::process::Command;

use crate::Result;

/// Re-runs an install step (the xtask task `install_task`, given
/// `--offline`) with no network and fails if it needs any.
pub(crate) fn offline_proof(install_task: &str) -> Result {
    let me = std::env::current_exe().map_err(|e| format!("where is xtask? {e}"))?;
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
