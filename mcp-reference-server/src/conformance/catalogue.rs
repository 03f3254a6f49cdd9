//! [`Content::conformance`]: every tool, resource, template and prompt the
//! suite's server scenarios call, named and shaped as their descriptions
//! ask (the suite's `src/scenarios/server/`).

use mcp_protocol::methods;
use serde_json::{Value, json};

use super::ConformanceTool;
use super::media::{RED_PIXEL_PNG, image, silent_wav};
use super::schemas::{defaults_schema, enums_schema, header_param_schema, schema_2020_12};
use crate::content::{Content, base64};
use crate::entries::{
    FakePrompt, FakeResource, FakeTemplate, FakeTool, PromptArgument, ResourceBody, ToolBehavior,
};
use crate::flow::{InputRequest, InputRound};

fn text_content(text: &str) -> Value {
    json!({ "type": "text", "text": text })
}

fn result(content: Vec<Value>) -> Value {
    json!({ "content": content })
}

/// A tool that takes no arguments.
fn tool(name: &str, description: &str, behavior: ToolBehavior) -> FakeTool {
    FakeTool::new(name, description, behavior)
}

/// A tool taking the string arguments `required`.
fn tool_with_args(
    name: &str,
    description: &str,
    behavior: ToolBehavior,
    required: &[&str],
) -> FakeTool {
    let properties: serde_json::Map<String, Value> = required
        .iter()
        .map(|k| ((*k).to_owned(), json!({ "type": "string" })))
        .collect();
    FakeTool::new(name, description, behavior)
        .input_schema(json!({ "type": "object", "properties": properties, "required": required }))
}

fn asks(rounds: Vec<InputRound>, summary: &str) -> ToolBehavior {
    ToolBehavior::Conformance(ConformanceTool::Asks {
        rounds,
        summary: summary.to_owned(),
    })
}

fn request(key: &str, method: &str, params: Value) -> InputRequest {
    InputRequest::new(key, method, params)
}

/// An elicitation of one string (or other) property.
fn elicit(key: &str, message: &str, property: &str, kind: &str) -> InputRequest {
    request(
        key,
        methods::ELICITATION_CREATE,
        json!({
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": { property: { "type": kind } },
                "required": [property],
            },
        }),
    )
}

fn sample(key: &str, question: &str, max_tokens: u32) -> InputRequest {
    request(
        key,
        methods::SAMPLING_CREATE_MESSAGE,
        json!({
            "messages": [{ "role": "user", "content": { "type": "text", "text": question } }],
            "maxTokens": max_tokens,
        }),
    )
}

fn roots(key: &str) -> InputRequest {
    request(key, methods::ROOTS_LIST, json!({}))
}

fn one(request: InputRequest) -> InputRound {
    InputRound::Ask(vec![request])
}

impl Content {
    /// The fixtures of the official conformance suite's server scenarios
    /// (see [`FakeConfig::conformance`](crate::FakeConfig::conformance)).
    pub fn conformance() -> Content {
        let content = Content::empty();
        let content = media_tools(content);
        let content = behaviour_tools(content);
        let content = schema_tools(content);
        let content = input_tools(content);
        let content = multi_round_tools(content);
        let content = stateful_round_tools(content);
        let content = resources(content);
        prompts(content)
    }
}

/// Tools returning each kind of content, and an error.
fn media_tools(content: Content) -> Content {
    let audio = json!({ "type": "audio", "data": base64(&silent_wav()), "mimeType": "audio/wav" });
    let embedded = json!({ "type": "resource", "resource": {
        "uri": "test://embedded-resource",
        "mimeType": "text/plain",
        "text": "This is an embedded resource content.",
    } });
    let mixed = json!({ "type": "resource", "resource": {
        "uri": "test://mixed-content-resource",
        "mimeType": "application/json",
        "text": "{\"test\":\"data\",\"value\":123}",
    } });
    let error = json!({
        "isError": true,
        "content": [text_content("This tool intentionally returns an error for testing")],
    });
    let fixed = ToolBehavior::Fixed;
    content
        .with_tool(tool(
            "test_simple_text",
            "Returns a simple text.",
            fixed(result(vec![text_content(
                "This is a simple text response for testing.",
            )])),
        ))
        .with_tool(tool(
            "test_image_content",
            "Returns an image (a 1x1 red PNG).",
            fixed(result(vec![image()])),
        ))
        .with_tool(tool(
            "test_audio_content",
            "Returns audio (a short silent WAV).",
            fixed(result(vec![audio])),
        ))
        .with_tool(tool(
            "test_embedded_resource",
            "Returns an embedded text resource.",
            fixed(result(vec![embedded])),
        ))
        .with_tool(tool(
            "test_multiple_content_types",
            "Returns a text, an image and an embedded resource.",
            fixed(result(vec![
                text_content("Multiple content types test:"),
                image(),
                mixed,
            ])),
        ))
        .with_tool(tool(
            "test_error_handling",
            "Always fails (isError).",
            fixed(error),
        ))
}

