//! Result normalization: the seed's `normalize-result`, in two steps.
//!
//! Transports apply [`normalize_result`], which only defaults an absent
//! `resultType` to `"complete"`, so a legacy result arrives as a modern one
//! would have. The client then applies the classification in this module
//! (see [`classify_result`]), which judges the `resultType` value.

use serde_json::Value;

pub use crate::types::input::{
    InputRequest, InputRequestParams, InputRequests, InputRequiredResult, InputResponse,
    InputResponses, RetryParams,
};
use crate::types::tasks::DetailedTask;

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
    if let Value::Object(obj) = &mut result
        && !obj.contains_key(RESULT_TYPE)
    {
        obj.insert(RESULT_TYPE.to_owned(), Value::from(RESULT_TYPE_COMPLETE));
    }
    result
}

/// The `resultType` values beyond `complete` and `input_required` that the
/// client has registered, through the extensions it negotiated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RegisteredResultTypes {
    /// The tasks extension (`io.modelcontextprotocol/tasks`) is in use, so
    /// `"task"` is a valid `resultType`.
    pub tasks_extension: bool,
}

impl RegisteredResultTypes {
    /// Only the core values.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same with the tasks extension.
    pub fn with_tasks_extension(mut self) -> Self {
        self.tasks_extension = true;
        self
    }
}

/// A result, judged by its `resultType`.
#[derive(Clone, Debug, PartialEq)]
pub enum ClassifiedResult {
    /// `complete` (or absent): the result, to parse as the method's type.
    Complete(Value),
    /// `input_required`: the server asks for input (MRTR).
    InputRequired(InputRequiredResult),
    /// `task` (tasks extension): the request runs as a task.
    Task(DetailedTask),
}

/// Why a result's `resultType` was rejected.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClassifyError {
    /// The result is not a JSON object.
    #[error("the result is not an object")]
    NotAnObject,
    /// `resultType` is not a string.
    #[error("resultType is not a string: {0}")]
    ResultTypeNotString(Value),
    /// A `resultType` this library knows, but whose extension was not
    /// negotiated (`"task"` without the tasks extension).
    #[error("resultType {0:?} belongs to an extension that is not in use")]
    Unregistered(String),
    /// A `resultType` no revision or known extension defines.
    #[error("unknown resultType {0:?}")]
    UnknownResultType(String),
    /// An `input_required` result with neither `inputRequests` nor
    /// `requestState`.
    #[error("an input_required result has neither inputRequests nor requestState")]
    EmptyInputRequired,
    /// An `input_required` or `task` result that does not have its type's
    /// shape.
    #[error("malformed {result_type} result: {message}")]
    Malformed {
        /// The `resultType`.
        result_type: &'static str,
        /// What was wrong.
        message: String,
    },
}

