//! The Skills extension (SEP-2640) as a server serves it: skills whose
//! files are resources under `skill://<path>/…`, `skills/list`,
//! `skills/get` and, with `directoryRead`, `resources/directory/read`. On
//! when [`FakeConfig::with_skills`](crate::FakeConfig::with_skills) adds
//! skills (the binary: `--skills`), which declares the extension.

use mcp_protocol::ErrorObject;
use mcp_protocol::error_codes::INVALID_PARAMS;
use mcp_protocol::methods;
use mcp_protocol::types::{DIRECTORY_MIME_TYPE, SKILLS_EXTENSION};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::errors::{invalid_params, method_not_found};
use super::session::Session;

/// A skill the fake server serves: a directory of text files, its
/// `SKILL.md` among them.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FakeSkill {
    /// The skill path (`acme/billing/refunds`); its last segment is the
    /// skill's name.
    pub path: String,
    /// Each file: its path inside the skill (`SKILL.md`,
    /// `references/GUIDE.md`) and its text.
    pub files: Vec<(String, String)>,
}

impl FakeSkill {
    /// A skill at `path` whose `SKILL.md` has this `description` in its
    /// frontmatter and `body` after it.
    ///
    /// ```
    /// use mcp_reference_server::FakeSkill;
    ///
    /// let skill = FakeSkill::new("git-workflow", "Our Git conventions", "Branch from main.\n")
    ///     .with_file("references/COMMITS.md", "One line, then a blank one.\n");
    /// assert_eq!(skill.uri(), "skill://git-workflow/SKILL.md");
    /// ```
    pub fn new(path: &str, description: &str, body: &str) -> FakeSkill {
        let name = path.rsplit('/').next().unwrap_or(path);
        let skill_md = format!("---\nname: {name}\ndescription: {description}\n---\n\n{body}");
        FakeSkill {
            path: path.to_owned(),
            files: vec![("SKILL.md".to_owned(), skill_md)],
        }
    }

    /// The same skill with one more file.
    pub fn with_file(mut self, path: &str, text: &str) -> FakeSkill {
        self.files.push((path.to_owned(), text.to_owned()));
        self
    }

    /// The URI of its `SKILL.md`.
    pub fn uri(&self) -> String {
        format!("skill://{}/SKILL.md", self.path)
    }

    fn root(&self) -> String {
        format!("skill://{}", self.path)
    }

    fn file_uri(&self, file: &str) -> String {
        format!("{}/{file}", self.root())
    }

    /// Its entry: the frontmatter read back from `SKILL.md` (`key: value`
    /// lines) and every file with its digest and size.
    fn entry(&self) -> Value {
        let skill_md = self
            .files
            .iter()
            .find(|(p, _)| p == "SKILL.md")
            .map_or("", |(_, t)| t.as_str());
        let mut frontmatter = serde_json::Map::new();
        for line in skill_md.lines().skip(1).take_while(|l| *l != "---") {
            if let Some((key, value)) = line.split_once(": ") {
                frontmatter.insert(key.to_owned(), json!(value));
            }
        }
        let resources: Vec<Value> = self
            .files
            .iter()
            .map(|(path, text)| {
                json!({"uri": self.file_uri(path), "digest": digest(text), "size": text.len()})
            })
            .collect();
        json!({"uri": self.uri(), "frontmatter": frontmatter, "resources": resources})
    }
}

