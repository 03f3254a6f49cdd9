//! Running the suite: one leg (`--requirements REV` or `--suite all
//! --spec-version REV`, against the client or, `conformance server`,
//! against the reference server), its results read back, and each scenario
//! that failed unexpectedly re-run alone once.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::Paths;
use super::results::{Results, Verdict, read_results, strict, verdict};
use crate::Result;
use crate::interop::output_within;

/// The per-client limit given to the suite: its default (30 s) is too
/// tight for the timing scenarios when every scenario starts at once on two
/// cores.
const CLIENT_TIMEOUT_MS: &str = "60000";
/// The limit for one whole suite invocation (the scenarios run at once, so
/// a leg takes about as long as its slowest client).
const LEG_LIMIT: Duration = Duration::from_secs(300);

/// The client scenarios of the Skills extension (SEP-2640). Extension
/// scenarios are off the spec's timeline, so the suite runs them only when
/// named and forced (`--scenario NAME --force`).
pub(super) const SKILLS_SCENARIOS: [&str; 4] = [
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
];

/// One column of the table: one invocation of `conformance client`, or
/// (an extension leg) one per scenario.
pub(super) struct Leg {
    /// A column header: `req 2025-11-25`, `all 2026-07-28`.
    pub(super) label: String,
    /// The arguments of each invocation, selecting its scenarios.
    pub(super) runs: Vec<Vec<String>>,
    /// The revision a scenario of this leg is re-run at.
    pub(super) version: String,
    /// Added to a re-run's arguments (`--force` for extension scenarios).
    pub(super) rerun_extra: Vec<String>,
    /// Scenarios that must each give results, every check SUCCESS: a
    /// SKIPPED check, or none at all, fails the leg too.
    pub(super) strict: Vec<String>,
    /// When set, only these scenarios are judged; the others the leg runs
    /// are reported, never scored (the suite runs the extension, pending
    /// and added-after-release scenarios of a requirement set alongside
    /// it, for visibility).
    pub(super) scored: Option<Vec<String>>,
    /// Scenarios this leg is expected to fail beyond the expected
    /// failures (what a bridge across the eras cannot carry), judged by
    /// the same baseline rule.
    pub(super) cannot_carry: Vec<String>,
}

