//! Readable differences between a recorded message and the one sent.

use serde_json::Value;

/// At most this many differences are listed.
const MAX_DIFFERENCES: usize = 20;

/// Each place where `recorded` and `sent` differ, as `POINTER: recorded
/// X, sent Y` lines (`(absent)` for a missing member).
pub(crate) fn differences(recorded: &Value, sent: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(recorded, sent, &mut String::new(), &mut out);
    if out.len() > MAX_DIFFERENCES {
        let more = out.len() - MAX_DIFFERENCES;
        out.truncate(MAX_DIFFERENCES);
        out.push(format!("… and {more} more"));
    }
    out
}

/// How far apart two values are: the number of differences.
pub(crate) fn distance(recorded: &Value, sent: &Value) -> usize {
    let mut out = Vec::new();
    walk(recorded, sent, &mut String::new(), &mut out);
    out.len()
}

fn walk(recorded: &Value, sent: &Value, path: &mut String, out: &mut Vec<String>) {
    match (recorded, sent) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let len = path.len();
                path.push('/');
                path.push_str(&key.replace('~', "~0").replace('/', "~1"));
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => walk(x, y, path, out),
                    (x, y) => out.push(line(path, x, y)),
                }
                path.truncate(len);
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for i in 0..a.len().max(b.len()) {
                let len = path.len();
                path.push_str(&format!("/{i}"));
                match (a.get(i), b.get(i)) {
                    (Some(x), Some(y)) => walk(x, y, path, out),
                    (x, y) => out.push(line(path, x, y)),
                }
                path.truncate(len);
            }
        }
        (a, b) if a == b => {}
        (a, b) => out.push(line(path, Some(a), Some(b))),
    }
}

fn line(path: &str, recorded: Option<&Value>, sent: Option<&Value>) -> String {
    let shown = |v: Option<&Value>| match v {
        None => "(absent)".to_owned(),
        Some(v) => short(v),
    };
    let path = if path.is_empty() {
        "(the whole value)"
    } else {
        path
    };
    format!("{path}: recorded {}, sent {}", shown(recorded), shown(sent))
}

/// A value's JSON, cut to a readable length.
pub(crate) fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 160 {
        let cut: String = text.chars().take(157).collect();
        format!("{cut}…")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lists_each_difference_by_pointer() {
        let d = differences(
            &json!({"name": "echo", "arguments": {"message": "hi", "n": [1, 2]}}),
            &json!({"name": "echo", "arguments": {"message": "bye", "n": [1]}, "x": true}),
        );
        assert_eq!(
            d,
            [
                r#"/arguments/message: recorded "hi", sent "bye""#,
                "/arguments/n/1: recorded 2, sent (absent)",
                "/x: recorded (absent), sent true",
            ]
        );
    }
}
