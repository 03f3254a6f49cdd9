//! The suite's results on disk and the baseline rule applied to them.
//!
//! With `-o DIR` the suite writes `DIR/<scenario>-<timestamp>/checks.json`
//! per scenario (a scenario named `auth/x` lands in `DIR/auth/x-<timestamp>`),
//! each a JSON array of `{id, status, ...}`.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::Result;

/// A check's status as the suite gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Status {
    Success,
    Info,
    Skipped,
    Warning,
    Failure,
}

impl Status {
    fn parse(s: &str) -> Status {
        match s {
            "SUCCESS" => Status::Success,
            "INFO" => Status::Info,
            "SKIPPED" => Status::Skipped,
            "WARNING" => Status::Warning,
            // Anything else is nothing the suite promised: not a pass.
            _ => Status::Failure,
        }
    }

    /// What the suite's baseline rule counts as failing.
    pub(super) fn fails(self) -> bool {
        matches!(self, Status::Warning | Status::Failure)
    }

    /// Short, for the table.
    pub(super) fn short(self) -> &'static str {
        match self {
            Status::Success => "ok",
            Status::Info => "info",
            Status::Skipped => "skip",
            Status::Warning => "WARN",
            Status::Failure => "FAIL",
        }
    }
}

/// How often a check id fired with each status (an id may fire more than
/// once: once per method, say).
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Fired(BTreeMap<Status, usize>);

impl Fired {
    fn add(&mut self, status: Status) {
        *self.0.entry(status).or_default() += 1;
    }

    /// Whether any firing counts as failing.
    pub(super) fn fails(&self) -> bool {
        self.0.keys().any(|s| s.fails())
    }

    /// Whether any firing was SKIPPED.
    pub(super) fn skipped(&self) -> bool {
        self.0.contains_key(&Status::Skipped)
    }

    /// Each status and its count, best first.
    pub(super) fn counts(&self) -> impl Iterator<Item = (Status, usize)> + '_ {
        self.0.iter().map(|(s, n)| (*s, *n))
    }

    /// `ok`, or `ok×6 skip×2` when it fired more than once or mixed.
    pub(super) fn cell(&self) -> String {
        let parts: Vec<String> = self
            .counts()
            .map(|(s, n)| {
                if n == 1 {
                    s.short().to_owned()
                } else {
                    format!("{}×{n}", s.short())
                }
            })
            .collect();
        parts.join(" ")
    }
}

/// Each scenario's checks, by scenario name, then by check id.
pub(super) type Results = BTreeMap<String, BTreeMap<String, Fired>>;

/// Reads every `checks.json` under `dir`.
pub(super) fn read_results(dir: &Path) -> Result<Results> {
    let mut results = Results::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| format!("reading {}: {e}", d.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.file_name().is_none_or(|n| n != "checks.json") {
                continue;
            }
            let folder = path.parent().unwrap_or(dir);
            let relative = folder.strip_prefix(dir).unwrap_or(folder);
            let scenario = scenario_of(&relative.to_string_lossy())
                .ok_or_else(|| format!("{} is no scenario's results", folder.display()))?;
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("reading {}: {e}", path.display()))?;
            let checks = parse_checks(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            results.insert(scenario, checks);
        }
    }
    Ok(results)
}

/// `auth/x-2026-12-01T11-17-36-482Z` → `auth/x`.
fn scenario_of(folder: &str) -> Option<String> {
    const STAMP: usize = "-2026-12-01T11-17-36-482Z".len();
    let folder = folder.replace('\\', "/");
    let cut = folder.len().checked_sub(STAMP)?;
    let (name, stamp) = folder.split_at(cut);
    (stamp.starts_with('-') && stamp.ends_with('Z') && !name.is_empty()).then(|| name.to_owned())
}

fn parse_checks(text: &str) -> Result<BTreeMap<String, Fired>> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let array = value.as_array().ok_or("not a JSON array of checks")?;
    let mut checks = BTreeMap::new();
    for check in array {
        let id = check
            .get("id")
            .and_then(Value::as_str)
            .ok_or("a check without an id")?;
        let status = Status::parse(check.get("status").and_then(Value::as_str).unwrap_or(""));
        checks
            .entry(id.to_owned())
            .or_insert_with(Fired::default)
            .add(status);
    }
    Ok(checks)
}

/// The expected failures: the `client:` list of the suite's
/// expected-failures YAML (whole scenarios only, as this workspace's file
/// has them).
pub(super) fn read_expected(path: &Path) -> Result<Vec<String>> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let mut expected = Vec::new();
    let mut in_client = false;
    for line in text.lines() {
        let trimmed = line.split('#').next().unwrap_or("").trim_end();
        if trimmed.trim().is_empty() {
            continue;
        }
        if !trimmed.starts_with(' ') && !trimmed.starts_with('-') {
            in_client = trimmed == "client:";
            continue;
        }
        if let (true, Some(item)) = (in_client, trimmed.trim().strip_prefix("- ")) {
            expected.push(item.trim().trim_matches(['"', '\'']).to_owned());
        }
    }
    // Only authorization may be missing: everything else the library
    // claims to do, it must pass.
    if let Some(bad) = expected
        .iter()
        .find(|s| !s.starts_with("auth/") || s.contains(':'))
    {
        return Err(format!(
            "{}: {bad:?} may not be an expected failure (only whole auth/... scenarios may)",
            path.display()
        ));
    }
    Ok(expected)
}

