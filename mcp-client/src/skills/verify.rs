//! What the skill loader checks, as pure functions: a file's bytes against
//! its entry (size, then SHA-256 digest), a `SKILL.md`'s YAML frontmatter
//! against the entry's, field by field, and where a relative reference
//! leads. No I/O here; `loader.rs` carries out what these decide.

use mcp_protocol::types::{JsonObject, SkillFile};
use serde_json::{Map, Number, Value};
use sha2::{Digest, Sha256};
use yaml_rust2::{Yaml, YamlLoader};

/// Why fetched bytes are not what the entry promised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Mismatch {
    /// The byte length differs from the entry's `size`.
    Size { expected: u64, actual: u64 },
    /// The SHA-256 differs from the entry's `digest`.
    Digest { expected: String, actual: String },
}

/// `sha256:` and the lowercase hex SHA-256 of `bytes`.
pub(crate) fn digest_of(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for byte in hash {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// Checks `bytes` against `file`: the size first (when the entry gives
/// one: a truncated or padded read fails without hashing), then the
/// digest.
pub(crate) fn check_file(file: &SkillFile, bytes: &[u8]) -> Result<(), Mismatch> {
    let actual = bytes.len() as u64;
    if let Some(expected) = file.size
        && expected != actual
    {
        return Err(Mismatch::Size { expected, actual });
    }
    let actual = digest_of(bytes);
    if actual != file.digest {
        return Err(Mismatch::Digest {
            expected: file.digest.clone(),
            actual,
        });
    }
    Ok(())
}

/// Why a `SKILL.md`'s frontmatter does not match its entry's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FrontmatterProblem {
    /// There is no frontmatter, or it is not a YAML mapping.
    Unreadable(String),
    /// A field differs, is missing from one side, or is extra on one.
    Field { field: String, detail: String },
}

/// The YAML between the opening `---` line of `text` and the next `---`
/// (or `...`) line; `None` when `text` does not begin with frontmatter.
pub(crate) fn frontmatter_text(text: &str) -> Option<&str> {
    split_frontmatter(text).map(|(yaml, _)| yaml)
}

/// `text` as its frontmatter's YAML and the body after the closing line.
pub(crate) fn split_frontmatter(text: &str) -> Option<(&str, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (first, rest) = text.split_once('\n')?;
    if first.trim_end() != "---" {
        return None;
    }
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end();
        if bare == "---" || bare == "..." {
            return Some((&rest[..at], &rest[at + line.len()..]));
        }
        at += line.len();
    }
    None
}

/// The frontmatter of a `SKILL.md`, parsed as YAML and rendered as JSON.
pub(crate) fn parse_frontmatter(text: &str) -> Result<JsonObject, FrontmatterProblem> {
    let yaml = frontmatter_text(text).ok_or_else(|| {
        FrontmatterProblem::Unreadable("SKILL.md does not begin with `---` frontmatter".into())
    })?;
    let docs = YamlLoader::load_from_str(yaml)
        .map_err(|e| FrontmatterProblem::Unreadable(format!("the frontmatter is not YAML: {e}")))?;
    match docs.into_iter().next().map(to_json) {
        Some(Ok(Value::Object(map))) => Ok(map),
        Some(Err(e)) => Err(FrontmatterProblem::Unreadable(e)),
        _ => Err(FrontmatterProblem::Unreadable(
            "the frontmatter is not a YAML mapping".into(),
        )),
    }
}

/// A YAML node as JSON: mappings' keys as strings, as JSON writes them.
fn to_json(node: Yaml) -> Result<Value, String> {
    Ok(match node {
        Yaml::Null => Value::Null,
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Integer(i) => Value::from(i),
        Yaml::String(s) => Value::String(s),
        Yaml::Real(text) => match text.parse::<f64>().ok().and_then(Number::from_f64) {
            Some(n) => Value::Number(n),
            // `.inf`, `.nan`: no JSON number holds them.
            None => Value::String(text),
        },
        Yaml::Array(items) => {
            Value::Array(items.into_iter().map(to_json).collect::<Result<_, _>>()?)
        }
        Yaml::Hash(hash) => {
            let mut map = Map::new();
            for (key, value) in hash {
                map.insert(key_text(key)?, to_json(value)?);
            }
            Value::Object(map)
        }
        Yaml::Alias(_) | Yaml::BadValue => {
            return Err("the frontmatter has a value YAML could not resolve".into());
        }
    })
}

fn key_text(key: Yaml) -> Result<String, String> {
    match key {
        Yaml::String(s) | Yaml::Real(s) => Ok(s),
        Yaml::Integer(i) => Ok(i.to_string()),
        Yaml::Boolean(b) => Ok(b.to_string()),
        Yaml::Null => Ok("null".into()),
        _ => Err("the frontmatter has a mapping key that is not a scalar".into()),
    }
}

