//! Messages the crate builds validate against their own type in their
//! revision's official JSON Schema, and known-bad ones do not.
//!
//! Validators embed the whole schema document and point `$ref` at one
//! definition (`#/$defs/<Type>` for 2025-11-25 and 2026-07-28,
//! `#/definitions/<Type>` for 2025-06-18). No schema is published here for
//! 2024-11-05 and 2025-03-26: 2025-06-18's stands in for them, for the types
//! they share (initialize, tools, resources, prompts, logging, progress…).
//!
//! `jsonschema` is built without default features, so it cannot fetch a
//! remote or file `$ref`; a test below proves it.

use std::collections::BTreeMap;
use std::path::Path;

use mcp_protocol::error_codes::UnsupportedProtocolVersionData;
use mcp_protocol::meta::{self, RequestMetaBuilder};
use mcp_protocol::methods::{self, RequestMethod};
use mcp_protocol::types::*;
use mcp_protocol::{ErrorResponse, Message, Notification, ProtocolVersion, Request, Response};
use serde::Serialize;
use serde_json::{Value, json};

#[derive(Clone, Copy)]
enum Rev {
    /// 2025-06-18, also standing in for 2024-11-05 and 2025-03-26.
    R2025_06_18,
    R2025_11_25,
    R2026_07_28,
}

fn schema_doc(rev: Rev) -> Value {
    let file = match rev {
        Rev::R2025_06_18 => "schema-2025-06-18.json",
        Rev::R2025_11_25 => "schema-2025-11-25.json",
        Rev::R2026_07_28 => "schema-2026-07-28.json",
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/schemas")
        .join(file);
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn validator(rev: Rev, def: &str) -> jsonschema::Validator {
    let mut doc = schema_doc(rev);
    let pointer = match rev {
        Rev::R2025_06_18 => format!("#/definitions/{def}"),
        _ => format!("#/$defs/{def}"),
    };
    let defs = doc.get("definitions").or_else(|| doc.get("$defs")).unwrap();
    assert!(defs.get(def).is_some(), "no definition {def}");
    doc.as_object_mut()
        .unwrap()
        .insert("$ref".into(), Value::from(pointer));
    jsonschema::validator_for(&doc).expect("the schema compiles")
}

fn to_json<T: Serialize>(t: &T) -> Value {
    serde_json::to_value(t).unwrap()
}

#[track_caller]
fn valid(rev: Rev, def: &str, instance: &Value) {
    let v = validator(rev, def);
    let errors: Vec<String> = v.iter_errors(instance).map(|e| e.to_string()).collect();
    assert!(
        errors.is_empty(),
        "{def} rejects {instance}:\n{}",
        errors.join("\n")
    );
}

#[track_caller]
fn invalid(rev: Rev, def: &str, instance: &Value) {
    assert!(
        !validator(rev, def).is_valid(instance),
        "{def} accepts {instance}, which should be invalid"
    );
}

/// A legacy message carries no modern `_meta` key and no `resultType`.
#[track_caller]
fn assert_legacy_clean(value: &Value) {
    match value {
        Value::Object(m) => {
            for (k, v) in m {
                assert!(
                    k != "resultType" && !meta::MODERN_REQUEST_KEYS.contains(&k.as_str()),
                    "legacy message carries {k}: {value}"
                );
                assert_legacy_clean(v);
            }
        }
        Value::Array(a) => a.iter().for_each(assert_legacy_clean),
        _ => {}
    }
}

fn request<M: RequestMethod>(id: i64, params: &M::Params) -> Value {
    Message::Request(Request::new(id, M::METHOD, Some(to_json(params)))).to_value()
}

fn response(id: i64, result: &impl Serialize) -> Value {
    Message::Response(Response {
        id: id.into(),
        result: to_json(result),
    })
    .to_value()
}

fn modern_meta() -> Meta {
    RequestMetaBuilder::modern(
        &ProtocolVersion::V2026_07_28,
        &ClientCapabilities::new().with_elicitation(true, true),
        &Implementation::new("test-client", "0.1.0").with_title("Test"),
    )
    .progress_token("p-1")
    .traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
    .build()
}

fn text_tool() -> Tool {
    let schema =
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]});
    Tool::new("get_weather", schema.as_object().unwrap().clone()).with_description("Weather")
}

