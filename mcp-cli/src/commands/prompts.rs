//! `mcp prompts list` and `mcp prompts get NAME k=v …`.

use std::collections::BTreeMap;

use mcp_client::protocol::types::{GetPromptRequestParams, Prompt};
use serde_json::json;

use super::Ctx;
use crate::args::{PromptsCommand, split_pair};
use crate::exit::{Failure, Outcome};
use crate::output::{content_blocks, one_line, table};

pub(super) async fn run(ctx: &Ctx, command: PromptsCommand) -> Outcome {
    match command {
        PromptsCommand::List => {
            let prompts = ctx.client.list_all_prompts().await?;
            if ctx.out.json {
                return ctx.out.json(&json!({ "prompts": prompts }));
            }
            ctx.out.text(&prompts_table(&prompts))
        }
        PromptsCommand::Get { name, arguments } => get(ctx, name, &arguments).await,
    }
}

/// A table of prompts: name, arguments (`?` marks optional ones),
/// description.
pub(super) fn prompts_table(prompts: &[Prompt]) -> String {
    let rows: Vec<Vec<String>> = prompts
        .iter()
        .map(|p| {
            let arguments = p
                .arguments
                .iter()
                .flatten()
                .map(|a| {
                    if a.required == Some(true) {
                        a.name.clone()
                    } else {
                        format!("{}?", a.name)
                    }
                })
                .collect::<Vec<_>>()
                .join(", ");
            vec![
                p.name.clone(),
                arguments,
                one_line(p.description.as_deref(), 60),
            ]
        })
        .collect();
    table(&["NAME", "ARGUMENTS", "DESCRIPTION"], &rows)
}

async fn get(ctx: &Ctx, name: String, pairs: &[String]) -> Outcome {
    let mut arguments = BTreeMap::new();
    for pair in pairs {
        let (k, v) = split_pair(pair).map_err(Failure::usage)?;
        arguments.insert(k.to_owned(), v.to_owned());
    }
    let params = GetPromptRequestParams::new(name).with_arguments(arguments);
    let result = ctx
        .client
        .get_prompt_with(params, &ctx.options_with_progress())
        .await;
    ctx.progress.clear();
    let result = result?;
    if ctx.out.json {
        return ctx.out.json(&result);
    }
    let mut lines = Vec::new();
    if let Some(description) = &result.description {
        lines.push(ctx.out.heading(description));
    }
    for message in &result.messages {
        let role = serde_json::to_value(&message.role)
            .ok()
            .and_then(|r| r.as_str().map(str::to_owned))
            .unwrap_or_default();
        lines.push(format!(
            "{}: {}",
            ctx.out.heading(&role),
            content_blocks(std::slice::from_ref(&message.content))
        ));
    }
    ctx.out.text(&lines.join("\n"))
}
