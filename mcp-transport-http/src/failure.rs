//! What an error of the HTTP service means for the request: refused by
//! a layer (a redirect, a provider), unreachable (nothing sent), or a
//! broken stream.

use std::error::Error as StdError;

use mcp_transport::TransportError;

use crate::authorization::CredentialsFailed;
use crate::error::{BoxError, chain};
use crate::redirect::RedirectRefused;

/// Reads a service error: unreachable (nothing sent) or a broken stream.
pub(crate) fn classify(error: &BoxError) -> TransportError {
    if let Some(refused) = error.downcast_ref::<RedirectRefused>() {
        return TransportError::RedirectRefused {
            status: refused.status,
            location: refused.location.clone(),
            reason: refused.reason.clone(),
        };
    }
    if let Some(failed) = error.downcast_ref::<CredentialsFailed>() {
        return TransportError::Credentials {
            cause: failed.to_string(),
        };
    }
    let cause = chain(error.as_ref());
    if is_connect_failure(error.as_ref()) {
        TransportError::Unreachable { cause }
    } else {
        TransportError::StreamBroken {
            may_have_run: true,
            cause,
        }
    }
}

/// Whether the error is known to have come before any byte of the request
/// was written: hyper-util's connect errors (DNS, refused, connect
/// timeout, TLS handshake, proxy tunnel), or a refused connection anywhere
/// in the chain (what a custom service's own connect says). A timed-out
/// or unreachable host is not enough: an established socket reports the
/// same after the request was written, and the client re-sends what was
/// `Unreachable`.
fn is_connect_failure(error: &(dyn StdError + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(h) = e.downcast_ref::<hyper_util::client::legacy::Error>()
            && h.is_connect()
        {
            return true;
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return true;
        }
        current = e.source();
    }
    false
}
