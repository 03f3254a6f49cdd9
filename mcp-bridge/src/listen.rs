//! A 2026-07-28 client's `subscriptions/listen` in front of a legacy
//! server: open while the server that took its resource subscriptions
//! serves it, and on its end those resources no other subscription
//! follows are unsubscribed upstream.

use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::error_codes::INTERNAL_ERROR;
use mcp_protocol::methods::{RESOURCES_SUBSCRIBE, RESOURCES_UNSUBSCRIBE};
use mcp_protocol::{ErrorObject, Request, RequestId};
use mcp_transport::{RequestOptions, Transport};
use serde_json::Value;

use crate::link::Link;

/// A 2026-07-28 client's `subscriptions/listen`, served from a legacy
/// server's notifications (its resources subscribed to upstream): open
/// until the client cancels it or leaves, or the server goes (an error
/// then tells the client to listen again).
pub(crate) async fn subscribed(
    link: &Arc<Link>,
    upstream: &Arc<dyn Transport>,
    request: Request,
) -> Result<Value, ErrorObject> {
    let capabilities = link
        .downgraded
        .get()
        .and_then(|d| d.get("capabilities"))
        .cloned()
        .unwrap_or_default();
    let id = request.id.clone();
    let resources = link
        .subscriptions
        .open(&id, request.params.as_ref(), &capabilities);
    let _open = Open(link.clone(), id.clone());
    let mut refused = Vec::new();
    for uri in resources {
        let subscribe = Request::new(
            RequestId::String(format!("mcp-bridge-subscribe-{id}-{uri}")),
            RESOURCES_SUBSCRIBE,
            Some(serde_json::json!({ "uri": uri })),
        );
        if let Err(e) = upstream.request(subscribe, RequestOptions::new()).await {
            tracing::debug!(error = %e, %uri, "the server refused a resource subscription");
            refused.push(uri);
        }
    }
    let ack = link.subscriptions.acknowledged(&id, &refused);
    link.notify_client_during(ack, Some(&id));
    // Open while this server serves it: once it is gone (or restarted),
    // nothing more can come, and the client is told to listen again.
    loop {
        tokio::time::sleep(LISTEN_WATCH).await;
        let current = link.upstream();
        if !upstream.is_alive() || !current.is_some_and(|now| Arc::ptr_eq(&now, upstream)) {
            return Err(ErrorObject::new(
                INTERNAL_ERROR,
                "the server behind the bridge went away; listen again",
            ));
        }
    }
}

/// How often an open subscription checks that its server is still there.
const LISTEN_WATCH: Duration = Duration::from_millis(250);

/// A subscription open while it lives; closed, the resources only it
/// followed are unsubscribed from upstream.
struct Open(Arc<Link>, RequestId);

impl Drop for Open {
    fn drop(&mut self) {
        let unfollowed = self.0.subscriptions.close(&self.1);
        let (Some(upstream), Ok(runtime)) =
            (self.0.upstream(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        if unfollowed.is_empty() || !upstream.is_alive() {
            return;
        }
        let id = self.1.clone();
        runtime.spawn(async move {
            for uri in unfollowed {
                let unsubscribe = Request::new(
                    RequestId::String(format!("mcp-bridge-unsubscribe-{id}-{uri}")),
                    RESOURCES_UNSUBSCRIBE,
                    Some(serde_json::json!({ "uri": uri })),
                );
                if let Err(e) = upstream.request(unsubscribe, RequestOptions::new()).await {
                    tracing::debug!(error = %e, %uri, "the server refused to unsubscribe");
                }
            }
        });
    }
}
