//! `mcp bridge --config FILE` without --server: every server of the file
//! served as one, its tools and prompts named as the host names them
//! (`server__tool`).

use std::sync::Arc;

use mcp_bridge::Servers;
use mcp_client::host::{Naming, ServerDefinition, ServersFile};
use mcp_client::transport::Connector;
use mcp_transport_stdio::StdioCommand;

use crate::args::Cli;
use crate::connect::as_the_cli_runs;
use crate::exit::{Failure, Outcome};

/// Every server of `file` as one connector; a stdio server is run as the
/// bridge runs its server (short close graces, its stderr with -v).
pub(crate) fn every_server(cli: &Cli, file: &ServersFile) -> Outcome<Arc<dyn Connector>> {
    if file.servers.is_empty() {
        return Err(Failure::usage("the servers file has no server to serve"));
    }
    let mut servers = Servers::new(|pairs| Naming::default().names(pairs));
    for (name, definition) in &file.servers {
        let connector: Arc<dyn Connector> = match definition {
            ServerDefinition::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut stdio = StdioCommand::new(command).args(args).envs(env).name(name);
                if let Some(dir) = cwd {
                    stdio = stdio.current_dir(dir);
                }
                Arc::new(as_the_cli_runs(cli, stdio))
            }
            other => other
                .connector(name)
                .map_err(|e| Failure::usage(format!("server {name:?}: {e}")))?,
        };
        servers = servers.server(name.clone(), connector);
    }
    Ok(Arc::new(servers))
}
