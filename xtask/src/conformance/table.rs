//! The report: one table of every scenario and check across the legs, and
//! one line per leg.

use std::collections::BTreeSet;

use super::suite::{Leg, LegOutcome};
use crate::interop::ms;

/// A Markdown table: a row per scenario and check, a column per leg; `-`
/// where a leg did not run it. Scenarios other than `auth/…` come first.
pub(super) fn table(legs: &[(Leg, LegOutcome)]) -> String {
    let mut rows: BTreeSet<(bool, String, String)> = BTreeSet::new();
    for (_, outcome) in legs {
        for (scenario, checks) in &outcome.results {
            for id in checks.keys() {
                rows.insert((scenario.starts_with("auth/"), scenario.clone(), id.clone()));
            }
        }
    }
    let mut out = String::from("| scenario | check |");
    for (leg, _) in legs {
        out.push_str(&format!(" {} |", leg.label));
    }
    out.push_str("\n|---|---|");
    out.push_str(&"---|".repeat(legs.len()));
    out.push('\n');
    for (_, scenario, id) in &rows {
        out.push_str(&format!("| {scenario} | {id} |"));
        for (_, outcome) in legs {
            let cell = outcome
                .results
                .get(scenario)
                .map(|checks| checks.get(id).map_or("·".to_owned(), |f| f.cell()))
                .unwrap_or_else(|| "-".to_owned());
            out.push_str(&format!(" {cell} |"));
        }
        out.push('\n');
    }
    out.push_str(
        "\n`ok` SUCCESS, `info` INFO, `skip` SKIPPED, `WARN` WARNING, `FAIL` FAILURE, \
         `×N` fired N times (once per method, say); `·` the scenario ran without that \
         check, `-` the leg did not run the scenario.\n",
    );
    out
}

/// One line per leg: scenarios passed and failed, checks by status, time,
/// re-runs, and what the baseline rule found. A leg judged on some
/// scenarios counts those, and names the others (run, never scored) apart.
pub(super) fn summary(legs: &[(Leg, LegOutcome)]) -> String {
    let mut out = String::new();
    for (leg, outcome) in legs {
        let scored = |name: &String| leg.scored.as_ref().is_none_or(|s| s.contains(name));
        let total = outcome.results.keys().filter(|n| scored(n)).count();
        let failing: Vec<&String> = outcome
            .results
            .iter()
            .filter(|(name, checks)| scored(name) && checks.values().any(|s| s.fails()))
            .map(|(name, _)| name)
            .collect();
        let unscored: Vec<(&String, bool)> = outcome
            .results
            .iter()
            .filter(|(name, _)| !scored(name))
            .map(|(name, checks)| (name, checks.values().any(|s| s.fails())))
            .collect();
        let non_auth_failing = failing.iter().filter(|s| !s.starts_with("auth/")).count();
        let mut counts = [0usize; 5];
        for (_, checks) in outcome.results.iter().filter(|(name, _)| scored(name)) {
            for (status, n) in checks.values().flat_map(|f| f.counts()) {
                counts[status as usize] += n;
            }
        }
        out.push_str(&format!(
            "{}: {} scenarios, {} passed, {} failing ({} of them outside auth/); check results: {} ok, {} info, {} skipped, {} warnings, {} failures; {}",
            leg.label,
            total,
            total - failing.len(),
            failing.len(),
            non_auth_failing,
            counts[0],
            counts[1],
            counts[2],
            counts[3],
            counts[4],
            ms(outcome.took),
        ));
        if let Some(required) = &leg.scored {
            let missing: Vec<&String> = required
                .iter()
                .filter(|r| !outcome.results.contains_key(*r))
                .collect();
            if !missing.is_empty() {
                out.push_str(&format!(
                    "; {} of the {} required gave no results: {}",
                    missing.len(),
                    required.len(),
                    missing
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            let failing: Vec<&str> = unscored
                .iter()
                .filter(|(_, fails)| *fails)
                .map(|(name, _)| name.as_str())
                .collect();
            out.push_str(&format!(
                "; not scored (extension, pending, added after release): {} run, {} failing ({})",
                unscored.len(),
                failing.len(),
                failing.join(", ")
            ));
        }
        if !leg.cannot_carry.is_empty() {
            out.push_str(&format!(
                "; expected to fail, as the translation cannot carry them: {}",
                leg.cannot_carry.join(", ")
            ));
        }
        for (scenario, passed) in &outcome.reran {
            let how = if *passed {
                "passed alone"
            } else {
                "failed alone too"
            };
            out.push_str(&format!("; re-ran {scenario}: {how}"));
        }
        if !outcome.verdict.unexpected.is_empty() {
            out.push_str(&format!(
                "; UNEXPECTED: {}",
                outcome.verdict.unexpected.join(", ")
            ));
        }
        if !outcome.verdict.stale.is_empty() {
            out.push_str(&format!(
                "; NOW PASSING (remove from the expected failures): {}",
                outcome.verdict.stale.join(", ")
            ));
        }
        out.push('\n');
    }
    out
}
