//! What crosses the bridge, made fit for the side it reaches: a result
//! as its sender wrote it, a relayed call's failure as a JSON-RPC error,
//! and the listener that hands notifications on as they are read.

use std::sync::Arc;

use mcp_protocol::error_codes::INTERNAL_ERROR;
use mcp_protocol::{ErrorObject, Notification};
use mcp_transport::{Listener, TransportError};
use serde_json::Value;

/// A listener that hands each notification on as it is read, on the read
/// loop (sending only queues it, so this never blocks): the far side gets
/// a call's progress before its answer, as the server sent them.
pub(crate) fn passing(f: impl Fn(&Notification) + Send + Sync + 'static) -> Listener {
    let (listener, queue) = Listener::tapped("relayed notifications", 1, Arc::new(f));
    // Nothing reads the queue: the tap has done the work.
    drop(queue);
    listener
}

/// A result as its sender wrote it: the transport adds
/// `resultType: "complete"` where it is missing, which legacy revisions do
/// not have.
pub(crate) fn as_sent(mut result: Value, legacy: bool) -> Value {
    if legacy
        && let Some(object) = result.as_object_mut()
        && object.get("resultType").and_then(Value::as_str) == Some("complete")
    {
        object.remove("resultType");
    }
    result
}

/// The JSON-RPC error a relayed call's failure becomes: the far side's
/// own error verbatim, else one that says what happened on the far side
/// and whether the call may have run there.
pub(crate) fn relayed_error(method: &str, error: TransportError, side: &str) -> ErrorObject {
    match error {
        TransportError::Rpc {
            code,
            message,
            data,
        } => {
            let mut object = ErrorObject::new(code, message);
            object.data = data;
            object
        }
        TransportError::ServerGone(info) => ErrorObject::new(
            INTERNAL_ERROR,
            format!(
                "the bridge lost the {side} during {method} ({}); it may have run",
                info.reason
            ),
        ),
        other => ErrorObject::new(
            INTERNAL_ERROR,
            format!("the bridge could not relay {method} to the {side}: {other}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_legacy_result_loses_only_the_result_type_the_transport_added() {
        let added = json!({"tools": [], "resultType": "complete"});
        assert_eq!(as_sent(added.clone(), true), json!({"tools": []}));
        assert_eq!(as_sent(added.clone(), false), added);
        let other = json!({"resultType": "input_required"});
        assert_eq!(as_sent(other.clone(), true), other);
    }

    #[test]
    fn an_error_of_the_far_side_is_relayed_verbatim() {
        let error = TransportError::Rpc {
            code: -32602,
            message: "bad".into(),
            data: Some(json!({"field": "x"})),
        };
        let object = relayed_error("tools/call", error, "server");
        assert_eq!(
            (object.code, object.message.as_str(), object.data),
            (-32602, "bad", Some(json!({"field": "x"})))
        );
    }

    #[test]
    fn a_lost_server_says_the_call_may_have_run() {
        let gone = TransportError::gone(mcp_transport::GoneInfo::new("exit status 1"));
        let object = relayed_error("tools/call", gone, "server");
        assert_eq!(object.code, INTERNAL_ERROR);
        assert!(
            object.message.contains("may have run"),
            "{}",
            object.message
        );
        assert!(
            object.message.contains("exit status 1"),
            "{}",
            object.message
        );
    }
}
