//! `cargo xtask interop`: the client against real MCP servers over stdio.
//!
//! 1. Installs, only when missing, the pinned servers into the workspace's
//!    ignored `.cache/interop/`:
//!    - `npm/`: `@modelcontextprotocol/server-everything` from
//!      `interop/npm/package-lock.json` (`npm ci --ignore-scripts`);
//!    - `venv/`: a virtualenv with `interop/requirements.txt` (`mcp==2.3.0`
//!      and every dependency pinned) for `interop/python_server.py`;
//!    - `node/`: the `node@22` npm package, only when the machine's Node is
//!      older than the servers need.
//!
//!    Each install writes a stamp (a hash of what it installed from) last,
//!    so an interrupted or outdated install is redone and a complete one is
//!    left alone.
//! 2. Proves that a second run needs no network: runs the install step again
//!    in a network namespace with no network (`unshare -rn`; where that is
//!    not allowed, with npm and pip told to stay offline) and fails if it
//!    would install anything.
//! 3. Builds and runs `mcp-client`'s `interop` example (the library's public
//!    API only) against each server in each era, also without network, and
//!    prints its table.
//! 4. Drives the same servers through the `mcp` command line, when the
//!    `mcp-cli` crate has real commands and builds (see [`crate::cli`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::Result;

/// The pinned server-everything release (also in `interop/npm/`).
pub(crate) const EVERYTHING_VERSION: &str = "2026.8.31";
/// The pinned Python SDK release (also in `interop/requirements.txt`).
pub(crate) const PYTHON_SDK_VERSION: &str = "2.3.0";
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

/// Where everything lives.
pub(crate) struct Paths {
    /// The workspace's root.
    pub(crate) root: PathBuf,
    /// `.cache/interop`, git-ignored.
    pub(crate) cache: PathBuf,
}

impl Paths {
    pub(crate) fn new() -> Paths {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("xtask lives in the workspace")
            .to_path_buf();
        let cache = root.join(".cache").join("interop");
        Paths { root, cache }
    }

    fn npm(&self) -> PathBuf {
        self.cache.join("npm")
    }

    fn venv(&self) -> PathBuf {
        self.cache.join("venv")
    }

    fn node_dir(&self) -> PathBuf {
        self.cache.join("node")
    }

    /// The interop sources in the repository.
    fn sources(&self) -> PathBuf {
        self.root.join("interop")
    }

    /// The Python server script.
    pub(crate) fn python_script(&self) -> PathBuf {
        self.sources().join("python_server.py")
    }

    /// server-everything's entry point, given the npm prefix.
    pub(crate) fn everything_entry(&self) -> PathBuf {
        self.npm()
            .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
    }
}

/// Whether installing may use the network.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Net {
    Allowed,
    /// Nothing may be installed: the run fails instead.
    Forbidden,
}

/// What the install step found or did for one component.
struct Step {
    what: String,
    installed: Option<Duration>,
    bytes: u64,
}

/// The programs the runs use.
pub(crate) struct Installed {
    /// The Node to run server-everything with.
    pub(crate) node: PathBuf,
    /// The virtualenv's Python.
    pub(crate) python: PathBuf,
    steps: Vec<Step>,
}

/// `cargo xtask interop [-- RUNNER ARGS]`.
pub(crate) fn interop(args: &[String]) -> Result {
    let paths = Paths::new();
    let runner_args: Vec<&str> = match args.iter().position(|a| a == "--") {
        Some(i) => args[i + 1..].iter().map(String::as_str).collect(),
        None => Vec::new(),
    };
    let started = Instant::now();

    eprintln!(
        "\n==> interop: installing the pinned servers into {}",
        paths.cache.display()
    );
    let installed = install(&paths, Net::Allowed)?;
    print_steps(&installed.steps);

    offline_proof()?;

    crate::run(
        "cargo",
        &[
            "build",
            "--quiet",
            "-p",
            "mcp-client",
            "--example",
            "interop",
        ],
        &[],
    )?;
    let runner = target_dir()?.join("debug").join("examples").join("interop");
    let mut command = offline_command(&runner);
    command
        .arg("--node")
        .arg(&installed.node)
        .arg("--everything")
        .arg(paths.npm())
        .arg("--python")
        .arg(&installed.python)
        .arg("--script")
        .arg(paths.python_script())
        .args(&runner_args);
    let network = if unshare_works() {
        "no network"
    } else {
        "npm and pip offline"
    };
    eprintln!(
        "\n==> interop: the library against server-everything {EVERYTHING_VERSION} and mcp {PYTHON_SDK_VERSION} (Python), each era ({network})"
    );
    let status = command
        .status()
        .map_err(|e| format!("could not start {}: {e}", runner.display()))?;
    let library = if status.success() {
        Ok(())
    } else {
        Err(format!(
            "the interop runner reported failures ({status}); for wire logs: cargo xtask interop -- --wire-log .cache/interop/wire"
        ))
    };

    let cli = crate::cli::run(&paths, &installed);

    eprintln!("\n<== interop in {:.1?}", started.elapsed());
    library?;
    cli
}

