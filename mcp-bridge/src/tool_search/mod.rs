//! Tool search: the client is served two tools in place of the server's
//! many, `search_tools` and `call_tool`, so that an agent in front of many
//! servers does not carry every tool's schema in its context.
//!
//! `search_tools` ranks the server's tools (every page of its list, as
//! the [`ToolPolicy`](crate::ToolPolicy) shows them) for a query and
//! answers the best, each with its `inputSchema`; `call_tool` calls one by
//! name, relayed as the client's own `tools/call` would be. A direct
//! `tools/call` of a tool's own name is relayed too. The list is fetched
//! from the server when a search or call needs it, and again once the
//! server says it changed or it is older than [`FRESH`].
//!
//! What this file holds is the shape of things (the two tools, their
//! arguments, their answers) and the list kept; the relay asks the server.

mod rank;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_protocol::ErrorObject;
use mcp_protocol::error_codes::INVALID_PARAMS;
use serde_json::{Map, Value, json};

pub(crate) use rank::Index;

/// The tool that searches.
pub(crate) const SEARCH: &str = "search_tools";
/// The tool that calls a tool found.
pub(crate) const CALL: &str = "call_tool";
/// How many tools a search answers when the client does not say.
const DEFAULT_LIMIT: usize = 5;
/// The most tools a search answers.
const MAX_LIMIT: usize = 20;
/// How long a list is used without asking the server again, for a server
/// that does not say when its tools change.
pub(crate) const FRESH: Duration = Duration::from_secs(60);
/// How long a 2026-07-28 client may keep the list of the two tools: they
/// never change.
const LIST_TTL_MS: u64 = 3_600_000;

/// The two tools the client is served.
fn tools() -> Value {
    json!([
        {
            "name": SEARCH,
            "description": "Search the tools available through this bridge by what they do \
                (words of their names and descriptions), best match first. Each result \
                carries the tool's inputSchema; call it with call_tool.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What the tool should do, in a few words."},
                    "limit": {
                        "type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT,
                        "description": "How many tools to return."
                    }
                },
                "required": ["query"]
            },
            "annotations": {"readOnlyHint": true}
        },
        {
            "name": CALL,
            "description": "Call a tool found with search_tools, by its name, with arguments \
                as its inputSchema says. Answers what the tool answers.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The tool's name, as search_tools gave it."},
                    "arguments": {"type": "object", "description": "The tool's arguments."}
                },
                "required": ["name"]
            }
        }
    ])
}

/// The `tools/list` result the client gets: the two tools, with the
/// caching hints a 2026-07-28 list carries.
pub(crate) fn list(legacy: bool) -> Value {
    let mut result = json!({"tools": tools()});
    if !legacy {
        result["resultType"] = json!("complete");
        result["ttlMs"] = json!(LIST_TTL_MS);
        result["cacheScope"] = json!("private");
    }
    result
}

/// What a client's `tools/call` asks, under tool search.
#[derive(Debug, PartialEq)]
pub(crate) enum Asked {
    /// A search for `query`, answering at most `limit` tools.
    Search { query: String, limit: usize },
    /// A call of a tool: the `tools/call` params to relay (its `_meta`
    /// kept), and the tool's name.
    Call { name: String, params: Value },
    /// A tool called by its own name: relayed as it is.
    Direct,
}

/// Reads a `tools/call`'s params.
pub(crate) fn asked(params: Option<&Value>) -> Result<Asked, ErrorObject> {
    let name = params.and_then(|p| p.get("name")).and_then(Value::as_str);
    let empty = Map::new();
    let arguments = params
        .and_then(|p| p.get("arguments"))
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    match name {
        Some(SEARCH) => {
            let query = arguments.get("query").and_then(Value::as_str);
            let query = query.ok_or_else(|| invalid(format!("{SEARCH} needs a query string")))?;
            let limit = match arguments.get("limit") {
                None | Some(Value::Null) => DEFAULT_LIMIT,
                Some(limit) => limit
                    .as_u64()
                    .filter(|&n| n >= 1)
                    .map(|n| (n as usize).min(MAX_LIMIT))
                    .ok_or_else(|| invalid(format!("{SEARCH}'s limit is a positive integer")))?,
            };
            Ok(Asked::Search {
                query: query.to_owned(),
                limit,
            })
        }
        Some(CALL) => {
            let name = arguments.get("name").and_then(Value::as_str);
            let name = name.ok_or_else(|| invalid(format!("{CALL} needs the tool's name")))?;
            let inner = match arguments.get("arguments") {
                None | Some(Value::Null) => json!({}),
                Some(Value::Object(a)) => Value::Object(a.clone()),
                Some(_) => return Err(invalid(format!("{CALL}'s arguments are an object"))),
            };
            // The call's `_meta` (its progress token, a 2026-07-28
            // client's protocol version) goes with the tool's call.
            let mut params = params.cloned().unwrap_or_else(|| json!({}));
            params["name"] = json!(name);
            params["arguments"] = inner;
            Ok(Asked::Call {
                name: name.to_owned(),
                params,
            })
        }
        _ => Ok(Asked::Direct),
    }
}

