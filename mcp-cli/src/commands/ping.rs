//! `mcp ping`: does the server answer? `ping` in legacy, a fresh
//! `server/discover` in modern (which has no ping).

use std::time::Instant;

use mcp_client::protocol::Era;
use mcp_client::protocol::methods::{Discover, Ping};

use super::Ctx;
use crate::exit::Outcome;

pub(super) async fn run(ctx: &Ctx) -> Outcome {
    let started = Instant::now();
    let (method, result) = match ctx.client.era() {
        Era::Modern => {
            let options = ctx.options().bypass_cache();
            let result = ctx
                .client
                .request_with::<Discover>(Default::default(), &options)
                .await?;
            ("server/discover", serde_json::to_value(result))
        }
        _ => {
            let result = ctx
                .client
                .request_with::<Ping>(Default::default(), &ctx.options())
                .await?;
            ("ping", serde_json::to_value(result))
        }
    };
    let elapsed = started.elapsed();
    if ctx.out.json {
        return ctx.out.json(&result.unwrap_or_default());
    }
    let name = ctx
        .client
        .server_info()
        .map(|i| i.name)
        .unwrap_or_else(|| "the server".into());
    ctx.out.text(&format!(
        "{name} answered {method} in {:.1} ms",
        elapsed.as_secs_f64() * 1000.0
    ))
}
