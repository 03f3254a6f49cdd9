//! The modern rules (2026-07-28): per-request `_meta` checking,
//! `server/discover`, `subscriptions/listen`, and the decoration of every
//! result (`resultType`, `_meta` serverInfo, `ttlMs`/`cacheScope`).

use mcp_protocol::meta::{
    CLIENT_CAPABILITIES, LOG_LEVEL, PROTOCOL_VERSION, SERVER_INFO, SUBSCRIPTION_ID,
};
use mcp_protocol::methods;
use mcp_protocol::{ErrorObject, Request, RequestId};
use serde_json::{Map, Value, json};

use super::catalog;
use super::config::FakeConfig;
use super::errors::{invalid_params, method_not_found, unsupported_version};
use super::session::{Reply, Session};
use super::skills;
use super::tools::{self, Ctx};

/// The server capability each modern method needs (`None`: none), or
/// `None` for a method modern servers do not have.
fn capability_of(method: &str) -> Option<Option<&'static str>> {
    Some(match method {
        methods::SERVER_DISCOVER | methods::SUBSCRIPTIONS_LISTEN => None,
        methods::TOOLS_LIST | methods::TOOLS_CALL => Some("tools"),
        methods::RESOURCES_LIST | methods::RESOURCES_TEMPLATES_LIST | methods::RESOURCES_READ => {
            Some("resources")
        }
        methods::PROMPTS_LIST | methods::PROMPTS_GET => Some("prompts"),
        methods::COMPLETION_COMPLETE => Some("completions"),
        // The Skills extension: `skills::handle` checks its declaration.
        m if skills::is_skills_method(m) => None,
        _ => return None,
    })
}

/// Answers a request by the modern rules.
pub(crate) fn handle(session: &Session, request: Request) -> Reply {
    let params = request.params.unwrap_or_else(|| json!({}));
    let method = request.method.as_str();
    let config = session.config();
    if method == methods::INITIALIZE {
        return Reply::Now(Err(initialize(config, &params)));
    }
    let Some(capability) = capability_of(method) else {
        return Reply::Now(Err(method_not_found(method)));
    };
    let meta = params.get("_meta").cloned().unwrap_or(Value::Null);
    let Some(version) = meta.get(PROTOCOL_VERSION) else {
        return Reply::Now(Err(invalid_params(format!(
            "_meta[\"{PROTOCOL_VERSION}\"] is required"
        ))));
    };
    let Some(client_caps) = meta.get(CLIENT_CAPABILITIES).filter(|c| c.is_object()) else {
        return Reply::Now(Err(invalid_params(format!(
            "_meta[\"{CLIENT_CAPABILITIES}\"] is required (an object)"
        ))));
    };
    if !config.modern_versions.iter().any(|v| v == version) {
        // By default every revision accepted, legacy ones included (a
        // client learns it may fall back to `initialize`); with the
        // conformance fixtures, what `server/discover` lists, as the
        // suite checks the two agree.
        let supported = if config.conformance {
            config.modern_versions.clone()
        } else {
            config.all_versions()
        };
        return Reply::Now(Err(unsupported_version(&supported, version)));
    }
    if let Some(capability) = capability
        && !config.advertises(capability)
    {
        return Reply::Now(Err(method_not_found(method)));
    }
    let cacheable = method == methods::RESOURCES_READ
        || method == methods::SKILLS_LIST
        || catalog::list_key(method).is_some();
    let ctx = Ctx {
        session: session.clone(),
        modern: true,
        request: request.id.clone(),
        progress_token: meta.get(mcp_protocol::meta::PROGRESS_TOKEN).cloned(),
        log_level: meta
            .get(LOG_LEVEL)
            .and_then(Value::as_str)
            .map(str::to_owned),
        client_caps: client_caps.clone(),
    };
    let result = match method {
        methods::SERVER_DISCOVER => Ok(discover(session)),
        methods::SUBSCRIPTIONS_LISTEN => return listen(session, request.id, &params),
        methods::TOOLS_CALL => return decorated(session, tools::call(ctx, &params)),
        methods::RESOURCES_READ => catalog::read(session, &params, true),
        methods::PROMPTS_GET => return decorated(session, tools::get_prompt(ctx, &params)),
        methods::COMPLETION_COMPLETE => catalog::complete(session, &params),
        m if skills::is_skills_method(m) => skills::handle(session, m, &params),
        list => catalog::list(session, list, &params),
    };
    Reply::Now(result.map(|v| decorate(session, v, cacheable)))
}

