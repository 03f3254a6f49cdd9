//! Result normalization: the seed's `normalize-result`, in two steps.
//!
//! Transports apply [`normalize_result`], which only defaults an absent
//! `resultType` to `"complete"`, so a legacy result arrives as a modern one
//! would have. The client then applies the classification in this module
//! (see [`classify_result`]), which judges the `resultType` value.

use serde_json::Value;

/// The `resultType` member's name.
pub const RESULT_TYPE: &str = "resultType";
/// The `resultType` of a finished result.
pub const RESULT_TYPE_COMPLETE: &str = "complete";
/// The `resultType` of a result that asks the client for input (MRTR).
pub const RESULT_TYPE_INPUT_REQUIRED: &str = "input_required";
/// The `resultType` the tasks extension adds.
pub const RESULT_TYPE_TASK: &str = "task";

/// Defaults an absent `resultType` to `"complete"`; everything else is left
/// exactly as it was. A result that is not an object is returned unchanged.
pub fn normalize_result(mut result: Value) -> Value {
    if let Value::Object(obj) = &mut result {
        if !obj.contains_key(RESULT_TYPE) {
            obj.insert(RESULT_TYPE.to_owned(), Value::from(RESULT_TYPE_COMPLETE));
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn legacy_results_become_complete() {
        assert_eq!(
            normalize_result(json!({})),
            json!({"resultType": "complete"})
        );
        assert_eq!(
            normalize_result(json!({"resultType": "input_required"})),
            json!({"resultType": "input_required"})
        );
        assert_eq!(normalize_result(json!(null)), json!(null));
    }
}