/// What a run's results say under the baseline rule.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Verdict {
    /// Failing (FAILURE or WARNING) and not expected to.
    pub(super) unexpected: Vec<String>,
    /// Expected to fail, and passed.
    pub(super) stale: Vec<String>,
}

/// The suite's rule: a scenario with a FAILURE or WARNING fails; it must be
/// in `expected`, and every expected scenario that ran must fail.
pub(super) fn verdict(results: &Results, expected: &[String]) -> Verdict {
    let mut verdict = Verdict::default();
    for (scenario, checks) in results {
        let failing = checks.values().any(|s| s.fails());
        let listed = expected.iter().any(|e| e == scenario);
        match (failing, listed) {
            (true, false) => verdict.unexpected.push(scenario.clone()),
            (false, true) => verdict.stale.push(scenario.clone()),
            _ => {}
        }
    }
    verdict
}

/// `verdict` with the strict scenarios' rule added: each must have given
/// results, none of them SKIPPED; one that did not is unexpected too.
pub(super) fn strict(results: &Results, scenarios: &[String], mut verdict: Verdict) -> Verdict {
    for scenario in scenarios {
        let short = match results.get(scenario) {
            None => true,
            Some(checks) => checks.is_empty() || checks.values().any(Fired::skipped),
        };
        if short && !verdict.unexpected.contains(scenario) {
            verdict.unexpected.push(scenario.clone());
        }
    }
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_scenarios_from_folders() {
        assert_eq!(
            scenario_of("auth/metadata-var1-2026-12-01T11-17-28-958Z").as_deref(),
            Some("auth/metadata-var1")
        );
        assert_eq!(
            scenario_of("tools_call-2026-12-01T11-17-28-957Z").as_deref(),
            Some("tools_call")
        );
        assert_eq!(scenario_of("short"), None);
    }

    #[test]
    fn counts_each_status_of_an_id() {
        let checks = parse_checks(
            r#"[{"id":"a","status":"SUCCESS"},{"id":"a","status":"WARNING"},
                {"id":"b","status":"INFO"},{"id":"c","status":"odd"}]"#,
        )
        .unwrap();
        assert_eq!(checks["a"].cell(), "ok WARN");
        assert!(checks["a"].fails());
        assert_eq!(checks["b"].cell(), "info");
        assert!(!checks["b"].fails());
        assert_eq!(checks["c"].cell(), "FAIL");
    }

    #[test]
    fn applies_the_baseline_rule() {
        let fired = |status| {
            let mut f = Fired::default();
            f.add(Status::Success);
            f.add(status);
            [("x".to_owned(), f)].into()
        };
        let mut results = Results::new();
        results.insert("ok".into(), fired(Status::Success));
        results.insert("warned".into(), fired(Status::Warning));
        results.insert("auth/a".into(), fired(Status::Failure));
        results.insert("auth/b".into(), fired(Status::Info));
        let expected = vec![
            "auth/a".to_owned(),
            "auth/b".to_owned(),
            "auth/c".to_owned(),
        ];
        assert_eq!(
            verdict(&results, &expected),
            Verdict {
                unexpected: vec!["warned".into()],
                stale: vec!["auth/b".into()],
            }
        );
    }

    #[test]
    fn strict_scenarios_fail_when_skipped_or_missing() {
        let fired = |status| {
            let mut f = Fired::default();
            f.add(status);
            [("check".to_owned(), f)].into()
        };
        let mut results = Results::new();
        results.insert("passed".into(), fired(Status::Success));
        results.insert("skipped".into(), fired(Status::Skipped));
        results.insert("failed".into(), fired(Status::Failure));
        let strict_ones: Vec<String> = ["passed", "skipped", "failed", "missing"]
            .map(str::to_owned)
            .to_vec();
        let base = verdict(&results, &[]);
        assert_eq!(base.unexpected, ["failed"]);
        let judged = strict(&results, &strict_ones, base);
        assert_eq!(judged.unexpected, ["failed", "skipped", "missing"]);
        // Not strict: a SKIPPED check is no failure.
        assert_eq!(
            strict(&results, &[], verdict(&results, &[])).unexpected,
            ["failed"]
        );
    }

    #[test]
    fn reads_expected_failures_and_refuses_non_auth_ones() {
        let dir = std::env::temp_dir().join(format!("xtask-expected-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.yml");
        std::fs::write(
            &good,
            "# c\nclient:\n  - auth/a  # why\n  - 'auth/b'\nserver: []\n",
        )
        .unwrap();
        assert_eq!(read_expected(&good).unwrap(), ["auth/a", "auth/b"]);
        let bad = dir.join("bad.yml");
        std::fs::write(&bad, "client:\n  - tools_call\n").unwrap();
        assert!(read_expected(&bad).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
