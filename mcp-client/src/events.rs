//! What servers tell the client unasked: log messages, list and resource
//! changes, and anything else, typed where the spec defines it.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use mcp_protocol::methods::{self, MethodKind};
use mcp_protocol::types::{
    CancelledNotificationParams, ElicitationCompleteNotificationParams,
    LoggingMessageNotificationParams, ProgressNotificationParams,
};
use mcp_protocol::{Notification, RequestId};
use mcp_transport::{ListenerStream, TransportEvent};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::broadcast;

use crate::cache::{Cache, Group};

/// Something the server sent that was not an answer.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ServerEvent {
    /// The tool list changed; list it again.
    ToolsListChanged,
    /// The prompt list changed.
    PromptsListChanged,
    /// The resource list changed.
    ResourcesListChanged,
    /// A subscribed resource changed.
    ResourceUpdated {
        /// The resource's URI.
        uri: String,
    },
    /// A log message (`notifications/message`).
    Log(LoggingMessageNotificationParams),
    /// Progress not tied to a live call (its call already ended).
    Progress(ProgressNotificationParams),
    /// The server cancelled one of its own requests to the client.
    Cancelled(CancelledNotificationParams),
    /// A URL-mode elicitation finished out of band (2025-11-25).
    ElicitationComplete(ElicitationCompleteNotificationParams),
    /// A task changed status.
    TaskStatus(Value),
    /// A `subscriptions/listen` request was acknowledged; the params list
    /// the notifications the server will send (modern).
    SubscriptionsAcknowledged(Value),
    /// A condition of the transport itself: noise skipped, a malformed or
    /// oversized message, an error with a null id.
    Transport(TransportEvent),
    /// A supervised connection ended and the client connected again (or
    /// tried to: the attempt's `failure` says why it did not).
    Restarted(crate::RestartAttempt),
    /// Anything else, as it came.
    Other(Notification),
}

impl ServerEvent {
    /// Types a notification.
    pub fn from_notification(n: Notification) -> ServerEvent {
        fn typed<T: DeserializeOwned>(n: &Notification) -> Option<T> {
            serde_json::from_value(n.params.clone().unwrap_or(Value::Null)).ok()
        }
        let event = match n.method.as_str() {
            methods::NOTIFICATION_TOOLS_LIST_CHANGED => Some(ServerEvent::ToolsListChanged),
            methods::NOTIFICATION_PROMPTS_LIST_CHANGED => Some(ServerEvent::PromptsListChanged),
            methods::NOTIFICATION_RESOURCES_LIST_CHANGED => Some(ServerEvent::ResourcesListChanged),
            methods::NOTIFICATION_RESOURCES_UPDATED => n
                .params
                .as_ref()
                .and_then(|p| p.get("uri"))
                .and_then(Value::as_str)
                .map(|uri| ServerEvent::ResourceUpdated {
                    uri: uri.to_owned(),
                }),
            methods::NOTIFICATION_MESSAGE => typed(&n).map(ServerEvent::Log),
            methods::NOTIFICATION_PROGRESS => typed(&n).map(ServerEvent::Progress),
            methods::NOTIFICATION_CANCELLED => typed(&n).map(ServerEvent::Cancelled),
            methods::NOTIFICATION_ELICITATION_COMPLETE => {
                typed(&n).map(ServerEvent::ElicitationComplete)
            }
            methods::NOTIFICATION_TASKS_STATUS => n.params.clone().map(ServerEvent::TaskStatus),
            methods::NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED => Some(
                ServerEvent::SubscriptionsAcknowledged(n.params.clone().unwrap_or(Value::Null)),
            ),
            _ => None,
        };
        event.unwrap_or(ServerEvent::Other(n))
    }

    /// The subscription (`subscriptions/listen` request) an event came
    /// through, when it came through one.
    pub fn subscription_id(n: &Notification) -> Option<RequestId> {
        n.meta()
            .and_then(|m| m.get(mcp_protocol::meta::SUBSCRIPTION_ID))
            .and_then(RequestId::from_value)
    }
}

/// A callback for every event, from the first message on.
pub type EventCallback = dyn Fn(&ServerEvent) + Send + Sync;

/// A stream of [`ServerEvent`]s, from [`crate::Client::events`].
///
/// Each stream holds its own bounded queue; a stream that falls behind
/// skips the oldest events and counts them in [`missed`](Self::missed).
pub struct EventStream {
    inner: tokio_stream_shim::BroadcastStream,
}

impl EventStream {
    pub(crate) fn new(rx: broadcast::Receiver<ServerEvent>) -> Self {
        EventStream {
            inner: tokio_stream_shim::BroadcastStream::new(rx),
        }
    }

    /// The next event; `None` once the client (every clone) is dropped.
    /// A server that goes away simply sends no more: check
    /// [`crate::Client::is_alive`].
    pub async fn recv(&mut self) -> Option<ServerEvent> {
        futures::StreamExt::next(self).await
    }

