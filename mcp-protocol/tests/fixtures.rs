//! Every official 2026-07-28 example parses into its Rust type, serializes
//! back to the same JSON, and holds nothing the types do not know.
//!
//! The table maps each fixture directory (the schema type's name) to a
//! checker; a directory without a mapping fails the test, so a new fixture
//! cannot be skipped silently.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use mcp_protocol::error_codes::UnsupportedProtocolVersionData;
use mcp_protocol::error_codes::{self, MissingRequiredClientCapabilityData};
use mcp_protocol::methods::{self, NotificationMethod, RequestMethod};
use mcp_protocol::types::*;
use mcp_protocol::{ErrorObject, Message, UnknownFields};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A checker returns the unknown members it found, or why it failed.
type Checker = fn(&Value) -> Result<Vec<String>, String>;

fn roundtrip<T>(v: &Value) -> Result<Vec<String>, String>
where
    T: Serialize + DeserializeOwned + UnknownFields,
{
    let t: T = serde_json::from_value(v.clone()).map_err(|e| format!("parse: {e}"))?;
    let back = serde_json::to_value(&t).map_err(|e| format!("serialize: {e}"))?;
    if &back != v {
        return Err(format!("round trip differs:\n  got  {back}\n  want {v}"));
    }
    Ok(t.unknown_fields())
}

fn message(v: &Value) -> Result<Message, String> {
    let m = Message::from_value(v.clone()).map_err(|e| format!("envelope: {e}"))?;
    if &m.to_value() != v {
        return Err(format!("envelope round trip differs: {}", m.to_value()));
    }
    Ok(m)
}

fn request<M: RequestMethod>(v: &Value) -> Result<Vec<String>, String>
where
    M::Params: UnknownFields,
{
    let Message::Request(r) = message(v)? else {
        return Err("not a request".into());
    };
    if r.method != M::METHOD {
        return Err(format!("method {} is not {}", r.method, M::METHOD));
    }
    roundtrip::<M::Params>(r.params.as_ref().ok_or("no params")?)
}

fn response<M: RequestMethod>(v: &Value) -> Result<Vec<String>, String>
where
    M::Result: UnknownFields,
{
    let Message::Response(r) = message(v)? else {
        return Err("not a response".into());
    };
    roundtrip::<M::Result>(&r.result)
}

fn notification<N: NotificationMethod>(v: &Value) -> Result<Vec<String>, String>
where
    N::Params: UnknownFields,
{
    let Message::Notification(n) = message(v)? else {
        return Err("not a notification".into());
    };
    if n.method != N::METHOD {
        return Err(format!("method {} is not {}", n.method, N::METHOD));
    }
    match &n.params {
        Some(p) => roundtrip::<N::Params>(p),
        None => Ok(Vec::new()),
    }
}

fn error_response(v: &Value, code: i64) -> Result<ErrorObject, String> {
    let Message::Error(e) = message(v)? else {
        return Err("not an error response".into());
    };
    if e.error.code != code {
        return Err(format!("code {} is not {code}", e.error.code));
    }
    Ok(e.error)
}

fn error_object(v: &Value, code: i64) -> Result<Vec<String>, String> {
    let e: ErrorObject = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    if e.code != code {
        return Err(format!("code {} is not {code}", e.code));
    }
    if serde_json::to_value(&e).unwrap() != *v {
        return Err("round trip differs".into());
    }
    Ok(Vec::new())
}

fn content(v: &Value, expected: &str) -> Result<Vec<String>, String> {
    let unknown = roundtrip::<ContentBlock>(v)?;
    let block: ContentBlock = serde_json::from_value(v.clone()).unwrap();
    if block.type_name() != expected || matches!(block, ContentBlock::Unknown(_)) {
        return Err(format!("parsed as {block:?}, not {expected}"));
    }
    Ok(unknown)
}

