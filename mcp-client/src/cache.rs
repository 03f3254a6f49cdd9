//! The response cache: `server/discover`, the four list methods,
//! `resources/read` and the Skills extension's `skills/list`, kept as the
//! spec's caching page says.
//!
//! - Modern results carry `ttlMs` and `cacheScope`; an entry is fresh while
//!   `now < received + ttlMs`, and stale at once for 0 or absent.
//! - The key is the method plus what changes the answer (the cursor, the
//!   URI); each page is its own entry. `private` entries are keyed by the
//!   auth context too, so they are never shared across contexts.
//! - A list-changed or resource-updated notification drops the matching
//!   entries at once; one that arrives while a refetch is under way keeps
//!   that refetch's answer out (a generation counter per group).
//! - Results that took more than one round are never stored.
//! - Legacy results carry no TTL: lists are kept only where the server
//!   advertised `listChanged` for them, and for a bounded age (a server may
//!   advertise it and never send one).
//! - Stale entries are kept (within the size bound) so that a failed
//!   refetch can fall back on them, which the caller can tell.
//! - An entry is the answer's compact JSON text, parsed again on a hit: a
//!   parsed tree takes many times the heap of its text (a `tools/list` of
//!   5,000 tools: 1.2 MiB of text, 17 MiB as a `Value`), and writing the
//!   text costs less than copying the tree would.
//! - Answers larger than a bound (4 MiB of text by default) are not kept:
//!   a kept copy beside the caller's adds to the memory a large read costs,
//!   and refetching is cheap beside holding it.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_protocol::Era;
use mcp_protocol::methods::{self, CacheGroup, MethodKind};
use serde_json::Value;
use tokio::time::Instant;

/// Which notification drops an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Group {
    Discover,
    Tools,
    Prompts,
    Resources,
    Resource,
    Skills,
}

impl Group {
    fn index(self) -> usize {
        self as usize
    }

    /// The group of a cacheable method
    /// ([`MethodFacts::cache_group`](mcp_protocol::methods::MethodFacts::cache_group)
    /// of a request); `None` for the others.
    pub(crate) fn of(method: &str) -> Option<Group> {
        let facts = methods::facts(method).filter(|f| f.kind == MethodKind::Request)?;
        facts.cache_group.and_then(Group::from_facts)
    }

