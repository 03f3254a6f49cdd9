//! The install step: the pinned servers (and, when needed, a newer Node)
//! into `.cache/interop/`, each once, with a stamp written last.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::util::{hash, path_str, read, run_to_stderr, size_of, write};
use super::{
    EVERYTHING_VERSION, Installed, Net, OIDC_PROVIDER_VERSION, PYTHON_SDK_VERSION, Paths, Step,
};
use crate::Result;

/// The oldest Node the servers run on (`@hono/node-server`, a dependency of
/// the TypeScript SDK, needs 20).
const NODE_MIN_MAJOR: u32 = 20;
/// The Node installed from npm when the machine's is older.
const NODE_FALLBACK: &str = "node@22.23.3";
/// The oldest Python the SDK runs on (`mcp` 2.3.0: `Requires-Python >=3.10`).
const PYTHON_MIN: (u32, u32) = (3, 10);
/// Set to `1` to use the npm-installed Node even when the machine's would do
/// (to test that path).
const FORCE_NODE_ENV: &str = "XTASK_INTEROP_NODE22";

/// Installs what is missing; with [`Net::Forbidden`], fails instead.
pub(super) fn install(paths: &Paths, net: Net) -> Result<Installed> {
    std::fs::create_dir_all(&paths.cache)
        .map_err(|e| format!("creating {}: {e}", paths.cache.display()))?;
    let mut steps = Vec::new();
    let node = node(paths, net, &mut steps)?;
    install_npm(paths, net, &mut steps)?;
    install_oauth(paths, net, &mut steps)?;
    let python = install_venv(paths, net, &mut steps)?;
    Ok(Installed {
        node,
        python,
        steps,
    })
}

/// The Node to run the servers with: the machine's when new enough, else
/// the `node@22` npm package, installed once into `.cache/interop/node`.
fn node(paths: &Paths, net: Net, steps: &mut Vec<Step>) -> Result<PathBuf> {
    let forced = std::env::var(FORCE_NODE_ENV).is_ok_and(|v| v == "1");
    if !forced {
        let version = crate::output("node", &["--version"])
            .map_err(|e| format!("Node is needed for server-everything: {e}"))?;
        let major = node_major(&version)
            .ok_or_else(|| format!("cannot read the Node version {version:?}"))?;
        if major >= NODE_MIN_MAJOR {
            return Ok(PathBuf::from("node"));
        }
        eprintln!(
            "    the machine's Node is {}, older than {NODE_MIN_MAJOR}: using {NODE_FALLBACK}",
            version.trim()
        );
    }
    let dir = paths.node_dir();
    let binary = dir.join("node_modules/node/bin/node");
    let what = format!("{NODE_FALLBACK} (npm)");
    let stamp = hash(&[NODE_FALLBACK.as_bytes()]);
    if stamped(&dir, &stamp) && binary.exists() {
        steps.push(Step {
            what,
            installed: None,
            bytes: size_of(&dir),
        });
        return Ok(binary);
    }
    forbid(net, &what)?;
    let start = Instant::now();
    fresh_dir(&dir)?;
    // The package's preinstall script fetches the platform's binary (as
    // another npm package), so scripts must run here.
    run_to_stderr(
        "npm",
        &[
            "install",
            "--prefix",
            path_str(&dir)?,
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            NODE_FALLBACK,
        ],
        &[],
    )?;
    let version = crate::output(path_str(&binary)?, &["--version"])?;
    if node_major(&version).is_none_or(|m| m < NODE_MIN_MAJOR) {
        return Err(format!(
            "{NODE_FALLBACK} installed, but runs as {version:?}"
        ));
    }
    write_stamp(&dir, &stamp)?;
    steps.push(Step {
        what,
        installed: Some(start.elapsed()),
        bytes: size_of(&dir),
    });
    Ok(binary)
}

fn node_major(version: &str) -> Option<u32> {
    version
        .trim()
        .trim_start_matches('v')
        .split('.')
        .next()?
        .parse()
        .ok()
}

/// server-everything, from the committed lockfile.
fn install_npm(paths: &Paths, net: Net, steps: &mut Vec<Step>) -> Result {
    let sources = paths.sources().join("npm");
    let manifest = read(&sources.join("package.json"))?;
    let lock = read(&sources.join("package-lock.json"))?;
    let stamp = hash(&[&manifest, &lock]);
    let dir = paths.npm();
    let what = format!("@modelcontextprotocol/server-everything@{EVERYTHING_VERSION} (npm ci)");
    if stamped(&dir, &stamp) && paths.everything_entry().exists() {
        steps.push(Step {
            what,
            installed: None,
            bytes: size_of(&dir),
        });
        return Ok(());
    }
    forbid(net, &what)?;
    let start = Instant::now();
    fresh_dir(&dir)?;
    write(&dir.join("package.json"), &manifest)?;
    write(&dir.join("package-lock.json"), &lock)?;
    // No install scripts: nothing in this tree needs one.
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
    if !paths.everything_entry().exists() {
        return Err(format!(
            "npm ci finished but {} is missing",
            paths.everything_entry().display()
        ));
    }
    write_stamp(&dir, &stamp)?;
    steps.push(Step {
        what,
        installed: Some(start.elapsed()),
        bytes: size_of(&dir),
    });
    Ok(())
}

