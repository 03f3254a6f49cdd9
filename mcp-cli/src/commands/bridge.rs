//! `mcp bridge`: the server served to an MCP client on this process's
//! stdio, every message relayed within the era both speak.

use std::time::Duration;

use mcp_bridge::{Bridge, BridgeError, Ended, Restarts, ToolPolicy};
use mcp_client::transport::CancellationToken;

use crate::args::BridgeArgs;
use crate::connect::Upstream;
use crate::exit::{Failure, Kind, Outcome};

/// Serves `upstream` on stdin and stdout until the client leaves (exit
/// 0), the server is gone past its restarts (exit 3, after answering what
/// was pending), or
/// a signal stops it (exit 130). Nothing is ever read from the terminal:
/// stdin carries the protocol.
pub(crate) async fn run(
    upstream: Upstream,
    args: &BridgeArgs,
    interrupted: CancellationToken,
) -> Outcome {
    let name = upstream.name.clone();
    let mut bridge = Bridge::new(upstream.connector.clone())
        .restarts(Restarts::new(args.restarts, Duration::from_secs(60)))
        .tools(policy(args)?);
    if let Some(hint) = upstream.login_hint() {
        bridge = bridge.authorization_hint(hint);
    }
    let ended = tokio::select! {
        ended = bridge.serve_stdio() => ended,
        // Dropping the bridge closes both sides: the server's session
        // ends and a child process is shut down.
        () = interrupted.cancelled() => return Err(Failure::interrupted()),
    };
    match ended {
        Ok(Ended::ClientLeft) => Ok(()),
        Ok(gone) => Err(Failure::new(
            Kind::Connection,
            format!("bridge to {name}: {gone}"),
        )),
        Err(BridgeError::Connect(error)) => {
            let hint = upstream.hint(Some(&error));
            let failure = Failure::new(
                Kind::Connection,
                format!("bridge: could not connect to {name}: {error}"),
            );
            Err(match hint {
                Some(hint) => failure.hint(hint),
                None => failure,
            })
        }
        Err(other) => Err(Failure::new(Kind::Connection, format!("bridge: {other}"))),
    }
}

/// The tool policy of --allow-tools, --deny-tools and --read-only.
fn policy(args: &BridgeArgs) -> Outcome<ToolPolicy> {
    let mut policy = ToolPolicy::new().read_only(args.read_only);
    for glob in &args.allow_tools {
        policy = policy
            .allow(glob)
            .map_err(|e| Failure::usage(e.to_string()))?;
    }
    for glob in &args.deny_tools {
        policy = policy
            .deny(glob)
            .map_err(|e| Failure::usage(e.to_string()))?;
    }
    Ok(policy)
}
