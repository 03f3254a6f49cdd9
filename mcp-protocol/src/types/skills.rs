//! The Skills extension (`io.modelcontextprotocol/skills`, SEP-2640):
//! Agent Skills served as resources, with `skills/list`, `skills/get` and,
//! where the server declares `directoryRead`, `resources/directory/read`.
//!
//! A skill is a directory of files whose root holds a `SKILL.md`; each file
//! is a resource, conventionally `skill://<skill-path>/<file-path>`. A
//! [`SkillEntry`] carries the skill's frontmatter as JSON and every file
//! with its `sha256:` digest and size, which a host verifies what it reads
//! against. The extension is off the spec's timeline: it has the same
//! shape in every revision, and `skills/list` carries `ttlMs` and
//! `cacheScope` in 2026-07-28.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::capabilities::ServerCapabilities;
use super::common::{JsonObject, Meta, ResultType};
use super::list::{ListItem, ListResult};
use super::pagination::Cursor;

/// The identifier of the Skills extension.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The MIME type of a directory resource (`resources/directory/read`).
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// What a server declared of the Skills extension: its settings under
/// `capabilities.extensions["io.modelcontextprotocol/skills"]`.
///
/// ```
/// use mcp_protocol::types::{ServerCapabilities, SkillsSettings};
///
/// let caps: ServerCapabilities = serde_json::from_value(serde_json::json!({
///     "extensions": {"io.modelcontextprotocol/skills": {"directoryRead": true}}
/// })).unwrap();
/// let skills = SkillsSettings::of(&caps).unwrap();
/// assert!(skills.directory_read());
/// assert!(SkillsSettings::of(&ServerCapabilities::new()).is_none());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct SkillsSettings {
    /// The settings object as the server wrote it.
    pub raw: JsonObject,
}

impl SkillsSettings {
    /// The settings when `caps` declare the extension; `None` when they
    /// do not (then neither `skills/list` nor `skills/get` may be sent).
    pub fn of(caps: &ServerCapabilities) -> Option<SkillsSettings> {
        let declared = caps.extensions.as_ref()?.get(SKILLS_EXTENSION)?;
        Some(SkillsSettings {
            raw: declared.as_object().cloned().unwrap_or_default(),
        })
    }

    /// Whether the server implements `resources/directory/read`:
    /// `directoryRead: true`, read where SEP-2640 puts it and, as SEP-2133's
    /// envelope would, under `config`. Anything else is `false`.
    pub fn directory_read(&self) -> bool {
        let at = |object: &JsonObject| object.get("directoryRead") == Some(&Value::Bool(true));
        at(&self.raw)
            || self
                .raw
                .get("config")
                .and_then(Value::as_object)
                .is_some_and(at)
    }
}

/// One file of a skill, as its entry lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillFile {
    /// The file's resource URI.
    pub uri: String,
    /// `sha256:` and 64 lowercase hex digits: the SHA-256 of its raw bytes.
    pub digest: String,
    /// The length of its raw bytes (required by SEP-2640; read as absent
    /// from a server that leaves it out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SkillFile {
    /// A file at `uri` with its digest and size.
    pub fn new(uri: impl Into<String>, digest: impl Into<String>, size: u64) -> Self {
        SkillFile {
            uri: uri.into(),
            digest: digest.into(),
            size: Some(size),
            extra: JsonObject::new(),
        }
    }
}

/// The `resources` of a skill entry: every file, or `"dynamic"`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SkillResources {
    /// Every file of the skill, `SKILL.md` included, each with its digest.
    Listed(Vec<SkillFile>),
    /// `"dynamic"`: generated content, which no digest covers.
    Dynamic,
    /// Absent, or anything but an array of files or `"dynamic"`: the entry
    /// is invalid and its skill is never loaded. Kept as it came.
    Invalid(Value),
}

impl Default for SkillResources {
    fn default() -> Self {
        SkillResources::Invalid(Value::Null)
    }
}

impl SkillResources {
    /// The listed files; `None` for `"dynamic"` and an invalid value.
    pub fn files(&self) -> Option<&[SkillFile]> {
        match self {
            SkillResources::Listed(files) => Some(files),
            _ => None,
        }
    }
}

