//! `subscriptions/listen` (2026-07-28+): one long-lived request that
//! carries change notifications.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{JsonObject, Meta, ResultType};
use crate::jsonrpc::RequestId;
use crate::meta::SUBSCRIPTION_ID;

/// Which notifications to receive (in the request) or will be sent (in the
/// acknowledgement).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// `notifications/tasks/status` for these task ids (tasks extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks_status: Option<Vec<String>>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SubscriptionFilter {
    /// An empty filter.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same with every `list_changed` notification.
    pub fn with_all_list_changes(mut self) -> Self {
        self.tools_list_changed = Some(true);
        self.prompts_list_changed = Some(true);
        self.resources_list_changed = Some(true);
        self
    }

    /// The same with updates of these resources.
    pub fn with_resources(mut self, uris: Vec<String>) -> Self {
        self.resource_subscriptions = Some(uris);
        self
    }
}

/// Params of `subscriptions/listen`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SubscriptionsListenRequestParams {
    /// What to listen to.
    pub notifications: SubscriptionFilter,
    /// The request's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SubscriptionsListenRequestParams {
    /// Params listening to `notifications`.
    pub fn new(notifications: SubscriptionFilter) -> Self {
        SubscriptionsListenRequestParams {
            notifications,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Params of `notifications/subscriptions/acknowledged`: the subset the
/// server honours.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SubscriptionsAcknowledgedNotificationParams {
    /// What the server will send.
    pub notifications: SubscriptionFilter,
    /// The notification's `_meta`, with the subscription id.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Result of `subscriptions/listen`: sent when the server ends the stream
/// gracefully.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionsListenResult {
    /// `resultType`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The result's `_meta`, with the subscription id.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SubscriptionsListenResult {
    /// `_meta["io.modelcontextprotocol/subscriptionId"]`.
    pub fn subscription_id(&self) -> Option<RequestId> {
        self.meta
            .as_ref()
            .and_then(|m| m.get(SUBSCRIPTION_ID))
            .and_then(RequestId::from_value)
    }
}

/// The subscription id in a `_meta`, if any.
pub fn subscription_id_of(meta: Option<&Meta>) -> Option<RequestId> {
    meta?.get(SUBSCRIPTION_ID).and_then(RequestId::from_value)
}

/// The subscription id of a notification's raw params, if any.
pub fn subscription_id_in_params(params: Option<&Value>) -> Option<RequestId> {
    params?
        .get("_meta")?
        .get(SUBSCRIPTION_ID)
        .and_then(RequestId::from_value)
}

unknown_fields! {
    SubscriptionFilter;
    SubscriptionsListenRequestParams { notifications: "notifications" };
    SubscriptionsAcknowledgedNotificationParams { notifications: "notifications" };
    SubscriptionsListenResult { result_type: "resultType" };
}
