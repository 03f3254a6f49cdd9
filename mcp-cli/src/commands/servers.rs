//! `mcp servers`: every server of a servers file, connected at once, with
//! its status, era and tool count.

use std::collections::BTreeMap;

use mcp_client::ClientBuilder;
use mcp_client::host::{Host, ServerStatus, ServersFile};
use serde_json::json;

use crate::exit::{Failure, Kind, Outcome};
use crate::output::{Output, table};

/// Connects every server of `file` with `builder`'s settings and prints
/// the table; fails (exit 3) when no server could be reached.
pub(crate) async fn run(file: &ServersFile, builder: ClientBuilder, out: &Output) -> Outcome {
    let host = Host::builder()
        .servers_file(file)
        .client_builder(move |name| builder.clone().server_name(name))
        .connect()
        .await;
    let tools = host.list_tools().await;
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for tool in &tools {
        *counts.entry(tool.server.as_str()).or_default() += 1;
    }
    let status = host.status();
    let ready = status
        .values()
        .filter(|s| matches!(s, ServerStatus::Ready { .. }))
        .count();
    let printed = if out.json {
        let servers: Vec<_> = status
            .iter()
            .map(|(name, s)| match s {
                ServerStatus::Ready { era, version, took } => json!({
                    "name": name, "status": "ready", "era": era.to_string(),
                    "version": version.as_str(), "tools": counts.get(name.as_str()).copied().unwrap_or(0),
                    "connectMs": took.as_millis(),
                }),
                ServerStatus::Failed { error } => {
                    json!({"name": name, "status": "failed", "error": error})
                }
                other => json!({"name": name, "status": format!("{other:?}").to_lowercase()}),
            })
            .collect();
        out.json(&servers)
    } else {
        let rows: Vec<Vec<String>> = status
            .iter()
            .map(|(name, s)| match s {
                ServerStatus::Ready { era, version, took } => vec![
                    name.clone(),
                    "ready".into(),
                    format!("{era} {version}"),
                    counts.get(name.as_str()).copied().unwrap_or(0).to_string(),
                    format!("{} ms", took.as_millis()),
                ],
                ServerStatus::Failed { error } => {
                    vec![
                        name.clone(),
                        format!("failed: {error}"),
                        "".into(),
                        "".into(),
                        "".into(),
                    ]
                }
                other => vec![
                    name.clone(),
                    format!("{other:?}"),
                    "".into(),
                    "".into(),
                    "".into(),
                ],
            })
            .collect();
        out.text(&table(
            &["server", "status", "era", "tools", "connect"],
            &rows,
        ))
    };
    host.close().await;
    printed?;
    if ready == 0 && !status.is_empty() {
        return Err(Failure::new(
            Kind::Connection,
            "no server of the file could be reached",
        ));
    }
    Ok(())
}
