//! Skills across the host's servers: each named by its server, so that a
//! skill never shadows another of the same name (SEP-2640: names resolve
//! within a per-origin namespace, the origin being the host's own label
//! for the server), loaded through the server that serves it, with one
//! cache for all keyed by server and URI.

use std::collections::HashMap;

use mcp_protocol::types::SkillEntry;

use super::Host;
use crate::skills::{LoadedSkill, SkillCache, SkillError};

/// A skill of one of the host's servers, under its host-wide name.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HostSkill {
    /// The name to load it by through the host: the server's name, then
    /// the skill's own name (or, when two skills of that server share a
    /// name, its path).
    pub name: String,
    /// The server it belongs to (the host's name for it).
    pub server: String,
    /// The skill's entry as its server lists it.
    pub entry: SkillEntry,
}

impl Host {
    /// Every skill of the connected servers that declare the Skills
    /// extension, under host-wide names: two servers' `refunds` become
    /// `one__refunds` and `two__refunds`, never one hiding the other.
    /// Only the listings are read; no skill file is fetched.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use mcp_client::host::Host;
    /// use mcp_reference_server::{FakeConfig, FakeServer, demo_skills};
    ///
    /// let with_skills = || FakeServer::new(FakeConfig::dual().with_skills(demo_skills(), false));
    /// let host = Host::builder()
    ///     .server("one", with_skills().connector())
    ///     .server("two", with_skills().connector())
    ///     .server("none", FakeServer::new(FakeConfig::legacy()).connector())
    ///     .connect()
    ///     .await;
    /// let names: Vec<String> = host.list_skills().await.into_iter().map(|s| s.name).collect();
    /// assert!(names.contains(&"one__pdf-processing".to_owned()));
    /// assert!(names.contains(&"two__pdf-processing".to_owned()));
    /// let skill = host.load_skill("two__refunds").await?;
    /// assert_eq!(skill.origin(), "two");
    /// host.close().await;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn list_skills(&self) -> Vec<HostSkill> {
        let listed = self
            .gather(|c| async move {
                if c.skills_extension().is_none() {
                    return Ok(Vec::new());
                }
                c.list_all_skills().await
            })
            .await;
        let own = own_names(&listed);
        let pairs: Vec<(&str, &str)> = listed
            .iter()
            .zip(&own)
            .map(|((server, _), name)| (server.as_str(), name.as_str()))
            .collect();
        let names = self.inner.naming.names(&pairs);
        let routes = listed
            .iter()
            .zip(&names)
            .map(|((server, entry), name)| (name.clone(), (server.clone(), entry.clone())))
            .collect();
        *self.inner.skills.write().unwrap_or_else(|p| p.into_inner()) = routes;
        listed
            .into_iter()
            .zip(names)
            .map(|((server, entry), name)| HostSkill {
                name,
                server,
                entry,
            })
            .collect()
    }

    /// Loads a skill by its host-wide name (listing first when the name is
    /// not known yet), through its own server, verified (see
    /// [`SkillLoader`](crate::skills::SkillLoader)), with the host's cache.
    pub async fn load_skill(&self, name: &str) -> Result<LoadedSkill, SkillError> {
        let lookup = |host: &Host| {
            let routes = host.inner.skills.read().unwrap_or_else(|p| p.into_inner());
            routes.get(name).cloned()
        };
        let found = match lookup(self) {
            Some(found) => Some(found),
            None => {
                self.list_skills().await;
                lookup(self)
            }
        };
        let Some((server, entry)) = found else {
            return Err(crate::ClientError::usage(format!(
                "no server of the host has a skill named {name:?}"
            ))
            .into());
        };
        self.skill_loader(&server)?.load(&entry).await
    }

    /// Loads a skill of `server` known only by its URI (`skills/get`
    /// first), verified, with the host's cache.
    pub async fn load_skill_uri(&self, server: &str, uri: &str) -> Result<LoadedSkill, SkillError> {
        self.skill_loader(server)?.load_uri(uri).await
    }

    /// The cache of verified skill files every server's loader shares
    /// (keyed by server and URI).
    pub fn skill_cache(&self) -> SkillCache {
        self.inner.skill_cache.clone()
    }

    fn skill_loader(&self, server: &str) -> Result<crate::skills::SkillLoader, SkillError> {
        Ok(self
            .client_or_err(server)?
            .skill_loader(server)
            .cache(self.inner.skill_cache.clone()))
    }
}

/// Each listed skill's name within its server: its frontmatter `name`, or
/// its path when another skill of the same server has that name too (or
/// it has none).
fn own_names(listed: &[(String, SkillEntry)]) -> Vec<String> {
    let mut count: HashMap<(&str, &str), usize> = HashMap::new();
    for (server, entry) in listed {
        *count
            .entry((server.as_str(), entry.name().unwrap_or_default()))
            .or_default() += 1;
    }
    listed
        .iter()
        .map(|(server, entry)| {
            let name = entry.name().unwrap_or_default();
            if !name.is_empty() && count[&(server.as_str(), name)] == 1 {
                name.to_owned()
            } else {
                entry.path().unwrap_or(&entry.uri).replace('/', ".")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_protocol::types::{JsonObject, SkillResources};

    fn entry(uri: &str, name: &str) -> SkillEntry {
        let mut fm = JsonObject::new();
        fm.insert("name".into(), name.into());
        SkillEntry::new(uri, fm, SkillResources::Dynamic)
    }

    #[test]
    fn names_collide_within_a_server_by_path() {
        let listed = vec![
            (
                "a".to_owned(),
                entry("skill://acme/billing/refunds/SKILL.md", "refunds"),
            ),
            (
                "a".to_owned(),
                entry("skill://acme/support/refunds/SKILL.md", "refunds"),
            ),
            ("a".to_owned(), entry("skill://git/SKILL.md", "git")),
            ("b".to_owned(), entry("skill://refunds/SKILL.md", "refunds")),
        ];
        assert_eq!(
            own_names(&listed),
            [
                "acme.billing.refunds",
                "acme.support.refunds",
                "git",
                "refunds"
            ]
        );
    }
}
