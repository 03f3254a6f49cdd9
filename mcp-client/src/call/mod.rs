//! A call, step by step: every request the client makes for its caller
//! comes in here, is gated by revision and capability, served from the
//! cache or stored in it (`complete` only), and goes out through
//! [`rounds`] (until its result is complete) and [`attempt`] (one request,
//! attempt after attempt, as [`after_attempt`] decides) to the transport.
//!
//! Three ways in, for the three ways a caller reads a result:
//! [`complete`] (the typed API, raw requests), [`one_round`] (the manual
//! `*_once` calls, which hand `input_required` back) and [`as_is`] (tasks
//! and listen streams, which read what the server answered themselves).

pub(crate) mod after_attempt;
pub(crate) mod attempt;
pub(crate) mod rounds;

use mcp_protocol::types::ServerCapabilities;
use serde_json::Value;

use crate::cache::{Group, Key, Lookup};
use crate::error::Result;
use crate::mrtr::Outcome;
use crate::options::CallOptions;
use crate::session::Session;

/// A call read whole: gated, cached where the method is cacheable, its
/// rounds run until the result is complete.
pub(crate) async fn complete(
    session: &Session,
    method: &str,
    params: Value,
    options: &CallOptions,
) -> Result<Value> {
    session.gate(method)?;
    let Some(group) = Group::of(method) else {
        return rounds::until_complete(session, method, params, options)
            .await
            .map(|(v, _)| v);
    };
    let cache = &session.cache;
    let key = Key::of(method, &params);
    if !options.bypass_cache
        && let Lookup::Fresh(v) = cache.lookup(&key)
    {
        tracing::debug!(method, "served from the cache");
        return Ok(v);
    }
    let generation = cache.generation(group);
    let had_cursor = params.get("cursor").is_some();
    match rounds::until_complete(session, method, params, options).await {
        Ok((value, rounds)) => {
            if rounds == 1 {
                let (era, listed) =
                    session.read_verdict(|v| (v.era, lists_changes(&v.capabilities, group)));
                cache.store(key, group, generation, &value, era, listed);
            }
            Ok(value)
        }
        Err(e) => {
            if had_cursor && e.code() == Some(mcp_protocol::error_codes::INVALID_PARAMS) {
                cache.invalidate_method(method);
            }
            Err(e)
        }
    }
}

/// One round of a call, gated: an `input_required` answer is handed back
/// rather than fulfilled.
pub(crate) async fn one_round(
    session: &Session,
    method: &str,
    params: Value,
    options: &CallOptions,
) -> Result<Outcome<Value>> {
    session.gate(method)?;
    let value = attempt::request(session, method, Some(params), options, None).await?;
    rounds::classify(session, method, value)
}

/// A call gated and sent, its result returned as the server answered it
/// (a task, a listen stream's end): neither cached nor classified.
pub(crate) async fn as_is(
    session: &Session,
    method: &str,
    params: Value,
    options: &CallOptions,
) -> Result<Value> {
    session.gate(method)?;
    attempt::request(session, method, Some(params), options, None).await
}

/// Whether a legacy server promised to announce changes to this list.
fn lists_changes(caps: &ServerCapabilities, group: Group) -> bool {
    match group {
        Group::Tools => caps.tools.as_ref().and_then(|c| c.list_changed) == Some(true),
        Group::Prompts => caps.prompts.as_ref().and_then(|c| c.list_changed) == Some(true),
        Group::Resources => caps.resources.as_ref().and_then(|c| c.list_changed) == Some(true),
        Group::Discover | Group::Resource | Group::Skills => false,
    }
}