    /// How many events this stream skipped because it fell behind.
    pub fn missed(&self) -> u64 {
        self.inner.missed
    }
}

impl Stream for EventStream {
    type Item = ServerEvent;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<ServerEvent>> {
        Pin::new(&mut self.inner).poll_next(cx)
    }
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream")
            .field("missed", &self.inner.missed)
            .finish()
    }
}

/// A broadcast receiver as a `Stream`, counting what it skipped.
mod tokio_stream_shim {
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use futures::Stream;
    use futures::future::BoxFuture;
    use tokio::sync::broadcast::{self, error::RecvError};

    use super::ServerEvent;

    type Recv = BoxFuture<
        'static,
        (
            Result<ServerEvent, RecvError>,
            broadcast::Receiver<ServerEvent>,
        ),
    >;

    pub(super) struct BroadcastStream {
        fut: Recv,
        pub(super) missed: u64,
    }

    fn recv(mut rx: broadcast::Receiver<ServerEvent>) -> Recv {
        Box::pin(async move {
            let r = rx.recv().await;
            (r, rx)
        })
    }

    impl BroadcastStream {
        pub(super) fn new(rx: broadcast::Receiver<ServerEvent>) -> Self {
            BroadcastStream {
                fut: recv(rx),
                missed: 0,
            }
        }
    }

    impl Stream for BroadcastStream {
        type Item = ServerEvent;
        fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<ServerEvent>> {
            loop {
                let (result, rx) = futures::ready!(self.fut.as_mut().poll(cx));
                self.fut = recv(rx);
                match result {
                    Ok(event) => return Poll::Ready(Some(event)),
                    Err(RecvError::Closed) => return Poll::Ready(None),
                    Err(RecvError::Lagged(n)) => {
                        self.missed += n;
                        tracing::warn!(
                            skipped = n,
                            "an event stream fell behind and skipped events"
                        );
                    }
                }
            }
        }
    }
}

/// Drops the cache entries a change notification makes stale. Runs on the
/// connection's read loop as the listener's tap, when the notification
/// arrives: never behind a slow event callback, and never lost with an
/// event a full queue drops.
pub(crate) fn invalidate(cache: &Cache, n: &Notification) {
    // A notification's facts name the group it makes stale; one about a
    // single resource names it by its target param (`uri`).
    let Some(facts) = methods::facts(&n.method).filter(|f| f.kind == MethodKind::Notification)
    else {
        return;
    };
    let Some(group) = facts.cache_group.and_then(Group::from_facts) else {
        return;
    };
    match facts.target {
        Some(target) => {
            if let Some(uri) = target.in_params(n.params.as_ref()) {
                cache.invalidate(group, Some(uri));
            }
        }
        None => cache.invalidate(group, None),
    }
}

/// How many events an [`EventStream`] may fall behind before it skips.
const EVENT_CAPACITY: usize = 1024;

/// The broadcast behind every [`EventStream`], made on the first
/// [`crate::Client::events`]: a broadcast allocates all its slots up front
/// (some 180 KiB for 1,024 events), which a connection nobody listens to
/// should not hold. An event sent before then had no stream to reach
/// anyway, as with a broadcast that has no receiver.
#[derive(Clone, Default)]
pub(crate) struct Events(std::sync::Arc<std::sync::OnceLock<broadcast::Sender<ServerEvent>>>);

impl Events {
    /// A receiver of every event from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<ServerEvent> {
        self.0
            .get_or_init(|| broadcast::channel(EVENT_CAPACITY).0)
            .subscribe()
    }

    /// Sends to every stream, if there has ever been one.
    fn send(&self, event: ServerEvent) {
        if let Some(tx) = self.0.get() {
            // No subscriber left is fine: events are optional.
            let _ = tx.send(event);
        }
    }
}

/// Turns the connection's notifications and the transport's own events
/// into [`ServerEvent`]s, for the callback and every [`EventStream`]. Ends
/// when the connection does.
pub(crate) async fn dispatch_events(
    notifications: ListenerStream,
    transport: ListenerStream<TransportEvent>,
    callback: Option<std::sync::Arc<EventCallback>>,
    events: Events,
) {
    use futures::StreamExt;
    let mut all = futures::stream::select(
        notifications.map(ServerEvent::from_notification),
        transport.map(ServerEvent::Transport),
    );
    while let Some(event) = all.next().await {
        deliver(callback.as_deref(), &events, event);
    }
}

/// Hands one event to the callback (a panic there is caught and logged)
/// and to the event streams.
pub(crate) fn deliver(callback: Option<&EventCallback>, events: &Events, event: ServerEvent) {
    if let Some(callback) = callback {
        let call = std::panic::AssertUnwindSafe(|| callback(&event));
        if std::panic::catch_unwind(call).is_err() {
            tracing::error!("the event callback panicked; it keeps receiving events");
        }
    }
    events.send(event);
}
