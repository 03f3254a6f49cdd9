//! `mcp skills list|get URI|read URI [FILE]`: the Skills extension
//! (SEP-2640). `read` goes through the library's verified loader: the
//! skill's entry from `skills/get`, its `SKILL.md` and the file checked
//! against the entry's digests, sizes and frontmatter.

use mcp_client::skills::{LoadedSkill, SkillEntry, SkillError, SkillResources};
use serde_json::json;

use super::Ctx;
use crate::args::SkillsCommand;
use crate::exit::{Failure, Kind, Outcome};
use crate::output::{one_line, table};

pub(super) async fn run(ctx: &Ctx, command: SkillsCommand) -> Outcome {
    if ctx.client.skills_extension().is_none() {
        return Err(Failure::new(
            Kind::Server,
            "the server does not declare the Skills extension (io.modelcontextprotocol/skills)",
        ));
    }
    match command {
        SkillsCommand::List => {
            let skills = ctx.client.list_all_skills().await?;
            if ctx.out.json {
                return ctx.out.json(&json!({ "skills": skills }));
            }
            ctx.out.text(&skills_table(&skills))
        }
        SkillsCommand::Get { uri } => {
            let entry = ctx.client.get_skill(&uri).await?;
            if ctx.out.json {
                return ctx.out.json(&entry);
            }
            ctx.out.text(&describe(&entry))
        }
        SkillsCommand::Read { uri, file } => read(ctx, &uri, file.as_deref()).await,
    }
}

/// A table of skill entries.
fn skills_table(skills: &[SkillEntry]) -> String {
    let rows: Vec<Vec<String>> = skills
        .iter()
        .map(|s| {
            vec![
                s.name().unwrap_or("?").to_owned(),
                s.uri.clone(),
                files_cell(&s.resources),
                one_line(s.description(), 50),
            ]
        })
        .collect();
    table(&["NAME", "URI", "FILES", "DESCRIPTION"], &rows)
}

fn files_cell(resources: &SkillResources) -> String {
    match resources {
        SkillResources::Listed(files) => files.len().to_string(),
        SkillResources::Dynamic => "dynamic".into(),
        _ => "invalid".into(),
    }
}

/// One entry: its frontmatter, then its files with sizes and digests.
fn describe(entry: &SkillEntry) -> String {
    let mut out = format!("{}\n", entry.uri);
    for (field, value) in &entry.frontmatter {
        let value = value
            .as_str()
            .map_or_else(|| value.to_string(), str::to_owned);
        out.push_str(&format!("  {field}: {value}\n"));
    }
    match &entry.resources {
        SkillResources::Listed(files) => {
            let rows: Vec<Vec<String>> = files
                .iter()
                .map(|f| {
                    vec![
                        f.uri.clone(),
                        f.size.map_or_else(|| "?".into(), |s| s.to_string()),
                        f.digest.clone(),
                    ]
                })
                .collect();
            out.push('\n');
            out.push_str(&table(&["FILE", "SIZE", "DIGEST"], &rows));
        }
        SkillResources::Dynamic => out.push_str("\nfiles: dynamic (no digests)\n"),
        _ => out.push_str("\nfiles: invalid entry\n"),
    }
    out
}

/// Loads the skill (verified) and prints its `SKILL.md`, or one of its
/// files (relative to the skill's root, or a full URI), verified too.
async fn read(ctx: &Ctx, uri: &str, file: Option<&str>) -> Outcome {
    let skill = load(ctx, uri).await?;
    let (uri, bytes) = match file {
        None => (skill.entry().uri.clone(), skill.text().as_bytes().to_vec()),
        Some(file) => {
            let content = skill.read(file).await.map_err(failure)?;
            (content.uri.clone(), content.bytes.to_vec())
        }
    };
    if ctx.out.json {
        let text = String::from_utf8(bytes.clone()).ok();
        return ctx.out.json(&json!({
            "uri": uri,
            "skill": skill.entry().uri,
            "verified": true,
            "size": bytes.len(),
            "text": text,
        }));
    }
    ctx.out.bytes(&bytes)?;
    if ctx.out.terminal && !bytes.ends_with(b"\n") {
        ctx.out.bytes(b"\n")?;
    }
    Ok(())
}

/// The skill at `uri`, verified; a skill that changed since its entry was
/// read is loaded once more under its new entry (the user asked for it
/// now), saying so.
async fn load(ctx: &Ctx, uri: &str) -> Result<LoadedSkill, Failure> {
    let loader = ctx.client.skill_loader("mcp");
    match loader.load_uri(uri).await {
        Ok(skill) => Ok(skill),
        Err(SkillError::Changed { entry, cause }) => {
            say!(
                "mcp: the skill changed on the server while loading ({cause}); loading its new entry"
            );
            loader.load(&entry).await.map_err(failure)
        }
        Err(e) => Err(failure(e)),
    }
}

fn failure(error: SkillError) -> Failure {
    match error {
        SkillError::Client(e) => Failure::from(e),
        e if e.is_verification_failure() => Failure::new(
            Kind::Server,
            format!("verification failed: {e}"),
        )
        .hint(
            "nothing of what failed is shown; the server's content does not match its skill entry",
        ),
        e => Failure::new(Kind::Server, e.to_string()),
    }
}
