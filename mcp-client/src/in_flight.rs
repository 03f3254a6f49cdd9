//! The client's requests in flight: how many there are (SEP-2260 refuses a
//! legacy server's sampling or elicitation when there is none), and the
//! call each legacy request belongs to, so that a server request a
//! transport ties to one of ours (over Streamable HTTP, a request sent on
//! a `POST`'s answer stream) is answered by that call's handlers, and its
//! handlers' context names the call.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_protocol::{RequestId, methods};
use serde_json::Value;

use crate::handlers::Handlers;

/// Shared by the session and the server-request handler, which exists
/// before the session does.
#[derive(Default)]
pub(crate) struct InFlight {
    count: AtomicUsize,
    owners: Mutex<HashMap<RequestId, Owner>>,
}

/// The call a request in flight was sent for.
#[derive(Clone)]
pub(crate) struct Owner {
    pub(crate) method: String,
    pub(crate) target: Option<String>,
    pub(crate) on_behalf_of: Option<String>,
    /// The call's own handlers (the client's answer what these do not).
    pub(crate) handlers: Handlers,
}

impl InFlight {
    /// Counts a request in flight while the guard lives.
    pub(crate) fn enter(&self) -> Entered<'_> {
        self.count.fetch_add(1, Ordering::Relaxed);
        Entered(self)
    }

    /// How many requests are in flight.
    pub(crate) fn count(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    /// Notes that request `id` was sent for `owner`, while the guard lives.
    pub(crate) fn own(&self, id: RequestId, owner: Owner) -> Owned<'_> {
        self.owners().insert(id.clone(), owner);
        Owned {
            in_flight: self,
            id,
        }
    }

    /// The call request `id` was sent for, while it is in flight.
    pub(crate) fn owner_of(&self, id: &RequestId) -> Option<Owner> {
        self.owners().get(id).cloned()
    }

    fn owners(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Owner>> {
        self.owners.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A request counted in flight.
pub(crate) struct Entered<'a>(&'a InFlight);

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        self.0.count.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A request whose call is known while it is in flight.
pub(crate) struct Owned<'a> {
    in_flight: &'a InFlight,
    id: RequestId,
}

impl Drop for Owned<'_> {
    fn drop(&mut self) {
        self.in_flight.owners().remove(&self.id);
    }
}

/// What a call names, for its handlers' context: the tool, the prompt, or
/// the resource.
pub(crate) fn target_of(method: &str, params: Option<&Value>) -> Option<String> {
    let target = methods::facts(method)?.target?;
    target.in_params(params).map(str::to_owned)
}
