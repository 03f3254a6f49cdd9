//! What no revision defines still parses, and comes back on serialization;
//! legacy results read as complete ones.

use mcp_protocol::result::{
    ClassifiedResult, RegisteredResultTypes, classify_result, normalize_result,
};
use mcp_protocol::types::*;
use mcp_protocol::{Inbound, Message, UnknownFields};
use serde_json::{Value, json};

#[test]
fn unknown_content_and_fields_survive_a_round_trip() {
    let line = br#"{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","content":[{"type":"text","text":"hi","sparkle":true},{"type":"hologram","x":1,"frames":[{"t":0}]}],"isError":false,"futureField":{"nested":[1,2,{"deep":null}]}}}"#;
    let Inbound::Single(Message::Response(resp)) = Inbound::parse(line).unwrap() else {
        panic!()
    };
    let original = resp.result.clone();
    let ClassifiedResult::Complete(v) =
        classify_result(resp.result, &RegisteredResultTypes::new()).unwrap()
    else {
        panic!()
    };
    let result: CallToolResult = serde_json::from_value(v).unwrap();
    assert_eq!(result.content.len(), 2);
    assert_eq!(result.content[0].as_text(), Some("hi"));
    let ContentBlock::Unknown(block) = &result.content[1] else {
        panic!("{:?}", result.content[1])
    };
    assert_eq!(block["x"], 1);
    assert_eq!(result.content[1].type_name(), "hologram");
    assert_eq!(
        result.extra["futureField"]["nested"][2],
        json!({"deep": null})
    );
    assert_eq!(serde_json::to_value(&result).unwrap(), original);
    assert_eq!(
        result.unknown_fields(),
        vec![
            "$.futureField".to_owned(),
            "$.content[0].sparkle".to_owned(),
            "$.content[1] (unknown content type \"hologram\")".to_owned(),
        ]
    );
}

#[test]
fn unknown_enum_values_are_kept() {
    let cases: Vec<Value> = vec![
        json!({"role": "narrator", "content": {"type": "text", "text": "x"}}),
        json!({"level": "verbose", "data": "x"}),
        json!({"action": "postpone"}),
        json!({"taskId": "t", "status": "paused", "createdAt": "a", "lastUpdatedAt": "b", "ttl": null}),
        json!({"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m", "stopReason": "refusal"}),
        json!({"resultType": "complete", "resources": [], "ttlMs": 5, "cacheScope": "team"}),
    ];
    let back = [
        serde_json::to_value(serde_json::from_value::<SamplingMessage>(cases[0].clone()).unwrap()),
        serde_json::to_value(
            serde_json::from_value::<LoggingMessageNotificationParams>(cases[1].clone()).unwrap(),
        ),
        serde_json::to_value(serde_json::from_value::<ElicitResult>(cases[2].clone()).unwrap()),
        serde_json::to_value(serde_json::from_value::<Task>(cases[3].clone()).unwrap()),
        serde_json::to_value(
            serde_json::from_value::<CreateMessageResult>(cases[4].clone()).unwrap(),
        ),
        serde_json::to_value(
            serde_json::from_value::<ListResourcesResult>(cases[5].clone()).unwrap(),
        ),
    ];
    for (case, back) in cases.iter().zip(back) {
        assert_eq!(&back.unwrap(), case);
    }
    let level: LoggingLevel = serde_json::from_value(json!("verbose")).unwrap();
    assert_eq!(level, LoggingLevel::Unknown("verbose".into()));
    assert_eq!(level.severity(), None);
    assert_eq!(LoggingLevel::Emergency.severity(), Some(7));
    let scope: CacheScope = serde_json::from_value(json!("team")).unwrap();
    assert!(!scope.is_known());
}

#[test]
fn legacy_results_parse_and_classify_as_complete() {
    // A 2024-11-05 initialize result and tools/call result: no resultType.
    let init = json!({
        "protocolVersion": "2024-11-05",
        "capabilities": {"tools": {"listChanged": true}, "logging": {}},
        "serverInfo": {"name": "old", "version": "0.1"}
    });
    let r = classify_result(init.clone(), &RegisteredResultTypes::new()).unwrap();
    assert_eq!(r, ClassifiedResult::Complete(init.clone()));
    let parsed: InitializeResult = serde_json::from_value(init.clone()).unwrap();
    assert_eq!(parsed.protocol_version.as_str(), "2024-11-05");
    assert_eq!(serde_json::to_value(&parsed).unwrap(), init);

    let call = json!({"content": [{"type": "text", "text": "ok"}]});
    let normalized = normalize_result(call.clone());
    let ClassifiedResult::Complete(v) =
        classify_result(normalized, &RegisteredResultTypes::new()).unwrap()
    else {
        panic!()
    };
    let parsed: CallToolResult = serde_json::from_value(v).unwrap();
    assert_eq!(parsed.result_type, Some(ResultType::Complete));
    assert!(!parsed.is_error());
}

#[test]
fn elicitation_modes_and_input_responses() {
    let form = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {
        "c": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]},
        "n": {"type": "integer", "maximum": 3.5},
        "x": {"type": "fancy"}
    }}});
    let p: ElicitRequestParams = serde_json::from_value(form.clone()).unwrap();
    let ElicitRequestParams::Form(f) = &p else {
        panic!()
    };
    assert_eq!(f.mode, None);
    assert!(matches!(
        f.requested_schema.properties["c"],
        PrimitiveSchemaDefinition::Enum(_)
    ));
    assert!(matches!(
        f.requested_schema.properties["x"],
        PrimitiveSchemaDefinition::Unknown(_)
    ));
    assert_eq!(serde_json::to_value(&p).unwrap(), form);
    let url = json!({"mode": "url", "message": "m", "url": "https://x.example"});
    let p: ElicitRequestParams = serde_json::from_value(url.clone()).unwrap();
    assert!(matches!(p, ElicitRequestParams::Url(_)));
    assert_eq!(serde_json::to_value(&p).unwrap(), url);
    let odd = json!({"mode": "telepathy", "message": "m"});
    let p: ElicitRequestParams = serde_json::from_value(odd.clone()).unwrap();
    assert!(matches!(p, ElicitRequestParams::Unknown(_)));
    assert_eq!(serde_json::to_value(&p).unwrap(), odd);

    let mut responses = InputResponses::new();
    responses.insert("a".into(), ElicitResult::new(ElicitAction::Cancel).into());
    let v = serde_json::to_value(&responses).unwrap();
    assert_eq!(v, json!({"a": {"action": "cancel"}}));
    let r: InputResponses = serde_json::from_value(json!({"z": {"weird": 1}})).unwrap();
    assert!(matches!(r["z"], InputResponse::Unknown(_)));
}
