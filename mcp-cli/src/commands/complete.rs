//! `mcp complete`: suggestions for a prompt's or a resource template's
//! argument.

use std::collections::BTreeMap;

use mcp_client::protocol::methods::Complete;
use mcp_client::protocol::types::{CompleteRequestParams, Reference};

use super::Ctx;
use crate::args::{CompleteArgs, RefKind, split_pair};
use crate::exit::{Failure, Outcome};

pub(super) async fn run(ctx: &Ctx, args: CompleteArgs) -> Outcome {
    let reference = match args.kind {
        RefKind::Prompt => Reference::prompt(args.reference),
        RefKind::Resource => Reference::resource(args.reference),
    };
    let mut params = CompleteRequestParams::new(reference, args.argument, args.value);
    if !args.context.is_empty() {
        let mut context = BTreeMap::new();
        for pair in &args.context {
            let (k, v) = split_pair(pair).map_err(Failure::usage)?;
            context.insert(k.to_owned(), v.to_owned());
        }
        params = params.with_context(context);
    }
    let result = ctx
        .client
        .request_with::<Complete>(params, &ctx.options())
        .await?;
    if ctx.out.json {
        return ctx.out.json(&result);
    }
    let completion = &result.completion;
    if completion.values.is_empty() {
        say!("(no suggestions)");
        return Ok(());
    }
    ctx.out.text(&completion.values.join("\n"))?;
    if completion.has_more == Some(true) || completion.total.is_some() {
        say!(
            "({} shown{}{})",
            completion.values.len(),
            completion
                .total
                .map(|t| format!(" of {t}"))
                .unwrap_or_default(),
            if completion.has_more == Some(true) {
                ", more available"
            } else {
                ""
            }
        );
    }
    Ok(())
}
