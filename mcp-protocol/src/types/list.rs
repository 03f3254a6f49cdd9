//! The result of every list method, written once: a page of items under
//! the method's own member (`tools`, `prompts`, `resources`,
//! `resourceTemplates`, `tasks`), with the members every list shares.

use std::marker::PhantomData;

use serde::de::{DeserializeOwned, Error as _, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::cache::{CacheScope, Cacheable};
use super::common::{JsonObject, Meta, ResultType};
use super::pagination::{Cursor, Paginated};
use crate::unknown::{UnknownFields, report_extra};

/// What a list method lists: the member of [`ListResult`] that holds the
/// items on the wire, and how an item is typed.
pub trait ListItem: Serialize + DeserializeOwned {
    /// The member holding the page's items: `"tools"`, `"prompts"`, ...
    const MEMBER: &'static str;

    /// The list result as serde's errors name it: `"a tools/list result"`.
    const EXPECTING: &'static str;

    /// Types one item held as a `Value`: `serde_json::from_value`, unless
    /// the item has members that are JSON as it is (a tool's schemas),
    /// which it moves into place instead of rebuilding them.
    fn item_from_value(value: Value) -> Result<Self, serde_json::Error> {
        serde_json::from_value(value)
    }
}

/// Result of a list method (`tools/list`, `prompts/list`, `resources/list`,
/// `resources/templates/list`, `tasks/list`): one page of items and the
/// members every list shares. Each method's type is an alias:
/// [`ListToolsResult`](super::ListToolsResult) is `ListResult<Tool>`, and
/// its items are `"tools"` on the wire.
///
/// ```
/// use mcp_protocol::types::{ListPromptsResult, Paginated, Prompt};
///
/// let page = ListPromptsResult::new(vec![Prompt::new("greet")]).with_next_cursor("2");
/// let json = serde_json::to_value(&page).unwrap();
/// assert_eq!(json, serde_json::json!({"prompts": [{"name": "greet"}], "nextCursor": "2"}));
/// let back: ListPromptsResult = serde_json::from_value(json).unwrap();
/// assert_eq!(back.next_cursor(), Some("2"));
/// assert_eq!(back.items[0].name, "greet");
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ListResult<T> {
    /// This page's items (`tools`, `prompts`, ... on the wire).
    pub items: Vec<T>,
    /// The next page's cursor; absent at the end.
    pub next_cursor: Option<Cursor>,
    /// How long the result stays fresh, in milliseconds (2026-07-28+).
    pub ttl_ms: Option<i64>,
    /// Who may share a cached copy (2026-07-28+).
    pub cache_scope: Option<CacheScope>,
    /// `resultType` (2026-07-28+).
    pub result_type: Option<ResultType>,
    /// The result's `_meta`.
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    pub extra: JsonObject,
}

impl<T> Default for ListResult<T> {
    fn default() -> Self {
        ListResult {
            items: Vec::new(),
            next_cursor: None,
            ttl_ms: None,
            cache_scope: None,
            result_type: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

impl<T> ListResult<T> {
    /// A page holding `items`, the last one.
    pub fn new(items: Vec<T>) -> Self {
        ListResult {
            items,
            ..Default::default()
        }
    }

    /// The same with a next page.
    pub fn with_next_cursor(mut self, cursor: impl Into<Cursor>) -> Self {
        self.next_cursor = Some(cursor.into());
        self
    }

    /// The same with caching hints, as a modern complete result carries
    /// them (`resultType` is set to `complete` too).
    pub fn with_cache(mut self, ttl_ms: i64, scope: CacheScope) -> Self {
        self.ttl_ms = Some(ttl_ms);
        self.cache_scope = Some(scope);
        self.result_type = Some(ResultType::Complete);
        self
    }
}

impl<T: ListItem> ListResult<T> {
    /// Types a list result held as a `Value`, as `serde_json::from_value`
    /// would, with the same errors, but moving the items' JSON members, the
    /// `_meta` and the unknown members into place instead of rebuilding
    /// them.
    ///
    /// ```
    /// use mcp_protocol::types::ListToolsResult;
    /// let value = serde_json::json!({"tools": [{"name": "echo", "inputSchema": {}}]});
    /// let typed = ListToolsResult::from_value(value.clone()).unwrap();
    /// assert_eq!(typed, serde_json::from_value(value).unwrap());
    /// ```
    pub fn from_value(value: Value) -> Result<Self, serde_json::Error> {
        let Value::Object(members) = value else {
            // Not an object: serde says so, in its words.
            return serde_json::from_value(value);
        };
        let mut items = None;
        let mut list = ListResult::default();
        for (key, value) in members {
            match key.as_str() {
                member if member == T::MEMBER => items = Some(items_from_value(value)?),
                "nextCursor" => list.next_cursor = serde_json::from_value(value)?,
                "ttlMs" => list.ttl_ms = serde_json::from_value(value)?,
                "cacheScope" => list.cache_scope = serde_json::from_value(value)?,
                "resultType" => list.result_type = serde_json::from_value(value)?,
                "_meta" => list.meta = crate::macros::moved_option(value)?,
                _ => {
                    list.extra.insert(key, value);
                }
            }
        }
        list.items = items.ok_or_else(|| serde_json::Error::missing_field(T::MEMBER))?;
        Ok(list)
    }
}

/// The items of a list held as a `Value`, each typed by its own type.
fn items_from_value<T: ListItem>(value: Value) -> Result<Vec<T>, serde_json::Error> {
    match value {
        Value::Array(items) => items.into_iter().map(T::item_from_value).collect(),
        // Not a list: serde says so, in its words.
        other => serde_json::from_value(other),
    }
}

impl<T: ListItem> Serialize for ListResult<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry(T::MEMBER, &self.items)?;
        if let Some(cursor) = &self.next_cursor {
            map.serialize_entry("nextCursor", cursor)?;
        }
        if let Some(ttl) = &self.ttl_ms {
            map.serialize_entry("ttlMs", ttl)?;
        }
        if let Some(scope) = &self.cache_scope {
            map.serialize_entry("cacheScope", scope)?;
        }
        if let Some(result_type) = &self.result_type {
            map.serialize_entry("resultType", result_type)?;
        }
        if let Some(meta) = &self.meta {
            map.serialize_entry("_meta", meta)?;
        }
        for (key, value) in &self.extra {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// Typed as each member comes, without the buffering of serde's
/// `flatten` (lists are read by the hundred); a member named twice is an
/// error, as with the derive, and `null` reads as absent.
impl<'de, T: ListItem> Deserialize<'de> for ListResult<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(Members(PhantomData))
    }
}

struct Members<T>(PhantomData<T>);

impl<'de, T: ListItem> Visitor<'de> for Members<T> {
    type Value = ListResult<T>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(T::EXPECTING)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ListResult<T>, A::Error> {
        // Each slot is `Some` once its member was read (`Some(None)`: it
        // was `null`), so that a member named twice is caught.
        let mut items: Option<Vec<T>> = None;
        let mut next_cursor: Option<Option<Cursor>> = None;
        let mut ttl_ms: Option<Option<i64>> = None;
        let mut cache_scope: Option<Option<CacheScope>> = None;
        let mut result_type: Option<Option<ResultType>> = None;
        let mut meta: Option<Option<Meta>> = None;
        let mut extra = JsonObject::new();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                member if member == T::MEMBER => once(&mut items, T::MEMBER, &mut map)?,
                "nextCursor" => once(&mut next_cursor, "nextCursor", &mut map)?,
                "ttlMs" => once(&mut ttl_ms, "ttlMs", &mut map)?,
                "cacheScope" => once(&mut cache_scope, "cacheScope", &mut map)?,
                "resultType" => once(&mut result_type, "resultType", &mut map)?,
                "_meta" => once(&mut meta, "_meta", &mut map)?,
                _ => {
                    let value = map.next_value()?;
                    extra.insert(key, value);
                }
            }
        }
        Ok(ListResult {
            items: items.ok_or_else(|| A::Error::missing_field(T::MEMBER))?,
            next_cursor: next_cursor.flatten(),
            ttl_ms: ttl_ms.flatten(),
            cache_scope: cache_scope.flatten(),
            result_type: result_type.flatten(),
            meta: meta.flatten(),
            extra,
        })
    }
}

/// Reads a member's value into its slot, refusing a member named twice.
fn once<'de, A: MapAccess<'de>, V: Deserialize<'de>>(
    slot: &mut Option<V>,
    name: &'static str,
    map: &mut A,
) -> Result<(), A::Error> {
    if slot.is_some() {
        return Err(A::Error::duplicate_field(name));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

impl<T: ListItem> Paginated for ListResult<T> {
    type Item = T;
    fn next_cursor(&self) -> Option<&str> {
        self.next_cursor.as_deref()
    }
    fn into_items(self) -> Vec<T> {
        self.items
    }
}

impl<T> Cacheable for ListResult<T> {
    fn ttl_ms(&self) -> Option<i64> {
        self.ttl_ms
    }
    fn cache_scope(&self) -> Option<&CacheScope> {
        self.cache_scope.as_ref()
    }
}

impl<T: ListItem + UnknownFields> UnknownFields for ListResult<T> {
    fn collect_unknown(&self, path: &str, out: &mut Vec<String>) {
        report_extra(&self.extra, path, out);
        self.items
            .collect_unknown(&format!("{path}.{}", T::MEMBER), out);
        self.cache_scope
            .collect_unknown(&format!("{path}.cacheScope"), out);
        self.result_type
            .collect_unknown(&format!("{path}.resultType"), out);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::types::{
        ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListTasksResult,
        ListToolsResult, Prompt, Resource, ResourceTemplate, Task, Tool,
    };

    /// The JSON comes back exactly, through serde (from text and from a
    /// `Value`) and through `from_value`, which agree.
    fn round_trip<T: ListItem + PartialEq + std::fmt::Debug>(value: Value) -> ListResult<T> {
        let from_text: ListResult<T> = serde_json::from_str(&value.to_string()).unwrap();
        let from_serde: ListResult<T> = serde_json::from_value(value.clone()).unwrap();
        let moved = ListResult::<T>::from_value(value.clone()).unwrap();
        assert_eq!(from_text, from_serde, "{value}");
        assert_eq!(moved, from_serde, "{value}");
        assert_eq!(serde_json::to_value(&moved).unwrap(), value);
        moved
    }

    #[test]
    fn every_list_keeps_its_json_through_a_round_trip() {
        let shared = json!({
            "nextCursor": "2",
            "ttlMs": 5000,
            "cacheScope": "private",
            "resultType": "complete",
            "_meta": {"k": 1},
            "x-later": [1, {"deep": null}],
        });
        let with = |member: &str, item: Value| {
            let mut value = shared.clone();
            value[member] = json!([item]);
            value
        };
        let tools = round_trip::<Tool>(with(
            "tools",
            json!({"name": "echo", "inputSchema": {"type": "object"}, "x-v": 1}),
        ));
        assert_eq!(tools.items[0].name, "echo");
        assert_eq!(tools.next_cursor(), Some("2"));
        assert_eq!(tools.freshness(), Some(std::time::Duration::from_secs(5)));
        assert_eq!(tools.extra["x-later"], shared["x-later"]);
        let prompts = round_trip::<Prompt>(with("prompts", json!({"name": "p"})));
        assert_eq!(prompts.items[0].name, "p");
        let resources =
            round_trip::<Resource>(with("resources", json!({"uri": "file:///a", "name": "a"})));
        assert_eq!(resources.items[0].uri, "file:///a");
        let templates = round_trip::<ResourceTemplate>(with(
            "resourceTemplates",
            json!({"uriTemplate": "file:///{p}", "name": "t"}),
        ));
        assert_eq!(templates.items[0].name, "t");
        let task = json!({
            "taskId": "t1", "status": "working", "createdAt": "2025-11-25T10:30:00Z",
            "lastUpdatedAt": "2025-11-25T10:30:00Z", "ttl": null,
        });
        let tasks = round_trip::<Task>(
            json!({"tasks": [task], "nextCursor": "3", "_meta": {}, "x-later": true}),
        );
        assert_eq!(tasks.items[0].task_id, "t1");
        // The last page, bare.
        let last = round_trip::<Prompt>(json!({"prompts": []}));
        assert_eq!(last, ListPromptsResult::new(vec![]));
        assert_eq!(last.next_cursor(), None);
    }

    #[test]
    fn built_lists_put_their_items_under_their_own_member() {
        let cases = [
            to(&ListToolsResult::new(vec![])),
            to(&ListPromptsResult::new(vec![]).with_next_cursor("n")),
            to(&ListResourcesResult::new(vec![]).with_cache(1000, CacheScope::Public)),
            to(&ListResourceTemplatesResult::new(vec![])),
            to(&ListTasksResult::new(vec![])),
        ];
        assert_eq!(
            cases,
            [
                json!({"tools": []}),
                json!({"prompts": [], "nextCursor": "n"}),
                json!({"resources": [], "ttlMs": 1000, "cacheScope": "public", "resultType": "complete"}),
                json!({"resourceTemplates": []}),
                json!({"tasks": []}),
            ]
        );
    }

    fn to(list: &impl Serialize) -> Value {
        serde_json::to_value(list).unwrap()
    }

    #[test]
    fn null_is_absent_and_a_bad_list_is_refused_alike_both_ways() {
        let nulls = json!({"prompts": [], "nextCursor": null, "ttlMs": null, "_meta": null});
        let list: ListPromptsResult = serde_json::from_value(nulls.clone()).unwrap();
        assert_eq!(list, ListPromptsResult::new(vec![]));
        assert_eq!(ListPromptsResult::from_value(nulls).unwrap(), list);
        for bad in [
            json!({"nextCursor": "2"}),
            json!({"prompts": {"name": "p"}}),
            json!({"prompts": [{"title": "no name"}]}),
            json!({"prompts": [], "ttlMs": "soon"}),
            json!({"prompts": [], "_meta": 3}),
            json!(["prompts"]),
        ] {
            let moved = ListPromptsResult::from_value(bad.clone()).unwrap_err();
            let serde = serde_json::from_value::<ListPromptsResult>(bad).unwrap_err();
            assert_eq!(moved.to_string(), serde.to_string());
        }
        let missing = serde_json::from_value::<ListResourcesResult>(json!({})).unwrap_err();
        assert!(missing.to_string().contains("missing field `resources`"));
        let twice = serde_json::from_str::<ListResourceTemplatesResult>(
            r#"{"resourceTemplates":[],"nextCursor":"a","nextCursor":"b"}"#,
        );
        assert!(
            twice
                .unwrap_err()
                .to_string()
                .contains("duplicate field `nextCursor`")
        );
        let not_an_object = serde_json::from_value::<ListTasksResult>(json!(1)).unwrap_err();
        assert!(not_an_object.to_string().contains("a tasks/list result"));
    }

    #[test]
    fn unknown_members_are_found_under_the_lists_own_member() {
        let list: ListToolsResult = serde_json::from_value(json!({
            "tools": [{"name": "e", "inputSchema": {}, "x-tool": 1}],
            "cacheScope": "galaxy",
            "x-list": true,
        }))
        .unwrap();
        assert_eq!(
            list.unknown_fields(),
            [
                "$.x-list",
                "$.tools[0].x-tool",
                "$.cacheScope = \"galaxy\" (unknown value)",
            ]
        );
    }
}
