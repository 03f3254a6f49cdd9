//! The constant part of a modern request's `_meta`, built once.
//!
//! Protocol version, client capabilities and client info depend only on the
//! configuration and the revision in use, yet every modern request carries
//! them: serializing the capabilities and the client info for each call is
//! per-call work taken from the server on a busy machine, so they are kept
//! as a [`SharedMeta`], which a transport that writes lines splices into
//! each request as text made once.

use std::sync::RwLock;

use mcp_protocol::ProtocolVersion;
use mcp_transport::SharedMeta;
use serde_json::{Map, Value};

/// The last revision's constant `_meta` keys.
#[derive(Default)]
pub(crate) struct ModernMetaCache(RwLock<Option<(ProtocolVersion, SharedMeta)>>);

/// A copied configuration starts empty: the builder may still change what
/// the map is made of (handlers, client info) after a copy.
impl Clone for ModernMetaCache {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl ModernMetaCache {
    /// The keys for `version`, made by `make` the first time (and again
    /// when the revision changes, as after a renegotiation).
    pub(crate) fn get(
        &self,
        version: &ProtocolVersion,
        make: impl FnOnce() -> Map<String, Value>,
    ) -> SharedMeta {
        if let Some((v, shared)) = &*self.0.read().unwrap_or_else(|p| p.into_inner())
            && v == version
        {
            return shared.clone();
        }
        let shared = SharedMeta::new(make());
        *self.0.write().unwrap_or_else(|p| p.into_inner()) =
            Some((version.clone(), shared.clone()));
        shared
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_once_per_revision() {
        let cache = ModernMetaCache::default();
        let mut made = 0;
        let v1 = ProtocolVersion::new("2026-07-28");
        let v2 = ProtocolVersion::new("2025-11-25");
        let mut make = |tag: &str| {
            made += 1;
            let mut m = Map::new();
            m.insert("tag".into(), Value::from(tag));
            m
        };
        assert_eq!(cache.get(&v1, || make("a")).members()["tag"], "a");
        assert_eq!(cache.get(&v1, || make("b")).members()["tag"], "a");
        assert_eq!(cache.get(&v2, || make("c")).members()["tag"], "c");
        assert_eq!(made, 2);
        assert!(cache.clone().0.read().unwrap().is_none());
    }
}
