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
    /// Query parameters of a recorded URL whose values are kept as they
    /// are (lowercase); every other query value is redacted, and so is a
    /// URL's userinfo.
    pub kept_query: Vec<String>,
}

impl Default for Redaction {
    fn default() -> Self {
        Redaction {
            headers: DEFAULT_REDACTED_HEADERS.map(str::to_owned).to_vec(),
            fields: Vec::new(),
            secrets: Vec::new(),
            kept_query: Vec::new(),
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

    /// Keeps the value of this query parameter of a recorded URL (one that
    /// is no secret, such as a version or a tenant's public name); every
    /// other query value is redacted.
    ///
    /// ```
    /// use mcp_transport::record::{Recorder, Redaction};
    ///
    /// let recorder = Recorder::in_memory();
    /// recorder.set_redaction(Redaction::default().keep_query("version"));
    /// recorder.http_request("POST", "https://h/mcp?version=2&api_key=k-0123456789", []);
    /// let text = recorder.text();
    /// assert!(text.contains("version=2&api_key=[REDACTED]"), "{text}");
    /// ```
    pub fn keep_query(mut self, name: impl AsRef<str>) -> Self {
        let name = name.as_ref().to_ascii_lowercase();
        if !self.kept_query.contains(&name) {
            self.kept_query.push(name);
        }
        self
    }

    /// Whether the value of query parameter `name` is kept.
    pub fn keeps_query(&self, name: &str) -> bool {
        self.kept_query.iter().any(|q| q.eq_ignore_ascii_case(name))
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

    /// A URL with its userinfo and its query values (but the kept ones)
    /// redacted, and those values learnt as secrets.
    pub(crate) fn url(&mut self, url: &str) -> String {
        let parts = UrlParts::of(url);
        for secret in parts.secrets(&|name| self.keeps_query(name)) {
            self.learn(secret);
            let decoded = percent_decode(secret);
            if decoded != secret {
                self.learn(&decoded);
            }
        }
        parts.redacted(&|name| self.keeps_query(name))
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

/// A URL fit for a log line or `Debug` output: its userinfo and every
/// query value replaced by `[REDACTED]`; scheme, host, port and path kept.
///
/// ```
/// use mcp_transport::record::redact_url;
///
/// assert_eq!(
///     redact_url("https://user:pw@example.com/mcp?api_key=K&v=1"),
///     "https://[REDACTED]@example.com/mcp?api_key=[REDACTED]&v=[REDACTED]"
/// );
/// assert_eq!(redact_url("http://127.0.0.1:8000/mcp"), "http://127.0.0.1:8000/mcp");
/// ```
pub fn redact_url(url: &str) -> String {
    UrlParts::of(url).redacted(&|_| false)
}

/// A URL cut where its secrets may be, without judging the rest (a URL
/// that does not parse is still cut as well as it can be).
struct UrlParts<'a> {
    /// Up to and including `://`, or empty.
    scheme: &'a str,
    userinfo: Option<&'a str>,
    /// Host, port and path.
    rest: &'a str,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

impl<'a> UrlParts<'a> {
    fn of(url: &'a str) -> Self {
        let (before, fragment) = match url.split_once('#') {
            Some((b, f)) => (b, Some(f)),
            None => (url, None),
        };
        let (before, query) = match before.split_once('?') {
            Some((b, q)) => (b, Some(q)),
            None => (before, None),
        };
        let (scheme, after) = match before.find("://") {
            Some(at) => before.split_at(at + 3),
            None => ("", before),
        };
        let authority_end = after.find('/').unwrap_or(after.len());
        let (userinfo, rest) = match after[..authority_end].rfind('@') {
            Some(at) => (Some(&after[..at]), &after[at + 1..]),
            None => (None, after),
        };
        UrlParts {
            scheme,
            userinfo,
            rest,
            query,
            fragment,
        }
    }

    /// Each query parameter: its name and its value (`None`: a bare word,
    /// itself possibly a key).
    fn pairs(query: &str) -> impl Iterator<Item = (&str, Option<&str>)> {
        query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| match p.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (p, None),
            })
    }

    fn secrets(&self, keeps: &dyn Fn(&str) -> bool) -> Vec<&'a str> {
        let mut secrets: Vec<&str> = self.userinfo.into_iter().collect();
        if let Some(password) = self.userinfo.and_then(|u| u.split_once(':')) {
            secrets.push(password.1);
        }
        for (name, value) in self.query.map(Self::pairs).into_iter().flatten() {
            match value {
                Some(value) if !keeps(&percent_decode(name)) => secrets.push(value),
                None if !keeps(&percent_decode(name)) => secrets.push(name),
                _ => {}
            }
        }
        secrets.extend(self.fragment.filter(|f| !f.is_empty()));
        secrets
    }

    fn redacted(&self, keeps: &dyn Fn(&str) -> bool) -> String {
        let mut out = String::from(self.scheme);
        if self.userinfo.is_some() {
            out.push_str(REDACTED);
            out.push('@');
        }
        out.push_str(self.rest);
        if let Some(query) = self.query {
            out.push('?');
            let pairs: Vec<String> = Self::pairs(query)
                .map(|(name, value)| {
                    let kept = keeps(&percent_decode(name));
                    match value {
                        Some("") => format!("{name}="),
                        Some(v) if kept => format!("{name}={v}"),
                        Some(_) => format!("{name}={REDACTED}"),
                        None if kept => name.to_owned(),
                        None => REDACTED.to_owned(),
                    }
                })
                .collect();
            out.push_str(&pairs.join("&"));
        }
        if let Some(fragment) = self.fragment {
            out.push('#');
            if !fragment.is_empty() {
                out.push_str(REDACTED);
            }
        }
        out
    }
}

/// `%XX` decoded (and `+` as a space, as forms have it); anything that
/// does not decode is kept as it is.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let hex = |b: u8| {
        char::from(b)
            .to_digit(16)
            .and_then(|d| u8::try_from(d).ok())
    };
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = match bytes.get(i..i + 3) {
            Some([b'%', h, l]) => hex(*h).zip(hex(*l)).map(|(h, l)| h * 16 + l),
            _ => None,
        };
        match (escaped, bytes[i]) {
            (Some(b), _) => {
                out.push(b);
                i += 3;
                continue;
            }
            (None, b'+') => out.push(b' '),
            (None, b) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
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
    fn urls_lose_their_userinfo_and_query_values_but_kept_ones() {
        let mut r = Redaction::default().keep_query("Version");
        let url = r.url("https://ada:pa55word@h.example:8443/mcp?api_key=K-abc%2Fdef&version=2&flag#frag-secret");
        assert_eq!(
            url,
            "https://[REDACTED]@h.example:8443/mcp?api_key=[REDACTED]&version=2&[REDACTED]#[REDACTED]"
        );
        // Learnt: the same values elsewhere in the recording go too,
        // encoded or decoded.
        let line = r.scrub(r#"{"e":"bad key K-abc/def, K-abc%2Fdef, user ada:pa55word"}"#);
        assert!(
            !line.contains("K-abc") && !line.contains("pa55word"),
            "{line}"
        );
        assert_eq!(
            r.url("http://127.0.0.1:8000/mcp"),
            "http://127.0.0.1:8000/mcp"
        );
        assert_eq!(r.url("/relative?x=abcdef"), "/relative?x=[REDACTED]");
        assert_eq!(
            redact_url("https://h/mcp?a=&b"),
            "https://h/mcp?a=&[REDACTED]"
        );
        assert_eq!(
            redact_url("https://h/a@b?c=d"),
            "https://h/a@b?c=[REDACTED]"
        );
        assert_eq!(percent_decode("a%2fb+c%zz%4"), "a/b c%zz%4");
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
