//! Request ids: the client owns them, one counter per client, shared by
//! every connection a supervised client makes.

use std::sync::atomic::{AtomicI64, Ordering};

use mcp_protocol::RequestId;

/// The request ids of one client.
#[derive(Debug, Default)]
pub(crate) struct Ids(AtomicI64);

impl Ids {
    pub(crate) fn next(&self) -> RequestId {
        RequestId::Number(self.0.fetch_add(1, Ordering::Relaxed) + 1)
    }
}