fn digest(text: &str) -> String {
    let hex: String = Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// The skills of the reference server's `--skills`: one with supporting
/// files in two directories, one nested under a prefix.
pub fn demo_skills() -> Vec<FakeSkill> {
    vec![
        FakeSkill::new(
            "pdf-processing",
            "Extract, fill, and assemble PDF documents",
            "Fill the form from [the forms guide](references/FORMS.md), then pick a \
             template from `templates/`.\n",
        )
        .with_file("references/FORMS.md", "# Forms\n\nEvery field, in order.\n")
        .with_file("templates/invoice.md", "# Invoice\n"),
        FakeSkill::new(
            "acme/billing/refunds",
            "Process customer refund requests per company policy",
            "Refund within 30 days; see [the email](examples/email.md).\n",
        )
        .with_file("examples/email.md", "Dear customer,\n"),
    ]
}

/// Whether `method` is one of the extension's.
pub(crate) fn is_skills_method(method: &str) -> bool {
    matches!(
        method,
        methods::SKILLS_LIST | methods::SKILLS_GET | methods::RESOURCES_DIRECTORY_READ
    )
}

/// Answers a method of the extension: method not found when the server
/// does not declare it (or, for directory reads, `directoryRead`).
pub(crate) fn handle(
    session: &Session,
    method: &str,
    params: &Value,
) -> Result<Value, ErrorObject> {
    let config = session.config();
    let settings = config
        .capabilities
        .get("extensions")
        .and_then(|e| e.get(SKILLS_EXTENSION));
    let Some(settings) = settings else {
        return Err(method_not_found(method));
    };
    let skills = &config.content.skills;
    match method {
        methods::SKILLS_LIST => {
            Ok(json!({"skills": skills.iter().map(FakeSkill::entry).collect::<Vec<_>>()}))
        }
        methods::SKILLS_GET => {
            let uri = params
                .get("uri")
                .and_then(Value::as_str)
                .unwrap_or_default();
            match skills.iter().find(|s| s.uri() == uri) {
                Some(skill) => Ok(json!({"skill": skill.entry()})),
                None => Err(invalid_params(format!("Unknown skill: {uri}"))),
            }
        }
        _ if settings.get("directoryRead") != Some(&json!(true)) => Err(method_not_found(method)),
        _ => read_directory(skills, params),
    }
}

/// `resources/directory/read`: the direct children of a skill's directory.
fn read_directory(skills: &[FakeSkill], params: &Value) -> Result<Value, ErrorObject> {
    let uri = params
        .get("uri")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let not_a_directory = || {
        ErrorObject::new(INVALID_PARAMS, format!("Not a directory: {uri}"))
            .with_data(json!({"uri": uri}))
    };
    let (skill, dir) = skills
        .iter()
        .find_map(|s| {
            let root = s.root();
            let rest = uri.strip_prefix(&root)?;
            match rest {
                "" => Some((s, String::new())),
                _ => rest.strip_prefix('/').map(|d| (s, format!("{d}/"))),
            }
        })
        .ok_or_else(not_a_directory)?;
    let mut children: Vec<Value> = Vec::new();
    let mut dirs: Vec<String> = Vec::new();
    for (path, _) in &skill.files {
        let Some(rest) = path.strip_prefix(&dir) else {
            continue;
        };
        match rest.split_once('/') {
            None => children.push(json!({
                "uri": skill.file_uri(path), "name": rest, "mimeType": "text/markdown"
            })),
            Some((sub, _)) if !dirs.iter().any(|d| d == sub) => dirs.push(sub.to_owned()),
            Some(_) => {}
        }
    }
    if children.is_empty() && dirs.is_empty() {
        return Err(not_a_directory());
    }
    for sub in dirs {
        children.push(json!({
            "uri": format!("{}/{dir}{sub}", skill.root()), "name": sub, "mimeType": DIRECTORY_MIME_TYPE
        }));
    }
    Ok(json!({"resources": children}))
}

/// `resources/read` of a skill file, when `uri` is one.
pub(crate) fn read(session: &Session, uri: &str) -> Option<Value> {
    let config = session.config();
    config.content.skills.iter().find_map(|skill| {
        skill.files.iter().find_map(|(path, text)| {
            (skill.file_uri(path) == uri).then(
                || json!({"contents": [{"uri": uri, "mimeType": "text/markdown", "text": text}]}),
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_list_every_file_with_its_digest() {
        let skill = &demo_skills()[1];
        let entry = skill.entry();
        assert_eq!(entry["uri"], "skill://acme/billing/refunds/SKILL.md");
        assert_eq!(entry["frontmatter"]["name"], "refunds");
        assert_eq!(entry["resources"].as_array().unwrap().len(), 2);
        let text = &skill.files[0].1;
        assert_eq!(entry["resources"][0]["size"], text.len());
        assert_eq!(
            digest("hello\n"),
            "sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
        );
    }

    #[test]
    fn directories_list_their_direct_children() {
        let skills = demo_skills();
        let read = |uri: &str| read_directory(&skills, &json!({"uri": uri}));
        let root = read("skill://pdf-processing").unwrap();
        let names: Vec<&str> = root["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["SKILL.md", "references", "templates"]);
        let templates = read("skill://pdf-processing/templates").unwrap();
        assert_eq!(
            templates["resources"][0]["uri"],
            "skill://pdf-processing/templates/invoice.md"
        );
        assert!(read("skill://pdf-processing/nothing").is_err());
        assert!(read("skill://unknown").is_err());
    }
}
