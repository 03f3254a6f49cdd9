//! `mcp resources list|templates|read URI`.

use base64::Engine as _;
use mcp_client::protocol::types::{
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};
use serde_json::json;

use super::Ctx;
use crate::args::ResourcesCommand;
use crate::exit::{Failure, Kind, Outcome};
use crate::output::{one_line, table};

pub(super) async fn run(ctx: &Ctx, command: ResourcesCommand) -> Outcome {
    match command {
        ResourcesCommand::List => {
            let resources = ctx.client.list_all_resources().await?;
            if ctx.out.json {
                return ctx.out.json(&json!({ "resources": resources }));
            }
            ctx.out.text(&resources_table(&resources))
        }
        ResourcesCommand::Templates => {
            let templates = ctx.client.list_all_resource_templates().await?;
            if ctx.out.json {
                return ctx.out.json(&json!({ "resourceTemplates": templates }));
            }
            ctx.out.text(&templates_table(&templates))
        }
        ResourcesCommand::Read { uri } => read(ctx, &uri).await,
    }
}

/// A table of resources.
pub(super) fn resources_table(resources: &[Resource]) -> String {
    let rows: Vec<Vec<String>> = resources
        .iter()
        .map(|r| {
            vec![
                r.uri.clone(),
                r.name.clone(),
                r.mime_type.clone().unwrap_or_default(),
                one_line(r.description.as_deref(), 50),
            ]
        })
        .collect();
    table(&["URI", "NAME", "MIME TYPE", "DESCRIPTION"], &rows)
}

/// A table of resource templates.
pub(super) fn templates_table(templates: &[ResourceTemplate]) -> String {
    let rows: Vec<Vec<String>> = templates
        .iter()
        .map(|t| {
            vec![
                t.uri_template.clone(),
                t.name.clone(),
                t.mime_type.clone().unwrap_or_default(),
                one_line(t.description.as_deref(), 50),
            ]
        })
        .collect();
    table(&["URI TEMPLATE", "NAME", "MIME TYPE", "DESCRIPTION"], &rows)
}

async fn read(ctx: &Ctx, uri: &str) -> Outcome {
    let result = ctx
        .client
        .read_resource_with(
            ReadResourceRequestParams::new(uri),
            &ctx.options_with_progress(),
        )
        .await;
    ctx.progress.clear();
    let result = result?;
    if ctx.out.json {
        return ctx.out.json(&result);
    }
    print_contents(ctx, &result)
}

/// Text as it is; blobs decoded into a pipe or file, summarised on a
/// terminal. Several contents get a header line each.
fn print_contents(ctx: &Ctx, result: &ReadResourceResult) -> Outcome {
    let several = result.contents.len() > 1;
    for contents in &result.contents {
        if several {
            say!("── {}", contents.uri().unwrap_or("?"));
        }
        match contents {
            ResourceContents::Text(t) => {
                let text = &t.text;
                ctx.out.bytes(text.as_bytes())?;
                if ctx.out.terminal && !text.ends_with('\n') {
                    ctx.out.bytes(b"\n")?;
                }
            }
            ResourceContents::Blob(b) => {
                let mime = b.mime_type.as_deref().unwrap_or("unknown type");
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(b.blob.trim())
                    .map_err(|e| {
                        Failure::new(
                            Kind::Server,
                            format!("the blob of {} is not base64: {e}", b.uri),
                        )
                    })?;
                if ctx.out.terminal {
                    ctx.out.text(&format!(
                        "[binary {mime}, {} bytes; redirect stdout to save it, or use --json]",
                        bytes.len()
                    ))?;
                } else {
                    ctx.out.bytes(&bytes)?;
                }
            }
            other => ctx.out.json(other)?,
        }
    }
    Ok(())
}
