//! The 2026-07-28 wire: one POST per request, no session, its answer a
//! JSON body or an SSE stream (never resumed: closing it is the cancel).

use std::sync::Arc;

use mcp_protocol::Message;
use mcp_protocol::methods::INITIALIZE;
use mcp_transport::TransportError;

use super::Shared;
use super::wire::Outgoing;

/// Sends a modern request and reads its answer.
pub(super) async fn exchange(shared: &Arc<Shared>, out: Outgoing) -> Result<(), TransportError> {
    let Message::Request(request) = &out.message else {
        return Ok(());
    };
    let initialize = request.method == INITIALIZE;
    let response = shared
        .post_request(&out.message, out.shared.as_ref(), out.headers, out.taken)
        .await?;
    shared.note_initialize_answer(&response, initialize);
    let _ = out.head.send(());
    shared
        .read_answer(&request.id, response, out.sent_under, initialize, false)
        .await
}