impl Serialize for SkillResources {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            SkillResources::Listed(files) => files.serialize(serializer),
            SkillResources::Dynamic => serializer.serialize_str("dynamic"),
            SkillResources::Invalid(value) => value.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for SkillResources {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(match value {
            Value::String(s) if s == "dynamic" => SkillResources::Dynamic,
            Value::Array(_) => match serde_json::from_value::<Vec<SkillFile>>(value.clone()) {
                Ok(files) => SkillResources::Listed(files),
                Err(_) => SkillResources::Invalid(value),
            },
            other => SkillResources::Invalid(other),
        })
    }
}

/// A skill entry, from `skills/list` or `skills/get`: the skill's
/// `SKILL.md` URI, its frontmatter as JSON, and its files.
///
/// ```
/// use mcp_protocol::types::{SkillEntry, SkillResources};
///
/// let entry: SkillEntry = serde_json::from_value(serde_json::json!({
///     "uri": "skill://acme/billing/refunds/SKILL.md",
///     "frontmatter": {"name": "refunds", "description": "Refunds per policy"},
///     "resources": [{"uri": "skill://acme/billing/refunds/SKILL.md",
///                    "digest": "sha256:00", "size": 10}]
/// })).unwrap();
/// assert_eq!(entry.name(), Some("refunds"));
/// assert_eq!(entry.root(), Some("skill://acme/billing/refunds"));
/// assert!(matches!(entry.resources, SkillResources::Listed(ref f) if f.len() == 1));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillEntry {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
    /// The `SKILL.md` frontmatter, verbatim, as JSON.
    #[serde(default)]
    pub frontmatter: JsonObject,
    /// The skill's files, or `"dynamic"`.
    #[serde(default)]
    pub resources: SkillResources,
    /// The entry's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SkillEntry {
    /// An entry for the `SKILL.md` at `uri`.
    pub fn new(uri: impl Into<String>, frontmatter: JsonObject, resources: SkillResources) -> Self {
        SkillEntry {
            uri: uri.into(),
            frontmatter,
            resources,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// The frontmatter's `name`.
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name")?.as_str()
    }

    /// The frontmatter's `description`.
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description")?.as_str()
    }

    /// The skill's root: its URI without the final `/SKILL.md`; `None`
    /// when the URI does not end so.
    pub fn root(&self) -> Option<&str> {
        self.uri.strip_suffix("/SKILL.md")
    }

    /// The skill path: the root without its scheme (`acme/billing/refunds`).
    pub fn path(&self) -> Option<&str> {
        let root = self.root()?;
        Some(root.split_once("://").map_or(root, |(_, rest)| rest))
    }

    /// The listed file at `uri`.
    pub fn file(&self, uri: &str) -> Option<&SkillFile> {
        self.resources.files()?.iter().find(|f| f.uri == uri)
    }
}

impl ListItem for SkillEntry {
    const MEMBER: &'static str = "skills";
    const EXPECTING: &'static str = "a skills/list result";
}

/// Result of `skills/list`: a page of [`SkillEntry`]s under `"skills"`,
/// with `ttlMs` and `cacheScope` in 2026-07-28.
pub type ListSkillsResult = ListResult<SkillEntry>;