fn field(
    v: &Value,
    expected: fn(&PrimitiveSchemaDefinition) -> bool,
) -> Result<Vec<String>, String> {
    let unknown = roundtrip::<PrimitiveSchemaDefinition>(v)?;
    let def: PrimitiveSchemaDefinition = serde_json::from_value(v.clone()).unwrap();
    if !expected(&def) {
        return Err(format!("parsed as the wrong variant: {def:?}"));
    }
    Ok(unknown)
}

fn input_request(v: &Value, method: &str) -> Result<Vec<String>, String> {
    let unknown = roundtrip::<InputRequest>(v)?;
    let r: InputRequest = serde_json::from_value(v.clone()).unwrap();
    if r.method() != method || matches!(r.params, InputRequestParams::Unknown { .. }) {
        return Err(format!("parsed as {r:?}"));
    }
    Ok(unknown)
}

fn table() -> BTreeMap<&'static str, Checker> {
    use PrimitiveSchemaDefinition as P;
    let entries: Vec<(&'static str, Checker)> = vec![
        // Content blocks: one enum, tagged by `type`.
        ("AudioContent", |v| content(v, "audio")),
        ("ImageContent", |v| content(v, "image")),
        ("TextContent", |v| content(v, "text")),
        ("ResourceLink", |v| content(v, "resource_link")),
        ("EmbeddedResource", |v| content(v, "resource")),
        ("ToolUseContent", |v| content(v, "tool_use")),
        ("ToolResultContent", |v| content(v, "tool_result")),
        ("TextResourceContents", roundtrip::<TextResourceContents>),
        ("BlobResourceContents", roundtrip::<BlobResourceContents>),
        // Form fields: one enum, told apart by `type` and shape.
        ("BooleanSchema", |v| {
            field(v, |d| matches!(d, P::Boolean(_)))
        }),
        ("NumberSchema", |v| field(v, |d| matches!(d, P::Number(_)))),
        ("StringSchema", |v| field(v, |d| matches!(d, P::String(_)))),
        ("UntitledSingleSelectEnumSchema", |v| {
            field(v, |d| matches!(d, P::Enum(_)))
        }),
        ("TitledSingleSelectEnumSchema", |v| {
            field(v, |d| matches!(d, P::TitledEnum(_)))
        }),
        ("UntitledMultiSelectEnumSchema", |v| {
            field(v, |d| matches!(d, P::MultiSelect(_)))
        }),
        ("TitledMultiSelectEnumSchema", |v| {
            field(v, |d| matches!(d, P::MultiSelect(_)))
        }),
        // Plain types.
        ("CallToolRequestParams", roundtrip::<CallToolRequestParams>),
        ("CallToolResult", roundtrip::<CallToolResult>),
        (
            "CancelledNotificationParams",
            roundtrip::<CancelledNotificationParams>,
        ),
        ("ClientCapabilities", roundtrip::<ClientCapabilities>),
        ("ServerCapabilities", roundtrip::<ServerCapabilities>),
        ("CompleteRequestParams", roundtrip::<CompleteRequestParams>),
        ("CompleteResult", roundtrip::<CompleteResult>),
        (
            "CreateMessageRequestParams",
            roundtrip::<CreateMessageRequestParams>,
        ),
        ("CreateMessageResult", roundtrip::<CreateMessageResult>),
        ("DiscoverResult", roundtrip::<DiscoverResult>),
        (
            "ElicitRequestFormParams",
            roundtrip::<ElicitRequestFormParams>,
        ),
        (
            "ElicitRequestURLParams",
            roundtrip::<ElicitRequestUrlParams>,
        ),
        ("ElicitResult", roundtrip::<ElicitResult>),
        (
            "GetPromptRequestParams",
            roundtrip::<GetPromptRequestParams>,
        ),
        ("GetPromptResult", roundtrip::<GetPromptResult>),
        ("InputRequests", roundtrip::<InputRequests>),
        ("InputRequiredResult", roundtrip::<InputRequiredResult>),
        ("InputResponses", roundtrip::<InputResponses>),
        ("ListPromptsResult", roundtrip::<ListPromptsResult>),
        (
            "ListResourceTemplatesResult",
            roundtrip::<ListResourceTemplatesResult>,
        ),
        ("ListResourcesResult", roundtrip::<ListResourcesResult>),
        ("ListRootsResult", roundtrip::<ListRootsResult>),
        ("ListToolsResult", roundtrip::<ListToolsResult>),
        (
            "LoggingMessageNotificationParams",
            roundtrip::<LoggingMessageNotificationParams>,
        ),
        ("ModelPreferences", roundtrip::<ModelPreferences>),
        (
            "PaginatedRequestParams",
            roundtrip::<PaginatedRequestParams>,
        ),
        (
            "ProgressNotificationParams",
            roundtrip::<ProgressNotificationParams>,
        ),
        ("ReadResourceResult", roundtrip::<ReadResourceResult>),
        ("Resource", roundtrip::<Resource>),
        (
            "ResourceUpdatedNotificationParams",
            roundtrip::<ResourceUpdatedNotificationParams>,
        ),
        ("Root", roundtrip::<Root>),
        ("SamplingMessage", roundtrip::<SamplingMessage>),
        (
            "SubscriptionsListenResult",
            roundtrip::<SubscriptionsListenResult>,
        ),
        ("Tool", roundtrip::<Tool>),
        // Requests, via the JSON-RPC envelope.
        ("CallToolRequest", request::<methods::CallTool>),
        ("CompleteRequest", request::<methods::Complete>),
        ("DiscoverRequest", request::<methods::Discover>),
        ("GetPromptRequest", request::<methods::GetPrompt>),
        ("ListPromptsRequest", request::<methods::ListPrompts>),
        (
            "ListResourceTemplatesRequest",
            request::<methods::ListResourceTemplates>,
        ),
        ("ListResourcesRequest", request::<methods::ListResources>),
        ("ListToolsRequest", request::<methods::ListTools>),
        ("ReadResourceRequest", request::<methods::ReadResource>),
        (
            "SubscriptionsListenRequest",
            request::<methods::SubscriptionsListen>,
        ),
        // 2026-07-28's server-to-client "requests" are MRTR input requests:
        // `{method, params}` with no id or `jsonrpc`.
        ("CreateMessageRequest", |v| {
            input_request(v, methods::SAMPLING_CREATE_MESSAGE)
        }),
        ("ElicitRequest", |v| {
            input_request(v, methods::ELICITATION_CREATE)
        }),
        ("ListRootsRequest", |v| {
            input_request(v, methods::ROOTS_LIST)
        }),
        // Responses.
        ("CallToolResultResponse", response::<methods::CallTool>),
        ("CompleteResultResponse", response::<methods::Complete>),
        ("DiscoverResultResponse", response::<methods::Discover>),
        ("GetPromptResultResponse", response::<methods::GetPrompt>),
        (
            "ListPromptsResultResponse",
            response::<methods::ListPrompts>,
        ),
        (
            "ListResourceTemplatesResultResponse",
            response::<methods::ListResourceTemplates>,
        ),
        (
            "ListResourcesResultResponse",
            response::<methods::ListResources>,
        ),
        ("ListToolsResultResponse", response::<methods::ListTools>),
        (
            "ReadResourceResultResponse",
            response::<methods::ReadResource>,
        ),
        (
            "SubscriptionsListenResultResponse",
            response::<methods::SubscriptionsListen>,
        ),
        // Notifications.
        ("CancelledNotification", notification::<methods::Cancelled>),
        (
            "LoggingMessageNotification",
            notification::<methods::LoggingMessage>,
        ),
        ("ProgressNotification", notification::<methods::Progress>),
        (
            "PromptListChangedNotification",
            notification::<methods::PromptListChanged>,
        ),
        (
            "ResourceListChangedNotification",
            notification::<methods::ResourceListChanged>,
        ),
        (
            "ResourceUpdatedNotification",
            notification::<methods::ResourceUpdated>,
        ),
        (
            "SubscriptionsAcknowledgedNotification",
            notification::<methods::SubscriptionsAcknowledged>,
        ),
        (
            "ToolListChangedNotification",
            notification::<methods::ToolListChanged>,
        ),
        // Errors: whole error responses, with their typed data.
        ("HeaderMismatchError", |v| {
            error_response(v, error_codes::HEADER_MISMATCH).map(|_| Vec::new())
        }),
        ("MissingRequiredClientCapabilityError", |v| {
            let e = error_response(v, error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY)?;
            let d = MissingRequiredClientCapabilityData::from_error(&e).ok_or("no typed data")?;
            Ok(d.unknown_fields())
        }),
        ("UnsupportedProtocolVersionError", |v| {
            let e = error_response(v, error_codes::UNSUPPORTED_PROTOCOL_VERSION)?;
            let d = UnsupportedProtocolVersionData::from_error(&e).ok_or("no typed data")?;
            Ok(d.unknown_fields())
        }),
        // Errors: bare error objects.
        ("InternalError", |v| {
            error_object(v, error_codes::INTERNAL_ERROR)
        }),
        ("InvalidParamsError", |v| {
            error_object(v, error_codes::INVALID_PARAMS)
        }),
        ("MethodNotFoundError", |v| {
            error_object(v, error_codes::METHOD_NOT_FOUND)
        }),
        ("ParseError", |v| error_object(v, error_codes::PARSE_ERROR)),
    ];
    let len = entries.len();
    let map: BTreeMap<_, _> = entries.into_iter().collect();
    assert_eq!(map.len(), len, "a fixture type is mapped twice");
    map
}

