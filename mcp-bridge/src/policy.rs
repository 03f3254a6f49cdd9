//! Which tools the client sees and may call: allow and deny lists of
//! globs over tool names, and read-only tools only.
//!
//! A hidden tool is left out of every `tools/list` page and refused on
//! `tools/call` with `-32602`, naming the rule that hides it. Whether a
//! tool is read-only is what its `annotations.readOnlyHint` said in the
//! lists the client was served (or, under tool search, the bridge read):
//! under `read_only`, a tool the bridge has not listed is refused too
//! (list the tools first).

use std::collections::HashMap;
use std::sync::Mutex;

use globset::{Glob, GlobSet, GlobSetBuilder};
use mcp_protocol::ErrorObject;
use mcp_protocol::error_codes::INVALID_PARAMS;
use serde_json::Value;

/// Which tools the client sees and may call. The default hides none.
///
/// ```
/// use mcp_bridge::ToolPolicy;
///
/// let policy = ToolPolicy::new()
///     .allow("github_*")?
///     .deny("*_delete*")?
///     .read_only(false);
/// assert!(policy.shows("github_list_issues", None));
/// assert!(!policy.shows("github_delete_repo", None));
/// assert!(!policy.shows("slack_post", None));
/// # Ok::<(), mcp_bridge::PolicyError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct ToolPolicy {
    allow: Vec<String>,
    deny: Vec<String>,
    allowed: Option<GlobSet>,
    denied: Option<GlobSet>,
    read_only: bool,
}

/// A glob that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("the tool pattern {pattern:?} is not a glob: {reason}")]
pub struct PolicyError {
    pattern: String,
    reason: String,
}

impl ToolPolicy {
    /// Hides nothing.
    pub fn new() -> ToolPolicy {
        ToolPolicy::default()
    }

    /// Shows only tools whose name matches one of the `allow` globs (`*`,
    /// `?`, `[…]`, `{a,b}`); each call adds one.
    pub fn allow(mut self, glob: &str) -> Result<ToolPolicy, PolicyError> {
        self.allow.push(glob.to_owned());
        self.allowed = Some(set(&self.allow)?);
        Ok(self)
    }

    /// Hides tools whose name matches this glob, even when allowed.
    pub fn deny(mut self, glob: &str) -> Result<ToolPolicy, PolicyError> {
        self.deny.push(glob.to_owned());
        self.denied = Some(set(&self.deny)?);
        Ok(self)
    }

    /// Shows only tools annotated read-only (`readOnlyHint: true`).
    pub fn read_only(mut self, read_only: bool) -> ToolPolicy {
        self.read_only = read_only;
        self
    }

    /// Whether the policy hides anything at all.
    pub fn is_open(&self) -> bool {
        self.allowed.is_none() && self.denied.is_none() && !self.read_only
    }

    /// Whether a tool named `name` is shown, given its `readOnlyHint`
    /// when known.
    pub fn shows(&self, name: &str, read_only_hint: Option<bool>) -> bool {
        self.hidden_by(name, read_only_hint).is_none()
    }

    /// The rule that hides the tool, if any.
    fn hidden_by(&self, name: &str, read_only_hint: Option<bool>) -> Option<String> {
        if let Some(denied) = &self.denied
            && denied.is_match(name)
        {
            return Some(format!("it matches --deny-tools {}", self.deny.join(", ")));
        }
        if let Some(allowed) = &self.allowed
            && !allowed.is_match(name)
        {
            return Some(format!(
                "it matches no --allow-tools {}",
                self.allow.join(", ")
            ));
        }
        if self.read_only && read_only_hint != Some(true) {
            return Some(match read_only_hint {
                Some(false) => "it is not read-only (--read-only)".to_owned(),
                _ => {
                    "it is not known to be read-only (--read-only); list the tools first".to_owned()
                }
            });
        }
        None
    }
}

