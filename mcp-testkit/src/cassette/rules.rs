//! How a replayed message is compared with a recorded one: what changes
//! from run to run is left out of both before they are compared.

use mcp_protocol::{meta, methods};
use serde_json::Value;

/// The matching rules of a replay.
///
/// A request matches a recorded one with the same method whose params are
/// equal once both are *normalized*: the id never counts; the `_meta` keys
/// in [`ignored_meta`](Self::ignored_meta) are removed (by default the
/// ones the client generates afresh each run: `progressToken` and the
/// trace context `traceparent`, `tracestate`, `baggage`), as is an
/// emptied `_meta`; and every JSON pointer in [`ignored`](Self::ignored)
/// is removed (for a method, or for all). The client's answers to server
/// requests are compared the same way (pointers then start at the
/// result), and so are the client's notifications, except that those in
/// [`ignored_notifications`](Self::ignored_notifications) (by default
/// `notifications/cancelled`, whose timing differs run to run) are
/// neither checked nor required.
///
/// ```
/// use mcp_testkit::cassette::MatchRules;
/// use serde_json::json;
///
/// let rules = MatchRules::default()
///     .ignore("initialize", "/clientInfo/version")
///     .ignore_everywhere("/arguments/timestamp");
/// let a = rules.normalize("tools/call", Some(&json!({
///     "name": "log", "arguments": {"timestamp": 1}, "_meta": {"progressToken": 7}
/// })));
/// assert_eq!(a, json!({"name": "log", "arguments": {}}));
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct MatchRules {
    /// `_meta` keys left out (of params, and of answers' results).
    pub ignored_meta: Vec<String>,
    /// JSON pointers left out: for a method (`Some`), or for every one.
    pub ignored: Vec<(Option<String>, String)>,
    /// Client notifications neither checked nor required.
    pub ignored_notifications: Vec<String>,
    /// Whether recorded messages the client never sends are fine (a test
    /// replaying part of a session); by default `finish` reports them.
    pub allow_unused: bool,
}

impl Default for MatchRules {
    fn default() -> Self {
        MatchRules {
            ignored_meta: [
                meta::PROGRESS_TOKEN,
                meta::TRACEPARENT,
                meta::TRACESTATE,
                meta::BAGGAGE,
            ]
            .map(str::to_owned)
            .to_vec(),
            ignored: Vec::new(),
            ignored_notifications: vec![methods::NOTIFICATION_CANCELLED.to_owned()],
            allow_unused: false,
        }
    }
}

impl MatchRules {
    /// Rules that leave out nothing but ids: every `_meta` key counts and
    /// every notification is checked.
    pub fn strict() -> Self {
        MatchRules {
            ignored_meta: Vec::new(),
            ignored: Vec::new(),
            ignored_notifications: Vec::new(),
            allow_unused: false,
        }
    }

    /// Leaves out this `_meta` key too.
    pub fn ignore_meta(mut self, key: impl Into<String>) -> Self {
        self.ignored_meta.push(key.into());
        self
    }

    /// Leaves out what `pointer` (a JSON pointer into the params, or into
    /// the result of an answer to the server request `method`) names, for
    /// `method` only.
    pub fn ignore(mut self, method: impl Into<String>, pointer: impl Into<String>) -> Self {
        self.ignored.push((Some(method.into()), pointer.into()));
        self
    }

    /// Leaves out what `pointer` names, for every method.
    pub fn ignore_everywhere(mut self, pointer: impl Into<String>) -> Self {
        self.ignored.push((None, pointer.into()));
        self
    }

    /// Neither checks nor requires this client notification.
    pub fn ignore_notification(mut self, method: impl Into<String>) -> Self {
        self.ignored_notifications.push(method.into());
        self
    }

    /// Lets recorded messages go unsent (see
    /// [`allow_unused`](Self::allow_unused)).
    pub fn allow_unused(mut self, allow: bool) -> Self {
        self.allow_unused = allow;
        self
    }

    /// `value` (a request's or notification's params, an answer's result)
    /// with what these rules leave out taken out; an absent value is
    /// `null`.
    pub fn normalize(&self, method: &str, value: Option<&Value>) -> Value {
        let mut value = value.cloned().unwrap_or(Value::Null);
        if let Some(meta) = value.get_mut("_meta").and_then(Value::as_object_mut) {
            for key in &self.ignored_meta {
                meta.remove(key);
            }
        }
        for (only, pointer) in &self.ignored {
            if only.as_deref().is_none_or(|m| m == method) {
                remove_pointer(&mut value, pointer);
            }
        }
        if let Some(map) = value.as_object_mut()
            && map
                .get("_meta")
                .is_some_and(|m| m.as_object().is_some_and(|m| m.is_empty()))
        {
            map.remove("_meta");
        }
        // `{}` and no params at all mean the same to a server.
        if value.as_object().is_some_and(|m| m.is_empty()) {
            value = Value::Null;
        }
        value
    }

    pub(crate) fn ignores_notification(&self, method: &str) -> bool {
        self.ignored_notifications.iter().any(|m| m == method)
    }
}

/// Removes what a JSON pointer names, if it is there.
fn remove_pointer(value: &mut Value, pointer: &str) {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return;
    };
    let last = last.replace("~1", "/").replace("~0", "~");
    let parent = if parent.is_empty() {
        Some(value)
    } else {
        value.pointer_mut(parent)
    };
    match parent {
        Some(Value::Object(map)) => {
            map.remove(&last);
        }
        Some(Value::Array(items)) => {
            if let Ok(i) = last.parse::<usize>()
                && i < items.len()
            {
                items.remove(i);
            }
        }
        _ => {}
    }
}