/// The error an `initialize` gets: a modern request (a modern version in
/// its `_meta`) names the handshake the modern revisions removed, a method
/// this server does not have; a legacy client's handshake learns the
/// versions to speak instead.
fn initialize(config: &FakeConfig, params: &Value) -> ErrorObject {
    if params
        .get("_meta")
        .is_some_and(|m| m.get(PROTOCOL_VERSION).is_some())
    {
        return method_not_found(methods::INITIALIZE);
    }
    let requested = params
        .get("protocolVersion")
        .cloned()
        .unwrap_or(Value::Null);
    unsupported_version(&config.modern_versions, &requested)
}

/// A reply of a request that may ask for input, decorated when it comes.
fn decorated(session: &Session, reply: Reply) -> Reply {
    match reply {
        Reply::Now(r) => Reply::Now(r.map(|v| decorate(session, v, false))),
        Reply::Later(work) => {
            let session = session.clone();
            Reply::Later(Box::pin(async move {
                work.await.map(|v| decorate(&session, v, false))
            }))
        }
        Reply::Held => Reply::Held,
    }
}

/// Adds `resultType` (when absent), `_meta` serverInfo, and for cacheable
/// complete results `ttlMs` and `cacheScope`.
fn decorate(session: &Session, mut result: Value, cacheable: bool) -> Value {
    let config = session.config();
    let Some(obj) = result.as_object_mut() else {
        return result;
    };
    let kind = obj
        .entry("resultType")
        .or_insert_with(|| json!("complete"))
        .clone();
    let meta = obj.entry("_meta").or_insert_with(|| json!({}));
    if let Some(meta) = meta.as_object_mut() {
        meta.insert(SERVER_INFO.to_owned(), config.server_info.clone());
    }
    if cacheable && kind == "complete" {
        obj.insert("ttlMs".to_owned(), json!(config.ttl_ms));
        obj.insert("cacheScope".to_owned(), json!(config.cache_scope.as_str()));
    }
    result
}

fn discover(session: &Session) -> Value {
    let config = session.config();
    let mut result = json!({
        "supportedVersions": config.modern_versions,
        "capabilities": config.capabilities,
    });
    if let Some(instructions) = &config.instructions {
        result["instructions"] = json!(instructions);
    }
    decorate(session, result, true)
}

/// Opens a listen stream: the acknowledgement first, with the honoured
/// subset of the filter; the stream then stays open until cancelled.
fn listen(session: &Session, id: RequestId, params: &Value) -> Reply {
    let Some(asked) = params.get("notifications").and_then(Value::as_object) else {
        return Reply::Now(Err(invalid_params(
            "subscriptions/listen needs a notifications filter",
        )));
    };
    let config = session.config();
    let mut honoured = Map::new();
    for (key, capability) in [
        ("toolsListChanged", "tools"),
        ("promptsListChanged", "prompts"),
        ("resourcesListChanged", "resources"),
    ] {
        if asked.get(key) == Some(&json!(true)) && config.advertises_flag(capability, "listChanged")
        {
            honoured.insert(key.to_owned(), json!(true));
        }
    }
    if let Some(uris) = asked.get("resourceSubscriptions").filter(|u| u.is_array())
        && config.advertises_flag("resources", "subscribe")
    {
        honoured.insert("resourceSubscriptions".to_owned(), uris.clone());
    }
    let honoured = Value::Object(honoured);
    session.notify(
        methods::NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED,
        json!({ "_meta": { SUBSCRIPTION_ID: id }, "notifications": honoured }),
    );
    session.state().listens.insert(id, honoured);
    Reply::Held
}