fn form_schema() -> ElicitationSchema {
    let name: PrimitiveSchemaDefinition =
        serde_json::from_value(json!({"type": "string", "title": "Name", "minLength": 1})).unwrap();
    let age: PrimitiveSchemaDefinition =
        serde_json::from_value(json!({"type": "integer", "minimum": 0})).unwrap();
    let mut s =
        ElicitationSchema::new(BTreeMap::from([("name".into(), name), ("age".into(), age)]));
    s.required = Some(vec!["name".into()]);
    s
}

/// A loopback HTTP server that counts the connections it accepts and
/// answers each with a valid schema, so a validator that fetched from it
/// would compile.
struct RecordingServer {
    url: String,
    connections: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl RecordingServer {
    fn start() -> Self {
        use std::io::{Read, Write};
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/schema.json", listener.local_addr().unwrap());
        let connections = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = connections.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                count.fetch_add(1, Ordering::SeqCst);
                let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(5)));
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let body = r#"{"type": "string"}"#;
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        RecordingServer { url, connections }
    }

    fn connections(&self) -> usize {
        self.connections.load(std::sync::atomic::Ordering::SeqCst)
    }
}

#[test]
fn no_remote_or_file_refs_are_fetched() {
    // Both targets are reachable and hold a valid schema, so a validator
    // that retrieved either would compile: an error here means it did not
    // load the document, and the listener shows it never even connected.
    let server = RecordingServer::start();
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join("schema-ref-target.json");
    std::fs::write(&file, r#"{"type": "string"}"#).unwrap();
    let file_url = format!("file://{}", file.display());
    for target in [server.url.as_str(), file_url.as_str()] {
        let schema =
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": target});
        assert!(
            jsonschema::validator_for(&schema).is_err(),
            "{target} was resolved: jsonschema can retrieve documents"
        );
    }
    assert_eq!(
        server.connections(),
        0,
        "the validator connected to {}",
        server.url
    );

    // The listener is live: a connection of our own is counted (its
    // thread takes microseconds to count it; 10 s is for a busy machine).
    drop(std::net::TcpStream::connect(server.url[7..].split('/').next().unwrap()).unwrap());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while server.connections() == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(server.connections(), 1, "the listener records connections");
}

#[test]
fn modern_messages_validate_against_2026_07_28() {
    let r = Rev::R2026_07_28;
    // server/discover and its result.
    let discover = request::<methods::Discover>(1, &RequestParams::new().with_meta(modern_meta()));
    valid(r, "DiscoverRequest", &discover);
    let mut d = DiscoverResult::new(
        vec![ProtocolVersion::V2026_07_28],
        ServerCapabilities::new()
            .with_tools(Some(true))
            .with_extension(TASKS_EXTENSION),
    );
    d.ttl_ms = Some(3_600_000);
    d.cache_scope = Some(CacheScope::Public);
    valid(r, "DiscoverResult", &to_json(&d));
    valid(r, "DiscoverResultResponse", &response(1, &d));

    // tools/list and tools/call, first and retried.
    let list = PaginatedRequestParams::new()
        .with_cursor("")
        .with_meta(modern_meta());
    valid(
        r,
        "ListToolsRequest",
        &request::<methods::ListTools>(2, &list),
    );
    let tools = ListToolsResult::new(vec![text_tool()])
        .with_next_cursor("p2")
        .with_cache(0, CacheScope::Private);
    valid(r, "ListToolsResult", &to_json(&tools));

    let mut call = CallToolRequestParams::new("get_weather")
        .with_arguments(json!({"city": "Paris"}).as_object().unwrap().clone());
    call.meta = Some(modern_meta());
    valid(
        r,
        "CallToolRequest",
        &request::<methods::CallTool>(3, &call),
    );
    let mut responses = InputResponses::new();
    responses.insert(
        "login".into(),
        ElicitResult::accept(
            json!({"name": "octocat", "age": 3})
                .as_object()
                .unwrap()
                .clone(),
        )
        .into(),
    );
    responses.insert(
        "capital".into(),
        CreateMessageResult::new(ContentBlock::text("Paris"), "m-1")
            .with_stop_reason(StopReason::EndTurn)
            .into(),
    );
    responses.insert(
        "roots".into(),
        ListRootsResult::new(vec![Root::new("file:///work").with_name("work")]).into(),
    );
    call.set_retry(Some(responses), Some("opaque-state".into()));
    valid(r, "CallToolRequestParams", &to_json(&call));

    let mut result = CallToolResult::new(vec![
        ContentBlock::text("18°C"),
        ContentBlock::ResourceLink(ResourceLink::new("file:///w.txt", "w.txt")),
    ]);
    result.structured_content = Some(json!({"temperature": 18}));
    result.result_type = Some(ResultType::Complete);
    valid(r, "CallToolResultResponse", &response(3, &result));

    // An input_required result.
    let mut requests = InputRequests::new();
    requests.insert(
        "login".into(),
        InputRequest::new(InputRequestParams::Elicitation(ElicitRequestParams::Form(
            ElicitRequestFormParams::new("Who are you?", form_schema()),
        ))),
    );
    requests.insert(
        "key".into(),
        InputRequest::new(InputRequestParams::Elicitation(ElicitRequestParams::Url(
            ElicitRequestUrlParams::new("Set your key", "https://example.com/key"),
        ))),
    );
    let mut sampling = CreateMessageRequestParams::new(
        vec![SamplingMessage::new(
            Role::User,
            ContentBlock::text("Capital of France?"),
        )],
        100,
    );
    sampling.tools = Some(vec![text_tool()]);
    sampling.tool_choice = Some(ToolChoice::default());
    requests.insert(
        "capital".into(),
        InputRequest::new(InputRequestParams::Sampling(sampling)),
    );
    requests.insert(
        "roots".into(),
        InputRequest::new(InputRequestParams::ListRoots(None)),
    );
    let ir = InputRequiredResult::new(Some(requests), Some("s".into()));
    valid(r, "InputRequiredResult", &to_json(&ir));
    valid(r, "CallToolResultResponse", &response(4, &ir));

    // Resources, prompts, completion, listen.
    let mut read = ReadResourceRequestParams::new("file:///a.txt");
    read.meta = Some(modern_meta());
    valid(
        r,
        "ReadResourceRequest",
        &request::<methods::ReadResource>(5, &read),
    );
    let contents = ReadResourceResult::new(vec![
        ResourceContents::Text(TextResourceContents::new("file:///a.txt", "hi")),
        ResourceContents::Blob(BlobResourceContents::new("file:///b.bin", "AAE=")),
    ])
    .with_cache(60_000, CacheScope::Private);
    valid(r, "ReadResourceResult", &to_json(&contents));

    let mut get = GetPromptRequestParams::new("review")
        .with_arguments(BTreeMap::from([("code".into(), "x".into())]));
    get.meta = Some(modern_meta());
    valid(
        r,
        "GetPromptRequest",
        &request::<methods::GetPrompt>(6, &get),
    );
    let mut complete = CompleteRequestParams::new(Reference::prompt("review"), "lang", "py")
        .with_context(BTreeMap::from([("a".into(), "b".into())]));
    complete.meta = Some(modern_meta());
    valid(
        r,
        "CompleteRequest",
        &request::<methods::Complete>(7, &complete),
    );
    let mut listen = SubscriptionsListenRequestParams::new(
        SubscriptionFilter::new()
            .with_all_list_changes()
            .with_resources(vec!["file:///a.txt".into()]),
    );
    listen.meta = Some(modern_meta());
    valid(
        r,
        "SubscriptionsListenRequest",
        &request::<methods::SubscriptionsListen>(8, &listen),
    );

    // Notifications and errors.
    let cancel = CancelledNotificationParams::new(3).with_reason("user");
    let n = Message::Notification(Notification::new(
        methods::NOTIFICATION_CANCELLED,
        Some(to_json(&cancel)),
    ));
    valid(r, "CancelledNotification", &n.to_value());
    let err = UnsupportedProtocolVersionData::new(vec![ProtocolVersion::V2026_07_28], "1900-01-01")
        .into_error("Unsupported protocol version");
    let e = Message::Error(ErrorResponse {
        id: Some(1.into()),
        error: err,
    });
    valid(r, "UnsupportedProtocolVersionError", &e.to_value());
}

#[test]
fn modern_negative_cases_fail_2026_07_28() {
    let r = Rev::R2026_07_28;
    // A modern request without `_meta`.
    let call = CallToolRequestParams::new("x");
    invalid(
        r,
        "CallToolRequest",
        &request::<methods::CallTool>(1, &call),
    );
    // `_meta` without the required protocol version.
    let mut call = CallToolRequestParams::new("x");
    call.meta = Some(RequestMetaBuilder::new().progress_token(1).build());
    invalid(r, "CallToolRequestParams", &to_json(&call));
    // A list result without its caching hints.
    let mut tools = ListToolsResult::new(vec![]);
    tools.result_type = Some(ResultType::Complete);
    invalid(r, "ListToolsResult", &to_json(&tools));
    // A discover result without `resultType`.
    let mut d = DiscoverResult::new(
        vec![ProtocolVersion::V2026_07_28],
        ServerCapabilities::new(),
    );
    d.ttl_ms = Some(1);
    d.cache_scope = Some(CacheScope::Public);
    d.result_type = None;
    invalid(r, "DiscoverResult", &to_json(&d));
    // Unknown enum values are kept by the crate, and the schema rejects them.
    invalid(
        r,
        "ElicitResult",
        &to_json(&ElicitResult::new(ElicitAction::from("maybe"))),
    );
    invalid(
        r,
        "CacheableResult",
        &json!({"resultType": "complete", "ttlMs": 1, "cacheScope": CacheScope::from("world")}),
    );
    // An unsupported-version error without its data.
    let e = Message::Error(ErrorResponse {
        id: Some(1.into()),
        error: mcp_protocol::ErrorObject::new(-32022, "no"),
    });
    invalid(r, "UnsupportedProtocolVersionError", &e.to_value());
}

#[test]
fn legacy_messages_validate_against_2025_11_25() {
    let r = Rev::R2025_11_25;
    let caps = ClientCapabilities::new()
        .with_roots(Some(true))
        .with_sampling(true)
        .with_elicitation(true, true);
    let init = InitializeRequestParams::new(
        ProtocolVersion::V2025_11_25,
        caps,
        Implementation::new("c", "1").with_website_url("https://example.com"),
    );
    let msg = request::<methods::Initialize>(1, &init);
    assert_legacy_clean(&msg);
    valid(r, "InitializeRequest", &msg);

    let mut result = InitializeResult::new(
        ProtocolVersion::V2025_11_25,
        ServerCapabilities::new()
            .with_tools(Some(true))
            .with_resources(Some(true), None)
            .with_logging(),
        Implementation::new("s", "2"),
    );
    result.instructions = Some("be nice".into());
    let msg = response(1, &result);
    assert_legacy_clean(&msg);
    valid(r, "InitializeResult", &to_json(&result));

    let mut tool = text_tool();
    tool.execution = Some(ToolExecution::new(TaskSupport::Optional));
    let tools = ListToolsResult::new(vec![tool]);
    assert_legacy_clean(&to_json(&tools));
    valid(r, "ListToolsResult", &to_json(&tools));

    let mut call = CallToolRequestParams::new("get_weather");
    call.task = Some(TaskMetadata::with_ttl(60_000));
    call.meta = Some(RequestMetaBuilder::new().progress_token(5).build());
    let msg = request::<methods::CallTool>(2, &call);
    assert_legacy_clean(&msg);
    valid(r, "CallToolRequest", &msg);

    let task: Task = serde_json::from_value(json!({
        "taskId": "t1", "status": "working", "createdAt": "2025-11-25T10:30:00Z",
        "lastUpdatedAt": "2025-11-25T10:30:00Z", "ttl": null, "pollInterval": 500
    }))
    .unwrap();
    let created: CreateTaskResult =
        serde_json::from_value(json!({"task": to_json(&task)})).unwrap();
    valid(r, "CreateTaskResult", &to_json(&created));
    valid(r, "GetTaskResult", &to_json(&task));
    valid(
        r,
        "GetTaskRequest",
        &request::<methods::GetTask>(3, &TaskIdParams::new("t1")),
    );
    let tasks = ListTasksResult::new(vec![task.clone()]).with_next_cursor("2");
    assert_legacy_clean(&to_json(&tasks));
    valid(r, "ListTasksResult", &to_json(&tasks));

    let mut url = ElicitRequestUrlParams::new("Sign in", "https://example.com/login");
    url.elicitation_id = Some("e-1".into());
    valid(r, "ElicitRequestURLParams", &to_json(&url));
    valid(
        r,
        "ElicitRequestFormParams",
        &to_json(&ElicitRequestFormParams::new("Who?", form_schema())),
    );

    let mut sampling = CreateMessageRequestParams::new(
        vec![
            SamplingMessage::new(Role::User, ContentBlock::text("Weather?")),
            SamplingMessage::new(
                Role::Assistant,
                SamplingContent::Multiple(vec![ContentBlock::ToolUse(ToolUseContent::new(
                    "c1",
                    "get_weather",
                    json!({"city": "Paris"}).as_object().unwrap().clone(),
                ))]),
            ),
        ],
        200,
    );
    sampling.tools = Some(vec![text_tool()]);
    sampling.tool_choice = Some(ToolChoice::new(ToolChoiceMode::Required));
    sampling.include_context = Some(IncludeContext::None);
    valid(r, "CreateMessageRequestParams", &to_json(&sampling));
    let answer = CreateMessageResult::new(ContentBlock::text("Sunny"), "m")
        .with_stop_reason(StopReason::ToolUse);
    assert_legacy_clean(&response(9, &answer));
    valid(r, "CreateMessageResult", &to_json(&answer));
}

#[test]
fn legacy_negative_cases_fail_2025_11_25() {
    let r = Rev::R2025_11_25;
    // A URL elicitation of 2025-11-25 needs its elicitationId.
    let url = ElicitRequestUrlParams::new("Sign in", "https://example.com/login");
    invalid(r, "ElicitRequestURLParams", &to_json(&url));
    // `initialize` without clientInfo.
    let init = InitializeRequestParams::new(
        ProtocolVersion::V2025_11_25,
        ClientCapabilities::new(),
        Implementation::new("c", "1"),
    );
    let mut v = to_json(&init);
    v.as_object_mut().unwrap().remove("clientInfo");
    invalid(r, "InitializeRequestParams", &v);
    // An unknown task status, kept by the crate.
    let mut task: Task = serde_json::from_value(json!({
        "taskId": "t1", "status": "working", "createdAt": "a", "lastUpdatedAt": "b", "ttl": 1
    }))
    .unwrap();
    task.status = TaskStatus::from("paused");
    invalid(r, "Task", &to_json(&task));
}

#[test]
fn legacy_messages_validate_against_2025_06_18() {
    // 2025-06-18 stands in for 2024-11-05 and 2025-03-26 here.
    let r = Rev::R2025_06_18;
    for version in [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
    ] {
        let init = InitializeRequestParams::new(
            version,
            ClientCapabilities::new()
                .with_roots(Some(true))
                .with_sampling(false),
            Implementation::new("c", "1"),
        );
        let msg = request::<methods::Initialize>(1, &init);
        assert_legacy_clean(&msg);
        valid(r, "InitializeRequest", &msg);
        valid(r, "JSONRPCRequest", &msg);
    }
    let initialized =
        Message::Notification(Notification::new(methods::NOTIFICATION_INITIALIZED, None))
            .to_value();
    valid(r, "InitializedNotification", &initialized);
    valid(
        r,
        "PingRequest",
        &request::<methods::Ping>(2, &RequestParams::new()),
    );

    let mut result = CallToolResult::new(vec![
        ContentBlock::text("hi"),
        ContentBlock::Image(MediaContent::new("AAE=", "image/png")),
        ContentBlock::Audio(MediaContent::new("AAE=", "audio/wav")),
        ContentBlock::Resource(EmbeddedResource::new(ResourceContents::Text(
            TextResourceContents::new("file:///a", "x"),
        ))),
    ]);
    result.is_error = Some(false);
    let msg = response(3, &result);
    assert_legacy_clean(&msg);
    valid(r, "CallToolResult", &to_json(&result));
    valid(r, "JSONRPCResponse", &msg);

    let list = PaginatedRequestParams::new().with_cursor("c1");
    let msg = request::<methods::ListResources>(4, &list);
    assert_legacy_clean(&msg);
    valid(r, "ListResourcesRequest", &msg);
    valid(
        r,
        "SubscribeRequest",
        &request::<methods::Subscribe>(5, &SubscribeRequestParams::new("file:///a")),
    );
    valid(
        r,
        "SetLevelRequest",
        &request::<methods::SetLevel>(6, &SetLevelRequestParams::new(LoggingLevel::Warning)),
    );
    let complete = CompleteRequestParams::new(Reference::resource("file:///{path}"), "path", "sr");
    valid(
        r,
        "CompleteRequest",
        &request::<methods::Complete>(7, &complete),
    );
    valid(
        r,
        "ListRootsResult",
        &to_json(&ListRootsResult::new(vec![Root::new("file:///x")])),
    );
    valid(
        r,
        "ElicitResult",
        &to_json(&ElicitResult::new(ElicitAction::Decline)),
    );
    let progress = ProgressNotificationParams::new("tok", 0.5);
    let n = Notification::new(methods::NOTIFICATION_PROGRESS, Some(to_json(&progress)));
    valid(
        r,
        "ProgressNotification",
        &Message::Notification(n).to_value(),
    );
    let log = LoggingMessageNotificationParams::new(LoggingLevel::Error, json!({"a": 1}));
    let n = Notification::new(methods::NOTIFICATION_MESSAGE, Some(to_json(&log)));
    valid(
        r,
        "LoggingMessageNotification",
        &Message::Notification(n).to_value(),
    );
}

#[test]
fn legacy_negative_cases_fail_2025_06_18() {
    let r = Rev::R2025_06_18;
    // Several content blocks in one sampling message came in 2025-11-25.
    let answer = CreateMessageResult::new(
        SamplingContent::Multiple(vec![ContentBlock::text("a")]),
        "m",
    );
    invalid(r, "CreateMessageResult", &to_json(&answer));
    // tool_use is not a tool result's content.
    let result = CallToolResult::new(vec![ContentBlock::ToolUse(ToolUseContent::new(
        "1",
        "x",
        Default::default(),
    ))]);
    invalid(r, "CallToolResult", &to_json(&result));
    // An unknown log level, kept by the crate.
    invalid(
        r,
        "SetLevelRequest",
        &request::<methods::SetLevel>(
            1,
            &SetLevelRequestParams::new(LoggingLevel::from("verbose")),
        ),
    );
    // `initialize` without a protocol version.
    let mut v = request::<methods::Initialize>(
        1,
        &InitializeRequestParams::new(
            ProtocolVersion::V2024_11_05,
            ClientCapabilities::new(),
            Implementation::new("c", "1"),
        ),
    );
    v["params"]
        .as_object_mut()
        .unwrap()
        .remove("protocolVersion");
    invalid(r, "InitializeRequest", &v);
}
