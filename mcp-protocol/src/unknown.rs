//! Finding what this library did not understand in a parsed message.
//!
//! Every typed struct keeps unknown members in its `extra` map, and every
//! enum keeps unknown values in an `Unknown` variant, so a newer peer never
//! breaks parsing. [`UnknownFields::unknown_fields`] lists them all, with
//! their path, for logging or for tests that want none.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// A value that may hold members or values this library does not know.
pub trait UnknownFields {
    /// Appends, for each unknown member or value under `path`, a line
    /// naming it.
    fn collect_unknown(&self, path: &str, out: &mut Vec<String>);

    /// Every unknown member or value, recursively, with its path from `$`.
    fn unknown_fields(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.collect_unknown("$", &mut out);
        out
    }
}

/// Reports the keys of an `extra` catch-all.
pub(crate) fn report_extra(extra: &Map<String, Value>, path: &str, out: &mut Vec<String>) {
    out.extend(extra.keys().map(|k| format!("{path}.{k}")));
}

impl<T: UnknownFields> UnknownFields for Option<T> {
    fn collect_unknown(&self, path: &str, out: &mut Vec<String>) {
        if let Some(v) = self {
            v.collect_unknown(path, out);
        }
    }
}

impl<T: UnknownFields> UnknownFields for Vec<T> {
    fn collect_unknown(&self, path: &str, out: &mut Vec<String>) {
        for (i, v) in self.iter().enumerate() {
            v.collect_unknown(&format!("{path}[{i}]"), out);
        }
    }
}

impl<T: UnknownFields> UnknownFields for BTreeMap<String, T> {
    fn collect_unknown(&self, path: &str, out: &mut Vec<String>) {
        for (k, v) in self {
            v.collect_unknown(&format!("{path}.{k}"), out);
        }
    }
}

impl<T: UnknownFields + ?Sized> UnknownFields for Box<T> {
    fn collect_unknown(&self, path: &str, out: &mut Vec<String>) {
        (**self).collect_unknown(path, out);
    }
}
