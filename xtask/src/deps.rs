//! `cargo xtask deps`: the layering rules between the workspace's crates,
//! read from `cargo tree` of each crate's normal (non-dev) dependencies.
//!
//! - `mcp-protocol` does no I/O and needs no runtime;
//! - `mcp-auth` brings no HTTP client of its own (it sends through the
//!   transport's);
//! - `mcp-client` depends on no concrete transport without its default
//!   features, and on no OpenTelemetry crate without its `otel` feature;
//! - `mcp-cli` (the shipped `mcp` command) does not depend on the testkit
//!   or the contract suite, and embeds the reference server without its `http` and `oauth`
//!   features (no hyper server, no authorization server in
//!   `cargo install`). The features are read as a build of the CLI alone
//!   resolves them, so a normal dependency that turns them on again
//!   (feature unification) fails the rule too.

use crate::{Result, output};

/// The task: every rule, in turn.
pub(crate) fn deps() -> Result {
    eprintln!("\n==> dependency rules");
    protocol_has_no_io()?;
    auth_has_no_http_client()?;
    client_stands_on_the_trait()?;
    cli_ships_no_test_code()?;
    eprintln!(
        "<== dependency rules hold: mcp-protocol has no runtime or I/O crate; mcp-client no \
         concrete transport, and no OpenTelemetry crate without its `otel` feature; mcp-cli \
         no test code, and the reference server without `http` and `oauth`"
    );
    Ok(())
}

/// `cargo tree -p PACKAGE -e normal --prefix none`, with `extra` arguments;
/// one line per package.
fn tree(package: &str, extra: &[&str]) -> Result<String> {
    let mut args = vec!["tree", "-p", package, "-e", "normal", "--prefix", "none"];
    args.extend_from_slice(extra);
    output("cargo", &args)
}

/// The package names of a tree's lines.
fn names(tree: &str) -> impl Iterator<Item = &str> {
    tree.lines()
        .map(|line| line.split_whitespace().next().unwrap_or_default())
}

fn protocol_has_no_io() -> Result {
    let forbidden = [
        "tokio",
        "mio",
        "futures-io",
        "async-std",
        "hyper",
        "reqwest",
    ];
    let tree = tree("mcp-steady-protocol", &[])?;
    match names(&tree).find(|name| forbidden.contains(name)) {
        Some(name) => Err(format!(
            "mcp-protocol must stay free of I/O and runtimes, but depends on {name}"
        )),
        None => Ok(()),
    }
}

fn auth_has_no_http_client() -> Result {
    let clients = ["reqwest", "ureq", "curl", "isahc", "surf"];
    let tree = tree("mcp-steady-auth", &[])?;
    match names(&tree).find(|name| clients.contains(name)) {
        Some(name) => Err(format!(
            "mcp-auth must send through the transport's HTTP client, but depends on {name}"
        )),
        None => Ok(()),
    }
}

fn client_stands_on_the_trait() -> Result {
    let bare = tree("mcp-steady-client", &["--no-default-features"])?;
    // The concrete transports are re-exported behind cargo features only;
    // without them the client stands on the trait alone.
    if let Some(name) = names(&bare).find(|n| n.starts_with("mcp-steady-transport-")) {
        return Err(format!(
            "mcp-client without its default features must not depend on a concrete \
             transport, but depends on {name}"
        ));
    }
    let default = tree("mcp-steady-client", &[])?;
    // Trace context is opt-in (the `otel` feature): a default build
    // compiles no OpenTelemetry crate.
    let otel = |n: &&str| n.starts_with("opentelemetry") || *n == "tracing-opentelemetry";
    match names(&default).chain(names(&bare)).find(otel) {
        Some(name) => Err(format!(
            "mcp-client without its `otel` feature must not depend on OpenTelemetry, \
             but depends on {name}"
        )),
        None => Ok(()),
    }
}

/// The features of the reference server that bring HTTP and OAuth servers.
const SERVER_FEATURES: [&str; 2] = ["http", "oauth"];

fn cli_ships_no_test_code() -> Result {
    // `{p}` is the package (name, version, path), `{f}` its features as
    // this build resolves them, comma-separated.
    let tree = tree("mcp-steady-cli", &["--format", "{p}|{f}"])?;
    let mut embeds_the_server = false;
    for line in tree.lines() {
        let (package, features) = line.split_once('|').unwrap_or((line, ""));
        let name = package.split_whitespace().next().unwrap_or_default();
        if ["mcp-steady-testkit", "mcp-steady-transport-contract"].contains(&name) {
            return Err(format!(
                "mcp-cli must not depend on test code (the doubles, the contract suite), \
                 but depends on {name}"
            ));
        }
        if name != "mcp-steady-reference-server" {
            continue;
        }
        embeds_the_server = true;
        // A package shown again is marked ` (*)`.
        let features = features.trim_end_matches("(*)");
        let features: Vec<&str> = features.split(',').map(str::trim).collect();
        if let Some(feature) = SERVER_FEATURES.iter().find(|f| features.contains(f)) {
            return Err(format!(
                "mcp-cli must embed the reference server without its `{feature}` feature \
                 (a normal dependency turns it on: features {features:?})"
            ));
        }
    }
    if !embeds_the_server {
        // The rule would pass vacuously if the package were renamed.
        return Err("mcp-cli no longer depends on mcp-steady-reference-server: \
                    update this rule"
            .into());
    }
    Ok(())
}