/// What the suite runs against.
#[derive(Clone, Copy)]
pub(super) enum Against<'a> {
    /// `conformance client --command PATH`.
    Client(&'a Path),
    /// `conformance server --url URL`.
    Server(&'a str),
}

impl Leg {
    /// `--requirements REV`: exactly what the revision requires (and the
    /// unscored extras it runs for visibility).
    pub(super) fn requirements(version: &str) -> Leg {
        Leg {
            label: format!("req {version}"),
            runs: vec![vec!["--requirements".into(), version.into()]],
            version: version.into(),
            rerun_extra: Vec::new(),
            strict: Vec::new(),
            scored: None,
            cannot_carry: Vec::new(),
        }
    }

    /// `conformance server --requirements REV`: judged on `scored`, the
    /// server scenarios the revision requires, each of which must give
    /// results with no check SKIPPED.
    pub(super) fn server(version: &str, scored: Vec<String>) -> Leg {
        Leg {
            label: format!("server {version}"),
            strict: scored.clone(),
            scored: Some(scored),
            ..Leg::requirements(version)
        }
    }

    /// A server leg run through `mcp bridge`: judged as [`Leg::server`].
    pub(super) fn bridge(version: &str, scored: Vec<String>) -> Leg {
        Leg {
            label: format!("bridge {version}"),
            ..Leg::server(version, scored)
        }
    }

    /// A server leg run through `mcp bridge` in front of a server of the
    /// other era: judged as [`Leg::server`].
    pub(super) fn across(version: &str, scored: Vec<String>) -> Leg {
        Leg {
            label: format!("across {version}"),
            ..Leg::server(version, scored)
        }
    }

    /// `--suite all --spec-version REV`.
    pub(super) fn all(version: &str) -> Leg {
        Leg {
            label: format!("all {version}"),
            runs: vec![vec![
                "--suite".into(),
                "all".into(),
                "--spec-version".into(),
                version.into(),
            ]],
            version: version.into(),
            rerun_extra: Vec::new(),
            strict: Vec::new(),
            scored: None,
            cannot_carry: Vec::new(),
        }
    }

    /// The Skills extension's client scenarios at `version`, each named
    /// and forced; every check must be SUCCESS (a SKIPPED one fails).
    pub(super) fn skills(version: &str) -> Leg {
        let runs = SKILLS_SCENARIOS
            .iter()
            .map(|name| {
                ["--scenario", name, "--spec-version", version, "--force"]
                    .map(str::to_owned)
                    .to_vec()
            })
            .collect();
        Leg {
            label: format!("ext {version}"),
            runs,
            version: version.into(),
            rerun_extra: vec!["--force".into()],
            strict: SKILLS_SCENARIOS.map(str::to_owned).to_vec(),
            scored: None,
            cannot_carry: Vec::new(),
        }
    }

    /// The results the leg is judged on.
    fn judged(&self, results: &Results) -> Results {
        match &self.scored {
            None => results.clone(),
            Some(scored) => results
                .iter()
                .filter(|(name, _)| scored.contains(name))
                .map(|(name, checks)| (name.clone(), checks.clone()))
                .collect(),
        }
    }

    fn slug(&self) -> String {
        self.label.replace(' ', "-")
    }
}

/// What a leg gave.
pub(super) struct LegOutcome {
    /// Every scenario's checks (a re-run's replacing the first run's).
    pub(super) results: Results,
    /// The verdict after the re-runs.
    pub(super) verdict: Verdict,
    /// Scenarios re-run alone, and whether they passed then.
    pub(super) reran: Vec<(String, bool)>,
    /// The whole leg, re-runs included.
    pub(super) took: Duration,
}

impl Against<'_> {
    /// Results by scenario name: the suite files a server scenario's
    /// results under `server-<name>-<time>`.
    fn named(self, results: Results) -> Results {
        match self {
            Against::Client(_) => results,
            Against::Server(_) => results
                .into_iter()
                .map(|(name, checks)| match name.strip_prefix("server-") {
                    Some(bare) => (bare.to_owned(), checks),
                    None => (name, checks),
                })
                .collect(),
        }
    }
}

/// Runs `leg` against `client` (or a server), re-running unexpected
/// failures alone.
pub(super) fn run_leg(
    paths: &Paths,
    leg: &Leg,
    client: Against<'_>,
    expected: &[String],
    out: &Path,
) -> Result<LegOutcome> {
    let started = Instant::now();
    let dir = out.join(leg.slug());
    let mut exit_ok = true;
    let mut results = Results::new();
    for (n, select) in leg.runs.iter().enumerate() {
        let run_dir = match n {
            0 => dir.clone(),
            n => dir.with_file_name(format!("{}-{n}", leg.slug())),
        };
        let (ok, stdout) = invoke(paths, client, select, &run_dir)?;
        exit_ok &= ok;
        eprintln!("\n--- {}: the suite's summary", leg.label);
        eprintln!("{}", summary(&stdout));
        results.extend(client.named(read_results(&run_dir)?));
    }
    let expected: Vec<String> = expected.iter().chain(&leg.cannot_carry).cloned().collect();
    let first = strict_verdict(leg, &results, verdict(&leg.judged(&results), &expected));
    // The suite knows only the expected failures' file: a leg that
    // expects more fails in its eyes.
    if !exit_ok && first == Verdict::default() && leg.cannot_carry.is_empty() {
        return Err(format!(
            "{}: the suite failed, but its results show no unexpected or stale scenario; its output is in {}",
            leg.label,
            dir.with_extension("log").display()
        ));
    }
    let mut reran = Vec::new();
    for scenario in &first.unexpected {
        eprintln!(
            "    {}: {scenario} failed; running it again alone",
            leg.label
        );
        let solo = dir.with_file_name(format!(
            "{}-again-{}",
            leg.slug(),
            scenario.replace('/', "_")
        ));
        let mut select = vec![
            "--scenario".to_owned(),
            scenario.clone(),
            "--spec-version".to_owned(),
            leg.version.clone(),
        ];
        select.extend(leg.rerun_extra.iter().cloned());
        invoke(paths, client, &select, &solo)?;
        let again = client.named(read_results(&solo)?);
        let checks = again.get(scenario).cloned().unwrap_or_default();
        let strict = leg.strict.contains(scenario);
        let passed = !checks.is_empty()
            && !checks
                .values()
                .any(|f| f.fails() || (strict && f.skipped()));
        reran.push((scenario.clone(), passed));
        if !checks.is_empty() {
            results.insert(scenario.clone(), checks);
        }
    }
    let verdict = strict_verdict(leg, &results, verdict(&leg.judged(&results), &expected));
    Ok(LegOutcome {
        results,
        verdict,
        reran,
        took: started.elapsed(),
    })
}

