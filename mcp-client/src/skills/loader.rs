//! The verified skill loader: a skill's `SKILL.md` fetched when the skill
//! is loaded and each other file when it is read, never before; every
//! byte checked against the entry held; a failure recovered by `skills/get`
//! only, never by using what failed.

use std::sync::Arc;

use base64::Engine as _;
use mcp_protocol::methods;
use mcp_protocol::types::{
    ReadResourceRequestParams, ReadResourceResult, ResourceContents, SkillEntry, SkillFile,
    SkillResources,
};

use super::cache::SkillCache;
use super::error::SkillError;
use super::verify;
use crate::client::Client;
use crate::error::ClientError;
use crate::options::CallOptions;

/// Loads the skills of one server and verifies every file it reads.
///
/// Made with [`Client::skill_loader`], naming the server by the host's own
/// label for it (its origin: never the server's self-reported name). The
/// loader fetches nothing until asked: [`load`](Self::load) reads the
/// skill's `SKILL.md` and [`LoadedSkill::read`] each other file, each
/// checked against the entry's size and `sha256:` digest, the `SKILL.md`'s
/// YAML frontmatter compared field by field with the entry's. A file the
/// entry does not list is refused. When a check fails the loader asks
/// `skills/get` for the skill's current entry: if it differs, the error is
/// [`SkillError::Changed`] with the new entry (to approve and load again),
/// and otherwise the failure itself. Content that failed is never
/// returned.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use mcp_client::skills::SkillCache;
/// # use mcp_reference_server::{FakeConfig, FakeServer, demo_skills};
/// # let server = FakeServer::new(FakeConfig::legacy().with_skills(demo_skills(), true));
/// # let client = mcp_client::Client::builder().connect(server.connector()).await?;
///
/// let cache = SkillCache::new(); // share one across servers: keyed by origin and URI
/// let loader = client.skill_loader("docs-server").cache(cache.clone());
/// let entries = client.list_all_skills().await?; // nothing fetched yet
/// let skill = loader.load(&entries[0]).await?; // SKILL.md, verified
/// println!("{} from {}:\n{}", skill.entry().uri, skill.origin(), skill.body());
/// let forms = skill.read("references/FORMS.md").await?; // relative to the skill's root
/// assert_eq!(forms.text(), Some("# Forms\n\nEvery field, in order.\n"));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct SkillLoader {
    client: Client,
    origin: Arc<str>,
    cache: SkillCache,
    refresh: bool,
    allow_dynamic: bool,
}

impl Client {
    /// A [`SkillLoader`] for this server's skills, which the host knows as
    /// `origin` (its own label for the server), with a cache of its own
    /// (share one with [`SkillLoader::cache`]).
    pub fn skill_loader(&self, origin: impl Into<String>) -> SkillLoader {
        SkillLoader {
            client: self.clone(),
            origin: Arc::from(origin.into()),
            cache: SkillCache::new(),
            refresh: true,
            allow_dynamic: false,
        }
    }
}

impl SkillLoader {
    /// The same loader keeping verified files in `cache` (keyed by this
    /// loader's origin and each file's URI).
    pub fn cache(mut self, cache: SkillCache) -> Self {
        self.cache = cache;
        self
    }

    /// Whether a failed check asks `skills/get` whether the skill changed
    /// (default true); without it, the failure is returned as it is.
    pub fn refresh_on_failure(mut self, refresh: bool) -> Self {
        self.refresh = refresh;
        self
    }

    /// Whether skills whose `resources` is `"dynamic"` load (default
    /// false: nothing can be verified of them). Their `SKILL.md`'s
    /// frontmatter is still compared; their files are read unverified.
    pub fn allow_dynamic(mut self, allow: bool) -> Self {
        self.allow_dynamic = allow;
        self
    }

    /// The host's label for the server.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Loads the skill `entry` describes: its `SKILL.md`, fetched now (or
    /// from the cache, while the digest matches) and verified.
    pub async fn load(&self, entry: &SkillEntry) -> Result<LoadedSkill, SkillError> {
        match self.load_once(entry).await {
            Ok(skill) => Ok(skill),
            Err(e) => Err(self.after_failure(entry, e).await),
        }
    }

