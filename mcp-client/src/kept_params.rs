//! A copy of a request's params kept for a retry, as JSON text.
//!
//! A retry (a `-32022` answer, a lost answer, a restarted server, another
//! multi round-trip round) needs the params the request was sent with, but
//! the request itself went to the transport. Most requests are never
//! retried, so the copy should cost little: as text it is one allocation
//! and a walk over the value, where a copy of the value costs an allocation
//! for every string and map (7 of them for a small `tools/call`), each
//! freed again when the answer comes. The rare retry parses it back, which
//! gives the same value (serde_json writes numbers exactly).
//!
//! Params that hold long strings are the other way round: writing them as
//! text scans every byte for escapes, where a copy of the value copies each
//! string whole and allocates little. Those are kept as a value.

use serde_json::Value;

/// Beyond this many bytes of strings and numbers, params are kept as a
/// value rather than as text.
const AS_TEXT_UP_TO: usize = 1024;

/// The params of a request, as the JSON text they serialize to, or (when
/// they hold long strings) as a copy of the value.
#[derive(Clone, Debug)]
pub(crate) enum KeptParams {
    Text(Vec<u8>),
    Value(Value),
}

impl KeptParams {
    /// A copy of `params`.
    pub(crate) fn of(params: &Value) -> Self {
        Self::sized(params, size_below(params, AS_TEXT_UP_TO))
    }

    /// A copy of `params`, whose size [`size_below`] already measured
    /// (`None`: too large to measure).
    pub(crate) fn sized(params: &Value, size: Option<usize>) -> Self {
        match size {
            Some(size) if size < AS_TEXT_UP_TO => KeptParams::Text(
                serde_json::to_vec(params).expect("a JSON value always serializes"),
            ),
            _ => KeptParams::Value(params.clone()),
        }
    }

    /// The params again.
    pub(crate) fn value(&self) -> Value {
        match self {
            KeptParams::Text(text) => {
                serde_json::from_slice(text).expect("kept params are the text of a JSON value")
            }
            KeptParams::Value(value) => value.clone(),
        }
    }
}

/// The params size up to which a copy is kept for a `-32022` retry after
/// the server accepted the revision.
pub(crate) const COPY_FOR_RETRY_LIMIT: usize = 64 * 1024;

/// Whether `value` holds fewer than about `limit` bytes of strings and
/// numbers; stops walking as soon as it knows.
pub(crate) fn smaller_than(value: Option<&Value>, limit: usize) -> bool {
    value.is_none_or(|v| size_below(v, limit).is_some())
}

/// About how many bytes of strings and numbers `value` holds, if fewer
/// than `limit`; stops walking as soon as it knows it is not.
pub(crate) fn size_below(value: &Value, limit: usize) -> Option<usize> {
    fn walk(value: &Value, budget: &mut usize) -> bool {
        let cost = match value {
            Value::String(s) => s.len(),
            _ => 8,
        };
        if cost >= *budget {
            return false;
        }
        *budget -= cost;
        match value {
            Value::Array(items) => items.iter().all(|v| walk(v, budget)),
            Value::Object(map) => map.iter().all(|(k, v)| {
                if k.len() >= *budget {
                    return false;
                }
                *budget -= k.len();
                walk(v, budget)
            }),
            _ => true,
        }
    }
    let mut budget = limit;
    walk(value, &mut budget).then(|| limit - budget)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_value_comes_back_as_it_was() {
        let params = json!({
            "name": "t",
            "arguments": {"f": 0.1, "big": u64::MAX, "neg": i64::MIN, "s": "é\n\"", "a": [null, true]},
        });
        assert_eq!(KeptParams::of(&params).value(), params);
        assert!(matches!(KeptParams::of(&params), KeptParams::Text(_)));
        let long = json!({"name": "t", "arguments": {"text": "x".repeat(4096), "n": 1}});
        assert!(matches!(KeptParams::of(&long), KeptParams::Value(_)));
        assert_eq!(KeptParams::of(&long).value(), long);
    }

    #[test]
    fn one_measure_serves_both_limits() {
        // "name" 4 + "t" 1 + "arguments" 9 + the map itself 8 + "text" 4 + 4096.
        let long = json!({"name": "t", "arguments": {"text": "x".repeat(4096)}});
        let size = size_below(&long, COPY_FOR_RETRY_LIMIT);
        assert_eq!(size, Some(8 + 4 + 1 + 9 + 8 + 4 + 4096));
        assert!(matches!(
            KeptParams::sized(&long, size),
            KeptParams::Value(_)
        ));
        assert_eq!(size_below(&long, 1024), None);
        let small = json!({"name": "t"});
        assert!(matches!(
            KeptParams::sized(&small, size_below(&small, COPY_FOR_RETRY_LIMIT)),
            KeptParams::Text(_)
        ));
        assert!(smaller_than(None, 1));
    }
}
