//! `tools/call`: what each [`ToolBehavior`] does, in either era; and
//! `prompts/get`, whose prompts may ask for input first as tools do.

use mcp_protocol::error_codes::INTERNAL_ERROR;
use mcp_protocol::methods;
use std::time::Duration;

use mcp_protocol::{ErrorObject, Message, Notification, RequestId};
use serde_json::{Map, Value, json};

use super::catalog;
use super::entries::{FakeTool, ResourceBody, ToolBehavior};
use super::errors::{invalid_params, missing_capabilities};
use super::flow::{self, InputRound, Reading, Step};
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

pub(crate) fn text(text: impl Into<String>) -> Value {
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
        ToolBehavior::Ask(rounds) => ask(ctx, name, rounds.clone(), params, Ending::tool()),
        ToolBehavior::AddTool => Reply::Now(Ok(add_tool(&ctx.session, &args))),
        ToolBehavior::TouchResource => Reply::Now(touch(&ctx.session, &args)),
        ToolBehavior::Log => Reply::Now(log(&ctx, &args)),
        ToolBehavior::Fixed(result) => Reply::Now(Ok(result.clone())),
        ToolBehavior::Conformance(fixture) => {
            super::conformance::call(ctx, name, fixture, &args, params)
        }
    }
}

/// Answers `prompts/get`: at once, or after the prompt's rounds of input.
pub(crate) fn get_prompt(ctx: Ctx, params: &Value) -> Reply {
    let prompt = match catalog::prompt(&ctx.session, params) {
        Ok(p) => p,
        Err(e) => return Reply::Now(Err(e)),
    };
    if prompt.rounds.is_empty() {
        return Reply::Now(catalog::get_prompt_of(&prompt, params));
    }
    // Checked before any round, as a call of a tool would be.
    if let Err(e) = catalog::get_prompt_of(&prompt, params) {
        return Reply::Now(Err(e));
    }
    let state_key = format!("prompt:{}", prompt.name);
    let rounds = prompt.rounds.clone();
    let given = params.clone();
    let done = move |answers: Map<String, Value>| {
        let mut result = catalog::get_prompt_of(&prompt, &given)?;
        let text = format!("The client's answers: {}", Value::Object(answers));
        if let Some(messages) = result["messages"].as_array_mut() {
            messages.push(json!({ "role": "user", "content": { "type": "text", "text": text } }));
        }
        Ok(result)
    };
    let ending = Ending {
        done: Box::new(done),
        failed: |message| Err(ErrorObject::new(INTERNAL_ERROR, message)),
    };
    ask(ctx, &state_key, rounds, params, ending)
}

/// What makes a result of every answer (by key).
pub(crate) type Done = Box<dyn FnOnce(Map<String, Value>) -> Result<Value, ErrorObject> + Send>;

/// How a request that asks the client for input ends.
pub(crate) struct Ending {
    /// The result, from every answer (by key).
    pub(crate) done: Done,
    /// (Legacy.) The answer when the client cannot or did not answer.
    pub(crate) failed: fn(String) -> Result<Value, ErrorObject>,
}

impl Ending {
    /// A tool's: the answers as JSON text; a failure as `isError`.
    pub(crate) fn tool() -> Ending {
        Ending::tool_with(flow::finish)
    }

    /// A tool's whose result `done` makes of the answers.
    pub(crate) fn tool_with(
        done: impl FnOnce(Map<String, Value>) -> Value + Send + 'static,
    ) -> Ending {
        Ending {
            done: Box::new(move |answers| Ok(done(answers))),
            failed: |message| Ok(tool_error(message)),
        }
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

/// Asks the client for `rounds` of input: modern, one round per request
/// (`input_required` results, the state in `requestState`); legacy, with
/// server-to-client requests while the request waits, a round's sent at
/// once (as a modern round asks them in one result).
pub(crate) fn ask(
    ctx: Ctx,
    name: &str,
    rounds: Vec<InputRound>,
    params: &Value,
    ending: Ending,
) -> Reply {
    let rounds = flow::for_client(rounds, &ctx.client_caps);
    let missing: Vec<&str> = flow::required_capabilities(&rounds)
        .into_iter()
        .filter(|c| ctx.client_caps.get(*c).is_none())
        .collect();
    if ctx.modern {
        if !missing.is_empty() {
            return Reply::Now(Err(missing_capabilities(&missing)));
        }
        let reading = if ctx.session.config().conformance {
            Reading::Lenient
        } else {
            Reading::Strict
        };
        return Reply::Now(match flow::modern_step(name, &rounds, params, reading) {
            Ok(Step::Input(result)) => Ok(result),
            Ok(Step::Done(answers)) => (ending.done)(answers),
            Err(e) => Err(e),
        });
    }
    if !missing.is_empty() {
        let message = format!("the client did not declare {}", missing.join(" and "));
        return Reply::Now((ending.failed)(message));
    }
    Reply::Later(Box::pin(async move {
        let mut answers = Map::new();
        for round in rounds {
            let InputRound::Ask(requests) = round else {
                continue;
            };
            let asked = requests.into_iter().map(|request| {
                let session = ctx.session.clone();
                let during = ctx.request.clone();
                async move {
                    let answer = session
                        .ask_client(&request.method, request.params, Some(&during))
                        .await;
                    (request.key, request.method, answer)
                }
            });
            for (key, method, answer) in futures::future::join_all(asked).await {
                match answer {
                    Ok(answer) => answers.insert(key, answer),
                    Err(e) => {
                        let message = format!("the client answered {method} with {e}");
                        return (ending.failed)(message);
                    }
                };
            }
        }
        (ending.done)(answers)
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
