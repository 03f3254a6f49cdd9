//! Elicitation: asking the person at the terminal, one prompt per form
//! field (with defaults and choices), or answering from `--elicit-json`.

use std::io::{self, BufRead, Write};
use std::sync::Arc;

use mcp_client::handlers::{ElicitationHandler, HandlerError, elicitation_fn};
use mcp_client::protocol::types::{
    ElicitAction, ElicitRequestParams, ElicitResult, ElicitationSchema, JsonObject,
};
use serde_json::{Map, Value};

use crate::exit::{Failure, Outcome};
use crate::progress::Progress;

/// An answer given on the command line with `--elicit-json`: a form's
/// content (an object without `action`), or a whole result.
pub(crate) fn fixed_answer(json: &str) -> Outcome<ElicitResult> {
    let value: Value = serde_json::from_str(json)
        .map_err(|e| Failure::usage(format!("--elicit-json is not JSON: {e}")))?;
    match value {
        Value::Object(map) if map.contains_key("action") => {
            serde_json::from_value(Value::Object(map))
                .map_err(|e| Failure::usage(format!("--elicit-json is no elicitation result: {e}")))
        }
        Value::Object(map) => Ok(ElicitResult::accept(map)),
        other => Err(Failure::usage(format!(
            "--elicit-json must be a JSON object, not {other}"
        ))),
    }
}

/// Answers every elicitation with `answer`, saying so on stderr.
pub(crate) fn fixed_handler(answer: ElicitResult) -> Arc<dyn ElicitationHandler> {
    elicitation_fn(move |params: ElicitRequestParams| {
        let answer = answer.clone();
        async move {
            say!(
                "mcp: the server asks: {} (answered from --elicit-json: {})",
                params.message().unwrap_or("(no message)"),
                answer.action.as_str()
            );
            Ok(answer)
        }
    })
}

/// Asks the person at the terminal (prompts on stderr, answers on stdin),
/// with the progress bar hidden meanwhile.
pub(crate) fn terminal_handler(progress: Progress) -> Arc<dyn ElicitationHandler> {
    elicitation_fn(move |params: ElicitRequestParams| {
        let progress = progress.clone();
        async move {
            let ask = move || {
                progress.hidden(|| {
                    let stdin = io::stdin();
                    ask(&params, &mut stdin.lock(), &mut io::stderr())
                })
            };
            tokio::task::spawn_blocking(ask)
                .await
                .map_err(|e| HandlerError::new(format!("the prompt failed: {e}")))?
                .map_err(|e| HandlerError::new(format!("reading the answer failed: {e}")))
        }
    })
}

/// One elicitation, asked through `input` and `output`. The end of input
/// cancels.
pub(crate) fn ask(
    params: &ElicitRequestParams,
    input: &mut impl BufRead,
    output: &mut impl Write,
) -> io::Result<ElicitResult> {
    let message = params.message().unwrap_or("(no message)");
    writeln!(output, "\nThe server asks: {message}")?;
    let form = match params {
        ElicitRequestParams::Form(form) => form,
        ElicitRequestParams::Url(url) => {
            writeln!(
                output,
                "It wants you to open {} (URL mode is not supported here); declined.",
                url.url
            )?;
            return Ok(ElicitResult::new(ElicitAction::Decline));
        }
        _ => {
            writeln!(
                output,
                "(an elicitation mode this CLI does not know; declined)"
            )?;
            return Ok(ElicitResult::new(ElicitAction::Decline));
        }
    };
    let Some(choice) = read_line(input, output, "Answer? [Y]es / [n]o (decline) / [c]ancel: ")?
    else {
        return Ok(ElicitResult::new(ElicitAction::Cancel));
    };
    match choice.to_ascii_lowercase().as_str() {
        "n" | "no" | "decline" => return Ok(ElicitResult::new(ElicitAction::Decline)),
        "c" | "cancel" => return Ok(ElicitResult::new(ElicitAction::Cancel)),
        _ => {}
    }
    match fill_form(&form.requested_schema, input, output)? {
        Some(content) => Ok(ElicitResult::accept(content)),
        None => Ok(ElicitResult::new(ElicitAction::Cancel)),
    }
}

