//! The facts table against the official schemas: every method of every
//! revision's schema has a row, of the right kind, whose revisions hold
//! that revision; and every row a revision holds is in its schema, but for
//! the tasks extension's methods (not part of the 2026-07-28 schema) and the
//! Skills extension's (in no schema).

use std::collections::BTreeMap;
use std::path::Path;

use mcp_protocol::methods::{self, MethodKind, facts};
use mcp_protocol::{Era, ProtocolVersion};
use serde_json::Value;

/// The methods of one schema, each with whether it is a notification.
fn schema_methods(file: &str) -> BTreeMap<String, bool> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/schemas")
        .join(file);
    let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let defs = doc.get("definitions").or_else(|| doc.get("$defs")).unwrap();
    let mut found = BTreeMap::new();
    for (name, def) in defs.as_object().unwrap() {
        let Some(method) = def
            .pointer("/properties/method/const")
            .and_then(Value::as_str)
        else {
            continue;
        };
        found.insert(method.to_owned(), name.ends_with("Notification"));
    }
    found
}

const SCHEMAS: [(&str, ProtocolVersion); 3] = [
    ("schema-2025-06-18.json", ProtocolVersion::V2025_06_18),
    ("schema-2025-11-25.json", ProtocolVersion::V2025_11_25),
    ("schema-2026-07-28.json", ProtocolVersion::V2026_07_28),
];

/// Methods of the tasks extension (2026-07-28+), which the core schema
/// does not hold.
const TASKS_EXTENSION: [&str; 4] = [
    methods::TASKS_GET,
    methods::TASKS_CANCEL,
    methods::TASKS_UPDATE,
    methods::NOTIFICATION_TASKS_STATUS,
];

/// Methods of the Skills extension (SEP-2640), off the spec's timeline:
/// in no revision's schema, and sent in any revision.
const SKILLS_EXTENSION: [&str; 3] = [
    methods::SKILLS_LIST,
    methods::SKILLS_GET,
    methods::RESOURCES_DIRECTORY_READ,
];

#[test]
fn every_schema_method_has_a_row_holding_its_revision() {
    for (file, version) in SCHEMAS {
        let found = schema_methods(file);
        assert!(found.len() > 15, "{file}: only {} methods", found.len());
        for (method, notification) in found {
            let row = facts(&method).unwrap_or_else(|| panic!("{method} ({file}) has no row"));
            assert!(
                row.revisions.includes(&version),
                "{method}: {:?} leaves out {version}",
                row.revisions
            );
            let kind = if notification {
                MethodKind::Notification
            } else {
                MethodKind::Request
            };
            assert_eq!(row.kind, kind, "{method}");
        }
    }
}

#[test]
fn every_row_a_revision_holds_is_in_its_schema() {
    for (file, version) in SCHEMAS {
        let found = schema_methods(file);
        for row in methods::all_facts() {
            let extension = (version.era() == Era::Modern && TASKS_EXTENSION.contains(&row.name))
                || SKILLS_EXTENSION.contains(&row.name);
            if row.revisions.includes(&version) && !extension {
                assert!(
                    found.contains_key(row.name),
                    "{} is not in {file}",
                    row.name
                );
            }
        }
    }
}

#[test]
fn the_request_types_carry_their_rows_facts() {
    fn check<M: RequestMethod>() {
        let row = facts(M::METHOD).unwrap();
        assert_eq!(row.kind, MethodKind::Request, "{}", M::METHOD);
        assert_eq!(M::MAY_REQUIRE_INPUT, row.may_require_input, "{}", M::METHOD);
        assert_eq!(
            M::RESEND_IS_HARMLESS,
            row.resend_is_harmless,
            "{}",
            M::METHOD
        );
    }
    use methods::*;
    check::<Initialize>();
    check::<Ping>();
    check::<Discover>();
    check::<ListTools>();
    check::<CallTool>();
    check::<ListResources>();
    check::<ListResourceTemplates>();
    check::<ReadResource>();
    check::<Subscribe>();
    check::<Unsubscribe>();
    check::<ListPrompts>();
    check::<GetPrompt>();
    check::<Complete>();
    check::<SetLevel>();
    check::<SubscriptionsListen>();
    check::<ListRoots>();
    check::<CreateMessage>();
    check::<Elicit>();
    check::<GetTask>();
    check::<GetTaskPayload>();
    check::<ListTasks>();
    check::<CancelTask>();
    check::<GetExtensionTask>();
    check::<UpdateTask>();
    check::<CancelExtensionTask>();
    check::<ListSkills>();
    check::<GetSkill>();
    check::<ReadDirectory>();
    // The three that may ask for input, and what they name.
    let input: Vec<_> = methods::all_facts()
        .iter()
        .filter(|f| f.may_require_input)
        .map(|f| (f.name, f.target.map(|t| t.param)))
        .collect();
    assert_eq!(
        input,
        [
            (methods::TOOLS_CALL, Some("name")),
            (methods::RESOURCES_READ, Some("uri")),
            (methods::PROMPTS_GET, Some("name")),
        ]
    );
}

#[test]
fn the_revisions_of_the_methods_a_revision_gate_keys_on() {
    let legacy = ProtocolVersion::V2025_06_18;
    let modern = ProtocolVersion::V2026_07_28;
    let tasks = ProtocolVersion::V2025_11_25;
    let holds = |m: &str, v: &ProtocolVersion| facts(m).unwrap().revisions.includes(v);
    for m in [
        methods::INITIALIZE,
        methods::PING,
        methods::LOGGING_SET_LEVEL,
        methods::RESOURCES_SUBSCRIBE,
        methods::RESOURCES_UNSUBSCRIBE,
    ] {
        assert!(holds(m, &legacy) && !holds(m, &modern), "{m}");
    }
    for m in [
        methods::SERVER_DISCOVER,
        methods::SUBSCRIPTIONS_LISTEN,
        methods::TASKS_UPDATE,
    ] {
        assert!(!holds(m, &legacy) && holds(m, &modern), "{m}");
    }
    for m in [methods::TASKS_RESULT, methods::TASKS_LIST] {
        assert!(
            holds(m, &tasks) && !holds(m, &legacy) && !holds(m, &modern),
            "{m}"
        );
    }
    for m in [methods::TASKS_GET, methods::TASKS_CANCEL] {
        assert!(
            holds(m, &tasks) && !holds(m, &legacy) && holds(m, &modern),
            "{m}"
        );
    }
    assert!(!holds(
        methods::ELICITATION_CREATE,
        &ProtocolVersion::V2025_03_26
    ));
}
