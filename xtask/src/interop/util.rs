//! Helpers: cargo's target directory, files, hashing, sizes, running
//! commands, formatting.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::Result;

/// The target directory cargo builds into (`CARGO_TARGET_DIR` included).
pub(crate) fn target_dir() -> Result<PathBuf> {
    let metadata = crate::output("cargo", &["metadata", "--format-version", "1", "--no-deps"])?;
    let key = "\"target_directory\":\"";
    let start = metadata
        .find(key)
        .map(|i| i + key.len())
        .ok_or("cargo metadata gave no target_directory")?;
    let end = metadata[start..]
        .find('"')
        .ok_or("cargo metadata: unterminated target_directory")?;
    Ok(PathBuf::from(
        metadata[start..start + end].replace("\\\\", "\\"),
    ))
}

pub(crate) fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))
}

pub(crate) fn write(path: &Path, bytes: &[u8]) -> Result {
    std::fs::write(path, bytes).map_err(|e| format!("writing {}: {e}", path.display()))
}

pub(crate) fn path_str(path: &Path) -> Result<&str> {
    path.to_str()
        .ok_or_else(|| format!("{} is not UTF-8", path.display()))
}

/// FNV-1a over the inputs, as hex: stable across Rust releases, unlike
/// `DefaultHasher`.
pub(crate) fn hash(parts: &[&[u8]]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in part.iter().chain(&[0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// The bytes under `dir`, symlinks not followed.
pub(crate) fn size_of(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.path().symlink_metadata() else {
                continue;
            };
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                total += meta.len();
            }
        }
    }
    total
}

/// Like [`crate::run`], with the command's stdout sent to stderr: the
/// table on stdout stays clean of installers' chatter.
pub(crate) fn run_to_stderr(program: &str, args: &[&str], envs: &[(&str, &str)]) -> Result {
    let shown = format!("{program} {}", args.join(" "));
    eprintln!("\n==> {shown}");
    let start = Instant::now();
    let status = Command::new(program)
        .args(args)
        .envs(envs.iter().copied())
        .stdout(std::io::stderr())
        .status()
        .map_err(|e| format!("could not start `{shown}`: {e}"))?;
    eprintln!("<== {shown}: {status} in {:.1?}", start.elapsed());
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{shown}` failed ({status})"))
    }
}

/// Runs `command` (its stdout and stderr piped) and collects its output;
/// kills it if it has not finished within `limit`.
pub(crate) fn output_within(mut command: Command, limit: Duration) -> Result<std::process::Output> {
    use std::io::Read;
    let mut child = command
        .spawn()
        .map_err(|e| format!("could not start {command:?}: {e}"))?;
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let out = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(s) = stdout.as_mut() {
            let _ = s.read_to_end(&mut buf);
        }
        buf
    });
    let err = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(s) = stderr.as_mut() {
            let _ = s.read_to_end(&mut buf);
        }
        buf
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("no exit within {limit:?}; killed"));
            }
            Err(e) => return Err(format!("waiting for {command:?}: {e}")),
        }
    };
    Ok(std::process::Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

/// A duration, short.
pub(crate) fn ms(d: Duration) -> String {
    if d >= Duration::from_secs(1) {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// `OsString` of a path, for argument lists.
pub(crate) fn os(path: &Path) -> OsString {
    path.as_os_str().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_stable_and_separates_parts() {
        assert_eq!(hash(&[b"a"]), hash(&[b"a"]));
        assert_ne!(hash(&[b"ab", b""]), hash(&[b"a", b"b"]));
        // FNV-1a of "a" followed by the 0xff separator, fixed forever.
        assert_eq!(hash(&[b"a"]).len(), 16);
    }
}