/// Judges a result's `resultType`: a pure function of the result and the
/// registered types. An absent `resultType` is `complete`, so legacy results
/// need no [`normalize_result`] first (though normalized ones are fine).
pub fn classify_result(
    result: Value,
    registered: &RegisteredResultTypes,
) -> Result<ClassifiedResult, ClassifyError> {
    let Value::Object(obj) = &result else {
        return Err(ClassifyError::NotAnObject);
    };
    let result_type = match obj.get(RESULT_TYPE) {
        None => RESULT_TYPE_COMPLETE.to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(ClassifyError::ResultTypeNotString(other.clone())),
    };
    match result_type.as_str() {
        RESULT_TYPE_COMPLETE => Ok(ClassifiedResult::Complete(result)),
        RESULT_TYPE_INPUT_REQUIRED => {
            let parsed: InputRequiredResult =
                serde_json::from_value(result).map_err(|e| ClassifyError::Malformed {
                    result_type: RESULT_TYPE_INPUT_REQUIRED,
                    message: e.to_string(),
                })?;
            if parsed.input_requests.is_none() && parsed.request_state.is_none() {
                return Err(ClassifyError::EmptyInputRequired);
            }
            Ok(ClassifiedResult::InputRequired(parsed))
        }
        RESULT_TYPE_TASK if registered.tasks_extension => serde_json::from_value(result)
            .map(ClassifiedResult::Task)
            .map_err(|e| ClassifyError::Malformed {
                result_type: RESULT_TYPE_TASK,
                message: e.to_string(),
            }),
        RESULT_TYPE_TASK => Err(ClassifyError::Unregistered(result_type)),
        _ => Err(ClassifyError::UnknownResultType(result_type)),
    }
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

    fn classify(v: Value) -> Result<ClassifiedResult, ClassifyError> {
        classify_result(v, &RegisteredResultTypes::new())
    }

    #[test]
    fn legacy_and_complete_results_are_complete() {
        let legacy = json!({"tools": []});
        assert_eq!(
            classify(legacy.clone()),
            Ok(ClassifiedResult::Complete(legacy.clone()))
        );
        let normalized = normalize_result(legacy);
        assert_eq!(
            classify(normalized.clone()),
            Ok(ClassifiedResult::Complete(normalized))
        );
    }

    #[test]
    fn input_required_is_typed_and_keeps_state_exactly() {
        let state = "  eyJ4Ijox fQ==\u{1F600} ";
        let r = classify(json!({
            "resultType": "input_required",
            "inputRequests": {
                "a": {"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {}}}},
                "b": {"method": "roots/list"},
                "c": {"method": "future/thing", "params": {"x": 1}}
            },
            "requestState": state
        }))
        .unwrap();
        let ClassifiedResult::InputRequired(ir) = r else {
            panic!()
        };
        assert_eq!(ir.request_state.as_deref(), Some(state));
        let reqs = ir.input_requests.unwrap();
        assert!(matches!(
            reqs["a"].params,
            InputRequestParams::Elicitation(_)
        ));
        assert!(matches!(
            reqs["b"].params,
            InputRequestParams::ListRoots(None)
        ));
        assert_eq!(reqs["c"].method(), "future/thing");
        // State alone is valid (load shedding).
        assert!(matches!(
            classify(json!({"resultType": "input_required", "requestState": ""})),
            Ok(ClassifiedResult::InputRequired(_))
        ));
    }

    #[test]
    fn each_rejection_has_its_error() {
        assert_eq!(
            classify(json!({"resultType": "input_required"})),
            Err(ClassifyError::EmptyInputRequired)
        );
        assert_eq!(
            classify(json!({"resultType": "task", "taskId": "t", "status": "working"})),
            Err(ClassifyError::Unregistered("task".into()))
        );
        assert_eq!(
            classify(json!({"resultType": "hologram"})),
            Err(ClassifyError::UnknownResultType("hologram".into()))
        );
        assert_eq!(
            classify(json!({"resultType": 3})),
            Err(ClassifyError::ResultTypeNotString(json!(3)))
        );
        assert_eq!(classify(json!([])), Err(ClassifyError::NotAnObject));
        assert!(matches!(
            classify(json!({"resultType": "input_required", "requestState": 5})),
            Err(ClassifyError::Malformed { .. })
        ));
        let tasks = RegisteredResultTypes::new().with_tasks_extension();
        assert!(matches!(
            classify_result(json!({"resultType": "task", "status": "working"}), &tasks),
            Err(ClassifyError::Malformed {
                result_type: "task",
                ..
            })
        ));
        // An unknown string stays unknown even with the extension.
        assert_eq!(
            classify_result(json!({"resultType": "hologram"}), &tasks),
            Err(ClassifyError::UnknownResultType("hologram".into()))
        );
    }

    #[test]
    fn task_results_with_the_extension() {
        let tasks = RegisteredResultTypes::new().with_tasks_extension();
        let r = classify_result(
            json!({"resultType": "task", "taskId": "t1", "status": "working", "ttlMs": 60000, "pollIntervalMs": 500}),
            &tasks,
        )
        .unwrap();
        let ClassifiedResult::Task(t) = r else {
            panic!()
        };
        assert_eq!(t.task_id, "t1");
        assert_eq!(t.poll_interval_ms, Some(500));
    }
}
