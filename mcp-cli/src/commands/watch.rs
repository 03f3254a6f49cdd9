//! `mcp watch`: change notifications as they come, until Ctrl-C (or
//! `--count N`).

use mcp_client::{ServerEvent, Watch};
use serde_json::{Value, json};

use super::Ctx;
use crate::args::WatchArgs;
use crate::exit::{Failure, Kind, Outcome};

pub(super) async fn run(ctx: &Ctx, args: WatchArgs) -> Outcome {
    let mut watch = Watch::all_lists();
    for uri in &args.resource {
        watch = watch.resource(uri.clone());
    }
    let mut subscription = ctx.client.subscribe(watch).await?;
    say!(
        "mcp: watching for changes to the tool, prompt and resource lists{}; Ctrl-C to stop",
        if args.resource.is_empty() {
            String::new()
        } else {
            format!(" and to {}", args.resource.join(", "))
        }
    );
    let mut seen = 0;
    while args.count.is_none_or(|n| seen < n) {
        let Some(event) = subscription.recv().await else {
            return Err(Failure::new(
                Kind::Connection,
                "the connection to the server ended",
            ));
        };
        let Some(notification) = as_notification(&event) else {
            continue;
        };
        seen += 1;
        if ctx.out.json {
            ctx.out.text(&notification.to_string())?;
        } else {
            let method = notification["method"].as_str().unwrap_or_default();
            match notification["params"]["uri"].as_str() {
                Some(uri) => ctx.out.text(&format!("{method} {uri}"))?,
                None => ctx.out.text(method)?,
            }
        }
    }
    Ok(())
}

/// A change event as the notification it came as.
fn as_notification(event: &ServerEvent) -> Option<Value> {
    let method = |m: &str| json!({ "method": m });
    Some(match event {
        ServerEvent::ToolsListChanged => method("notifications/tools/list_changed"),
        ServerEvent::PromptsListChanged => method("notifications/prompts/list_changed"),
        ServerEvent::ResourcesListChanged => method("notifications/resources/list_changed"),
        ServerEvent::ResourceUpdated { uri } => json!({
            "method": "notifications/resources/updated",
            "params": { "uri": uri },
        }),
        _ => return None,
    })
}