    /// Loads a skill known only by the URI of its `SKILL.md` (from the
    /// server's instructions, another skill, the user): its entry from
    /// `skills/get` (the server answers `-32602` for a URI that is not a
    /// skill of its), then [`load`](Self::load).
    pub async fn load_uri(&self, uri: &str) -> Result<LoadedSkill, SkillError> {
        let entry = self.client.get_skill(uri).await?;
        if entry.uri != uri {
            return Err(SkillError::invalid(
                &entry.uri,
                format!("skills/get for {uri} answered with another skill"),
            ));
        }
        self.load(&entry).await
    }

    async fn load_once(&self, entry: &SkillEntry) -> Result<LoadedSkill, SkillError> {
        let root = self.check_entry(entry)?;
        let bytes = self.fetch(entry, &entry.uri).await?;
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| {
                SkillError::frontmatter(
                    &entry.uri,
                    verify::FrontmatterProblem::Unreadable("SKILL.md is not UTF-8".into()),
                )
            })?
            .to_owned();
        let fetched =
            verify::parse_frontmatter(&text).map_err(|p| SkillError::frontmatter(&entry.uri, p))?;
        verify::compare_frontmatter(&entry.frontmatter, &fetched)
            .map_err(|p| SkillError::frontmatter(&entry.uri, p))?;
        Ok(LoadedSkill {
            loader: self.clone(),
            entry: entry.clone(),
            root,
            text,
        })
    }

    /// The entry's root, when the entry can be loaded at all.
    fn check_entry(&self, entry: &SkillEntry) -> Result<String, SkillError> {
        let uri = &entry.uri;
        let root = entry
            .root()
            .ok_or_else(|| SkillError::invalid(uri, "its URI does not end in /SKILL.md"))?;
        let last = root.rsplit('/').next().unwrap_or(root);
        let last = last.rsplit("://").next().unwrap_or(last);
        if entry.name() != Some(last) {
            return Err(SkillError::invalid(
                uri,
                format!("its frontmatter's name is not {last:?}, its path's last segment"),
            ));
        }
        match &entry.resources {
            SkillResources::Listed(files) => check_files(uri, root, files)?,
            SkillResources::Dynamic if self.allow_dynamic => {}
            SkillResources::Dynamic => return Err(SkillError::Dynamic { uri: uri.clone() }),
            _ => {
                return Err(SkillError::invalid(
                    uri,
                    "its resources are neither a list nor \"dynamic\"",
                ));
            }
        }
        Ok(root.to_owned())
    }

    /// The verified bytes of `uri`, a file of `entry`: from the cache
    /// while the digest matches, else read (past the client's response
    /// cache) and checked.
    async fn fetch(&self, entry: &SkillEntry, uri: &str) -> Result<Arc<[u8]>, SkillError> {
        let file = match &entry.resources {
            SkillResources::Listed(_) => {
                Some(entry.file(uri).ok_or_else(|| SkillError::Unlisted {
                    uri: uri.to_owned(),
                })?)
            }
            _ => None,
        };
        if let Some(file) = file
            && let Some(bytes) = self.cache.get(&self.origin, uri, &file.digest)
        {
            return Ok(bytes);
        }
        let options = CallOptions::new().bypass_cache();
        let read = self
            .client
            .read_resource_with(ReadResourceRequestParams::new(uri), &options)
            .await?;
        let bytes: Arc<[u8]> = bytes_of(uri, read)?.into();
        if let Some(file) = file {
            verify::check_file(file, &bytes).map_err(|m| SkillError::mismatch(uri, m))?;
            self.cache
                .put(&self.origin, uri, &file.digest, Arc::clone(&bytes));
        }
        Ok(bytes)
    }

    /// A verification failure of `entry`'s: `Changed` when `skills/get`
    /// gives another entry, else the failure as it is.
    async fn after_failure(&self, entry: &SkillEntry, failure: SkillError) -> SkillError {
        if !self.refresh || !failure.is_verification_failure() {
            return failure;
        }
        match self.client.get_skill(&entry.uri).await {
            Ok(fresh)
                if fresh.resources != entry.resources || fresh.frontmatter != entry.frontmatter =>
            {
                SkillError::Changed {
                    entry: Box::new(fresh),
                    cause: Box::new(failure),
                }
            }
            Ok(_) => failure,
            Err(e) => {
                tracing::debug!(uri = %entry.uri, error = %e, "skills/get did not refresh the entry");
                failure
            }
        }
    }
}

