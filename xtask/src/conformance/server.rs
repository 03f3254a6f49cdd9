//! The server legs: the suite's `server` scenarios against the reference
//! server (`mcp-reference-server --http PORT --conformance`, the fixtures
//! the scenarios call by name), one leg per requirement set, each on a
//! fresh server on a free loopback port; then the same scenarios through
//! `mcp bridge --serve http` in front of the reference server over stdio
//! (the bridge legs), which must pass every scenario the direct leg does;
//! and the 2025-11-25 scenarios through the bridge in front of the
//! reference server pinned to 2026-07-28 (`across`: each legacy request
//! translated), and the 2026-07-28 scenarios through the bridge forced to
//! speak the legacy era (`mcp --era legacy bridge`) in front of the
//! reference server pinned to legacy (`across` too: each server request
//! during a call an `input_required` the bridge serves, the call held for
//! the retry).
//!
//! A leg is judged on the server scenarios its revision requires (as
//! `conformance list --server --requirements REV` names them); the suite
//! also runs the revision's extension, pending and added-after-release
//! scenarios, which the table reports and nothing scores (the reference
//! server has no tasks extension, say).

use std::path::Path;
use std::process::{Command, Stdio};

use super::Paths;
use super::suite::{Against, Leg, LegOutcome, run_leg};
use crate::Result;
use crate::interop::output_within;
use crate::interop::serve::{free_port, serve_command};

/// The 2026-07-28 scenarios a bridge in front of a legacy server cannot
/// pass, and why: the `across 2026-07-28` leg expects them to fail (and,
/// as the baseline rule goes, fails when one passes).
pub(super) const CANNOT_CARRY: [(&str, &str); 2] = [
    (
        "input-required-result-basic-elicitation",
        "it wants the fixture's own key (user_name) in inputRequests; a legacy server's request carries no key, so the bridge names it (r1)",
    ),
    (
        "input-required-result-ignore-extra-params",
        "its first call carries answers under the fixture's keys and no requestState; they answer nothing the bridge asked, so the call asks (a WARNING)",
    ),
];

/// The revisions the server legs run at.
pub(super) const SERVER_REQUIRED: [&str; 2] = ["2025-11-25", "2026-07-28"];

/// Runs one leg per revision against a fresh reference server
/// (`server`, the built binary).
pub(super) fn run_server_legs(
    paths: &Paths,
    server: &Path,
    mcp: &Path,
    expected: &[String],
    out: &Path,
) -> Result<Vec<(Leg, LegOutcome)>> {
    let mut done = Vec::new();
    for version in SERVER_REQUIRED {
        let scored = scored(paths, version)?;
        let leg = Leg::server(version, scored.clone());
        let port = free_port()?;
        let mut command = Command::new(server);
        command
            .args(["--http", &port.to_string(), "--conformance"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let served = serve_command(command, port, "/mcp")?;
        eprintln!(
            "\n==> {}: the reference server listens on {} (in {:.1?})",
            leg.label, served.url, served.started_in
        );
        let outcome = run_leg(paths, &leg, Against::Server(&served.url), expected, out)?;
        drop(served);
        done.push((leg, outcome));

        done.push(through_the_bridge(
            paths,
            Leg::bridge(version, scored.clone()),
            (server, &[]),
            (mcp, &[]),
            expected,
            out,
        )?);
        // Across the eras: legacy clients in front of the server pinned to
        // 2026-07-28, every request translated by the bridge; 2026-07-28
        // clients in front of the server pinned to legacy.
        let mut leg = Leg::across(version, scored);
        let across: (&[&str], &[&str]) = if version == "2025-11-25" {
            (&["--era", "modern"], &[])
        } else {
            for (scenario, why) in CANNOT_CARRY {
                eprintln!("    across {version}: {scenario} is expected to fail: {why}");
                leg.cannot_carry.push(scenario.to_owned());
            }
            (&["--era", "legacy"], &["--era", "legacy"])
        };
        done.push(through_the_bridge(
            paths,
            leg,
            (server, across.0),
            (mcp, across.1),
            expected,
            out,
        )?);
    }
    Ok(done)
}

/// One leg through `mcp bridge --serve http` (with these arguments of
/// `mcp`'s own) in front of the reference server over stdio (with these
/// arguments of its own).
fn through_the_bridge(
    paths: &Paths,
    leg: Leg,
    (server, server_args): (&Path, &[&str]),
    (mcp, mcp_args): (&Path, &[&str]),
    expected: &[String],
    out: &Path,
) -> Result<(Leg, LegOutcome)> {
    let port = free_port()?;
    let mut command = Command::new(mcp);
    command
        .args(mcp_args)
        .args(["bridge", "--serve", "http", "--listen"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--")
        .arg(server)
        .arg("--conformance")
        .args(server_args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let served = serve_command(command, port, "/mcp")?;
    eprintln!(
        "\n==> {}: mcp {}bridge listens on {} (in {:.1?}), the reference server behind it over stdio {}",
        leg.label,
        mcp_args.iter().map(|a| format!("{a} ")).collect::<String>(),
        served.url,
        served.started_in,
        server_args.join(" ")
    );
    let outcome = run_leg(paths, &leg, Against::Server(&served.url), expected, out)?;
    drop(served);
    Ok((leg, outcome))
}

/// The server scenarios `version` requires, from the suite's own list.
fn scored(paths: &Paths, version: &str) -> Result<Vec<String>> {
    let mut command = Command::new(paths.node());
    command
        .arg(paths.suite_entry())
        .args(["list", "--server", "--requirements", version])
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = output_within(command, std::time::Duration::from_secs(60))?;
    if !output.status.success() {
        return Err(format!(
            "conformance list --server --requirements {version}: {}",
            output.status
        ));
    }
    let names = required_server_scenarios(&String::from_utf8_lossy(&output.stdout));
    if names.is_empty() {
        return Err(format!(
            "conformance list --server --requirements {version} named no server scenario"
        ));
    }
    Ok(names)
}

/// The names under `Server scenarios …:` up to the next blank line.
fn required_server_scenarios(list: &str) -> Vec<String> {
    list.lines()
        .skip_while(|l| !l.trim_start().starts_with("Server scenarios"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|name| name.trim().to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_required_server_scenarios() {
        let list = "Required for 2025-11-25 (48 scenarios, frozen):\n\n\
                    Server scenarios (test against a server):\n  - server-initialize\n  - ping\n\n\
                    Client scenarios (test against a client):\n  - initialize\n\n\
                    Run and reported, but never scored:\n  pending (1):\n    - json-schema-2020-12 [server]\n";
        assert_eq!(
            required_server_scenarios(list),
            ["server-initialize", "ping"]
        );
        assert!(required_server_scenarios("nothing").is_empty());
    }
}
