//! Verified skill files kept in memory, keyed by the server's identity and
//! the file's URI together, each valid while its entry's digest is the one
//! it was verified against.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The default bound on the bytes a [`SkillCache`] keeps: four skills at
/// SEP-2640's per-skill limit of 16 MiB.
pub const DEFAULT_CACHE_BYTES: usize = 64 * 1024 * 1024;

/// Verified skill files, shared by every loader given a clone of it.
///
/// An entry is keyed by the origin (the host's own label for the server,
/// never the server's self-reported name) and the URI together, so two
/// servers that both serve `skill://refunds/SKILL.md` never share a copy;
/// and it is served only while the skill's entry names the digest it was
/// verified against, so a file that changed on the server is fetched (and
/// verified) again. The cache lives in the process's memory, where nothing
/// but the host writes; nothing is written to disk.
///
/// ```
/// use mcp_client::skills::SkillCache;
///
/// let cache = SkillCache::with_limit(1024 * 1024);
/// let shared = cache.clone(); // one cache for every server's loader
/// assert!(shared.is_empty());
/// cache.forget_origin("files"); // when the user removes a server
/// ```
#[derive(Clone)]
pub struct SkillCache {
    inner: Arc<Mutex<Kept>>,
}

struct Kept {
    files: HashMap<(String, String), File>,
    bytes: usize,
    limit: usize,
    clock: u64,
}

struct File {
    digest: String,
    bytes: Arc<[u8]>,
    used: u64,
}

impl Default for SkillCache {
    fn default() -> Self {
        SkillCache::with_limit(DEFAULT_CACHE_BYTES)
    }
}

impl SkillCache {
    /// An empty cache keeping up to [`DEFAULT_CACHE_BYTES`].
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty cache keeping up to `bytes` (0 keeps nothing); the least
    /// recently used files go first.
    pub fn with_limit(bytes: usize) -> Self {
        SkillCache {
            inner: Arc::new(Mutex::new(Kept {
                files: HashMap::new(),
                bytes: 0,
                limit: bytes,
                clock: 0,
            })),
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many files are kept.
    pub fn len(&self) -> usize {
        self.kept().files.len()
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every file of one origin (a server the user removed).
    pub fn forget_origin(&self, origin: &str) {
        let mut kept = self.kept();
        let mut freed = 0;
        kept.files.retain(|(o, _), f| {
            let keep = o != origin;
            if !keep {
                freed += f.bytes.len();
            }
            keep
        });
        kept.bytes -= freed;
    }

    /// The bytes of `uri` from `origin`, when kept and verified against
    /// `digest`.
    pub(crate) fn get(&self, origin: &str, uri: &str, digest: &str) -> Option<Arc<[u8]>> {
        let mut kept = self.kept();
        kept.clock += 1;
        let now = kept.clock;
        let file = kept.files.get_mut(&(origin.to_owned(), uri.to_owned()))?;
        if file.digest != digest {
            return None;
        }
        file.used = now;
        Some(Arc::clone(&file.bytes))
    }

    /// Keeps `bytes`, verified against `digest`, as `uri` of `origin`.
    pub(crate) fn put(&self, origin: &str, uri: &str, digest: &str, bytes: Arc<[u8]>) {
        let mut kept = self.kept();
        if bytes.len() > kept.limit {
            return;
        }
        let key = (origin.to_owned(), uri.to_owned());
        if let Some(old) = kept.files.remove(&key) {
            kept.bytes -= old.bytes.len();
        }
        while kept.bytes + bytes.len() > kept.limit {
            let Some(oldest) = kept
                .files
                .iter()
                .min_by_key(|(_, f)| f.used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(gone) = kept.files.remove(&oldest) {
                kept.bytes -= gone.bytes.len();
            }
        }
        kept.clock += 1;
        let used = kept.clock;
        kept.bytes += bytes.len();
        kept.files.insert(
            key,
            File {
                digest: digest.to_owned(),
                bytes,
                used,
            },
        );
    }
}

impl std::fmt::Debug for SkillCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kept = self.kept();
        f.debug_struct("SkillCache")
            .field("files", &kept.files.len())
            .field("bytes", &kept.bytes)
            .field("limit", &kept.limit)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_by_origin_and_uri_and_valid_for_its_digest() {
        let cache = SkillCache::new();
        let uri = "skill://refunds/SKILL.md";
        cache.put("a", uri, "sha256:1", Arc::from(&b"from a"[..]));
        cache.put("b", uri, "sha256:2", Arc::from(&b"from b"[..]));
        assert_eq!(&*cache.get("a", uri, "sha256:1").unwrap(), b"from a");
        assert_eq!(&*cache.get("b", uri, "sha256:2").unwrap(), b"from b");
        assert!(cache.get("a", uri, "sha256:2").is_none(), "another digest");
        assert!(cache.get("c", uri, "sha256:1").is_none(), "another origin");
        cache.forget_origin("a");
        assert!(cache.get("a", uri, "sha256:1").is_none());
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn bounded_least_recently_used_first() {
        let cache = SkillCache::with_limit(10);
        cache.put("a", "1", "d", Arc::from(&[0u8; 4][..]));
        cache.put("a", "2", "d", Arc::from(&[0u8; 4][..]));
        cache.get("a", "1", "d");
        cache.put("a", "3", "d", Arc::from(&[0u8; 4][..]));
        assert!(cache.get("a", "1", "d").is_some());
        assert!(
            cache.get("a", "2", "d").is_none(),
            "the least recently used went"
        );
        cache.put("a", "big", "d", Arc::from(&[0u8; 11][..]));
        assert!(
            cache.get("a", "big", "d").is_none(),
            "larger than the bound"
        );
        assert!(SkillCache::with_limit(0).is_empty());
    }
}
