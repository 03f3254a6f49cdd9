//! `cargo xtask interop`: the client against real MCP servers over stdio
//! and HTTP.
//!
//! 1. Installs, only when missing, the pinned servers into the workspace's
//!    ignored `.cache/interop/`:
//!    - `npm/`: `@modelcontextprotocol/server-everything` from
//!      `xtask/interop/npm/package-lock.json` (`npm ci --ignore-scripts`);
//!    - `venv/`: a virtualenv with `xtask/interop/requirements.txt` (`mcp==2.3.0`
//!      and every dependency pinned) for `xtask/interop/python_server.py`;
//!    - `oauth/`: `oidc-provider`, the authorization server of the OAuth
//!      rows, from `xtask/interop/oauth/package-lock.json` (`npm ci
//!      --ignore-scripts`);
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
//!    API only) against each server in each era, over stdio, Streamable
//!    HTTP (stateful, and stateless for the Python server) and HTTP+SSE,
//!    also without network (loopback only: the example starts each HTTP
//!    server on a free port in its own namespace), and prints its tables.
//! 4. Drives the same servers through the `mcp` command line, over stdio
//!    and with `--url` (see [`crate::cli`] and [`crate::cli_http`]).
//! 5. Has clients written by others (the official TypeScript and Python
//!    SDKs' own) drive `mcp bridge` in front of each server (see
//!    [`crate::bridge_interop`]).
//! 6. Logs in through `mcp login` at a real authorization server
//!    (oidc-provider) in front of the Python SDK's server checking each
//!    token, and uses, refreshes and drops that login (see
//!    [`crate::cli_oauth`]).
//! 7. Records a session with each server through `mcp --record` and
//!    replays it through the library with no server (the cassette tests of
//!    `mcp-cli`).
//!
//! The install step is in `install` (Node, npm, the virtualenv, Python
//! discovery, stamps), the offline proof in `offline`, and the helpers
//! (running commands, hashing, sizes, formatting) in `util`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::Result;

mod install;
mod offline;
pub(crate) mod serve;
mod util;

use install::install;
pub(crate) use install::{forbid, fresh_dir, stamped, write_stamp};
pub(crate) use offline::{
    RemoveOnDrop, copy_of_self, offline_command, offline_proof, unshare_works,
};
pub(crate) use util::{hash, ms, os, output_within, path_str, read, run_to_stderr, size_of};
pub(crate) use util::{target_dir, write};

/// The pinned server-everything release (also in `xtask/interop/npm/`).
pub(crate) const EVERYTHING_VERSION: &str = "2026.8.31";
/// The pinned authorization server of the OAuth rows (also in
/// `xtask/interop/oauth/`).
pub(crate) const OIDC_PROVIDER_VERSION: &str = "9.13.3";
/// The pinned Python SDK release (also in `xtask/interop/requirements.txt`).
pub(crate) const PYTHON_SDK_VERSION: &str = "2.3.0";

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

    /// oidc-provider's npm prefix.
    fn oauth(&self) -> PathBuf {
        self.cache.join("oauth")
    }

    /// Where oidc-provider is installed.
    pub(crate) fn oauth_modules(&self) -> PathBuf {
        self.oauth().join("node_modules")
    }

    /// The OAuth rows' scripts and pins in the repository.
    pub(crate) fn oauth_sources(&self) -> PathBuf {
        self.sources().join("oauth")
    }

    fn node_dir(&self) -> PathBuf {
        self.cache.join("node")
    }

    /// The interop sources in the repository.
    fn sources(&self) -> PathBuf {
        self.root.join("xtask").join("interop")
    }

    /// The Python server script.
    pub(crate) fn python_script(&self) -> PathBuf {
        self.sources().join("python_server.py")
    }

    /// A client script of the bridge step: `bridge_client.mjs` or
    /// `bridge_client.py` (see [`crate::bridge_interop`]).
    pub(crate) fn bridge_client(&self, ext: &str) -> PathBuf {
        self.sources().join(format!("bridge_client.{ext}"))
    }

    /// The wire tap put between a client and a stdio server.
    pub(crate) fn wiretap(&self) -> PathBuf {
        self.sources().join("wiretap.py")
    }

    /// The official TypeScript SDK, as server-everything depends on it.
    pub(crate) fn typescript_sdk(&self) -> PathBuf {
        self.npm().join("node_modules/@modelcontextprotocol/sdk")
    }

    /// server-everything's entry point, given the npm prefix.
    pub(crate) fn everything_entry(&self) -> PathBuf {
        self.npm()
            .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
    }
}