/// Every listed file: a well-formed digest, inside the skill's root, and
/// the `SKILL.md` itself among them.
fn check_files(uri: &str, root: &str, files: &[SkillFile]) -> Result<(), SkillError> {
    if !files.iter().any(|f| f.uri == uri) {
        return Err(SkillError::invalid(
            uri,
            "its resources do not list its own SKILL.md",
        ));
    }
    for file in files {
        if !mcp_protocol::types::skills::digest_is_well_formed(&file.digest) {
            return Err(SkillError::invalid(
                uri,
                format!("{} has a malformed digest {:?}", file.uri, file.digest),
            ));
        }
        if verify::resolve(root, &file.uri).is_none() {
            return Err(SkillError::invalid(
                uri,
                format!("{} is outside the skill's directory", file.uri),
            ));
        }
    }
    Ok(())
}

/// The raw bytes of `uri` in a `resources/read` answer: its text as UTF-8,
/// or its blob decoded.
fn bytes_of(uri: &str, read: ReadResourceResult) -> Result<Vec<u8>, SkillError> {
    let only = read.contents.len() == 1;
    let part = read
        .contents
        .into_iter()
        .find(|c| only || c.uri() == Some(uri));
    let invalid = |detail: String| {
        SkillError::Client(ClientError::invalid(detail).with_method(methods::RESOURCES_READ))
    };
    match part {
        Some(ResourceContents::Text(text)) => Ok(text.text.into_bytes()),
        Some(ResourceContents::Blob(blob)) => base64::engine::general_purpose::STANDARD
            .decode(blob.blob.as_bytes())
            .map_err(|e| invalid(format!("the blob of {uri} is not base64: {e}"))),
        _ => Err(invalid(format!("the answer holds no contents for {uri}"))),
    }
}

impl std::fmt::Debug for SkillLoader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillLoader")
            .field("origin", &self.origin)
            .field("refresh", &self.refresh)
            .field("allow_dynamic", &self.allow_dynamic)
            .finish_non_exhaustive()
    }
}

/// A skill loaded and verified: its `SKILL.md`, the entry it was verified
/// against (held for as long as the host acts on the skill), and the way
/// to read its other files, each verified against that same entry.
#[derive(Clone, Debug)]
pub struct LoadedSkill {
    loader: SkillLoader,
    entry: SkillEntry,
    root: String,
    text: String,
}

/// One verified file of a skill.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillContent {
    /// The file's URI.
    pub uri: String,
    /// Its raw bytes, verified.
    pub bytes: Arc<[u8]>,
}

impl SkillContent {
    /// The bytes as text, when they are UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }
}

impl LoadedSkill {
    /// The host's label for the server the skill came from: tag the
    /// skill's content with it wherever it goes.
    pub fn origin(&self) -> &str {
        self.loader.origin()
    }

    /// The entry the skill was verified against.
    pub fn entry(&self) -> &SkillEntry {
        &self.entry
    }

    /// The skill's root (`skill://acme/billing/refunds`), against which
    /// its relative references resolve.
    pub fn root(&self) -> &str {
        &self.root
    }

    /// The whole `SKILL.md`, frontmatter included.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The `SKILL.md` after its frontmatter.
    pub fn body(&self) -> &str {
        verify::split_frontmatter(&self.text).map_or(&self.text, |(_, body)| body)
    }

    /// Where `reference` leads: a path relative to the skill's root
    /// (`references/GUIDE.md`), or a full URI inside it.
    pub fn resolve(&self, reference: &str) -> Result<String, SkillError> {
        verify::resolve(&self.root, reference).ok_or_else(|| SkillError::OutsideSkill {
            reference: reference.to_owned(),
            root: self.root.clone(),
        })
    }

    /// Reads a file of the skill, now, verified against the entry the
    /// skill was loaded from; a file the entry does not list is refused
    /// ([`SkillError::Unlisted`], or [`SkillError::Changed`] when the skill
    /// changed since).
    pub async fn read(&self, reference: &str) -> Result<SkillContent, SkillError> {
        let uri = self.resolve(reference)?;
        match self.loader.fetch(&self.entry, &uri).await {
            Ok(bytes) => Ok(SkillContent { uri, bytes }),
            Err(e) => Err(self.loader.after_failure(&self.entry, e).await),
        }
    }
}
