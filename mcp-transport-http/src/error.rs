//! The error type shared by the services, connectors and header providers
//! of the transport.

use std::error::Error as StdError;

/// The error type of an [`HttpService`](crate::HttpService): any error, boxed.
pub type BoxError = Box<dyn StdError + Send + Sync>;
