//! The session-based wire of Streamable HTTP (2025-03-26 to 2025-11-25):
//! the request carries the session the server gave; one whose session
//! expired after it was queued is not sent; a refused `initialize` may
//! fall back to the 2024-11-05 HTTP+SSE wire.

use std::sync::Arc;

use mcp_protocol::Message;
use mcp_protocol::methods::INITIALIZE;
use mcp_transport::TransportError;

use super::Shared;
use super::wire::Outgoing;

/// Sends a session-based request and reads its answer (resumed by GET
/// when its stream breaks); a refused `initialize` tries HTTP+SSE.
pub(super) async fn exchange(shared: &Arc<Shared>, out: Outgoing) -> Result<(), TransportError> {
    let Message::Request(request) = &out.message else {
        return Ok(());
    };
    if let Some(status) = expired_since(shared, out.sent_under) {
        tracing::debug!("not sent: the session it carries has expired");
        return Err(TransportError::SessionExpired { status });
    }
    let initialize = request.method == INITIALIZE;
    let response = shared
        .post_request(&out.message, out.shared.as_ref(), out.headers, out.taken)
        .await?;
    shared.note_initialize_answer(&response, initialize);
    let _ = out.head.send(());
    let read = shared
        .read_answer(&request.id, response, out.sent_under, initialize, true)
        .await;
    let Err(e) = read else {
        return Ok(());
    };
    let refused = matches!(
        e,
        TransportError::Http {
            status: 400 | 404 | 405,
            ..
        }
    );
    if initialize && refused && shared.config.sse_fallback {
        match shared.fallback_to_sse(request).await {
            Ok(()) => return Ok(()),
            Err(Some(other)) => return Err(other),
            Err(None) => {}
        }
    }
    Err(e)
}

/// The status with which the session a request carries (`sent_under`,
/// its epoch) ended after the request was queued, if it did: another
/// request met its expiry, and maybe a new one was opened since. The
/// server would only refuse it, so it fails as that one did, and the
/// client retries it on the new session. Requests do not wait for one
/// another, so this one may start after the expiry was known.
fn expired_since(shared: &Shared, sent_under: Option<u64>) -> Option<u16> {
    let epoch = sent_under?;
    let state = shared.state();
    let gone = state.session_epoch != epoch || state.expired.is_some();
    gone.then(|| state.expired.unwrap_or(404))
}
