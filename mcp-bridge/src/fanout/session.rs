//! The one session the client sees: a [`Transport`] that answers the
//! handshake, lists and `ping` itself and sends every other request to the
//! server it concerns; and the watch that tells the client when a server's
//! entries are gone with it.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::future::{BoxFuture, join_all};
use mcp_protocol::error_codes::{INVALID_REQUEST, METHOD_NOT_FOUND};
use mcp_protocol::methods::{
    COMPLETION_COMPLETE, INITIALIZE, LOGGING_SET_LEVEL, NOTIFICATION_INITIALIZED,
    NOTIFICATION_PROMPTS_LIST_CHANGED, NOTIFICATION_RESOURCES_LIST_CHANGED,
    NOTIFICATION_TOOLS_LIST_CHANGED, PING, PROMPTS_GET, PROMPTS_LIST, RESOURCES_LIST,
    RESOURCES_READ, RESOURCES_SUBSCRIBE, RESOURCES_TEMPLATES_LIST, RESOURCES_UNSUBSCRIBE,
    SERVER_DISCOVER, TOOLS_CALL, TOOLS_LIST,
};
use mcp_protocol::{Notification, Request};
use mcp_transport::{RequestOptions, ResponseFuture, Transport, TransportError};
use serde_json::{Value, json};

use crate::fanout::handshake::{initialize, initialized};
use crate::fanout::lists::{Kind, merged};
use crate::fanout::member::{Shared, not_routed, rpc};
use crate::fanout::route::{by_name, by_uri, completion, to_all};

/// How often the watch looks whether each server is still there.
const WATCH: Duration = Duration::from_millis(50);

/// The servers of a [`Servers`](crate::Servers) as one legacy-era session.
pub(crate) struct FannedOut {
    shared: Arc<Shared>,
}

impl FannedOut {
    /// The session over `shared`, with its watch running.
    pub(crate) fn start(shared: Shared) -> FannedOut {
        let shared = Arc::new(shared);
        tokio::spawn(watch(Arc::downgrade(&shared)));
        FannedOut { shared }
    }
}

impl Transport for FannedOut {
    fn request(&self, request: Request, options: RequestOptions) -> ResponseFuture {
        let shared = self.shared.clone();
        Box::pin(async move { dispatch(&shared, request, options).await })
    }

    /// `notifications/initialized` goes to each server that completed its
    /// handshake; any other notification of the client's (roots changed,
    /// a cancel, progress) to every server still there: a server ignores
    /// a cancel or progress of a request it does not know.
    fn notify(&self, notification: Notification) -> Result<(), TransportError> {
        if self.shared.closed.load(Ordering::Acquire) {
            return Err(TransportError::Closed);
        }
        if notification.method == NOTIFICATION_INITIALIZED {
            initialized(&self.shared);
            return Ok(());
        }
        for (_, member) in self.shared.live() {
            if let Err(error) = member.transport.notify(notification.clone()) {
                tracing::debug!(server = %member.name, %error, "a notification was not sent");
            }
        }
        Ok(())
    }

    fn close(&self) -> BoxFuture<'static, ()> {
        let shared = self.shared.clone();
        Box::pin(async move {
            shared.closed.store(true, Ordering::Release);
            join_all(shared.members.iter().map(|m| m.transport.close())).await;
        })
    }

    /// Alive while any of its servers is.
    fn is_alive(&self) -> bool {
        !self.shared.closed.load(Ordering::Acquire) && self.shared.live().next().is_some()
    }
}

/// One request of the client's, answered or sent on.
async fn dispatch(
    shared: &Shared,
    request: Request,
    options: RequestOptions,
) -> Result<Value, TransportError> {
    if shared.closed.load(Ordering::Acquire) {
        return Err(TransportError::Closed);
    }
    let method = request.method.as_str();
    match method {
        INITIALIZE => return initialize(shared, request.params).await,
        PING => return Ok(json!({})),
        SERVER_DISCOVER => return Err(rpc(METHOD_NOT_FOUND, LEGACY_ONLY)),
        _ if !shared.opened().await => {
            return Err(rpc(INVALID_REQUEST, format!("{method}: {LEGACY_ONLY}")));
        }
        _ => {}
    }
    match method {
        TOOLS_LIST => Ok(merged(shared, Kind::Tools).await),
        PROMPTS_LIST => Ok(merged(shared, Kind::Prompts).await),
        RESOURCES_LIST => Ok(merged(shared, Kind::Resources).await),
        RESOURCES_TEMPLATES_LIST => Ok(merged(shared, Kind::Templates).await),
        TOOLS_CALL => by_name(shared, Kind::Tools, request, options).await,
        PROMPTS_GET => by_name(shared, Kind::Prompts, request, options).await,
        RESOURCES_READ | RESOURCES_SUBSCRIBE | RESOURCES_UNSUBSCRIBE => {
            by_uri(shared, request, options).await
        }
        COMPLETION_COMPLETE => completion(shared, request, options).await,
        LOGGING_SET_LEVEL => to_all(shared, request, "logging").await,
        other => Err(not_routed(other)),
    }
}

/// What a client that does not open the session with `initialize` is told.
const LEGACY_ONLY: &str = "the bridge serving several servers speaks only the legacy era: \
     open the session with initialize (a 2026-07-28 session is not served)";

/// Watches the servers until the session is dropped or closed: a server
/// that died is marked gone, its entries leave the lists, and the client
/// is told the lists it had changed.
async fn watch(shared: Weak<Shared>) {
    loop {
        tokio::time::sleep(WATCH).await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if shared.closed.load(Ordering::Acquire) {
            return;
        }
        for (index, member) in shared.members.iter().enumerate() {
            if member.gone.load(Ordering::Acquire) || member.transport.is_alive() {
                continue;
            }
            member.gone.store(true, Ordering::Release);
            let others = shared.live().count();
            tracing::warn!(server = %member.name, others, "a server of the bridge is gone; serving the others");
            let mut routes = shared.routes();
            routes.tools.retain(|_, (i, _)| *i != index);
            routes.prompts.retain(|_, (i, _)| *i != index);
            routes.resources.retain(|_, i| *i != index);
            routes.templates.retain(|_, i| *i != index);
            drop(routes);
            if shared.handshake.get().is_none() {
                continue;
            }
            for (capability, changed) in [
                ("tools", NOTIFICATION_TOOLS_LIST_CHANGED),
                ("prompts", NOTIFICATION_PROMPTS_LIST_CHANGED),
                ("resources", NOTIFICATION_RESOURCES_LIST_CHANGED),
            ] {
                if member.has(capability) {
                    shared.notify_client(changed);
                }
            }
        }
        if shared.live().next().is_none() {
            return;
        }
    }
}