/// Tools whose definitions are the test: a JSON Schema 2020-12 input
/// schema that must come through `tools/list` whole (SEP-1613, SEP-2106),
/// and an argument mirrored in an `Mcp-Param-Region` header (SEP-2243),
/// which the HTTP front checks against the body.
fn schema_tools(content: Content) -> Content {
    let done = |text: &str| ToolBehavior::Fixed(result(vec![text_content(text)]));
    content
        .with_tool(
            tool(
                "json_schema_2020_12_tool",
                "Tool with JSON Schema 2020-12 features",
                done("Received."),
            )
            .input_schema(schema_2020_12()),
        )
        .with_tool(
            tool(
                "test_header_param",
                "Takes a region, mirrored in the Mcp-Param-Region header.",
                done("The header matched the argument."),
            )
            .input_schema(header_param_schema()),
        )
}

/// Tools that log, report progress, ask with their arguments, or change
/// the lists.
fn behaviour_tools(content: Content) -> Content {
    let own = ToolBehavior::Conformance;
    content
        .with_tool(tool(
            "test_tool_with_logging",
            "Sends three log messages while it runs.",
            own(ConformanceTool::Logging),
        ))
        .with_tool(tool(
            "test_logging_tool",
            "Sends three log messages while it runs (none without a log level).",
            own(ConformanceTool::Logging),
        ))
        .with_tool(tool(
            "test_tool_with_progress",
            "Reports progress 0, 50 and 100 of 100.",
            own(ConformanceTool::Progress),
        ))
        .with_tool(tool_with_args(
            "test_sampling",
            "Asks the client's model the prompt (needs sampling).",
            own(ConformanceTool::Sampling),
            &["prompt"],
        ))
        .with_tool(tool_with_args(
            "test_elicitation",
            "Asks the user for a username and an email (needs elicitation).",
            own(ConformanceTool::Elicitation),
            &["message"],
        ))
        .with_tool(tool(
            "test_trigger_tool_change",
            "Adds a tool and announces the change of the tool list.",
            ToolBehavior::AddTool,
        ))
        .with_tool(tool(
            "test_trigger_prompt_change",
            "Announces a change of the prompt list.",
            own(ConformanceTool::PromptsChanged),
        ))
}

/// Tools that ask the client for input: elicitation schemas, a capability
/// the client must have declared, a request on a response stream.
fn input_tools(content: Content) -> Content {
    let elicit_with = |schema: Value| {
        one(request(
            "response",
            methods::ELICITATION_CREATE,
            json!({ "message": "Please review and update the form fields", "requestedSchema": schema }),
        ))
    };
    let name = || elicit("user_name", "What is your name?", "name", "string");
    content
        .with_tool(tool(
            "test_elicitation_sep1034_defaults",
            "Asks a form with a default for every primitive type.",
            asks(vec![elicit_with(defaults_schema())], "Elicitation completed:"),
        ))
        .with_tool(tool(
            "test_elicitation_sep1330_enums",
            "Asks a form with each form of enum.",
            asks(vec![elicit_with(enums_schema())], "Elicitation completed:"),
        ))
        .with_tool(tool(
            "test_missing_capability",
            "Needs the sampling capability: a client without it gets MissingRequiredClientCapability.",
            asks(vec![one(sample("answer", "What is the capital of France?", 100))], "Sampled:"),
        ))
        .with_tool(tool(
            "test_streaming_elicitation",
            "Asks the user for a name (modern: an input_required result on the response stream).",
            asks(vec![one(name())], "Hello:"),
        ))
}

/// The SEP-2322 multi-round tools.
fn multi_round_tools(content: Content) -> Content {
    let name = || elicit("user_name", "What is your name?", "name", "string");
    content
        .with_tool(tool(
            "test_input_required_result_elicitation",
            "Asks the user's name, then greets them.",
            asks(vec![one(name())], "Hello:"),
        ))
        .with_tool(tool(
            "test_input_required_result_sampling",
            "Asks the client's model a question.",
            asks(
                vec![one(sample(
                    "capital_question",
                    "What is the capital of France?",
                    100,
                ))],
                "Answered:",
            ),
        ))
        .with_tool(tool(
            "test_input_required_result_list_roots",
            "Asks for the client's roots.",
            asks(vec![one(roots("client_roots"))], "Roots:"),
        ))
        .with_tool(tool(
            "test_input_required_result_request_state",
            "Asks a confirmation; its answer comes back with the state checked (state-ok).",
            asks(
                vec![one(elicit("confirm", "Please confirm", "ok", "boolean"))],
                "state-ok:",
            ),
        ))
        .with_tool(tool(
            "test_input_required_result_multiple_inputs",
            "Asks an elicitation, a sampling and the roots at once.",
            asks(
                vec![InputRound::Ask(vec![
                    name(),
                    sample("greeting", "Generate a greeting", 50),
                    roots("client_roots"),
                ])],
                "All answered:",
            ),
        ))
}

