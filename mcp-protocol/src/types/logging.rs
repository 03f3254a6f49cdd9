//! Logging: `logging/setLevel` (legacy), the per-request log level
//! (2026-07-28, deprecated) and `notifications/message`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{JsonObject, Meta};

string_enum! {
    /// A log level, as in RFC 5424 (syslog).
    LoggingLevel {
        /// Debug-level messages.
        Debug = "debug",
        /// Informational messages.
        Info = "info",
        /// Normal but significant conditions.
        Notice = "notice",
        /// Warning conditions.
        Warning = "warning",
        /// Error conditions.
        Error = "error",
        /// Critical conditions.
        Critical = "critical",
        /// Action must be taken immediately.
        Alert = "alert",
        /// The system is unusable.
        Emergency = "emergency",
    }
}

impl LoggingLevel {
    /// The level's severity, from 0 (debug) to 7 (emergency); `None` for an
    /// unknown level.
    pub fn severity(&self) -> Option<u8> {
        Some(match self {
            LoggingLevel::Debug => 0,
            LoggingLevel::Info => 1,
            LoggingLevel::Notice => 2,
            LoggingLevel::Warning => 3,
            LoggingLevel::Error => 4,
            LoggingLevel::Critical => 5,
            LoggingLevel::Alert => 6,
            LoggingLevel::Emergency => 7,
            LoggingLevel::Unknown(_) => return None,
        })
    }
}

/// Params of `logging/setLevel` (legacy).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SetLevelRequestParams {
    /// The lowest level the server should send.
    pub level: LoggingLevel,
    /// The request's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SetLevelRequestParams {
    /// Params setting `level`.
    pub fn new(level: LoggingLevel) -> Self {
        SetLevelRequestParams {
            level,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Params of `notifications/message`: one log message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LoggingMessageNotificationParams {
    /// The message's level.
    pub level: LoggingLevel,
    /// The logger's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The message: any JSON.
    pub data: Value,
    /// The notification's `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl LoggingMessageNotificationParams {
    /// A log message.
    pub fn new(level: LoggingLevel, data: Value) -> Self {
        LoggingMessageNotificationParams {
            level,
            logger: None,
            data,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

unknown_fields! {
    SetLevelRequestParams { level: "level" };
    LoggingMessageNotificationParams { level: "level" };
}