/// The answer to a search: the tools found, as JSON text and as
/// `structuredContent`.
pub(crate) fn found(index: &Index, query: &str, limit: usize, legacy: bool) -> Value {
    let tools: Vec<Value> = index
        .search(query, limit)
        .into_iter()
        .map(|tool| {
            let mut shown = json!({
                "name": tool["name"],
                "description": tool.get("description").cloned().unwrap_or(json!("")),
                "inputSchema": tool.get("inputSchema").cloned().unwrap_or(json!({"type": "object"})),
            });
            if let Some(annotations) = tool.get("annotations") {
                shown["annotations"] = annotations.clone();
            }
            shown
        })
        .collect();
    let structured = json!({"tools": tools, "total": index.len()});
    let mut result = json!({
        "content": [{"type": "text", "text": structured.to_string()}],
        "structuredContent": structured,
        "isError": false,
    });
    if !legacy {
        result["resultType"] = json!("complete");
    }
    result
}

/// The error of a `call_tool` of a tool the server does not have.
pub(crate) fn unknown(name: &str) -> ErrorObject {
    invalid(format!(
        "no tool is named {name:?}; {SEARCH} finds the tools and gives their names"
    ))
}

fn invalid(message: String) -> ErrorObject {
    ErrorObject::new(INVALID_PARAMS, message)
}

/// The server's tools as last listed, for one client.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    /// The list, when it was made, and how many changes it has seen.
    kept: Mutex<Option<(Instant, u64, Arc<Index>)>>,
    /// How many times the server said its tools changed.
    changes: AtomicU64,
}

impl Catalog {
    /// The list, if it is fresh.
    pub(crate) fn fresh(&self) -> Option<Arc<Index>> {
        let changes = self.changes();
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.as_ref()
            .filter(|(at, seen, _)| *seen == changes && at.elapsed() < FRESH)
            .map(|(_, _, index)| index.clone())
    }

    /// How many times the tools changed: taken before listing them, so a
    /// change while they are listed leaves the list stale.
    pub(crate) fn changes(&self) -> u64 {
        self.changes.load(Ordering::Acquire)
    }

    /// Keeps a list made since `as_of` [`changes`](Self::changes).
    pub(crate) fn keep(&self, index: Index, as_of: u64) -> Arc<Index> {
        let index = Arc::new(index);
        *self.kept.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((Instant::now(), as_of, index.clone()));
        index
    }

    /// Forgets the list: the server said its tools changed.
    pub(crate) fn stale(&self) {
        self.changes.fetch_add(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_lists_two_tools_with_a_modern_lists_cache_hints() {
        let legacy = list(true);
        assert_eq!(legacy["tools"].as_array().unwrap().len(), 2);
        assert!(legacy.get("ttlMs").is_none());
        let modern = list(false);
        assert_eq!(modern["ttlMs"], LIST_TTL_MS);
        assert_eq!(modern["cacheScope"], "private");
        assert_eq!(modern["resultType"], "complete");
    }

    #[test]
    fn a_search_and_a_call_are_read_from_their_arguments() {
        let search = json!({"name": SEARCH, "arguments": {"query": "issues", "limit": 99}});
        assert_eq!(
            asked(Some(&search)).unwrap(),
            Asked::Search {
                query: "issues".into(),
                limit: MAX_LIMIT
            }
        );
        let bare = json!({"name": SEARCH, "arguments": {"query": "x"}});
        assert!(matches!(
            asked(Some(&bare)),
            Ok(Asked::Search {
                limit: DEFAULT_LIMIT,
                ..
            })
        ));
        for bad in [
            json!({"name": SEARCH, "arguments": {}}),
            json!({"name": SEARCH, "arguments": {"query": "x", "limit": 0}}),
            json!({"name": CALL, "arguments": {"arguments": {}}}),
            json!({"name": CALL, "arguments": {"name": "echo", "arguments": [1]}}),
        ] {
            assert_eq!(asked(Some(&bad)).unwrap_err().code, INVALID_PARAMS, "{bad}");
        }
        let call = json!({"name": CALL, "arguments": {"name": "echo", "arguments": {"text": "hi"}},
            "_meta": {"progressToken": 7}});
        let Asked::Call { name, params } = asked(Some(&call)).unwrap() else {
            panic!("a call")
        };
        assert_eq!(name, "echo");
        assert_eq!(
            params,
            json!({"name": "echo", "arguments": {"text": "hi"}, "_meta": {"progressToken": 7}})
        );
        assert_eq!(
            asked(Some(&json!({"name": "echo"}))).unwrap(),
            Asked::Direct
        );
    }

    #[test]
    fn a_search_answers_each_tools_schema_and_a_kept_list_goes_stale() {
        let index = Index::new(vec![json!({
            "name": "echo", "description": "Echo text back",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
            "annotations": {"readOnlyHint": true}
        })]);
        let result = found(&index, "echo text", 5, true);
        let tools = &result["structuredContent"]["tools"];
        assert_eq!(
            tools[0]["inputSchema"]["properties"]["text"]["type"],
            "string"
        );
        assert_eq!(tools[0]["annotations"]["readOnlyHint"], true);
        let text: Value =
            serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, result["structuredContent"]);
        assert!(unknown("nope").message.contains(SEARCH));
        let catalog = Catalog::default();
        assert!(catalog.fresh().is_none());
        let as_of = catalog.changes();
        catalog.keep(index, as_of);
        assert!(catalog.fresh().is_some());
        catalog.stale();
        assert!(catalog.fresh().is_none());
        // A list made while the tools changed is stale at once.
        let as_of = catalog.changes();
        catalog.stale();
        catalog.keep(Index::new(Vec::new()), as_of);
        assert!(catalog.fresh().is_none());
    }
}