/// Unknown members the official examples carry, each with the reason it is
/// accepted.
const ALLOWED_UNKNOWN: &[(&str, &str)] = &[
    // The example is written in the legacy request shape; 2026-07-28's
    // ListRootsRequest (an MRTR input request) has no `id`. It is kept in
    // `extra` and written back.
    ("ListRootsRequest/list-roots-request.json", "$.id"),
];

#[test]
fn every_official_example_round_trips_into_its_type() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/examples-2026-07-28");
    let table = table();
    let mut failures = Vec::new();
    let mut seen = Vec::new();
    let mut files = 0;
    let mut allowed_seen = Vec::new();
    let mut dirs: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    for type_dir in dirs {
        let name = type_dir.file_name().unwrap().to_str().unwrap().to_owned();
        let Some(check) = table.get(name.as_str()) else {
            failures.push(format!(
                "{name}: no Rust type is mapped to this fixture directory"
            ));
            continue;
        };
        seen.push(name.clone());
        let mut cases: Vec<_> = fs::read_dir(&type_dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        cases.sort();
        for case in cases {
            files += 1;
            let rel = format!("{name}/{}", case.file_name().unwrap().to_str().unwrap());
            let value: Value = serde_json::from_slice(&fs::read(&case).unwrap()).unwrap();
            match check(&value) {
                Err(e) => failures.push(format!("{rel}: {e}")),
                Ok(unknown) => {
                    for u in unknown {
                        let entry = (rel.as_str(), u.as_str());
                        if ALLOWED_UNKNOWN.contains(&entry) {
                            allowed_seen.push(format!("{rel} {u}"));
                        } else {
                            failures.push(format!("{rel}: not understood: {u}"));
                        }
                    }
                }
            }
        }
    }
    for name in table.keys() {
        if !seen.iter().any(|s| s == name) {
            failures.push(format!(
                "{name}: mapped, but there is no such fixture directory"
            ));
        }
    }
    for (rel, u) in ALLOWED_UNKNOWN {
        if !allowed_seen.contains(&format!("{rel} {u}")) {
            failures.push(format!(
                "{rel}: {u} is allowed but no longer found; drop it"
            ));
        }
    }
    assert!(files >= 129, "only {files} fixture files found");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