/// Params of `skills/get`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GetSkillRequestParams {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
    /// The request's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl GetSkillRequestParams {
    /// Params naming the `SKILL.md` at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        GetSkillRequestParams {
            uri: uri.into(),
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Result of `skills/get`: one entry, a snapshot as the server holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GetSkillResult {
    /// The skill's entry.
    pub skill: SkillEntry,
    /// `resultType` (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The result's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl GetSkillResult {
    /// A result holding `skill`.
    pub fn new(skill: SkillEntry) -> Self {
        GetSkillResult {
            skill,
            result_type: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Params of `resources/directory/read`: a directory resource and, for a
/// later page, a cursor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReadDirectoryRequestParams {
    /// The directory's URI, without a trailing slash.
    pub uri: String,
    /// The cursor of the page to fetch; `None` for the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// The request's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ReadDirectoryRequestParams {
    /// Params for the first page of the directory at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        ReadDirectoryRequestParams {
            uri: uri.into(),
            cursor: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// The same for the page at `cursor`.
    pub fn with_cursor(mut self, cursor: impl Into<Cursor>) -> Self {
        self.cursor = Some(cursor.into());
        self
    }
}

/// Result of `resources/directory/read`: the directory's direct children,
/// as `resources/list` gives resources (a subdirectory has the MIME type
/// [`DIRECTORY_MIME_TYPE`]).
pub type ReadDirectoryResult = super::resources::ListResourcesResult;

/// Whether a `digest` is well formed: `sha256:` and 64 lowercase hex
/// digits.
///
/// ```
/// use mcp_protocol::types::skills::digest_is_well_formed;
/// assert!(digest_is_well_formed(&format!("sha256:{}", "a".repeat(64))));
/// assert!(!digest_is_well_formed("sha256:ABC"));
/// ```
pub fn digest_is_well_formed(digest: &str) -> bool {
    digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

unknown_fields! {
    SkillFile;
    SkillEntry;
    GetSkillRequestParams;
    GetSkillResult { skill: "skill", result_type: "resultType" };
    ReadDirectoryRequestParams;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_read_in_each_form() {
        let entry = |resources: Value| -> SkillEntry {
            serde_json::from_value(serde_json::json!({
                "uri": "skill://a/SKILL.md", "frontmatter": {"name": "a"}, "resources": resources
            }))
            .unwrap()
        };
        assert_eq!(
            entry(Value::from("dynamic")).resources,
            SkillResources::Dynamic
        );
        assert!(matches!(
            entry(Value::from("static")).resources,
            SkillResources::Invalid(_)
        ));
        assert!(matches!(
            entry(serde_json::json!([{"uri": 3}])).resources,
            SkillResources::Invalid(_)
        ));
        let missing: SkillEntry =
            serde_json::from_value(serde_json::json!({"uri": "skill://a/SKILL.md"})).unwrap();
        assert_eq!(missing.resources, SkillResources::Invalid(Value::Null));
        let listed = entry(
            serde_json::json!([{"uri": "skill://a/SKILL.md", "digest": "sha256:x", "size": 3}]),
        );
        assert_eq!(listed.file("skill://a/SKILL.md").unwrap().size, Some(3));
        // The round trip keeps every form as it came.
        let back = serde_json::to_value(&listed).unwrap();
        assert_eq!(back["resources"][0]["size"], 3);
        assert_eq!(
            serde_json::to_value(SkillResources::Dynamic).unwrap(),
            "dynamic"
        );
    }

    #[test]
    fn paths_of_an_entry() {
        let e = SkillEntry::new(
            "skill://git-workflow/SKILL.md",
            JsonObject::new(),
            SkillResources::Dynamic,
        );
        assert_eq!(e.root(), Some("skill://git-workflow"));
        assert_eq!(e.path(), Some("git-workflow"));
        let odd = SkillEntry::new(
            "skill://x/README.md",
            JsonObject::new(),
            SkillResources::Dynamic,
        );
        assert_eq!(odd.root(), None);
    }

    #[test]
    fn directory_read_in_either_place() {
        let caps = |settings: Value| -> ServerCapabilities {
            serde_json::from_value(serde_json::json!({"extensions": {SKILLS_EXTENSION: settings}}))
                .unwrap()
        };
        let of = |v| SkillsSettings::of(&caps(v)).unwrap().directory_read();
        assert!(!of(serde_json::json!({})));
        assert!(of(serde_json::json!({"directoryRead": true})));
        assert!(of(serde_json::json!({"config": {"directoryRead": true}})));
        assert!(!of(serde_json::json!({"directoryRead": "true"})));
    }

    #[test]
    fn list_and_get_results() {
        let list: ListSkillsResult = serde_json::from_value(serde_json::json!({
            "resultType": "complete", "ttlMs": 5000, "cacheScope": "private",
            "skills": [{"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a"}, "resources": "dynamic"}]
        }))
        .unwrap();
        assert_eq!(list.ttl_ms, Some(5000));
        assert_eq!(list.items[0].name(), Some("a"));
        let get: GetSkillResult = serde_json::from_value(serde_json::json!({
            "skill": {"uri": "skill://a/SKILL.md", "frontmatter": {}, "resources": []}
        }))
        .unwrap();
        assert_eq!(get.skill.resources, SkillResources::Listed(vec![]));
        let params = ReadDirectoryRequestParams::new("skill://a/templates").with_cursor("2");
        assert_eq!(
            serde_json::to_value(params).unwrap(),
            serde_json::json!({"uri": "skill://a/templates", "cursor": "2"})
        );
    }
}