fn set(globs: &[String]) -> Result<GlobSet, PolicyError> {
    let mut builder = GlobSetBuilder::new();
    for pattern in globs {
        let glob = Glob::new(pattern).map_err(|e| PolicyError {
            pattern: pattern.clone(),
            reason: e.kind().to_string(),
        })?;
        builder.add(glob);
    }
    builder.build().map_err(|e| PolicyError {
        pattern: globs.join(", "),
        reason: e.to_string(),
    })
}

/// The policy applied to one session: whether each tool it has listed is
/// read-only.
#[derive(Debug, Default)]
pub(crate) struct Applied {
    policy: ToolPolicy,
    read_only_tools: Mutex<HashMap<String, bool>>,
}

impl Applied {
    pub(crate) fn new(policy: ToolPolicy) -> Applied {
        Applied {
            policy,
            read_only_tools: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn is_open(&self) -> bool {
        self.policy.is_open()
    }

    /// Refuses a `tools/call` of a hidden tool.
    pub(crate) fn check_call(&self, params: Option<&Value>) -> Result<(), ErrorObject> {
        let name = params
            .and_then(|p| p.get("name"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let read_only = self
            .read_only_tools
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .copied();
        match self.policy.hidden_by(name, read_only) {
            Some(why) => Err(ErrorObject::new(
                INVALID_PARAMS,
                format!("the bridge hides the tool {name:?}: {why}"),
            )),
            None => Ok(()),
        }
    }

    /// Takes the hidden tools out of a `tools/list` result.
    pub(crate) fn filter_list(&self, result: &mut Value) {
        let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) else {
            return;
        };
        let mut read_only = self
            .read_only_tools
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        tools.retain(|tool| {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
            let hint = tool
                .pointer("/annotations/readOnlyHint")
                .and_then(Value::as_bool);
            read_only.insert(name.to_owned(), hint == Some(true));
            self.policy.shows(name, Some(hint == Some(true)))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn applied(policy: ToolPolicy) -> Applied {
        Applied::new(policy)
    }

    #[test]
    fn a_list_loses_its_hidden_tools_and_a_call_of_one_is_refused() {
        let a = applied(ToolPolicy::new().deny("rm*").unwrap());
        let mut list = json!({"tools": [{"name": "ls"}, {"name": "rm"}, {"name": "rmdir"}]});
        a.filter_list(&mut list);
        assert_eq!(list, json!({"tools": [{"name": "ls"}]}));
        let refused = a.check_call(Some(&json!({"name": "rm"}))).unwrap_err();
        assert_eq!(refused.code, INVALID_PARAMS);
        assert!(
            refused.message.contains("--deny-tools rm*"),
            "{}",
            refused.message
        );
        assert!(a.check_call(Some(&json!({"name": "ls"}))).is_ok());
    }

    #[test]
    fn read_only_shows_only_tools_listed_as_read_only() {
        let a = applied(ToolPolicy::new().read_only(true));
        assert!(
            a.check_call(Some(&json!({"name": "get"}))).is_err(),
            "not listed yet"
        );
        let mut list = json!({"tools": [
            {"name": "get", "annotations": {"readOnlyHint": true}},
            {"name": "put", "annotations": {"readOnlyHint": false}},
            {"name": "other"}
        ]});
        a.filter_list(&mut list);
        assert_eq!(list["tools"].as_array().unwrap().len(), 1);
        assert!(a.check_call(Some(&json!({"name": "get"}))).is_ok());
        let put = a.check_call(Some(&json!({"name": "put"}))).unwrap_err();
        assert!(put.message.contains("is not read-only"), "{}", put.message);
    }

    #[test]
    fn allow_and_deny_combine_and_a_bad_glob_is_an_error() {
        let p = ToolPolicy::new()
            .allow("a*")
            .unwrap()
            .allow("b")
            .unwrap()
            .deny("ax")
            .unwrap();
        assert!(p.shows("ab", None) && p.shows("b", None));
        assert!(!p.shows("ax", None) && !p.shows("c", None));
        assert!(ToolPolicy::new().deny("[").is_err());
        assert!(ToolPolicy::new().is_open());
    }
}
