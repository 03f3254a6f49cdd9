//! `tools/call`: what each [`ToolBehavior`] does, in either era.

use mcp_protocol::methods;
use std::time::Duration;

use mcp_protocol::{ErrorObject, Message, Notification, RequestId};
use serde_json::{Map, Value, json};

use super::entries::{FakeTool, ResourceBody, ToolBehavior};
use super::errors::{invalid_params, missing_capabilities};
use super::flow::{self, InputRound, Step};
use super::outbound::log_rank;
use super::session::{Reply, Session};

/// What a request brings with it, whichever era it came in.
pub(crate) struct Ctx {
    /// The connection.
    pub(crate) session: Session,
    /// Whether the request is served by the modern rules.
    pub(crate) modern: bool,
    /// The request being served.
    pub(crate) request: RequestId,
    /// `_meta.progressToken`, if any.
    pub(crate) progress_token: Option<Value>,
    /// The level below which log messages are not sent; `None`: none sent.
    pub(crate) log_level: Option<String>,
    /// The client's capabilities (from `initialize`, or this request's `_meta`).
    pub(crate) client_caps: Value,
}

impl Ctx {
    /// Sends `notifications/message` if the client's level lets it through.
    pub(crate) fn log(&self, level: &str, data: Value) {
        let threshold = self.log_level.as_deref().and_then(log_rank);
        if let (Some(threshold), Some(rank)) = (threshold, log_rank(level))
            && rank >= threshold
        {
            let params = json!({ "level": level, "logger": "fake", "data": data });
            let log = Notification::new(methods::NOTIFICATION_MESSAGE, Some(params));
            self.session
                .send_for(Message::Notification(log), Some(&self.request));
        }
    }
}

fn text(text: impl Into<String>) -> Value {
    json!({ "content": [{ "type": "text", "text": text.into() }] })
}

fn tool_error(message: impl Into<String>) -> Value {
    json!({ "content": [{ "type": "text", "text": message.into() }], "isError": true })
}

/// Answers `tools/call`.
pub(crate) fn call(ctx: Ctx, params: &Value) -> Reply {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Reply::Now(Err(invalid_params("tools/call needs a tool name")));
    };
    let tool = ctx
        .session
        .state()
        .tools
        .iter()
        .find(|t| t.name() == name)
        .cloned();
    let Some(tool) = tool else {
        return Reply::Now(Err(invalid_params(format!("Unknown tool: {name}"))));
    };
    let args = params
        .get("arguments")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    ctx.log("info", json!(format!("tools/call {name}")));
    match &tool.behavior {
        ToolBehavior::Echo => Reply::Now(echo(&args)),
        ToolBehavior::Structured => Reply::Now(structured(&args)),
        ToolBehavior::Fail => Reply::Now(Ok(tool_error("the tool failed, as it always does"))),
        ToolBehavior::Slow => slow(ctx, &args),
        ToolBehavior::Ask(rounds) => ask(ctx, name, rounds.clone(), params),
        ToolBehavior::AddTool => Reply::Now(Ok(add_tool(&ctx.session, &args))),
        ToolBehavior::TouchResource => Reply::Now(touch(&ctx.session, &args)),
        ToolBehavior::Log => Reply::Now(log(&ctx, &args)),
        ToolBehavior::Fixed(result) => Reply::Now(Ok(result.clone())),
    }
}

fn echo(args: &Map<String, Value>) -> Result<Value, ErrorObject> {
    match args.get("text").and_then(Value::as_str) {
        Some(t) => Ok(text(t)),
        None => Err(invalid_params("echo needs a string argument \"text\"")),
    }
}

fn structured(args: &Map<String, Value>) -> Result<Value, ErrorObject> {
    let number = |k: &str| args.get(k).and_then(Value::as_f64);
    let (Some(a), Some(b)) = (number("a"), number("b")) else {
        return Err(invalid_params("structured needs numbers \"a\" and \"b\""));
    };
    let output = json!({ "sum": a + b, "product": a * b });
    Ok(json!({
        "content": [{ "type": "text", "text": output.to_string() }],
        "structuredContent": output,
    }))
}