    /// The client's group for the protocol's.
    pub(crate) fn from_facts(group: CacheGroup) -> Option<Group> {
        Some(match group {
            CacheGroup::Discover => Group::Discover,
            CacheGroup::Tools => Group::Tools,
            CacheGroup::Prompts => Group::Prompts,
            CacheGroup::Resources => Group::Resources,
            CacheGroup::Resource => Group::Resource,
            CacheGroup::Skills => Group::Skills,
            // A group this client does not know is not cached.
            _ => return None,
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    method: String,
    /// The cursor of a page, or the URI of a read.
    param: Option<String>,
    /// The auth context, for `private` entries only.
    partition: Option<String>,
}

impl Key {
    /// The key of a request: its method and the param that selects the
    /// answer: a cached method's target (the URI of a read), or else the
    /// cursor of a page.
    pub(crate) fn of(method: &str, params: &Value) -> Key {
        let field = methods::facts(method)
            .filter(|f| f.cache_group.is_some())
            .and_then(|f| f.target)
            .map_or("cursor", |target| target.param);
        Key {
            method: method.to_owned(),
            param: params.get(field).and_then(Value::as_str).map(str::to_owned),
            partition: None,
        }
    }
}

struct Entry {
    /// The answer as compact JSON text; shared so that a lookup parses it
    /// after letting go of the lock.
    text: Arc<[u8]>,
    fresh_until: Instant,
    stored: u64,
}

/// What a lookup found.
pub(crate) enum Lookup {
    Fresh(Value),
    Stale(Value),
    Miss,
}

/// A bounded cache of results. Shared by a client's clones.
pub(crate) struct Cache {
    entries: Mutex<HashMap<Key, Entry>>,
    generations: [AtomicU64; 6],
    clock: AtomicU64,
    capacity: usize,
    max_entry_bytes: usize,
    legacy_max_age: Duration,
    partition: Option<String>,
}

/// The default bound on one kept answer's size.
pub(crate) const MAX_ENTRY_BYTES: usize = 4 * 1024 * 1024;

impl Cache {
    pub(crate) fn new(
        capacity: usize,
        legacy_max_age: Duration,
        partition: Option<String>,
    ) -> Self {
        Cache {
            entries: Mutex::new(HashMap::new()),
            generations: Default::default(),
            clock: AtomicU64::new(0),
            capacity,
            max_entry_bytes: MAX_ENTRY_BYTES,
            legacy_max_age,
            partition,
        }
    }

    /// The same cache, keeping no answer larger than `bytes`.
    pub(crate) fn with_max_entry_bytes(mut self, bytes: usize) -> Self {
        self.max_entry_bytes = bytes;
        self
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The generation of a group, read before a fetch and checked by
    /// [`store`](Self::store).
    pub(crate) fn generation(&self, group: Group) -> u64 {
        self.generations[group.index()].load(Ordering::Acquire)
    }

    fn keys_for(&self, key: &Key) -> [Key; 2] {
        let private = Key {
            partition: self.partition.clone(),
            ..key.clone()
        };
        [private, key.clone()]
    }

    pub(crate) fn lookup(&self, key: &Key) -> Lookup {
        if self.capacity == 0 {
            return Lookup::Miss;
        }
        let found = {
            let entries = self.entries();
            self.keys_for(key)
                .iter()
                .find_map(|k| entries.get(k))
                .map(|e| (Arc::clone(&e.text), Instant::now() < e.fresh_until))
        };
        let Some((text, fresh)) = found else {
            return Lookup::Miss;
        };
        // The text was written from a `Value`; it parses back to the same.
        match serde_json::from_slice(&text) {
            Ok(value) if fresh => Lookup::Fresh(value),
            Ok(value) => Lookup::Stale(value),
            Err(_) => Lookup::Miss,
        }
    }

    /// Stores a one-round result fetched in `era`, unless the group was
    /// invalidated since `generation` was read. `listed_changes` says
    /// whether a legacy server advertised `listChanged` for this list.
    pub(crate) fn store(
        &self,
        key: Key,
        group: Group,
        generation: u64,
        value: &Value,
        era: Era,
        listed_changes: bool,
    ) {
        if self.capacity == 0 || self.generation(group) != generation {
            return;
        }
        let now = Instant::now();
        let (ttl, private) = match era {
            Era::Modern => {
                let ttl = value
                    .get("ttlMs")
                    .and_then(Value::as_u64)
                    .map(Duration::from_millis)
                    .unwrap_or_default();
                let private = value.get("cacheScope").and_then(Value::as_str) != Some("public");
                (ttl, private)
            }
            Era::Legacy => {
                if !listed_changes || group == Group::Resource || group == Group::Discover {
                    return;
                }
                (self.legacy_max_age, true)
            }
        };
        let Some(text) = text_within(value, self.max_entry_bytes) else {
            tracing::debug!(
                limit = self.max_entry_bytes,
                "not cached: the answer is larger than the cache keeps"
            );
            return;
        };
        let key = if private {
            Key {
                partition: self.partition.clone(),
                ..key
            }
        } else {
            key
        };
        let stored = self.clock.fetch_add(1, Ordering::Relaxed);
        let mut entries = self.entries();
        if entries.len() >= self.capacity && !entries.contains_key(&key) {
            let oldest = entries
                .iter()
                .min_by_key(|(_, e)| e.stored)
                .map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                entries.remove(&oldest);
            }
        }
        entries.insert(
            key,
            Entry {
                text: text.into(),
                fresh_until: now + ttl,
                stored,
            },
        );
    }

    /// Drops every entry of a group (a list changed), or, for
    /// [`Group::Resource`] with a URI, that resource's entry.
    pub(crate) fn invalidate(&self, group: Group, uri: Option<&str>) {
        self.generations[group.index()].fetch_add(1, Ordering::AcqRel);
        let mut entries = self.entries();
        entries.retain(|k, _| {
            let in_group = Group::of(&k.method) == Some(group);
            let matches = match (group, uri) {
                (Group::Resource, Some(uri)) => k.param.as_deref() == Some(uri),
                _ => true,
            };
            !(in_group && matches)
        });
    }

    /// Drops everything (a new session may know different things).
    pub(crate) fn clear(&self) {
        for generation in &self.generations {
            generation.fetch_add(1, Ordering::AcqRel);
        }
        self.entries().clear();
    }

    /// Drops every page of one list method (its cursor was refused).
    pub(crate) fn invalidate_method(&self, method: &str) {
        if let Some(group) = Group::of(method) {
            self.generations[group.index()].fetch_add(1, Ordering::AcqRel);
        }
        self.entries().retain(|k, _| k.method != method);
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries().len()
    }
}

/// `value` as compact JSON text, or `None` when that is longer than
/// `limit` bytes. Writing stops at the first piece past the limit, before
/// copying it: a 64 MiB blob is refused without being written.
fn text_within(value: &Value, limit: usize) -> Option<Vec<u8>> {
    struct Bounded {
        text: Vec<u8>,
        limit: usize,
    }
    impl io::Write for Bounded {
        fn write(&mut self, piece: &[u8]) -> io::Result<usize> {
            if self.text.len() + piece.len() > self.limit {
                return Err(io::ErrorKind::FileTooLarge.into());
            }
            self.text.extend_from_slice(piece);
            Ok(piece.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut out = Bounded {
        text: Vec::new(),
        limit,
    };
    serde_json::to_writer(&mut out, value).ok()?;
    Some(out.text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cache() -> Cache {
        Cache::new(3, Duration::from_secs(60), Some("alice".into()))
    }

    #[tokio::test(start_paused = true)]
    async fn fresh_then_stale_by_ttl() {
        let c = cache();
        let key = Key::of(methods::TOOLS_LIST, &json!({}));
        let g = c.generation(Group::Tools);
        let v = json!({"tools": [], "ttlMs": 1000, "cacheScope": "public"});
        c.store(key.clone(), Group::Tools, g, &v, Era::Modern, false);
        assert!(matches!(c.lookup(&key), Lookup::Fresh(_)));
        tokio::time::advance(Duration::from_millis(1001)).await;
        assert!(matches!(c.lookup(&key), Lookup::Stale(_)));
    }

    #[tokio::test(start_paused = true)]
    async fn zero_ttl_is_stale_and_private_is_partitioned() {
        let c = cache();
        let key = Key::of(methods::TOOLS_LIST, &json!({}));
        let v = json!({"tools": [], "ttlMs": 0, "cacheScope": "private"});
        c.store(key.clone(), Group::Tools, 0, &v, Era::Modern, false);
        assert!(matches!(c.lookup(&key), Lookup::Stale(_)));
        let other = Cache::new(3, Duration::from_secs(60), Some("bob".into()));
        *other.entries() = std::mem::take(&mut *c.entries());
        assert!(matches!(other.lookup(&key), Lookup::Miss));
    }

    #[tokio::test(start_paused = true)]
    async fn invalidation_during_fetch_keeps_answer_out() {
        let c = cache();
        let key = Key::of(methods::TOOLS_LIST, &json!({}));
        let g = c.generation(Group::Tools);
        c.invalidate(Group::Tools, None);
        let v = json!({"tools": [], "ttlMs": 1000});
        c.store(key.clone(), Group::Tools, g, &v, Era::Modern, false);
        assert!(matches!(c.lookup(&key), Lookup::Miss));
    }

    #[tokio::test(start_paused = true)]
    async fn legacy_only_with_list_changed_and_bounded() {
        let c = cache();
        let v = json!({"tools": []});
        let key = Key::of(methods::TOOLS_LIST, &json!({}));
        c.store(key.clone(), Group::Tools, 0, &v, Era::Legacy, false);
        assert!(matches!(c.lookup(&key), Lookup::Miss));
        c.store(key.clone(), Group::Tools, 0, &v, Era::Legacy, true);
        assert!(matches!(c.lookup(&key), Lookup::Fresh(_)));
        for i in 0..5 {
            let k = Key::of(methods::TOOLS_LIST, &json!({"cursor": i.to_string()}));
            c.store(k, Group::Tools, 0, &v, Era::Legacy, true);
        }
        assert_eq!(c.len(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn resource_updated_drops_only_that_uri() {
        let c = cache();
        let v = json!({"contents": [], "ttlMs": 1000, "cacheScope": "public"});
        let a = Key::of(methods::RESOURCES_READ, &json!({"uri": "a"}));
        let b = Key::of(methods::RESOURCES_READ, &json!({"uri": "b"}));
        c.store(a.clone(), Group::Resource, 0, &v, Era::Modern, false);
        c.store(b.clone(), Group::Resource, 0, &v, Era::Modern, false);
        c.invalidate(Group::Resource, Some("a"));
        assert!(matches!(c.lookup(&a), Lookup::Miss));
        assert!(matches!(c.lookup(&b), Lookup::Fresh(_)));
    }

    #[test]
    fn an_answer_larger_than_the_bound_is_not_kept() {
        let c = Cache::new(8, Duration::from_secs(60), None).with_max_entry_bytes(1024);
        let key = Key::of(methods::RESOURCES_READ, &json!({"uri": "file:///big"}));
        let big = json!({"contents": [{"uri": "file:///big", "blob": "A".repeat(2048)}], "ttlMs": 60_000});
        c.store(key.clone(), Group::Resource, 0, &big, Era::Modern, false);
        assert!(matches!(c.lookup(&key), Lookup::Miss));
        let small = json!({"contents": [{"uri": "file:///big", "text": "a"}], "ttlMs": 60_000});
        c.store(key.clone(), Group::Resource, 0, &small, Era::Modern, false);
        assert!(matches!(c.lookup(&key), Lookup::Fresh(_)));
        assert!(text_within(&small, 1024).is_some());
        assert!(text_within(&big, 1024).is_none());
        assert_eq!(
            text_within(&big, 4096),
            Some(serde_json::to_vec(&big).unwrap())
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_hit_gives_back_the_stored_answer() {
        let c = cache();
        let key = Key::of(methods::TOOLS_LIST, &json!({}));
        let v = json!({"tools": [{"name": "a\u{e9}\"", "inputSchema": {"type": "object"}}],
            "ttlMs": 1000, "cacheScope": "public", "n": [1.5, -2, null, true, 0.1, 1e-7, 2.2250738585072014e-308, 1.7976931348623157e308]});
        c.store(key.clone(), Group::Tools, 0, &v, Era::Modern, false);
        let Lookup::Fresh(hit) = c.lookup(&key) else {
            panic!("not fresh");
        };
        assert_eq!(hit, v);
    }
}
