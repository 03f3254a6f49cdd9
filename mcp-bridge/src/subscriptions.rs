//! A 2026-07-28 client's `subscriptions/listen` in front of a legacy
//! server: the bridge acknowledges it with what the server's capabilities
//! can honour, subscribes upstream to the resources it names, and hands
//! the server's list-change and resource-update notifications to each
//! subscription whose filter asks for them, tagged with its id.

use std::collections::HashMap;
use std::sync::Mutex;

use mcp_protocol::meta::SUBSCRIPTION_ID;
use mcp_protocol::methods::{
    NOTIFICATION_PROMPTS_LIST_CHANGED, NOTIFICATION_RESOURCES_LIST_CHANGED,
    NOTIFICATION_RESOURCES_UPDATED, NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED,
    NOTIFICATION_TOOLS_LIST_CHANGED,
};
use mcp_protocol::{Notification, RequestId};
use serde_json::{Map, Value, json};

/// The subscriptions open now, by the id of their `subscriptions/listen`:
/// the filter each was acknowledged with.
#[derive(Default)]
pub(crate) struct Subscriptions(Mutex<HashMap<RequestId, Value>>);

impl Subscriptions {
    /// Opens the subscription `id` asked with `params`, as far as the
    /// server's `capabilities` go; returns the resources to subscribe to
    /// upstream. It stays open until [`close`](Self::close); its
    /// acknowledgement is [`acknowledged`](Self::acknowledged), once the
    /// server has said which of those it took.
    pub(crate) fn open(
        &self,
        id: &RequestId,
        params: Option<&Value>,
        capabilities: &Value,
    ) -> Vec<String> {
        let asked = params
            .and_then(|p| p.get("notifications"))
            .and_then(Value::as_object);
        let mut honoured = Map::new();
        for (key, capability) in [
            ("toolsListChanged", "tools"),
            ("promptsListChanged", "prompts"),
            ("resourcesListChanged", "resources"),
        ] {
            if asked.and_then(|a| a.get(key)) == Some(&json!(true))
                && capabilities[capability]["listChanged"] == json!(true)
            {
                honoured.insert(key.to_owned(), json!(true));
            }
        }
        let mut resources = Vec::new();
        if let Some(uris) = asked
            .and_then(|a| a.get("resourceSubscriptions"))
            .and_then(Value::as_array)
            && capabilities["resources"]["subscribe"] == json!(true)
        {
            resources = uris
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
            honoured.insert("resourceSubscriptions".to_owned(), json!(resources));
        }
        self.lock().insert(id.clone(), Value::Object(honoured));
        resources
    }

    /// The acknowledgement of subscription `id`, without the resources
    /// the server `refused` (whose updates would never come).
    pub(crate) fn acknowledged(&self, id: &RequestId, refused: &[String]) -> Notification {
        let mut subscribed = self.lock();
        let honoured = subscribed.get_mut(id).map(|filter| {
            if let Some(Value::Array(uris)) = filter.get_mut("resourceSubscriptions") {
                uris.retain(|uri| !uri.as_str().is_some_and(|u| refused.iter().any(|r| r == u)));
            }
            filter.clone()
        });
        let params = json!({
            "_meta": { SUBSCRIPTION_ID: id.to_value() },
            "notifications": honoured.unwrap_or_else(|| json!({})),
        });
        Notification::new(NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED, Some(params))
    }