/// The SEP-2322 tools of several rounds, of a checked state, and of
/// requests each asked only of a capable client.
fn stateful_round_tools(content: Content) -> Content {
    let name = || elicit("user_name", "What is your name?", "name", "string");
    content
        .with_tool(tool(
            "test_input_required_result_multi_round",
            "Asks a name, then a favourite colour, in two rounds.",
            asks(
                vec![
                    one(elicit(
                        "step1",
                        "Step 1: What is your name?",
                        "name",
                        "string",
                    )),
                    one(elicit(
                        "step2",
                        "Step 2: What is your favorite color?",
                        "color",
                        "string",
                    )),
                ],
                "Both rounds answered:",
            ),
        ))
        .with_tool(tool(
            "test_input_required_result_tampered_state",
            "Asks a confirmation; a requestState changed in any way is rejected as invalid params.",
            asks(
                vec![one(elicit("confirm", "Please confirm", "ok", "boolean"))],
                "Confirmed:",
            ),
        ))
        .with_tool(tool(
            "test_input_required_result_capabilities",
            "Asks an elicitation and a sampling, each only of a client that declared it.",
            asks(
                vec![InputRound::Ask(vec![
                    name().if_capable(),
                    sample("capital_question", "What is the capital of France?", 100).if_capable(),
                ])],
                "Answered what the client could:",
            ),
        ))
}

/// The resources, the template, and (for subscriptions) a watched resource.
fn resources(content: Content) -> Content {
    content
        .with_resource(
            FakeResource::new(
                "test://static-text",
                "static-text",
                "text/plain",
                ResourceBody::Text("This is the content of the static text resource.".to_owned()),
            )
            .description("A static text resource."),
        )
        .with_resource(
            FakeResource::new(
                "test://static-binary",
                "static-binary",
                "image/png",
                ResourceBody::Blob(RED_PIXEL_PNG.to_vec()),
            )
            .description("A static binary resource (a 1x1 red PNG)."),
        )
        .with_resource(
            FakeResource::new(
                "test://watched-resource",
                "watched-resource",
                "text/plain",
                ResourceBody::Text("0".to_owned()),
            )
            .description("A resource to subscribe to."),
        )
        .with_template(
            FakeTemplate::new(
                "test://template/{id}/data",
                "template-data",
                &["123", "456"],
            )
            .reads_as(
                "application/json",
                "{\"id\":\"{id}\",\"templateTest\":true,\"data\":\"Data for ID: {id}\"}",
            ),
        )
}

/// The prompts: plain, with arguments, with an embedded resource, with an
/// image, and one that asks the client first.
fn prompts(content: Content) -> Content {
    let required = |name: &str, values: &[&str]| PromptArgument::new(name, true, values);
    let user = |content: Value| json!({ "role": "user", "content": content });
    content
        .with_prompt(FakePrompt::new(
            "test_simple_prompt",
            "A prompt without arguments.",
            Vec::new(),
            "This is a simple prompt for testing.",
        ))
        .with_prompt(FakePrompt::new(
            "test_prompt_with_arguments",
            "A prompt with two arguments.",
            vec![
                required("arg1", &["testValue1", "test-one"]),
                required("arg2", &["testValue2", "test-two"]),
            ],
            "Prompt with arguments: arg1='{arg1}', arg2='{arg2}'",
        ))
        .with_prompt(
            FakePrompt::new(
                "test_prompt_with_embedded_resource",
                "A prompt embedding the resource it is given.",
                vec![required("resourceUri", &[])],
                "",
            )
            .with_messages(vec![
                user(json!({ "type": "resource", "resource": {
                    "uri": "{resourceUri}",
                    "mimeType": "text/plain",
                    "text": "Embedded resource content for testing.",
                } })),
                user(text_content("Please process the embedded resource above.")),
            ]),
        )
        .with_prompt(
            FakePrompt::new(
                "test_prompt_with_image",
                "A prompt with an image.",
                Vec::new(),
                "",
            )
            .with_messages(vec![
                user(image()),
                user(text_content("Please analyze the image above.")),
            ]),
        )
        .with_prompt(
            FakePrompt::new(
                "test_input_required_result_prompt",
                "A prompt that first asks the user for its context.",
                Vec::new(),
                "Write with the context the user gave.",
            )
            .asking(vec![one(elicit(
                "user_context",
                "What context should the prompt use?",
                "context",
                "string",
            ))]),
        )
}
