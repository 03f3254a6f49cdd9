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

use serde_json::Value;

/// The params of a request, as the JSON text they serialize to.
#[derive(Clone, Debug)]
pub(crate) struct KeptParams(Vec<u8>);

impl KeptParams {
    /// A copy of `params`.
    pub(crate) fn of(params: &Value) -> Self {
        KeptParams(serde_json::to_vec(params).expect("a JSON value always serializes"))
    }

    /// The params again.
    pub(crate) fn value(&self) -> Value {
        serde_json::from_slice(&self.0).expect("kept params are the text of a JSON value")
    }
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
    }
}