/// The baseline verdict, and [`strict`] for the leg's strict scenarios.
fn strict_verdict(leg: &Leg, results: &Results, verdict: Verdict) -> Verdict {
    strict(results, &leg.strict, verdict)
}

/// One `conformance client` (or `server`) run into `dir` (emptied first);
/// its output goes to `dir.log`. Returns whether the suite exited 0, and
/// its stdout.
fn invoke(
    paths: &Paths,
    against: Against<'_>,
    select: &[String],
    dir: &PathBuf,
) -> Result<(bool, String)> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("removing {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let node_bin = paths
        .node()
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let path = match std::env::var_os("PATH") {
        Some(rest) => {
            let mut all = vec![node_bin];
            all.extend(std::env::split_paths(&rest));
            std::env::join_paths(all).map_err(|e| format!("PATH: {e}"))?
        }
        None => node_bin.into_os_string(),
    };
    let mut command = Command::new(paths.node());
    command.arg(paths.suite_entry());
    let mode = match against {
        // The suite splits the command on spaces: the path must have none.
        Against::Client(client) => {
            command.arg("client").arg("--command").arg(client);
            "client"
        }
        Against::Server(url) => {
            command.arg("server").arg("--url").arg(url);
            "server"
        }
    };
    command
        .args(select)
        .arg("--timeout")
        .arg(CLIENT_TIMEOUT_MS)
        .arg("--expected-failures")
        .arg(paths.expected_failures())
        .arg("-o")
        .arg(dir)
        .env("PATH", path)
        // The suite's own colours would end up in the log.
        .env("NO_COLOR", "1")
        .env("npm_config_offline", "true")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    eprintln!("\n==> conformance {mode} {}", select.join(" "));
    let started = Instant::now();
    let output = output_within(command, LEG_LIMIT)?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let mut log = stdout.clone();
    log.push_str("\n--- stderr\n");
    log.push_str(&String::from_utf8_lossy(&output.stderr));
    let log_file = dir.with_extension("log");
    std::fs::write(&log_file, &log).map_err(|e| format!("writing {}: {e}", log_file.display()))?;
    eprintln!(
        "<== conformance {mode} {}: {} in {:.1?} (output in {})",
        select.join(" "),
        output.status,
        started.elapsed(),
        log_file.display()
    );
    Ok((output.status.success(), stdout))
}

/// The suite's closing summary (from `=== SUITE SUMMARY ===` on), or the
/// output's tail when there is none.
fn summary(log: &str) -> String {
    match log.find("=== SUITE SUMMARY ===") {
        Some(i) => log[i..].trim_end().to_owned(),
        None => {
            let lines: Vec<&str> = log.lines().collect();
            lines[lines.len().saturating_sub(40)..].join("\n")
        }
    }
}