/// The authorization server of the OAuth rows (oidc-provider), from its
/// committed lockfile.
fn install_oauth(paths: &Paths, net: Net, steps: &mut Vec<Step>) -> Result {
    let sources = paths.oauth_sources();
    let manifest = read(&sources.join("package.json"))?;
    let lock = read(&sources.join("package-lock.json"))?;
    let stamp = hash(&[&manifest, &lock]);
    let dir = paths.oauth();
    let entry = paths.oauth_modules().join("oidc-provider/package.json");
    let what = format!("oidc-provider@{OIDC_PROVIDER_VERSION} (npm ci)");
    if stamped(&dir, &stamp) && entry.exists() {
        steps.push(Step {
            what,
            installed: None,
            bytes: size_of(&dir),
        });
        return Ok(());
    }
    forbid(net, &what)?;
    let start = Instant::now();
    fresh_dir(&dir)?;
    write(&dir.join("package.json"), &manifest)?;
    write(&dir.join("package-lock.json"), &lock)?;
    // No install scripts: nothing in this tree needs one.
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
    if !entry.exists() {
        return Err(format!(
            "npm ci finished but {} is missing",
            entry.display()
        ));
    }
    write_stamp(&dir, &stamp)?;
    steps.push(Step {
        what,
        installed: Some(start.elapsed()),
        bytes: size_of(&dir),
    });
    Ok(())
}

/// The Python SDK in a virtualenv, from the committed requirements.
fn install_venv(paths: &Paths, net: Net, steps: &mut Vec<Step>) -> Result<PathBuf> {
    let requirements = paths.sources().join("requirements.txt");
    let pins = read(&requirements)?;
    let base = python()?;
    let base_version = crate::output(path_str(&base)?, &["--version"])?;
    let stamp = hash(&[&pins, base_version.as_bytes()]);
    let dir = paths.venv();
    let venv_python = dir.join("bin").join("python");
    let what = format!(
        "mcp=={PYTHON_SDK_VERSION} (virtualenv, {})",
        base_version.trim()
    );
    if stamped(&dir, &stamp) && venv_python.exists() {
        steps.push(Step {
            what,
            installed: None,
            bytes: size_of(&dir),
        });
        return Ok(venv_python);
    }
    forbid(net, &what)?;
    let start = Instant::now();
    fresh_dir(&dir)?;
    run_to_stderr(path_str(&base)?, &["-m", "venv", path_str(&dir)?], &[])?;
    run_to_stderr(
        path_str(&venv_python)?,
        &[
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-input",
            "--disable-pip-version-check",
            "-r",
            path_str(&requirements)?,
        ],
        &[],
    )?;
    // The script imports and registers everything it serves.
    run_to_stderr(
        path_str(&venv_python)?,
        &[path_str(&paths.python_script())?, "--check"],
        &[],
    )?;
    write_stamp(&dir, &stamp)?;
    steps.push(Step {
        what,
        installed: Some(start.elapsed()),
        bytes: size_of(&dir),
    });
    Ok(venv_python)
}

/// The newest Python on the machine that the SDK runs on.
fn python() -> Result<PathBuf> {
    let candidates = [
        "python3.13",
        "python3.12",
        "python3.11",
        "python3.10",
        "python3",
    ];
    let mut seen = Vec::new();
    for candidate in candidates {
        let Ok(version) = crate::output(
            candidate,
            &[
                "-c",
                "import sys; print(sys.version_info[0], sys.version_info[1])",
            ],
        ) else {
            continue;
        };
        let mut parts = version.split_whitespace().map(str::parse::<u32>);
        if let (Some(Ok(major)), Some(Ok(minor))) = (parts.next(), parts.next()) {
            if (major, minor) >= PYTHON_MIN {
                return Ok(PathBuf::from(candidate));
            }
            seen.push(format!("{candidate} is {major}.{minor}"));
        }
    }
    Err(format!(
        "the Python SDK needs Python {}.{} or newer with venv; found none ({})",
        PYTHON_MIN.0,
        PYTHON_MIN.1,
        if seen.is_empty() {
            "no python3 at all".to_owned()
        } else {
            seen.join(", ")
        }
    ))
}

pub(crate) fn forbid(net: Net, what: &str) -> Result {
    match net {
        Net::Allowed => Ok(()),
        Net::Forbidden => Err(format!(
            "{what} is not installed (or outdated), and this run may not use the network"
        )),
    }
}

const STAMP: &str = ".xtask-installed";

pub(crate) fn stamped(dir: &Path, stamp: &str) -> bool {
    std::fs::read_to_string(dir.join(STAMP)).is_ok_and(|s| s.trim() == stamp)
}

pub(crate) fn write_stamp(dir: &Path, stamp: &str) -> Result {
    write(&dir.join(STAMP), format!("{stamp}\n").as_bytes())
}

/// Empties `dir` (a half-done or outdated install) and creates it.
pub(crate) fn fresh_dir(dir: &Path) -> Result {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("removing {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_node_versions() {
        assert_eq!(node_major("v20.20.2\n"), Some(20));
        assert_eq!(node_major("v8.1.0"), Some(8));
        assert_eq!(node_major("junk"), None);
    }
}
