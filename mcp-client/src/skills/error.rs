//! Why a skill did not load, or a file of it was not read: one typed error
//! per rule of SEP-2640's verification, none of which carries the content
//! that failed.

use mcp_protocol::types::SkillEntry;

use super::verify::{FrontmatterProblem, Mismatch};
use crate::error::ClientError;

/// Why a skill was not loaded or a file of it was not read. A verification
/// failure never hands back the bytes that failed: they are dropped.
///
/// ```
/// use mcp_client::skills::SkillError;
///
/// fn explain(e: &SkillError) -> &'static str {
///     match e {
///         SkillError::Changed { .. } => "the skill changed: ask the user again, then load the new entry",
///         e if e.is_verification_failure() => "the server sent what its entry did not promise",
///         _ => "something else went wrong",
///     }
/// }
/// # let _ = explain;
/// ```
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// The entry cannot be loaded: no `resources` list (or an invalid
    /// one), no file for its own `SKILL.md`, a URI that is not a
    /// `SKILL.md`, a malformed digest, a file outside the skill.
    #[error("the skill entry {uri} cannot be loaded: {detail}")]
    InvalidEntry {
        /// The entry's URI.
        uri: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The entry's `resources` is `"dynamic"`: nothing to verify against,
    /// and the loader was not told to accept such skills
    /// ([`SkillLoader::allow_dynamic`](super::SkillLoader::allow_dynamic)).
    #[error("the skill {uri} is dynamic (no digests), and dynamic skills are not loaded")]
    Dynamic {
        /// The entry's URI.
        uri: String,
    },
    /// A file's length differs from its entry's `size`.
    #[error("{uri} is {actual} bytes long, but its skill entry says {expected}")]
    SizeMismatch {
        /// The file.
        uri: String,
        /// The entry's `size`.
        expected: u64,
        /// What was read.
        actual: u64,
    },
    /// A file's SHA-256 differs from its entry's `digest`.
    #[error("{uri} does not match its skill entry's digest (expected {expected}, got {actual})")]
    DigestMismatch {
        /// The file.
        uri: String,
        /// The entry's digest.
        expected: String,
        /// The digest of what was read.
        actual: String,
    },
    /// The fetched `SKILL.md`'s frontmatter differs from the entry's, or
    /// cannot be read.
    #[error("the frontmatter of {uri} does not match its skill entry ({field}): {detail}")]
    FrontmatterMismatch {
        /// The `SKILL.md`.
        uri: String,
        /// The field that differs (empty when the frontmatter could not be
        /// read at all).
        field: String,
        /// How.
        detail: String,
    },
    /// A file of the skill that its entry does not list: reading it would
    /// go past what the entry (and any approval bound to it) covers.
    #[error("{uri} is not listed in its skill's entry; refresh the entry (skills/get) to reach it")]
    Unlisted {
        /// The file.
        uri: String,
    },
    /// A reference that leads outside the skill's root.
    #[error("{reference:?} leads outside the skill {root}")]
    OutsideSkill {
        /// The reference as given.
        reference: String,
        /// The skill's root.
        root: String,
    },
    /// Verification failed, and `skills/get` gave a different entry: the
    /// skill changed on the server since its entry was read. Nothing of it
    /// was loaded; an approval bound to the old entry no longer holds.
    /// Ask again, then load [`entry`](SkillError::Changed::entry).
    #[error("the skill {} changed on the server ({cause}); its new entry must be approved and loaded", .entry.uri)]
    Changed {
        /// The current entry, from `skills/get`.
        entry: Box<SkillEntry>,
        /// The verification failure that led to the refresh.
        cause: Box<SkillError>,
    },
    /// A request failed (`resources/read`, `skills/get`), or its answer
    /// held no content for the file.
    #[error(transparent)]
    Client(#[from] ClientError),
}

impl SkillError {
    /// Whether this is a failure of verification (size, digest,
    /// frontmatter, an unlisted file): content that is not what the entry
    /// promised, which `skills/get` may explain as a change.
    pub fn is_verification_failure(&self) -> bool {
        matches!(
            self,
            SkillError::SizeMismatch { .. }
                | SkillError::DigestMismatch { .. }
                | SkillError::FrontmatterMismatch { .. }
                | SkillError::Unlisted { .. }
        )
    }

    pub(crate) fn mismatch(uri: &str, mismatch: Mismatch) -> SkillError {
        let uri = uri.to_owned();
        match mismatch {
            Mismatch::Size { expected, actual } => SkillError::SizeMismatch {
                uri,
                expected,
                actual,
            },
            Mismatch::Digest { expected, actual } => SkillError::DigestMismatch {
                uri,
                expected,
                actual,
            },
        }
    }

    pub(crate) fn frontmatter(uri: &str, problem: FrontmatterProblem) -> SkillError {
        let (field, detail) = match problem {
            FrontmatterProblem::Unreadable(detail) => (String::new(), detail),
            FrontmatterProblem::Field { field, detail } => (field, detail),
        };
        SkillError::FrontmatterMismatch {
            uri: uri.to_owned(),
            field,
            detail,
        }
    }

    pub(crate) fn invalid(uri: &str, detail: impl Into<String>) -> SkillError {
        SkillError::InvalidEntry {
            uri: uri.to_owned(),
            detail: detail.into(),
        }
    }
}
