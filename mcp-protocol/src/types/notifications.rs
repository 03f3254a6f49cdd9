//! Notifications every revision shares: cancellation and progress. (The
//! `list_changed` ones take [`NotificationParams`](super::common::NotificationParams);
//! the others live with their concept.)

use serde::{Deserialize, Serialize};
use serde_json::Number;

use super::common::{JsonObject, Meta};
use crate::jsonrpc::RequestId;

/// A progress token: a string or an integer, like a request id.
pub type ProgressToken = RequestId;

/// Params of `notifications/cancelled`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CancelledNotificationParams {
    /// The id of the request cancelled (absent only in 2025-11-25 task
    /// cancellations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// Why, for logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The notification's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CancelledNotificationParams {
    /// Cancels `request_id`.
    pub fn new(request_id: impl Into<RequestId>) -> Self {
        CancelledNotificationParams {
            request_id: Some(request_id.into()),
            reason: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// The same with a reason.
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }
}

/// Params of `notifications/progress`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ProgressNotificationParams {
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Progress so far; it increases, and may be fractional.
    pub progress: Number,
    /// The total, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<Number>,
    /// A message for the user (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The notification's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ProgressNotificationParams {
    /// Progress `progress` for `token`. A non-finite `progress` is sent as 0.
    pub fn new(token: impl Into<ProgressToken>, progress: f64) -> Self {
        ProgressNotificationParams {
            progress_token: token.into(),
            progress: Number::from_f64(progress).unwrap_or_else(|| 0.into()),
            total: None,
            message: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// Progress as a float.
    pub fn progress_f64(&self) -> f64 {
        self.progress.as_f64().unwrap_or(0.0)
    }

    /// The total as a float.
    pub fn total_f64(&self) -> Option<f64> {
        self.total.as_ref().and_then(Number::as_f64)
    }
}

unknown_fields! {
    CancelledNotificationParams;
    ProgressNotificationParams;
}
