//! What never lands in a recording: the values of secret headers and
//! fields, wherever they appear.

use serde_json::Value;

/// The text that stands in for a redacted value.
pub const REDACTED: &str = "[REDACTED]";

/// The headers redacted by default (compared without case).
pub const DEFAULT_REDACTED_HEADERS: [&str; 5] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-api-key",
];

/// Which headers and message fields a recording redacts.
///
/// Header names and field names are compared without case. A redacted
/// value is also remembered as a secret: should it turn up anywhere else
/// in the recording (a server echoing a token in an error message, say),
/// it is replaced there too, and so is a bearer token's credential alone.
///
/// ```
/// use mcp_transport::record::Redaction;
/// let redaction = Redaction::default().header("X-Tenant-Key").field("password");
/// assert!(redaction.redacts_header("x-tenant-key"));
/// assert!(redaction.redacts_header("Authorization"));
/// assert!(redaction.redacts_field("Password"));
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Redaction {
    /// Header names whose values are redacted (lowercase).
    pub headers: Vec<String>,
    /// Object keys, anywhere in a message, whose values are redacted
    /// (lowercase).
    pub fields: Vec<String>,
    /// Exact strings replaced wherever they appear.
    pub secrets: Vec<String>,
}

impl Default for Redaction {
    fn default() -> Self {
        Redaction {
            headers: DEFAULT_REDACTED_HEADERS.map(str::to_owned).to_vec(),
            fields: Vec::new(),
            secrets: Vec::new(),
        }
    }
}

impl Redaction {
    /// Redacts this header too.
    pub fn header(mut self, name: impl AsRef<str>) -> Self {
        let name = name.as_ref().to_ascii_lowercase();
        if !self.headers.contains(&name) {
            self.headers.push(name);
        }
        self
    }

    /// Redacts this field (an object key anywhere in a message) too.
    pub fn field(mut self, name: impl AsRef<str>) -> Self {
        self.fields.push(name.as_ref().to_ascii_lowercase());
        self
    }

    /// Replaces this exact string wherever it appears.
    pub fn secret(mut self, value: impl Into<String>) -> Self {
        self.learn(&value.into());
        self
    }

    /// Whether the value of header `name` is redacted.
    pub fn redacts_header(&self, name: &str) -> bool {
        self.headers.iter().any(|h| h.eq_ignore_ascii_case(name))
    }

    /// Whether the value of field `name` is redacted.
    pub fn redacts_field(&self, name: &str) -> bool {
        self.fields.iter().any(|f| f.eq_ignore_ascii_case(name))
    }

    /// The headers as a JSON object, secret values redacted (and learnt).
    pub(crate) fn headers_value<'a>(
        &mut self,
        headers: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Value {
        let mut map = serde_json::Map::new();
        for (name, value) in headers {
            let shown = if self.redacts_header(name) {
                self.learn(value);
                REDACTED.to_owned()
            } else {
                value.to_owned()
            };
            // A repeated header keeps every value, as the wire had them.
            match map.get_mut(name) {
                Some(Value::Array(values)) => values.push(Value::from(shown)),
                Some(first) => *first = Value::Array(vec![first.take(), Value::from(shown)]),
                None => {
                    map.insert(name.to_owned(), Value::from(shown));
                }
            }
        }
        Value::Object(map)
    }

    /// Redacts the named fields of `value`, in place, at any depth.
    pub(crate) fn fields_in(&mut self, value: &mut Value) {
        if self.fields.is_empty() {
            return;
        }
        match value {
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    if self.redacts_field(key) {
                        if let Value::String(s) = v {
                            let s = std::mem::take(s);
                            self.learn(&s);
                        }
                        *v = Value::from(REDACTED);
                    } else {
                        self.fields_in(v);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.fields_in(v)),
            _ => {}
        }
    }

    /// Replaces every known secret in a serialized line.
    pub(crate) fn scrub(&self, line: &str) -> String {
        let mut line = line.to_owned();
        for secret in &self.secrets {
            // Secrets are matched as they appear inside a JSON string.
            let escaped = Value::from(secret.as_str()).to_string();
            let inner = &escaped[1..escaped.len() - 1];
            if line.contains(inner) {
                line = line.replace(inner, REDACTED);
            }
        }
        line
    }

    /// Remembers a secret value, and a scheme's credential alone
    /// (`Bearer abc…` → `abc…`), longest first so the whole goes first.
    fn learn(&mut self, value: &str) {
        let value = value.trim();
        // Short values would redact ordinary text ("a", "on").
        if value.len() < 6 || value == REDACTED {
            return;
        }
        let mut add = |s: &str| {
            if s.len() >= 6 && !self.secrets.iter().any(|k| k == s) {
                self.secrets.push(s.to_owned());
            }
        };
        add(value);
        if let Some((_, credential)) = value.split_once(char::is_whitespace) {
            add(credential.trim());
        }
        self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn headers_are_redacted_and_their_values_scrubbed_everywhere() {
        let mut r = Redaction::default().header("X-Key");
        let v = r.headers_value([
            ("Authorization", "Bearer s3cr3t-token"),
            ("x-key", "k-123456"),
            ("Accept", "application/json"),
        ]);
        assert_eq!(v["Authorization"], REDACTED);
        assert_eq!(v["x-key"], REDACTED);
        assert_eq!(v["Accept"], "application/json");
        let line = r.scrub(r#"{"error":"bad token s3cr3t-token","k":"k-123456"}"#);
        assert!(!line.contains("s3cr3t"), "{line}");
        assert!(!line.contains("k-123456"), "{line}");
    }

    #[test]
    fn fields_are_redacted_at_any_depth() {
        let mut r = Redaction::default().field("password");
        let mut v = json!({"a": [{"Password": "hunter22"}], "b": 1});
        r.fields_in(&mut v);
        assert_eq!(v, json!({"a": [{"Password": REDACTED}], "b": 1}));
        assert!(!r.scrub("x hunter22 y").contains("hunter22"));
    }
}
