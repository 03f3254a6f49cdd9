//! The legacy rules (2025-11-25 and older): the `initialize` handshake,
//! requests refused before it, `ping`, `logging/setLevel`,
//! `resources/subscribe`, and how `server/discover` is answered.

use mcp_protocol::methods;
use mcp_protocol::{ErrorObject, Request};
use serde_json::{Value, json};

use super::catalog;
use super::config::{DiscoverAnswer, Knob};
use super::skills;
use mcp_protocol::error_codes::{INVALID_PARAMS, INVALID_REQUEST};

use super::errors::{SERVER_ERROR, invalid_params, method_not_found};
use super::outbound::log_rank;
use super::session::{LegacyConn, Reply, Session};
use super::tools::{self, Ctx};

/// The server capability each legacy method needs.
fn capability_of(method: &str) -> Option<Option<&'static str>> {
    Some(match method {
        methods::INITIALIZE | methods::PING => None,
        methods::TOOLS_LIST | methods::TOOLS_CALL => Some("tools"),
        methods::RESOURCES_LIST | methods::RESOURCES_TEMPLATES_LIST | methods::RESOURCES_READ => {
            Some("resources")
        }
        methods::RESOURCES_SUBSCRIBE | methods::RESOURCES_UNSUBSCRIBE => Some("resources"),
        methods::PROMPTS_LIST | methods::PROMPTS_GET => Some("prompts"),
        methods::LOGGING_SET_LEVEL => Some("logging"),
        methods::COMPLETION_COMPLETE => Some("completions"),
        // The Skills extension: `skills::handle` checks its declaration.
        m if skills::is_skills_method(m) => None,
        _ => return None,
    })
}

/// Answers a request on a legacy connection.
pub(crate) fn handle(session: &Session, request: Request) -> Reply {
    let method = request.method.as_str();
    let params = request.params.unwrap_or_else(|| json!({}));
    match method {
        methods::INITIALIZE => return Reply::Now(initialize(session, &params)),
        methods::PING => return Reply::Now(Ok(json!({}))),
        methods::SERVER_DISCOVER => return discover(session),
        _ => {}
    }
    let Some(capability) = capability_of(method) else {
        return Reply::Now(Err(method_not_found(method)));
    };
    let Some(conn) = session.state().legacy.clone().filter(|l| l.ready) else {
        return Reply::Now(Err(ErrorObject::new(
            INVALID_REQUEST,
            format!(
                "the server is not initialized: {method} must follow initialize and \
                 notifications/initialized"
            ),
        )));
    };
    if let Some(capability) = capability
        && !session.config().advertises(capability)
    {
        return Reply::Now(Err(method_not_found(method)));
    }
    let ctx = Ctx {
        session: session.clone(),
        modern: false,
        request: request.id.clone(),
        progress_token: request_progress_token(&params),
        log_level: conn.log_level.clone(),
        client_caps: conn.client_caps.clone(),
    };
    Reply::Now(match method {
        methods::TOOLS_CALL => return tools::call(ctx, &params),
        methods::RESOURCES_READ => catalog::read(session, &params, false),
        methods::PROMPTS_GET => return tools::get_prompt(ctx, &params),
        methods::COMPLETION_COMPLETE => catalog::complete(session, &params),
        methods::LOGGING_SET_LEVEL => set_level(session, &params),
        m if skills::is_skills_method(m) => skills::handle(session, m, &params),
        methods::RESOURCES_SUBSCRIBE | methods::RESOURCES_UNSUBSCRIBE => {
            subscribe(session, method, &params)
        }
        list => catalog::list(session, list, &params),
    })
}

fn request_progress_token(params: &Value) -> Option<Value> {
    params
        .get("_meta")?
        .get(mcp_protocol::meta::PROGRESS_TOKEN)
        .cloned()
}

fn initialize(session: &Session, params: &Value) -> Result<Value, ErrorObject> {
    let config = session.config();
    let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) else {
        return Err(invalid_params("initialize needs a protocolVersion"));
    };
    let mut state = session.state();
    if state.legacy.is_some() {
        return Err(ErrorObject::new(
            INVALID_REQUEST,
            "initialize was already received",
        ));
    }
    let version = if config.legacy_versions.iter().any(|v| v == requested) {
        requested.to_owned()
    } else if let Some(newest) = config.legacy_versions.first() {
        newest.clone()
    } else {
        return Err(
            invalid_params("Unsupported protocol version").with_data(json!({
                "supported": config.legacy_versions, "requested": requested,
            })),
        );
    };
    state.legacy = Some(LegacyConn {
        client_caps: params
            .get("capabilities")
            .cloned()
            .unwrap_or_else(|| json!({})),
        ready: false,
        log_level: None,
        subscriptions: Default::default(),
    });
    let mut result = json!({
        "protocolVersion": version,
        "capabilities": config.capabilities,
        "serverInfo": config.server_info,
    });
    if let Some(instructions) = &config.instructions {
        result["instructions"] = json!(instructions);
    }
    Ok(result)
}

/// `notifications/initialized`: the connection is ready (and, with the
/// knob, the server speaks unasked).
pub(crate) fn initialized(session: &Session) {
    {
        let mut state = session.state();
        match state.legacy.as_mut() {
            Some(conn) if !conn.ready => conn.ready = true,
            _ => return,
        }
    }
    if session
        .config()
        .has_knob(&Knob::UnsolicitedAfterInitialized)
    {
        let asker = session.clone();
        tokio::spawn(async move {
            let _ = asker.ask_client(methods::ROOTS_LIST, json!({}), None).await;
        });
        session.notify(methods::NOTIFICATION_TOOLS_LIST_CHANGED, json!({}));
    }
}

fn discover(session: &Session) -> Reply {
    let error = |code, message: &str| Reply::Now(Err(ErrorObject::new(code, message)));
    match session.config().discover_answer() {
        DiscoverAnswer::MethodNotFound => {
            Reply::Now(Err(method_not_found(methods::SERVER_DISCOVER)))
        }
        DiscoverAnswer::InvalidParams => error(INVALID_PARAMS, "Invalid request parameters"),
        DiscoverAnswer::ServerError => error(SERVER_ERROR, "Bad Request: no valid session"),
        DiscoverAnswer::Silent => Reply::Held,
    }
}

fn set_level(session: &Session, params: &Value) -> Result<Value, ErrorObject> {
    let level = params
        .get("level")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if log_rank(level).is_none() {
        return Err(invalid_params(format!("unknown log level {level:?}")));
    }
    if let Some(conn) = session.state().legacy.as_mut() {
        conn.log_level = Some(level.to_owned());
    }
    Ok(json!({}))
}

fn subscribe(session: &Session, method: &str, params: &Value) -> Result<Value, ErrorObject> {
    if !session.config().advertises_flag("resources", "subscribe") {
        return Err(method_not_found(method));
    }
    let Some(uri) = params.get("uri").and_then(Value::as_str) else {
        return Err(invalid_params(format!("{method} needs a uri")));
    };
    if let Some(conn) = session.state().legacy.as_mut() {
        if method == methods::RESOURCES_SUBSCRIBE {
            conn.subscriptions.insert(uri.to_owned());
        } else {
            conn.subscriptions.remove(uri);
        }
    }
    Ok(json!({}))
}
