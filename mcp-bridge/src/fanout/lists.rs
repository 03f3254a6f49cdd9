//! The merged lists: every server's tools, prompts, resources and
//! templates, each server's pages followed to the end; tools and prompts
//! renamed so that they never collide, and each entry's server kept for
//! the calls that name it.

use futures::future::join_all;
use mcp_protocol::methods::{PROMPTS_LIST, RESOURCES_LIST, RESOURCES_TEMPLATES_LIST, TOOLS_LIST};
use mcp_transport::TransportError;
use serde_json::{Value, json};

use crate::fanout::member::{Member, Shared};

/// The most pages read of one server's list: a server whose cursors never
/// end is cut off there.
const MAX_PAGES: usize = 1000;

/// The lists the bridge merges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Tools,
    Prompts,
    Resources,
    Templates,
}

impl Kind {
    /// The method that lists it.
    pub(crate) fn method(self) -> &'static str {
        match self {
            Kind::Tools => TOOLS_LIST,
            Kind::Prompts => PROMPTS_LIST,
            Kind::Resources => RESOURCES_LIST,
            Kind::Templates => RESOURCES_TEMPLATES_LIST,
        }
    }

    /// The member of the result that holds the entries.
    fn key(self) -> &'static str {
        match self {
            Kind::Tools => "tools",
            Kind::Prompts => "prompts",
            Kind::Resources => "resources",
            Kind::Templates => "resourceTemplates",
        }
    }

    /// The capability a server lists it under.
    fn capability(self) -> &'static str {
        match self {
            Kind::Tools => "tools",
            Kind::Prompts => "prompts",
            Kind::Resources | Kind::Templates => "resources",
        }
    }
}

/// The merged list of `kind`, as one page (no `nextCursor`), its routes
/// replaced. A server whose list fails is left out of it (logged).
pub(crate) async fn merged(shared: &Shared, kind: Kind) -> Value {
    let asked = shared
        .live()
        .filter(|(_, m)| m.has(kind.capability()))
        .map(
            |(index, member)| async move { (index, member, all_pages(shared, member, kind).await) },
        )
        .collect::<Vec<_>>();
    let mut entries: Vec<(usize, Value)> = Vec::new();
    for (index, member, outcome) in join_all(asked).await {
        match outcome {
            Ok(listed) => entries.extend(listed.into_iter().map(|e| (index, e))),
            Err(error) => {
                tracing::warn!(server = %member.name, %error, "{} failed; the list leaves this server out", kind.method());
            }
        }
    }
    let mut routes = shared.routes();
    match kind {
        Kind::Tools | Kind::Prompts => {
            let renamed = rename(shared, &mut entries);
            let table = if kind == Kind::Tools {
                &mut routes.tools
            } else {
                &mut routes.prompts
            };
            *table = renamed;
        }
        Kind::Resources | Kind::Templates => {
            let field = if kind == Kind::Resources {
                "uri"
            } else {
                "uriTemplate"
            };
            let table = if kind == Kind::Resources {
                &mut routes.resources
            } else {
                &mut routes.templates
            };
            table.clear();
            for (index, entry) in &entries {
                if let Some(uri) = entry.get(field).and_then(Value::as_str) {
                    table.entry(uri.to_owned()).or_insert(*index);
                }
            }
        }
    }
    let list: Vec<Value> = entries.into_iter().map(|(_, e)| e).collect();
    json!({ kind.key(): list })
}

/// Names each entry as the bridge's naming says, and returns where each
/// new name leads: `(member, the server's own name)`.
fn rename(
    shared: &Shared,
    entries: &mut [(usize, Value)],
) -> std::collections::HashMap<String, (usize, String)> {
    let own: Vec<String> = entries
        .iter()
        .map(|(_, e)| {
            e.get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    let pairs: Vec<(&str, &str)> = entries
        .iter()
        .zip(&own)
        .map(|((index, _), name)| (shared.members[*index].name.as_str(), name.as_str()))
        .collect();
    let names = (shared.names)(&pairs);
    let mut routes = std::collections::HashMap::new();
    for (((index, entry), own), name) in entries.iter_mut().zip(own).zip(names) {
        entry["name"] = Value::String(name.clone());
        routes.insert(name, (*index, own));
    }
    routes
}

/// Every entry of one server's list, its pages followed to the end.
async fn all_pages(
    shared: &Shared,
    member: &Member,
    kind: Kind,
) -> Result<Vec<Value>, TransportError> {
    let mut entries = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
        let page = shared.ask(member, kind.method(), params).await?;
        if let Some(listed) = page.get(kind.key()).and_then(Value::as_array) {
            entries.extend(listed.iter().cloned());
        }
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) if Some(next) != cursor.as_deref() => cursor = Some(next.to_owned()),
            _ => return Ok(entries),
        }
    }
    tracing::warn!(server = %member.name, "{} had more than {MAX_PAGES} pages; the rest is left out", kind.method());
    Ok(entries)
}
