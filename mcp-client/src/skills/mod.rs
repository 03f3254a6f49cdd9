//! Agent Skills served over MCP (the Skills extension, SEP-2640,
//! `io.modelcontextprotocol/skills`), verified as a host must.
//!
//! A server that declares the extension ([`Client::skills_extension`])
//! lists its skills ([`Client::list_skills`], cached for its `ttlMs` like
//! the other lists), gives any one by URI ([`Client::get_skill`]) and, with
//! `directoryRead`, the children of a directory
//! ([`Client::read_directory`]). Each entry carries the skill's
//! frontmatter and every file with its `sha256:` digest and size.
//!
//! A [`SkillLoader`] ([`Client::skill_loader`]) turns an entry into a
//! [`LoadedSkill`] the way SEP-2640 asks of a host:
//!
//! - nothing is fetched ahead of need: not on connecting, not on listing,
//!   not on approval; the `SKILL.md` when the skill is loaded, another file
//!   when it is read;
//! - every file is checked against the entry's size and digest, and a file
//!   the entry does not list is refused;
//! - the `SKILL.md`'s YAML frontmatter is compared field by field with the
//!   entry's;
//! - a failure asks `skills/get` whether the skill changed
//!   ([`SkillError::Changed`], carrying the new entry to approve), and is
//!   never worked around with the content that failed, which is dropped;
//! - verified files are kept in a [`SkillCache`] keyed by the server's
//!   origin (the host's label for it) and the URI together, served while
//!   the entry's digest is the one they were verified against;
//! - relative references resolve against the skill's own root.
//!
//! Across many servers, [`Host::list_skills`](crate::host::Host::list_skills)
//! names each skill by its server so that same-named skills never shadow
//! one another.
//!
//! [`Client`]: crate::Client
//! [`Client::skills_extension`]: crate::Client::skills_extension
//! [`Client::list_skills`]: crate::Client::list_skills
//! [`Client::get_skill`]: crate::Client::get_skill
//! [`Client::read_directory`]: crate::Client::read_directory
//! [`Client::skill_loader`]: crate::Client::skill_loader

mod api;
mod cache;
mod error;
mod loader;
mod verify;

pub use cache::{DEFAULT_CACHE_BYTES, SkillCache};
pub use error::SkillError;
pub use loader::{LoadedSkill, SkillContent, SkillLoader};
pub use mcp_protocol::types::{
    SKILLS_EXTENSION, SkillEntry, SkillFile, SkillResources, SkillsSettings,
};
