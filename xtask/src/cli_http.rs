//! The CLI checks over HTTP: `mcp --url` against server-everything
//! (`streamableHttp`, `sse`) and the Python server (`streamable-http`,
//! stateful and `--stateless`, and `sse`), each started once on a free
//! loopback port.
//!
//! The servers and the CLI must share a network, and the run must have no
//! other: the parent re-runs xtask as `interop-cli-http` in a namespace of
//! its own whose only network is loopback (see
//! [`crate::interop::offline_command`]), and that starts the servers and
//! runs the CLI in it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::Result;
use crate::cli::{ERAS, Server, everything_instructions, run_and_print, server_checks};
use crate::interop::{Installed, Paths, ms, os, serve};

/// The parent's side: runs `interop-cli-http` without network.
pub(crate) fn run(installed: &Installed, mcp: &Path) -> Result {
    let me = crate::interop::copy_of_self("interop")?;
    let _cleanup = crate::interop::RemoveOnDrop(me.clone());
    let status = crate::interop::offline_command(&me)
        .arg("interop-cli-http")
        .arg("--mcp")
        .arg(mcp)
        .arg("--node")
        .arg(&installed.node)
        .arg("--python")
        .arg(&installed.python)
        .status()
        .map_err(|e| format!("could not start the CLI checks over HTTP: {e}"));
    let status = status?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "interop check(s) through the mcp CLI over HTTP failed ({status})"
        ))
    }
}

/// `cargo xtask interop-cli-http --mcp MCP --node NODE --python PYTHON`:
/// the servers, and the CLI against them, in this process's network.
pub(crate) fn serve_and_check(args: &[String]) -> Result {
    let value = |name: &str| -> Result<PathBuf> {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(PathBuf::from)
            .ok_or_else(|| format!("interop-cli-http needs {name}"))
    };
    let (mcp, node, python) = (value("--mcp")?, value("--node")?, value("--python")?);
    let paths = Paths::new();
    let instructions = everything_instructions(&paths)?;
    let script = os(&paths.python_script());
    let entry = os(&paths.everything_entry());
    let port: OsString = "{port}".into();
    let servers: [(Server, &'static str, OsString, Vec<OsString>, &str); 5] = [
        (
            Server::Python,
            "http",
            os(&python),
            vec![script.clone(), "streamable-http".into(), port.clone()],
            "/mcp",
        ),
        (
            Server::Python,
            "http-stateless",
            os(&python),
            vec![
                script.clone(),
                "streamable-http".into(),
                port.clone(),
                "--stateless".into(),
            ],
            "/mcp",
        ),
        (
            Server::Python,
            "sse",
            os(&python),
            vec![script.clone(), "sse".into(), port],
            "/sse",
        ),
        (
            Server::Everything,
            "http",
            os(&node),
            vec![entry.clone(), "streamableHttp".into()],
            "/mcp",
        ),
        (
            Server::Everything,
            "sse",
            os(&node),
            vec![entry, "sse".into()],
            "/sse",
        ),
    ];
    let mut failures = 0;
    let mut count = 0;
    for (server, wire, program, server_args, path) in servers {
        let served = serve::serve(&program, &server_args, path)?;
        eprintln!(
            "    {} over {wire}: listening at {} after {}",
            match server {
                Server::Python => "python",
                Server::Everything => "everything",
            },
            served.url,
            ms(served.started_in)
        );
        let reach: Vec<OsString> = vec!["--url".into(), served.url.clone().into()];
        let checks: Vec<_> = ERAS
            .into_iter()
            .flat_map(|era| server_checks(server, wire, era, &reach, &instructions))
            .collect();
        count += checks.len();
        failures += run_and_print(
            &mcp,
            &checks,
            false,
            &format!(
                "through the `mcp` CLI with --url, {wire} (one server, a connection per call)"
            ),
        );
    }
    println!("\n{count} CLI checks over HTTP, {failures} failed");
    if failures > 0 {
        Err(format!("{failures} CLI check(s) over HTTP failed"))
    } else {
        Ok(())
    }
}
