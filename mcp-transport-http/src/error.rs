//! The error type shared by the services, connectors and header providers
//! of the transport.

use std::error::Error as StdError;

/// The error type of an [`HttpService`](crate::HttpService): any error, boxed.
pub type BoxError = Box<dyn StdError + Send + Sync>;

/// An error and its sources, joined.
pub(crate) fn chain(error: &(dyn StdError + 'static)) -> String {
    let mut text = error.to_string();
    let mut current = error.source();
    while let Some(e) = current {
        let next = e.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        current = e.source();
    }
    text
}
