//! Where the `mcp-reference-server` binary is ([`server_path`]), for tests
//! and examples in any crate that start the reference server as a child
//! process.
//!
//! The binary is looked for next to the running test executable (cargo puts
//! tests in `target/<profile>/deps/` and binaries in `target/<profile>/`).
//! When it is not there (a test of another crate, which cargo does not build
//! this crate's binaries for), it is built once per process with
//! `cargo build -p mcp-steady-reference-server --bin mcp-reference-server`
//! into the same target directory and profile.
//! `MCP_REFERENCE_SERVER_BIN_DIR`, when set, is searched first.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The reference server binary's name.
pub const SERVER_BIN: &str = "mcp-reference-server";

/// The path of `mcp-reference-server`, built if needed.
///
/// # Panics
///
/// When the binary is missing and cannot be built; the message says why.
pub fn server_path() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| find_or_build(SERVER_BIN)).clone()
}

fn file_name(name: &str) -> String {
    format!("{name}{}", env::consts::EXE_SUFFIX)
}

/// The directory cargo puts binaries in for the running executable's
/// profile: the executable's own directory, or its parent when that is
/// `deps` (tests) or `examples` (an example run with `cargo run --example`). An executable outside any target directory (a doctest, which
/// rustdoc builds in a temporary folder) uses the workspace's: the
/// `CARGO_TARGET_DIR` it runs under, or `target/` beside this crate, with
/// the `debug` profile.
fn profile_dir() -> Option<PathBuf> {
    let exe = env::current_exe().ok()?;
    let dir = exe.parent()?;
    let dir = if dir
        .file_name()
        .is_some_and(|n| n == "deps" || n == "examples")
    {
        dir.parent()?
    } else {
        dir
    };
    let in_target_dir = dir
        .ancestors()
        .skip(1)
        .take(2)
        .any(|d| d.join("CACHEDIR.TAG").exists());
    if in_target_dir {
        return Some(dir.to_path_buf());
    }
    let target = env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    Some(target.join("debug"))
}

fn find_or_build(name: &str) -> PathBuf {
    if let Some(dir) = env::var_os("MCP_REFERENCE_SERVER_BIN_DIR") {
        let candidate = PathBuf::from(dir).join(file_name(name));
        if candidate.is_file() {
            return candidate;
        }
    }
    let Some(profile_dir) = profile_dir() else {
        panic!("cannot find {name}: the current executable's directory is unknown");
    };
    let candidate = profile_dir.join(file_name(name));
    if candidate.is_file() {
        return candidate;
    }
    build(name, &profile_dir);
    if candidate.is_file() {
        return candidate;
    }
    panic!(
        "cargo built {name}, but it is not at {}",
        candidate.display()
    );
}

/// Builds the binary with the profile, target and target directory that
/// `profile_dir` (`<target dir>[/<triple>]/<profile>`) belongs to.
fn build(name: &str, profile_dir: &Path) {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    if !manifest.is_file() {
        panic!(
            "{name} is not in {} and this crate's sources are not at hand to build it; \
             build it and set MCP_REFERENCE_SERVER_BIN_DIR to its directory",
            profile_dir.display()
        );
    }
    let profile = profile_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "debug".into());
    let mut above = profile_dir.parent().map(Path::to_path_buf);
    let mut triple = None;
    // With `--target <triple>` the layout is `<target dir>/<triple>/<profile>`;
    // cargo marks the target directory itself with CACHEDIR.TAG.
    if let Some(dir) = above.clone()
        && !dir.join("CACHEDIR.TAG").exists()
        && dir
            .parent()
            .is_some_and(|p| p.join("CACHEDIR.TAG").exists())
    {
        triple = dir.file_name().map(|n| n.to_string_lossy().into_owned());
        above = dir.parent().map(Path::to_path_buf);
    }
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .arg("build")
        .arg("--manifest-path")
        .arg(&manifest)
        .args(["-p", "mcp-steady-reference-server", "--bin", name]);
    match profile.as_str() {
        "debug" => {}
        "release" => {
            command.arg("--release");
        }
        other => {
            command.args(["--profile", other]);
        }
    }
    if let Some(triple) = &triple {
        command.args(["--target", triple]);
    }
    if let Some(target_dir) = &above {
        command.arg("--target-dir").arg(target_dir);
    }
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run cargo to build {name}: {e}"));
    if !output.status.success() {
        panic!(
            "building {name} failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