/// Compares the fetched frontmatter with the entry's, field by field:
/// the same fields, each of the same value (numbers by value, so `1` and
/// `1.0` agree).
pub(crate) fn compare_frontmatter(
    entry: &JsonObject,
    fetched: &JsonObject,
) -> Result<(), FrontmatterProblem> {
    for (field, expected) in entry {
        match fetched.get(field) {
            None => {
                return Err(FrontmatterProblem::Field {
                    field: field.clone(),
                    detail: "the entry has it, the fetched SKILL.md does not".into(),
                });
            }
            Some(actual) if !same(expected, actual) => {
                return Err(FrontmatterProblem::Field {
                    field: field.clone(),
                    detail: format!("the entry says {expected}, the fetched SKILL.md {actual}"),
                });
            }
            Some(_) => {}
        }
    }
    match fetched.keys().find(|k| !entry.contains_key(*k)) {
        Some(field) => Err(FrontmatterProblem::Field {
            field: field.clone(),
            detail: "the fetched SKILL.md has it, the entry does not".into(),
        }),
        None => Ok(()),
    }
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || matches!((x.as_f64(), y.as_f64()), (Some(x), Some(y)) if x == y)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Where `reference` leads from the skill whose root is `root`
/// (`skill://acme/billing/refunds`): a relative path resolves against the
/// root, as on a filesystem (`.` and `..` included); a full URI is taken as
/// it is. `None` when the result leaves the root.
pub(crate) fn resolve(root: &str, reference: &str) -> Option<String> {
    let within = |uri: &str| uri.strip_prefix(root).is_some_and(|r| r.starts_with('/'));
    if reference.contains("://") {
        return within(reference).then(|| reference.to_owned());
    }
    let mut parts: Vec<&str> = Vec::new();
    for segment in reference.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    if parts.is_empty() || reference.starts_with('/') {
        return None;
    }
    Some(format!("{root}/{}", parts.join("/")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(v: Value) -> JsonObject {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn digest_and_size() {
        let bytes = b"hello\n";
        let digest = digest_of(bytes);
        assert_eq!(
            digest,
            "sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
        );
        let file = SkillFile::new("skill://a/SKILL.md", digest.clone(), 6);
        assert_eq!(check_file(&file, bytes), Ok(()));
        assert_eq!(
            check_file(&file, b"hello!\n"),
            Err(Mismatch::Size {
                expected: 6,
                actual: 7
            })
        );
        assert!(matches!(
            check_file(&file, b"jello\n"),
            Err(Mismatch::Digest { .. })
        ));
    }

    #[test]
    fn frontmatter_is_read_as_json() {
        let text = "---\nname: pdf\ndescription: \"Extract: things\"\nmetadata:\n  version: \"2.1\"\n  n: 3\n  f: 1.5\ntags: [a, b]\n---\nBody\n";
        let fm = parse_frontmatter(text).unwrap();
        assert_eq!(
            Value::Object(fm),
            json!({"name": "pdf", "description": "Extract: things",
                   "metadata": {"version": "2.1", "n": 3, "f": 1.5}, "tags": ["a", "b"]})
        );
        assert!(matches!(
            parse_frontmatter("# no frontmatter\n"),
            Err(FrontmatterProblem::Unreadable(_))
        ));
        assert!(matches!(
            parse_frontmatter("---\nname: a\n"),
            Err(FrontmatterProblem::Unreadable(_))
        ));
        assert!(matches!(
            parse_frontmatter("---\n- a\n---\n"),
            Err(FrontmatterProblem::Unreadable(_))
        ));
        assert_eq!(
            frontmatter_text("---\r\nname: a\r\n---\r\n"),
            Some("name: a\r\n")
        );
        assert_eq!(
            split_frontmatter("---\nname: a\n---\nBody\n"),
            Some(("name: a\n", "Body\n"))
        );
    }

    #[test]
    fn frontmatter_compared_field_by_field() {
        let entry = object(json!({"name": "a", "description": "d", "metadata": {"v": 1}}));
        let same_fm = object(json!({"description": "d", "name": "a", "metadata": {"v": 1.0}}));
        assert_eq!(compare_frontmatter(&entry, &same_fm), Ok(()));
        let changed = object(json!({"name": "a", "description": "evil", "metadata": {"v": 1}}));
        assert!(matches!(
            compare_frontmatter(&entry, &changed),
            Err(FrontmatterProblem::Field { field, .. }) if field == "description"
        ));
        let extra = object(
            json!({"name": "a", "description": "d", "metadata": {"v": 1}, "allowed-tools": "Bash"}),
        );
        assert!(matches!(
            compare_frontmatter(&entry, &extra),
            Err(FrontmatterProblem::Field { field, .. }) if field == "allowed-tools"
        ));
        let missing = object(json!({"name": "a", "metadata": {"v": 1}}));
        assert!(compare_frontmatter(&entry, &missing).is_err());
    }

    #[test]
    fn references_resolve_against_the_root() {
        let root = "skill://acme/billing/refunds";
        assert_eq!(
            resolve(root, "references/GUIDE.md").as_deref(),
            Some("skill://acme/billing/refunds/references/GUIDE.md")
        );
        assert_eq!(
            resolve(root, "./a/../b.md").as_deref(),
            Some("skill://acme/billing/refunds/b.md")
        );
        assert_eq!(resolve(root, "../other/SKILL.md"), None);
        assert_eq!(resolve(root, "/etc/passwd"), None);
        assert_eq!(resolve(root, ""), None);
        assert_eq!(
            resolve(root, "skill://acme/billing/refunds/x.md").as_deref(),
            Some("skill://acme/billing/refunds/x.md")
        );
        assert_eq!(resolve(root, "skill://acme/billing/refundsX/x.md"), None);
        assert_eq!(resolve(root, "skill://other/SKILL.md"), None);
    }
}