/// Asks every field; `None` when the input ends.
fn fill_form(
    schema: &ElicitationSchema,
    input: &mut impl BufRead,
    output: &mut impl Write,
) -> io::Result<Option<JsonObject>> {
    let required = schema.required.clone().unwrap_or_default();
    let mut content = Map::new();
    for (name, field) in &schema.properties {
        let field = serde_json::to_value(field).unwrap_or_default();
        let required = required.contains(name);
        let Some(value) = ask_field(name, &field, required, input, output)? else {
            return Ok(None);
        };
        if let Some(value) = value {
            content.insert(name.clone(), value);
        }
    }
    Ok(Some(content))
}

/// One field: `Some(None)` when left empty (the client fills in a default),
/// `None` when the input ends.
fn ask_field(
    name: &str,
    field: &Value,
    required: bool,
    input: &mut impl BufRead,
    output: &mut impl Write,
) -> io::Result<Option<Option<Value>>> {
    let text = |key: &str| field.get(key).and_then(Value::as_str);
    let kind = text("type").unwrap_or("string");
    let choices = choices(field);
    match (text("title"), text("description")) {
        (None, None) => {}
        (title, description) => {
            write!(output, "{}", title.unwrap_or(name))?;
            if let Some(description) = description {
                write!(output, ": {description}")?;
            }
            writeln!(output)?;
        }
    }
    for (i, (value, label)) in choices.iter().enumerate() {
        writeln!(output, "  {}) {label}{}", i + 1, label_suffix(value, label))?;
    }
    let default = field.get("default").filter(|d| !d.is_null());
    let mut prompt = format!("  {name} ({kind}");
    if kind == "array" {
        prompt.push_str(", comma-separated");
    }
    if required {
        prompt.push_str(", required");
    }
    prompt.push(')');
    if let Some(default) = default {
        prompt.push_str(&format!(" [{}]", show(default)));
    }
    prompt.push_str(": ");
    loop {
        let Some(line) = read_line(input, output, &prompt)? else {
            return Ok(None);
        };
        if line.is_empty() {
            if default.is_some() || !required {
                return Ok(Some(None));
            }
            writeln!(output, "  an answer is required")?;
            continue;
        }
        match parse_answer(kind, &choices, &line) {
            Ok(value) => return Ok(Some(Some(value))),
            Err(why) => writeln!(output, "  {why}; try again")?,
        }
    }
}

/// The allowed values of an enum or multi-select field, with labels.
fn choices(field: &Value) -> Vec<(String, String)> {
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let titled = |v: Option<&Value>| -> Vec<(String, String)> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|o| {
                        let value = o.get("const")?.as_str()?.to_owned();
                        let title = o.get("title").and_then(Value::as_str).unwrap_or(&value);
                        Some((value.clone(), title.to_owned()))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let source = field.get("items").unwrap_or(field);
    let values = strings(source.get("enum"));
    if !values.is_empty() {
        let names = strings(source.get("enumNames"));
        return values
            .iter()
            .enumerate()
            .map(|(i, v)| (v.clone(), names.get(i).unwrap_or(v).clone()))
            .collect();
    }
    let mut options = titled(source.get("oneOf"));
    options.extend(titled(source.get("anyOf")));
    options
}

fn label_suffix(value: &str, label: &str) -> String {
    if value == label {
        String::new()
    } else {
        format!(" [{value}]")
    }
}

/// Types one answer by the field's type and choices.
fn parse_answer(kind: &str, choices: &[(String, String)], line: &str) -> Result<Value, String> {
    let pick = |item: &str| -> Result<Value, String> {
        if choices.is_empty() {
            return Ok(Value::String(item.to_owned()));
        }
        if let Ok(n) = item.parse::<usize>()
            && (1..=choices.len()).contains(&n)
        {
            return Ok(Value::String(choices[n - 1].0.clone()));
        }
        choices
            .iter()
            .find(|(value, label)| value == item || label == item)
            .map(|(value, _)| Value::String(value.clone()))
            .ok_or_else(|| format!("{item:?} is not one of the choices"))
    };
    match kind {
        "integer" => line
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("{line:?} is not an integer")),
        "number" => line
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(|n| match n.as_f64() {
                Some(f) if f.fract() == 0.0 && f.abs() < 9e15 => Value::from(f as i64),
                _ => Value::Number(n),
            })
            .ok_or_else(|| format!("{line:?} is not a number")),
        "boolean" => match line.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(Value::Bool(true)),
            "n" | "no" | "false" => Ok(Value::Bool(false)),
            _ => Err(format!("{line:?} is not yes or no")),
        },
        "array" => line
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(pick)
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        _ => pick(line),
    }
}

