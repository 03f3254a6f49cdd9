//! Caching hints of 2026-07-28 (SEP-2549): `ttlMs` and `cacheScope` on the
//! complete results of `server/discover`, the lists and `resources/read`.

use std::time::Duration;

string_enum! {
    /// Who may share a cached result.
    CacheScope {
        /// Any client may be served the cached copy.
        Public = "public",
        /// Only the same authorization context may be served it.
        Private = "private",
    }
}

/// A result that carries caching hints.
pub trait Cacheable {
    /// `ttlMs` as received (possibly negative or absent).
    fn ttl_ms(&self) -> Option<i64>;

    /// `cacheScope` as received.
    fn cache_scope(&self) -> Option<&CacheScope>;

    /// How long the result stays fresh. Absent, zero or negative `ttlMs`
    /// means immediately stale: `None`.
    fn freshness(&self) -> Option<Duration> {
        match self.ttl_ms() {
            Some(ms) if ms > 0 => Some(Duration::from_millis(ms as u64)),
            _ => None,
        }
    }
}

macro_rules! impl_cacheable {
    ($($ty:ty),+ $(,)?) => {
        $(
            impl $ty {
                /// The same with caching hints, as a modern complete result
                /// carries them (`resultType` is set to `complete` too).
                pub fn with_cache(mut self, ttl_ms: i64, scope: CacheScope) -> Self {
                    self.ttl_ms = Some(ttl_ms);
                    self.cache_scope = Some(scope);
                    self.result_type = Some(super::common::ResultType::Complete);
                    self
                }
            }

            impl Cacheable for $ty {
                fn ttl_ms(&self) -> Option<i64> {
                    self.ttl_ms
                }
                fn cache_scope(&self) -> Option<&CacheScope> {
                    self.cache_scope.as_ref()
                }
            }
        )+
    };
}

// The lists have theirs with `ListResult`.
impl_cacheable!(
    super::lifecycle::DiscoverResult,
    super::resources::ReadResourceResult,
);
