//! The methods both eras share: the lists (paged), `resources/read`,
//! `prompts/get` and `completion/complete`. Each returns the bare result;
//! the era's module adds its decoration.

use mcp_protocol::ErrorObject;
use mcp_protocol::methods;
use serde_json::{Value, json};

use mcp_protocol::error_codes::{INVALID_PARAMS, RESOURCE_NOT_FOUND};

use super::entries::FakePrompt;
use super::errors::invalid_params;
use super::session::Session;

const CURSOR_PREFIX: &str = "fake-page-";

/// The list methods, and the member their items go in.
pub(crate) fn list_key(method: &str) -> Option<&'static str> {
    match method {
        methods::TOOLS_LIST => Some("tools"),
        methods::RESOURCES_LIST => Some("resources"),
        methods::RESOURCES_TEMPLATES_LIST => Some("resourceTemplates"),
        methods::PROMPTS_LIST => Some("prompts"),
        _ => None,
    }
}

/// One page of a list method's items.
pub(crate) fn list(session: &Session, method: &str, params: &Value) -> Result<Value, ErrorObject> {
    let key = list_key(method).unwrap_or("items");
    let items: Vec<Value> = {
        let state = session.state();
        let content = &session.config().content;
        match key {
            "tools" => state.tools.iter().map(|t| t.definition.clone()).collect(),
            "resources" => state
                .resources
                .iter()
                .map(|r| r.definition.clone())
                .collect(),
            "resourceTemplates" => content
                .templates
                .iter()
                .map(|t| t.definition.clone())
                .collect(),
            _ => content.prompts.iter().map(|p| p.definition()).collect(),
        }
    };
    let start = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(c)) => c
            .strip_prefix(CURSOR_PREFIX)
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| *n <= items.len())
            .ok_or_else(|| invalid_params(format!("invalid cursor {c:?}")))?,
        Some(_) => return Err(invalid_params("the cursor must be a string")),
    };
    let size = session.config().page_size.unwrap_or(usize::MAX);
    let end = start.saturating_add(size).min(items.len());
    let mut result = json!({ key: items[start..end] });
    if end < items.len() {
        result["nextCursor"] = json!(format!("{CURSOR_PREFIX}{end}"));
    }
    Ok(result)
}

/// `resources/read`: a resource, or a URI matching a template. A missing
/// resource is `-32602` in modern, `-32002` in legacy.
pub(crate) fn read(session: &Session, params: &Value, modern: bool) -> Result<Value, ErrorObject> {
    let Some(uri) = params.get("uri").and_then(Value::as_str) else {
        return Err(invalid_params("resources/read needs a uri"));
    };
    if let Some(r) = session.state().resources.iter().find(|r| r.uri() == uri) {
        return Ok(json!({ "contents": [r.contents()] }));
    }
    if let Some(file) = super::skills::read(session, uri) {
        return Ok(file);
    }
    for template in &session.config().content.templates {
        if let Some(value) = template.matches(uri) {
            return Ok(json!({ "contents": [template.contents(uri, value)] }));
        }
    }
    let code = if modern {
        INVALID_PARAMS
    } else {
        RESOURCE_NOT_FOUND
    };
    Err(ErrorObject::new(code, format!("Resource not found: {uri}"))
        .with_data(json!({ "uri": uri })))
}

/// The prompt `params` names.
pub(crate) fn prompt(session: &Session, params: &Value) -> Result<FakePrompt, ErrorObject> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    session
        .config()
        .content
        .prompts
        .iter()
        .find(|p| p.name == name)
        .cloned()
        .ok_or_else(|| invalid_params(format!("Unknown prompt: {name}")))
}

/// The `prompts/get` result of `prompt`, its placeholders filled in from
/// `params.arguments`.
pub(crate) fn get_prompt_of(prompt: &FakePrompt, params: &Value) -> Result<Value, ErrorObject> {
    let args = params.get("arguments");
    let mut values = Vec::new();
    for arg in &prompt.arguments {
        match args.and_then(|a| a.get(&arg.name)).and_then(Value::as_str) {
            Some(v) => values.push((format!("{{{}}}", arg.name), v.to_owned())),
            None if arg.required => {
                return Err(invalid_params(format!(
                    "missing required argument {:?}",
                    arg.name
                )));
            }
            None => {}
        }
    }
    let fill = |text: &str| {
        values
            .iter()
            .fold(text.to_owned(), |t, (k, v)| t.replace(k.as_str(), v))
    };
    let messages = if prompt.messages.is_empty() {
        let text = fill(&prompt.text);
        json!([{ "role": "user", "content": { "type": "text", "text": text } }])
    } else {
        prompt
            .messages
            .iter()
            .map(|m| fill_strings(m, &fill))
            .collect()
    };
    Ok(json!({ "description": prompt.description, "messages": messages }))
}

/// `value` with `fill` applied to every string in it.
fn fill_strings(value: &Value, fill: &impl Fn(&str) -> String) -> Value {
    match value {
        Value::String(s) => Value::String(fill(s)),
        Value::Array(items) => items.iter().map(|v| fill_strings(v, fill)).collect(),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), fill_strings(v, fill)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `completion/complete` for a prompt argument or a template variable:
/// the known values starting with what was typed.
pub(crate) fn complete(session: &Session, params: &Value) -> Result<Value, ErrorObject> {
    let reference = &params["ref"];
    let typed = params["argument"]["value"].as_str().unwrap_or_default();
    let argument = params["argument"]["name"].as_str().unwrap_or_default();
    let content = &session.config().content;
    let values: &[String] = match reference["type"].as_str() {
        Some("ref/prompt") => {
            let name = reference["name"].as_str().unwrap_or_default();
            let prompt = content.prompts.iter().find(|p| p.name == name);
            let prompt = prompt.ok_or_else(|| invalid_params(format!("Unknown prompt: {name}")))?;
            match prompt.arguments.iter().find(|a| a.name == argument) {
                Some(a) => &a.completions,
                None => &[],
            }
        }
        Some("ref/resource") => {
            let uri = reference["uri"].as_str().unwrap_or_default();
            let template = content.templates.iter().find(|t| t.uri_template() == uri);
            let template = template
                .ok_or_else(|| invalid_params(format!("Unknown resource template: {uri}")))?;
            &template.completions
        }
        _ => return Err(invalid_params("ref must be a ref/prompt or a ref/resource")),
    };
    let matching: Vec<&String> = values.iter().filter(|v| v.starts_with(typed)).collect();
    Ok(json!({
        "completion": { "values": matching, "total": matching.len(), "hasMore": false },
    }))
}