/// `cargo xtask interop-install [--offline]`: only the install step; with
/// `--offline`, fails if anything would be installed.
pub(crate) fn install_only(args: &[String]) -> Result {
    let paths = Paths::new();
    let offline = args.iter().any(|a| a == "--offline");
    let net = if offline {
        Net::Forbidden
    } else {
        Net::Allowed
    };
    let installed = install(&paths, net)?;
    print_steps(&installed.steps);
    if offline {
        eprintln!("    offline: everything was already installed; nothing needed the network");
    }
    Ok(())
}

fn print_steps(steps: &[Step]) {
    for step in steps {
        let size = format!("{:.1} MB", step.bytes as f64 / 1e6);
        match step.installed {
            Some(took) => eprintln!("    {}: installed in {took:.1?} ({size})", step.what),
            None => eprintln!("    {}: already installed ({size})", step.what),
        }
    }
}

/// Re-runs the install step with no network and fails if it needs any.
fn offline_proof() -> Result {
    let me = std::env::current_exe().map_err(|e| format!("where is xtask? {e}"))?;
    let mut command = offline_command(&me);
    command.args(["interop-install", "--offline"]);
    let how = if unshare_works() {
        "unshare -rn (no network at all)"
    } else {
        "npm_config_offline=true PIP_NO_INDEX=1 (unshare -rn is not allowed here)"
    };
    eprintln!("\n==> interop: the install step again, offline, via {how}");
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
pub(crate) fn offline_command(program: &Path) -> Command {
    let mut command = if unshare_works() {
        let mut c = Command::new("unshare");
        c.arg("-rn").arg(program);
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
fn unshare_works() -> bool {
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

/// Installs what is missing; with [`Net::Forbidden`], fails instead.
fn install(paths: &Paths, net: Net) -> Result<Installed> {
    std::fs::create_dir_all(&paths.cache)
        .map_err(|e| format!("creating {}: {e}", paths.cache.display()))?;
    let mut steps = Vec::new();
    let node = node(paths, net, &mut steps)?;
    install_npm(paths, net, &mut steps)?;
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

fn forbid(net: Net, what: &str) -> Result {
    match net {
        Net::Allowed => Ok(()),
        Net::Forbidden => Err(format!(
            "{what} is not installed (or outdated), and this run may not use the network"
        )),
    }
}

const STAMP: &str = ".xtask-installed";

fn stamped(dir: &Path, stamp: &str) -> bool {
    std::fs::read_to_string(dir.join(STAMP)).is_ok_and(|s| s.trim() == stamp)
}

fn write_stamp(dir: &Path, stamp: &str) -> Result {
    write(&dir.join(STAMP), format!("{stamp}\n").as_bytes())
}

/// Empties `dir` (a half-done or outdated install) and creates it.
fn fresh_dir(dir: &Path) -> Result {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("removing {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))
}

fn write(path: &Path, bytes: &[u8]) -> Result {
    std::fs::write(path, bytes).map_err(|e| format!("writing {}: {e}", path.display()))
}

fn path_str(path: &Path) -> Result<&str> {
    path.to_str()
        .ok_or_else(|| format!("{} is not UTF-8", path.display()))
}

/// FNV-1a over the inputs, as hex: stable across Rust releases, unlike
/// `DefaultHasher`.
fn hash(parts: &[&[u8]]) -> String {
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
fn size_of(dir: &Path) -> u64 {
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
fn run_to_stderr(program: &str, args: &[&str], envs: &[(&str, &str)]) -> Result {
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
    fn reads_node_versions() {
        assert_eq!(node_major("v20.20.2\n"), Some(20));
        assert_eq!(node_major("v8.1.0"), Some(8));
        assert_eq!(node_major("junk"), None);
    }

    #[test]
    fn hash_is_stable_and_separates_parts() {
        assert_eq!(hash(&[b"a"]), hash(&[b"a"]));
        assert_ne!(hash(&[b"ab", b""]), hash(&[b"a", b"b"]));
        // FNV-1a of "a" followed by the 0xff separator, fixed forever.
        assert_eq!(hash(&[b"a"]).len(), 16);
    }
}