fn slow(ctx: Ctx, args: &Map<String, Value>) -> Reply {
    let steps = args.get("steps").and_then(Value::as_u64).unwrap_or(3);
    let delay = Duration::from_millis(args.get("delayMs").and_then(Value::as_u64).unwrap_or(100));
    Reply::Later(Box::pin(async move {
        for step in 1..=steps {
            tokio::time::sleep(delay).await;
            if let Some(token) = &ctx.progress_token {
                let params = json!({
                    "progressToken": token,
                    "progress": step,
                    "total": steps,
                    "message": format!("step {step} of {steps}"),
                });
                let progress = Notification::new(methods::NOTIFICATION_PROGRESS, Some(params));
                ctx.session
                    .send_for(Message::Notification(progress), Some(&ctx.request));
            }
        }
        Ok(text(format!("done after {steps} steps")))
    }))
}

fn ask(ctx: Ctx, name: &str, rounds: Vec<InputRound>, params: &Value) -> Reply {
    let missing: Vec<&str> = flow::required_capabilities(&rounds)
        .into_iter()
        .filter(|c| ctx.client_caps.get(*c).is_none())
        .collect();
    if ctx.modern {
        if !missing.is_empty() {
            return Reply::Now(Err(missing_capabilities(&missing)));
        }
        return Reply::Now(match flow::modern_step(name, &rounds, params) {
            Ok(Step::Input(result)) => Ok(result),
            Ok(Step::Done(answers)) => Ok(flow::finish(answers)),
            Err(e) => Err(e),
        });
    }
    if !missing.is_empty() {
        let message = format!("the client did not declare {}", missing.join(" and "));
        return Reply::Now(Ok(tool_error(message)));
    }
    Reply::Later(Box::pin(async move {
        let mut answers = Map::new();
        for round in rounds {
            let InputRound::Ask(requests) = round else {
                continue;
            };
            for request in requests {
                match ctx
                    .session
                    .ask_client(&request.method, request.params, Some(&ctx.request))
                    .await
                {
                    Ok(answer) => answers.insert(request.key, answer),
                    Err(e) => {
                        let message = format!("the client answered {} with {e}", request.method);
                        return Ok(tool_error(message));
                    }
                };
            }
        }
        Ok(flow::finish(answers))
    }))
}

fn add_tool(session: &Session, args: &Map<String, Value>) -> Value {
    let name = {
        let mut state = session.state();
        let name = match args.get("name").and_then(Value::as_str) {
            Some(n) => n.to_owned(),
            None => format!("added_{}", state.tools.len()),
        };
        let tool = FakeTool::new(&name, "Added by add_tool; echoes.", ToolBehavior::Echo)
            .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}}));
        state.tools.retain(|t| t.name() != name);
        state.tools.push(tool);
        name
    };
    session.announce_list_changed("tools");
    text(format!("added the tool {name}"))
}

fn touch(session: &Session, args: &Map<String, Value>) -> Result<Value, ErrorObject> {
    let uri = args
        .get("uri")
        .and_then(Value::as_str)
        .unwrap_or("fake://counter")
        .to_owned();
    {
        let mut state = session.state();
        let Some(resource) = state.resources.iter_mut().find(|r| r.uri() == uri) else {
            return Err(invalid_params(format!("no resource {uri}")));
        };
        if let ResourceBody::Text(t) = &mut resource.body {
            *t = match t.parse::<u64>() {
                Ok(n) => (n + 1).to_string(),
                Err(_) => format!("{t}."),
            };
        }
    }
    session.announce_updated(&uri);
    Ok(text(format!("touched {uri}")))
}

fn log(ctx: &Ctx, args: &Map<String, Value>) -> Result<Value, ErrorObject> {
    let level = args.get("level").and_then(Value::as_str).unwrap_or("info");
    if log_rank(level).is_none() {
        return Err(invalid_params(format!("unknown log level {level:?}")));
    }
    let message = args
        .get("message")
        .cloned()
        .unwrap_or(json!("a log message"));
    ctx.log(level, message);
    Ok(text(format!("logged at {level}")))
}
