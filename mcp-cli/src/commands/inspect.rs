//! `mcp inspect`: everything the server says about itself, every list
//! paginated through.

use serde_json::{Value, json};

use super::Ctx;
use super::prompts::prompts_table;
use super::resources::{resources_table, templates_table};
use super::tools::tools_table;
use crate::exit::Outcome;

pub(super) async fn run(ctx: &Ctx) -> Outcome {
    let client = &ctx.client;
    let verdict = client.verdict();
    let caps = &verdict.capabilities;
    // Lists the server does not offer are left out, not failed on.
    let tools = match caps.tools {
        Some(_) => Some(client.list_all_tools().await?),
        None => None,
    };
    let (resources, templates) = match caps.resources {
        Some(_) => (
            Some(client.list_all_resources().await?),
            Some(client.list_all_resource_templates().await?),
        ),
        None => (None, None),
    };
    let prompts = match caps.prompts {
        Some(_) => Some(client.list_all_prompts().await?),
        None => None,
    };
    if ctx.out.json {
        return ctx.out.json(&json!({
            "verdict": verdict,
            "tools": tools,
            "resources": resources,
            "resourceTemplates": templates,
            "prompts": prompts,
        }));
    }
    let out = &ctx.out;
    let mut text = Vec::new();
    let server = match &verdict.server_info {
        Some(info) => {
            let title = info
                .title
                .as_ref()
                .map(|t| format!(" ({t})"))
                .unwrap_or_default();
            format!("{} {}{title}", info.name, info.version)
        }
        None => "(the server did not say)".into(),
    };
    text.push(format!("{}       {server}", out.heading("Server")));
    text.push(format!(
        "{}     {}, protocol revision {}",
        out.heading("Protocol"),
        verdict.era,
        verdict.version
    ));
    text.push(format!(
        "{} {}",
        out.heading("Capabilities"),
        capabilities_line(&serde_json::to_value(caps).unwrap_or_default())
    ));
    if let Some(instructions) = &verdict.instructions {
        text.push(out.heading("Instructions"));
        text.extend(instructions.lines().map(|l| format!("  {l}")));
    }
    let mut section = |title: &str, body: Option<(usize, String)>| {
        text.push(String::new());
        match body {
            Some((0, _)) => text.push(format!("{} none", out.heading(title))),
            Some((n, table)) => {
                text.push(out.heading(&format!("{title} ({n})")));
                text.push(table);
            }
            None => text.push(format!("{} not offered", out.heading(title))),
        }
    };
    section("Tools", tools.map(|t| (t.len(), tools_table(&t))));
    section(
        "Resources",
        resources.map(|r| (r.len(), resources_table(&r))),
    );
    section(
        "Resource templates",
        templates.map(|t| (t.len(), templates_table(&t))),
    );
    section("Prompts", prompts.map(|p| (p.len(), prompts_table(&p))));
    out.text(&text.join("\n"))
}

/// `tools (listChanged), resources (subscribe, listChanged), …`: each
/// capability with the flags it sets.
fn capabilities_line(caps: &Value) -> String {
    let Some(caps) = caps.as_object() else {
        return String::new();
    };
    let items: Vec<String> = caps
        .iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(name, v)| {
            let flags: Vec<&str> = v
                .as_object()
                .map(|o| {
                    o.iter()
                        .filter(|(_, f)| !matches!(f, Value::Bool(false) | Value::Null))
                        .map(|(k, _)| k.as_str())
                        .collect()
                })
                .unwrap_or_default();
            if flags.is_empty() {
                name.clone()
            } else {
                format!("{name} ({})", flags.join(", "))
            }
        })
        .collect();
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_read_as_one_line() {
        let caps = json!({"tools": {"listChanged": true}, "logging": {},
            "resources": {"subscribe": false, "listChanged": true}});
        assert_eq!(
            capabilities_line(&caps),
            "logging, resources (listChanged), tools (listChanged)"
        );
        assert_eq!(capabilities_line(&json!({})), "none");
    }
}
