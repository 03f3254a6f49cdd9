//! What the server says unasked: requests to the client (legacy) and the
//! change notifications of lists and resources, for either era; and the
//! log levels.

use mcp_protocol::error_codes::INTERNAL_ERROR;
use mcp_protocol::meta::SUBSCRIPTION_ID;
use mcp_protocol::methods;
use mcp_protocol::types::LoggingLevel;
use mcp_protocol::{ErrorObject, Message, Request, RequestId};
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::session::Session;

impl Session {
    /// Sends a request to the client (legacy) and waits for its answer. If
    /// the wait is given up (the tool was cancelled), the client is told
    /// with `notifications/cancelled`. `related` is the client's request
    /// being served, if any.
    pub(crate) async fn ask_client(
        &self,
        method: &str,
        params: Value,
        related: Option<&RequestId>,
    ) -> Result<Value, ErrorObject> {
        let (tx, rx) = oneshot::channel();
        let id = {
            let mut state = self.state();
            state.next_id += 1;
            let id = RequestId::Number(state.next_id);
            state.pending.insert(id.clone(), tx);
            id
        };
        let mut guard = PendingGuard {
            session: self.clone(),
            id: Some(id.clone()),
        };
        self.send_for(
            Message::Request(Request::new(id, method, Some(params))),
            related,
        );
        let answer = rx.await;
        guard.id = None;
        answer.unwrap_or_else(|_| Err(ErrorObject::new(INTERNAL_ERROR, "the connection ended")))
    }

    pub(super) fn resolve(&self, id: &RequestId, answer: Result<Value, ErrorObject>) {
        if let Some(tx) = self.state().pending.remove(id) {
            let _ = tx.send(answer);
        }
    }

    /// Announces `notifications/<kind>/list_changed` (`kind`: `tools`,
    /// `resources`, `prompts`): pushed to a legacy connection when the
    /// capability says so, and on each modern listen stream that asked.
    pub(crate) fn announce_list_changed(&self, kind: &str) {
        let method = format!("notifications/{kind}/list_changed");
        let filter_key = format!("{kind}ListChanged");
        let (legacy, streams) = {
            let state = self.state();
            let legacy = state.legacy.as_ref().is_some_and(|l| l.ready)
                && self.config().advertises_flag(kind, "listChanged");
            let streams: Vec<RequestId> = state
                .listens
                .iter()
                .filter(|(_, f)| f[&filter_key] == true)
                .map(|(id, _)| id.clone())
                .collect();
            (legacy, streams)
        };
        if legacy {
            self.notify(&method, json!({}));
        }
        for id in streams {
            self.notify(&method, json!({ "_meta": { SUBSCRIPTION_ID: id } }));
        }
    }

    /// Announces `notifications/resources/updated` for `uri` to whoever
    /// subscribed to it (legacy `resources/subscribe`, or a listen stream).
    pub(crate) fn announce_updated(&self, uri: &str) {
        let (legacy, streams) = {
            let state = self.state();
            let legacy = state
                .legacy
                .as_ref()
                .is_some_and(|l| l.subscriptions.contains(uri));
            let streams: Vec<RequestId> = state
                .listens
                .iter()
                .filter(|(_, f)| {
                    f["resourceSubscriptions"]
                        .as_array()
                        .is_some_and(|uris| uris.iter().any(|u| u == uri))
                })
                .map(|(id, _)| id.clone())
                .collect();
            (legacy, streams)
        };
        if legacy {
            self.notify(
                methods::NOTIFICATION_RESOURCES_UPDATED,
                json!({ "uri": uri }),
            );
        }
        for id in streams {
            let params = json!({ "uri": uri, "_meta": { SUBSCRIPTION_ID: id } });
            self.notify(methods::NOTIFICATION_RESOURCES_UPDATED, params);
        }
    }
}

/// Forgets a server-to-client request whose wait was given up, and tells
/// the client.
struct PendingGuard {
    session: Session,
    id: Option<RequestId>,
}

impl Drop for PendingGuard {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.session.state().pending.remove(&id);
            let params =
                json!({ "requestId": id, "reason": "the request that needed it was cancelled" });
            self.session.notify(methods::NOTIFICATION_CANCELLED, params);
        }
    }
}

/// A level's rank (RFC 5424, least severe first), if it is one.
pub(crate) fn log_rank(level: &str) -> Option<u8> {
    LoggingLevel::from(level).severity()
}