fn show(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Prompts and reads one trimmed line; `None` at the end of input.
fn read_line(
    input: &mut impl BufRead,
    output: &mut impl Write,
    prompt: &str,
) -> io::Result<Option<String>> {
    write!(output, "{prompt}")?;
    output.flush()?;
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        writeln!(output)?;
        return Ok(None);
    }
    Ok(Some(line.trim().to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form(schema: Value) -> ElicitRequestParams {
        serde_json::from_value(json!({"message": "Tell me", "requestedSchema": schema})).unwrap()
    }

    fn run(params: &ElicitRequestParams, typed: &str) -> (ElicitResult, String) {
        let mut out = Vec::new();
        let result = ask(params, &mut typed.as_bytes(), &mut out).unwrap();
        (result, String::from_utf8(out).unwrap())
    }

    #[test]
    fn fields_are_typed_and_defaults_left_to_the_client() {
        let params = form(json!({"type": "object", "properties": {
            "age": {"type": "integer"},
            "color": {"type": "string", "enum": ["red", "green"], "default": "red"},
            "name": {"type": "string", "title": "Your name"},
            "ok": {"type": "boolean"},
        }, "required": ["name"]}));
        // age: bad then 42; color: default; name: required, empty then Ann; ok: yes.
        let (result, shown) = run(&params, "\nx\n42\n\n\nAnn\ny\n");
        assert_eq!(result.action, ElicitAction::Accept);
        assert_eq!(
            Value::Object(result.content.unwrap()),
            json!({"age": 42, "name": "Ann", "ok": true})
        );
        assert!(shown.contains("1) red"), "{shown}");
        assert!(shown.contains("[red]"), "{shown}");
        assert!(shown.contains("an answer is required"), "{shown}");
        assert!(shown.contains("not an integer"), "{shown}");
    }

    #[test]
    fn choices_by_number_or_value() {
        let params = form(json!({"type": "object", "properties": {
            "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}},
        }}));
        let (result, _) = run(&params, "y\n2\n1, c\n");
        assert_eq!(
            Value::Object(result.content.unwrap()),
            json!({"size": "l", "tags": ["a", "c"]})
        );
    }

    #[test]
    fn decline_cancel_and_end_of_input() {
        let params = form(json!({"type": "object", "properties": {"n": {"type": "string"}}}));
        assert_eq!(run(&params, "n\n").0.action, ElicitAction::Decline);
        assert_eq!(run(&params, "c\n").0.action, ElicitAction::Cancel);
        assert_eq!(run(&params, "").0.action, ElicitAction::Cancel);
        assert_eq!(run(&params, "y\n").0.action, ElicitAction::Cancel);
    }

    #[test]
    fn fixed_answers() {
        assert_eq!(
            fixed_answer(r#"{"action":"decline"}"#).unwrap().action,
            ElicitAction::Decline
        );
        let accept = fixed_answer(r#"{"name":"Bo"}"#).unwrap();
        assert_eq!(accept.action, ElicitAction::Accept);
        assert!(fixed_answer("[1]").is_err());
        assert!(fixed_answer("nope").is_err());
    }
}