/// Whether installing may use the network.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Net {
    Allowed,
    /// Nothing may be installed: the run fails instead.
    Forbidden,
}

/// What the install step found or did for one component.
pub(crate) struct Step {
    pub(crate) what: String,
    pub(crate) installed: Option<Duration>,
    pub(crate) bytes: u64,
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

    offline_proof("interop-install")?;

    crate::build_all()?;
    let runner = target_dir()?.join("debug").join(format!(
        "mcp-interop-runner{}",
        std::env::consts::EXE_SUFFIX
    ));
    let mut command = offline_command(&runner);
    command
        .arg("--node")
        .arg(&installed.node)
        .arg("--everything")
        .arg(paths.npm())
        .arg("--python")
        .arg(&installed.python)
        .arg("--script")
        .arg(paths.python_script());
    // Every wire, unless the runner's own options choose.
    if !runner_args.iter().any(|a| *a == "--wire" || *a == "--url") {
        for wire in ["stdio", "http", "http-stateless", "sse"] {
            command.arg("--wire").arg(wire);
        }
    }
    command.args(&runner_args);
    let network = if unshare_works() {
        "no network but loopback"
    } else {
        "npm and pip offline"
    };
    eprintln!(
        "\n==> interop: the library against server-everything {EVERYTHING_VERSION} and mcp {PYTHON_SDK_VERSION} (Python), each era, over stdio and HTTP ({network})"
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
    // The CLI step built the `mcp` binary (with every target).
    let bridge = crate::interop::target_dir()
        .map(|dir| {
            dir.join("debug")
                .join(format!("mcp{}", std::env::consts::EXE_SUFFIX))
        })
        .and_then(|mcp| crate::bridge_interop::run(&paths, &installed, &mcp));
    let oauth = crate::cli_oauth::run(&installed);
    let cassettes = cassettes(&installed);

    eprintln!("\n<== interop in {:.1?}", started.elapsed());
    library?;
    cli?;
    bridge?;
    oauth?;
    cassettes
}

/// Records sessions with both servers through `mcp --record` and replays
/// them through the library with no server (`mcp-cli/tests/cassette.rs`),
/// here with the servers required: a missing one fails instead of skipping.
fn cassettes(installed: &Installed) -> Result {
    eprintln!("\n==> interop: recorded through `mcp --record`, replayed with no server");
    let node = path_str(&installed.node)?;
    crate::run(
        "cargo",
        &[
            "test",
            "--quiet",
            "-p",
            "mcp-steady-cli",
            "--test",
            "cassette",
            "--",
            "--nocapture",
        ],
        &[
            ("MCP_CASSETTE_REQUIRE_SERVERS", "1"),
            ("MCP_INTEROP_NODE", node),
        ],
    )
}

/// The install step, allowed the network, with what it found or did
/// printed.
pub(crate) fn install_and_show(paths: &Paths) -> Result<Installed> {
    let installed = install(paths, Net::Allowed)?;
    print_steps(&installed.steps);
    Ok(installed)
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

pub(crate) fn print_steps(steps: &[Step]) {
    for step in steps {
        let size = format!("{:.1} MB", step.bytes as f64 / 1e6);
        match step.installed {
            Some(took) => eprintln!("    {}: installed in {took:.1?} ({size})", step.what),
            None => eprintln!("    {}: already installed ({size})", step.what),
        }
    }
}
