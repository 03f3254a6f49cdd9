//! The fixtures of the official MCP conformance suite's server scenarios
//! (`@modelcontextprotocol/conformance`, `conformance server --url URL`):
//! the tools, resources, template and prompts its scenarios call by name,
//! served in place of the default content when
//! [`FakeConfig::conformance`](crate::FakeConfig::conformance) (the
//! binary's `--conformance`) is on.
//!
//! Why a catalogue of its own: the suite names its fixtures (`test_simple_text`,
//! `test://static-text`, `test_prompt_with_arguments`…) and the default
//! content is what tests, examples, benchmarks and `mcp inspect` see, so
//! it must not change. Most fixtures are content ([`catalogue`]): fixed
//! results, or rounds of input asked of the client (legacy: server-to-client
//! requests; modern: `input_required` results). The few whose behaviour is
//! their own (log lines or progress spaced in time, input built from the
//! arguments, a prompt-list change) are the [`ConformanceTool`]s here.

mod catalogue;
mod media;
mod schemas;

use std::time::Duration;

use mcp_protocol::{Message, Notification, methods};
use serde_json::{Map, Value, json};

use super::flow::{InputRequest, InputRound};
use super::session::Reply;
use super::tools::{self, Ctx, Ending, text};

/// A conformance fixture whose behaviour is its own (see the module docs
/// of [`crate`] and [`FakeConfig::conformance`](crate::FakeConfig::conformance)).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ConformanceTool {
    /// Sends three `info` log messages ~50 ms apart (each when the client's
    /// level lets it through), then returns a text: a client must take
    /// several notifications while a request runs.
    Logging,
    /// With a progress token, sends progress 0, 50 and 100 of 100, ~50 ms
    /// apart, then returns a text.
    Progress,
    /// Asks the client's model (sampling) the text `arguments.prompt`, then
    /// returns `LLM response: <its text>`.
    Sampling,
    /// Asks the user (a form elicitation) `arguments.message`, for a
    /// username and an email, then returns `User response: <answer>`.
    Elicitation,
    /// Asks these rounds of input, then returns `summary` followed by the
    /// answers as JSON.
    Asks {
        /// The rounds.
        rounds: Vec<InputRound>,
        /// The first words of the final text.
        summary: String,
    },
    /// Announces `notifications/prompts/list_changed` (the prompts are fixed
    /// content, so the list a client then reads is the same): the hook the
    /// suite calls to see a listen stream carry the notification.
    PromptsChanged,
}

/// How long apart the log lines and the progress notifications are: long
/// enough that a client sees them arrive while the request runs.
const SPACING: Duration = Duration::from_millis(50);

/// `tools/call` of a [`ConformanceTool`].
pub(crate) fn call(
    ctx: Ctx,
    name: &str,
    fixture: &ConformanceTool,
    args: &Map<String, Value>,
    params: &Value,
) -> Reply {
    match fixture {
        ConformanceTool::Logging => logging(ctx),
        ConformanceTool::Progress => progress(ctx),
        ConformanceTool::Sampling => sampling(ctx, name, args, params),
        ConformanceTool::Elicitation => elicitation(ctx, name, args, params),
        ConformanceTool::Asks { rounds, summary } => {
            let summary = summary.clone();
            let ending = Ending::tool_with(move |answers| {
                text(format!("{summary} {}", Value::Object(answers)))
            });
            tools::ask(ctx, name, rounds.clone(), params, ending)
        }
        ConformanceTool::PromptsChanged => {
            ctx.session.announce_list_changed("prompts");
            Reply::Now(Ok(text("Announced a change of the prompt list.")))
        }
    }
}

fn logging(ctx: Ctx) -> Reply {
    Reply::Later(Box::pin(async move {
        let lines = [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed",
        ];
        for (n, line) in lines.into_iter().enumerate() {
            if n > 0 {
                tokio::time::sleep(SPACING).await;
            }
            ctx.log("info", json!(line));
        }
        Ok(text("Logged three messages while running."))
    }))
}

fn progress(ctx: Ctx) -> Reply {
    Reply::Later(Box::pin(async move {
        for (n, progress) in [0, 50, 100].into_iter().enumerate() {
            if n > 0 {
                tokio::time::sleep(SPACING).await;
            }
            if let Some(token) = &ctx.progress_token {
                let params = json!({ "progressToken": token, "progress": progress, "total": 100 });
                let note = Notification::new(methods::NOTIFICATION_PROGRESS, Some(params));
                ctx.session
                    .send_for(Message::Notification(note), Some(&ctx.request));
            }
        }
        Ok(text("Reported progress 0, 50 and 100 of 100."))
    }))
}

fn sampling(ctx: Ctx, name: &str, args: &Map<String, Value>, params: &Value) -> Reply {
    let prompt = argument(args, "prompt", "Say hello.");
    let request = InputRequest::new(
        "response",
        methods::SAMPLING_CREATE_MESSAGE,
        json!({
            "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }],
            "maxTokens": 100,
        }),
    );
    let ending = Ending::tool_with(|answers| {
        let answer = &answers["response"];
        let said = answer["content"]["text"]
            .as_str()
            .map_or_else(|| answer.to_string(), str::to_owned);
        text(format!("LLM response: {said}"))
    });
    tools::ask(
        ctx,
        name,
        vec![InputRound::Ask(vec![request])],
        params,
        ending,
    )
}

fn elicitation(ctx: Ctx, name: &str, args: &Map<String, Value>, params: &Value) -> Reply {
    let message = argument(args, "message", "Please provide your information");
    let request = InputRequest::new(
        "response",
        methods::ELICITATION_CREATE,
        json!({
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "username": { "type": "string", "description": "User's response" },
                    "email": { "type": "string", "description": "User's email address" },
                },
                "required": ["username", "email"],
            },
        }),
    );
    let ending =
        Ending::tool_with(|answers| text(format!("User response: {}", answers["response"])));
    tools::ask(
        ctx,
        name,
        vec![InputRound::Ask(vec![request])],
        params,
        ending,
    )
}

/// A string argument, or `default` when it is missing.
fn argument(args: &Map<String, Value>, key: &str, default: &str) -> String {
    args.get(key)
        .and_then(Value::as_str)
        .unwrap_or(default)
        .to_owned()
}
