//! `mcp bridge`: the server served to MCP clients on this process's stdio
//! or over Streamable HTTP, every message relayed within the era both
//! speak.

use std::time::Duration;

use mcp_bridge::{Bridge, BridgeError, Ended, HttpOptions, Restarts, ToolPolicy, UpstreamEra};
use mcp_client::transport::CancellationToken;

use crate::args::{BridgeArgs, Serve};
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
    era: UpstreamEra,
    interrupted: CancellationToken,
) -> Outcome {
    let name = upstream.name.clone();
    let mut bridge = Bridge::new(upstream.connector.clone())
        .restarts(Restarts::new(args.restarts, Duration::from_secs(60)))
        .tools(policy(args)?)
        .tool_search(args.tool_search);
    bridge = bridge.upstream_era(era);
    if let Some(hint) = upstream.login_hint() {
        bridge = bridge.authorization_hint(hint);
    }
    if args.serve == Serve::Http {
        return serve_http(bridge, &name, args, interrupted).await;
    }
    // On SIGINT or SIGTERM the server is told each call in flight is
    // cancelled and its session closes (a child process shut down).
    let ended = bridge.serve_stdio_until(interrupted.cancelled()).await;
    match ended {
        Ok(Ended::ClientLeft) => Ok(()),
        Ok(Ended::Stopped) => Err(Failure::interrupted()),
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

/// Serves over HTTP until a signal, then ends every session (exit 0).
async fn serve_http(
    bridge: Bridge,
    name: &str,
    args: &BridgeArgs,
    interrupted: CancellationToken,
) -> Outcome {
    let mut options = HttpOptions::new()
        .max_sessions(args.max_sessions)
        .idle_timeout(Duration::from_secs(args.idle_timeout));
    for origin in &args.allow_origin {
        options = options.allow_origin(origin);
    }
    if let Some(token) = bearer_token(args)? {
        options = options.bearer_token(token);
    }
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| {
            Failure::new(
                Kind::Connection,
                format!("bridge: cannot listen on {}: {e}", args.listen),
            )
        })?;
    let addr = listener.local_addr().map_err(|e| {
        Failure::new(
            Kind::Connection,
            format!("bridge: the listener failed: {e}"),
        )
    })?;
    say!("bridge: serving {name} on http://{addr}/mcp");
    match bridge
        .serve_http(listener, options, interrupted.cancelled_owned())
        .await
    {
        Ok(_) => {
            say!("bridge: stopped; every session ended");
            Ok(())
        }
        Err(BridgeError::Exposed(_)) => Err(Failure::usage(format!(
            "bridge: refusing to serve on {addr} without a token: anyone who reaches it could use {name}; \
             listen on 127.0.0.1, or require a token with --token-file or --token-env"
        ))),
        Err(other) => Err(Failure::new(Kind::Connection, format!("bridge: {other}"))),
    }
}

/// The bearer token of --token-file or --token-env.
fn bearer_token(args: &BridgeArgs) -> Outcome<Option<String>> {
    let token = if let Some(path) = &args.token_file {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Failure::usage(format!(
                "bridge: cannot read --token-file {}: {e}",
                path.display()
            ))
        })?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            if let Ok(meta) = std::fs::metadata(path)
                && meta.permissions().mode() & 0o077 != 0
            {
                say!(
                    "bridge: warning: {} is readable by other users; `chmod 600` it",
                    path.display()
                );
            }
        }
        text
    } else if let Some(var) = &args.token_env {
        std::env::var(var).map_err(|_| {
            Failure::usage(format!(
                "bridge: the environment variable {var} (--token-env) is not set"
            ))
        })?
    } else {
        return Ok(None);
    };
    let token = token.trim().to_owned();
    if token.is_empty() {
        return Err(Failure::usage("bridge: the bearer token is empty"));
    }
    Ok(Some(token))
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