    /// Ends the subscription `id` (its request was cancelled, or its
    /// client left); returns the resources no other subscription still
    /// follows, to unsubscribe from upstream.
    pub(crate) fn close(&self, id: &RequestId) -> Vec<String> {
        let mut subscribed = self.lock();
        let uris = |filter: &Value| -> Vec<String> {
            filter
                .get("resourceSubscriptions")
                .and_then(Value::as_array)
                .map(|uris| {
                    uris.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        };
        let Some(closed) = subscribed.remove(id) else {
            return Vec::new();
        };
        let mut left = uris(&closed);
        for filter in subscribed.values() {
            let kept = uris(filter);
            left.retain(|uri| !kept.contains(uri));
        }
        left.dedup();
        left
    }

    /// The server's notification for each subscription that asked for it,
    /// tagged with its id; `None` when it is not one a subscription
    /// carries.
    pub(crate) fn deliver(
        &self,
        notification: &Notification,
    ) -> Option<Vec<(RequestId, Notification)>> {
        let key = match notification.method.as_str() {
            NOTIFICATION_TOOLS_LIST_CHANGED => "toolsListChanged",
            NOTIFICATION_PROMPTS_LIST_CHANGED => "promptsListChanged",
            NOTIFICATION_RESOURCES_LIST_CHANGED => "resourcesListChanged",
            NOTIFICATION_RESOURCES_UPDATED => "resourceSubscriptions",
            _ => return None,
        };
        let uri = notification
            .params
            .as_ref()
            .and_then(|p| p.get("uri"))
            .cloned();
        let wanted = |filter: &Value| match (&uri, filter.get(key)) {
            (Some(uri), Some(Value::Array(uris))) => uris.contains(uri),
            (None, Some(flag)) => flag == &json!(true),
            _ => false,
        };
        let subscribed = self.lock();
        let tagged = subscribed
            .iter()
            .filter(|(_, filter)| wanted(filter))
            .map(|(id, _)| {
                let mut tagged = notification.clone();
                let params = tagged.params.get_or_insert_with(|| json!({}));
                if !params.get("_meta").is_some_and(Value::is_object) {
                    params["_meta"] = json!({});
                }
                params["_meta"][SUBSCRIPTION_ID] = id.to_value();
                (id.clone(), tagged)
            })
            .collect();
        Some(tagged)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Value>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_resource_is_not_acknowledged_and_a_shared_one_outlives_one_close() {
        let subscriptions = Subscriptions::default();
        let capabilities = json!({"resources": {"subscribe": true}});
        let asking = |uris: Value| json!({"notifications": {"resourceSubscriptions": uris}});
        let (one, two) = (RequestId::Number(1), RequestId::Number(2));
        subscriptions.open(
            &one,
            Some(&asking(json!(["a://x", "a://y"]))),
            &capabilities,
        );
        subscriptions.open(&two, Some(&asking(json!(["a://x"]))), &capabilities);
        let ack = subscriptions.acknowledged(&one, &["a://y".to_owned()]);
        assert_eq!(
            ack.params.unwrap()["notifications"]["resourceSubscriptions"],
            json!(["a://x"])
        );
        // a://x is still followed by the second subscription.
        assert!(subscriptions.close(&one).is_empty());
        assert_eq!(subscriptions.close(&two), ["a://x"]);
        assert!(subscriptions.close(&two).is_empty());
    }

    #[test]
    fn a_subscription_gets_only_what_it_asked_for_tagged() {
        let subscriptions = Subscriptions::default();
        let capabilities = json!({"tools": {"listChanged": true}, "prompts": {"listChanged": true},
            "resources": {"subscribe": true}});
        let params = json!({"notifications": {"promptsListChanged": true, "resourceSubscriptions": ["a://x"]}});
        let resources = subscriptions.open(&RequestId::Number(7), Some(&params), &capabilities);
        assert_eq!(resources, ["a://x"]);
        let ack = subscriptions
            .acknowledged(&RequestId::Number(7), &[])
            .params
            .unwrap();
        assert_eq!(
            ack["notifications"]["resourceSubscriptions"],
            json!(["a://x"])
        );
        assert_eq!(ack["_meta"][SUBSCRIPTION_ID], 7);
        assert!(ack["notifications"].get("toolsListChanged").is_none());
        let tools = Notification::new(NOTIFICATION_TOOLS_LIST_CHANGED, None);
        assert!(subscriptions.deliver(&tools).unwrap().is_empty());
        let prompts = Notification::new(NOTIFICATION_PROMPTS_LIST_CHANGED, Some(json!({})));
        let delivered = subscriptions.deliver(&prompts).unwrap();
        assert_eq!(
            delivered[0].1.params.as_ref().unwrap()["_meta"][SUBSCRIPTION_ID],
            7
        );
        let updated =
            |uri| Notification::new(NOTIFICATION_RESOURCES_UPDATED, Some(json!({"uri": uri})));
        assert_eq!(subscriptions.deliver(&updated("a://x")).unwrap().len(), 1);
        assert!(subscriptions.deliver(&updated("a://y")).unwrap().is_empty());
        assert_eq!(subscriptions.close(&RequestId::Number(7)), ["a://x"]);
        assert!(subscriptions.deliver(&prompts).unwrap().is_empty());
        let log = Notification::new("notifications/message", None);
        assert!(subscriptions.deliver(&log).is_none());
    }
}
