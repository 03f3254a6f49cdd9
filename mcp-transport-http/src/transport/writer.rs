//! The writer: takes the queue's messages in order and starts each one's
//! POST, keeping a notification behind the requests before it.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::Method;
use mcp_protocol::methods::{INITIALIZE, NOTIFICATION_INITIALIZED};
use mcp_protocol::{Message, Request, RequestId};
use mcp_transport::{Outbound, OutboundReceiver, TransportError};
use tokio::sync::oneshot;
use tracing::Instrument;

use super::driven::{Driver, Exchange};
use super::wire::{Outgoing, Wire};
use super::{Shared, fallback, modern, modern_version_of, session};

/// How long the message after `notifications/initialized` waits for the
/// GET stream's response head.
const GET_HEAD_WAIT: Duration = Duration::from_secs(1);

/// How long a notification waits for the response heads of the requests
/// that left before it (all of them together).
const ORDER_GRACE: Duration = Duration::from_millis(25);

/// Takes the queue's messages one at a time, in order: a request starts its
/// exchange and the next message follows at once (see [`InFlight`]); any
/// other message waits for the requests before it, then is posted and
/// answered (202) before the next one is taken.
pub(super) async fn write_loop(shared: Arc<Shared>, mut outbound: OutboundReceiver) {
    let shutdown = shared.engine.shutdown_token();
    let mut in_flight = InFlight::default();
    loop {
        let item = tokio::select! {
            item = outbound.recv() => item,
            _ = shutdown.cancelled() => None,
        };
        // Requests started on their callers' calls while this task waited
        // (see `HttpTransport::request`) came before this item.
        in_flight.append(shared.take_started());
        match item {
            None => break,
            Some(Outbound::Message(Message::Request(request))) => {
                let initialize = request.method == INITIALIZE;
                if initialize {
                    // A new session: the requests before it are on the
                    // wire first, under the session they carry.
                    in_flight.taken().await;
                }
                match shared.start_request(request) {
                    Some(started) if initialize => {
                        // Nothing leaves before `initialize`'s response
                        // head: it carries the session id. Both waits end
                        // early if the exchange is dropped.
                        if let Some(taken) = started.taken {
                            let _ = taken.await;
                        }
                        let _ = started.head.await;
                    }
                    Some(started) => in_flight.push(started),
                    None => {}
                }
            }
            Some(Outbound::Message(message)) => {
                let initialized = message.method() == Some(NOTIFICATION_INITIALIZED);
                if matches!(message, Message::Notification(_)) {
                    in_flight.settle().await;
                }
                shared.post_one_way(message).await;
                if initialized
                    && shared.config.get_stream
                    && shared.is_legacy()
                    && shared.old_endpoint().is_none()
                {
                    // Opened before any later request leaves, as servers
                    // that time their resumption expect.
                    let head = shared.open_get_stream();
                    let _ = tokio::time::timeout(GET_HEAD_WAIT, head).await;
                }
            }
            Some(Outbound::Cancel { id, reason }) => {
                let Some(cancelled) = shared.cancel(id.clone(), reason) else {
                    continue;
                };
                // Never ahead of the request it names; and not at all for
                // one that never left (its exchange ended, closed by the
                // cancel, before the HTTP client took its body).
                in_flight.taken().await;
                let never_sent = in_flight.never_sent(&id);
                in_flight.settle().await;
                if never_sent {
                    tracing::debug!(%id, "no cancel posted: the request never left");
                } else {
                    shared.post_one_way(cancelled).await;
                }
            }
            Some(other) => {
                let message = other.into_message();
                if matches!(message, Message::Notification(_)) {
                    in_flight.settle().await;
                }
                shared.post_one_way(message).await;
            }
        }
    }
}

/// A request's exchange, as far as the order of later messages cares.
pub(super) struct Started {
    id: RequestId,
    /// Ends once the HTTP client took its body (`true`), or the exchange
    /// ended without it taking the body; `None` once waited for.
    taken: Option<oneshot::Receiver<bool>>,
    /// Whether the HTTP client took the body, once `taken` was waited for.
    sent: bool,
    /// Ends once its response head came (or the exchange ended).
    head: oneshot::Receiver<()>,
    /// The exchange's driver, when its caller drives it: the writer moves
    /// it to a task of its own before waiting for its body.
    driver: Option<Arc<Driver>>,
}

impl Started {
    /// The same, driven by its caller through `driver`.
    pub(super) fn driven_by(mut self, driver: Arc<Driver>) -> Started {
        self.driver = Some(driver);
        self
    }
}

/// The requests started whose response head has not come yet, oldest
/// first.
///
/// A request waits for nothing before it: each is a POST of its own, on a
/// pooled connection of its own, and its answer never depends on another's
/// (only `initialize`'s session id does, which the writer waits for).
/// Waiting even for the bytes of the one before would put a hand-off
/// between tasks (the exchange's, then the connection's) between every two
/// requests, one after the other, which bounds the throughput of
/// concurrent calls; and a server handles the POSTs of separate
/// connections in whatever order it likes anyway. A notification is
/// different: one sent after requests (`notifications/cancelled` above
/// all) is about them, and should not reach the server before them.
#[derive(Default)]
pub(super) struct InFlight(Vec<Started>);

impl InFlight {
    pub(super) fn push(&mut self, started: Started) {
        self.prune();
        self.0.push(started);
    }

    /// Adds `earlier`'s requests, which were started before this list's
    /// next message was taken.
    fn append(&mut self, earlier: InFlight) {
        if !earlier.0.is_empty() {
            self.prune();
            self.0.extend(earlier.0);
        }
    }

    /// Drops the answered ones, so that the list stays as long as the
    /// requests in flight, not as the connection's history.
    fn prune(&mut self) {
        self.0
            .retain_mut(|s| matches!(s.head.try_recv(), Err(oneshot::error::TryRecvError::Empty)));
    }

    /// Waits until the HTTP client took the bodies of the requests in
    /// flight (a new connection's handshake included), then a moment
    /// ([`ORDER_GRACE`], for them all) for their response heads: servers
    /// that stream send their head at once, so the notification reaches
    /// them after the requests; a slow JSON server costs the notification
    /// at most this. Forgets them after: later messages do not wait again.
    async fn settle(&mut self) {
        if self.0.is_empty() {
            return;
        }
        self.taken().await;
        let heads = std::mem::take(&mut self.0).into_iter().map(|s| s.head);
        let _ = tokio::time::timeout(ORDER_GRACE, futures::future::join_all(heads)).await;
    }

    /// Waits until the HTTP client took the bodies of the requests in
    /// flight (or their exchanges ended).
    async fn taken(&mut self) {
        for started in &mut self.0 {
            if let Some(driver) = started.driver.take() {
                driver.detach();
            }
            if let Some(taken) = started.taken.take() {
                started.sent = taken.await.unwrap_or(false);
            }
        }
    }

    /// Whether the request `id` is known, after [`taken`](Self::taken),
    /// never to have left: its exchange ended before the HTTP client took
    /// its body.
    fn never_sent(&self, id: &RequestId) -> bool {
        self.0
            .iter()
            .any(|s| &s.id == id && s.taken.is_none() && !s.sent)
    }
}

impl Shared {
    /// Starts a request's exchange on a task of its own, and hands back
    /// what a later message waits for (see [`InFlight`]); `None` when the
    /// request was given up, or failed before it was sent. The headers
    /// are taken here, so this runs at the request's place in the queue.
    pub(super) fn start_request(self: &Arc<Self>, request: Request) -> Option<Started> {
        let (started, exchange) = self.prepare_request(request)?;
        self.runtime.spawn(exchange);
        Some(started)
    }

    /// What [`start_request`](Self::start_request) starts: the exchange,
    /// not yet polled, for the caller to drive or a task to run.
    pub(super) fn prepare_request(
        self: &Arc<Self>,
        request: Request,
    ) -> Option<(Started, Exchange)> {
        let id = request.id.clone();
        let (headers, shared_meta, stream) = {
            let mut state = self.state();
            match state.requests.get_mut(&id) {
                Some(p) => (
                    std::mem::take(&mut p.headers),
                    p.shared.take(),
                    p.stream.clone(),
                ),
                // Given up between the queue and here.
                None => return None,
            }
        };
        let initialize = request.method == INITIALIZE;
        let span = tracing::debug_span!("mcp_http_request", id = %id, method = %request.method);
        // The headers are taken here, in queue order, not on the task: a
        // session closed or replaced after this request was queued does
        // not change what it carries.
        let message = Message::Request(request);
        let prepared = self.message_headers(&message, shared_meta.as_ref(), &headers);
        // Read after the headers, so that an expiry another exchange saw
        // meanwhile cannot send this one with no session at all. (A new
        // session cannot open meanwhile: one opens while the writer waits
        // for an `initialize`'s response head, and nothing starts then.)
        let expired = self.state().expired;
        if let (Some(status), false) = (expired, initialize) {
            tracing::debug!("not sent: the session expired and no new one was opened yet");
            self.engine
                .fail_request(&id, TransportError::SessionExpired { status });
            return None;
        }
        let (head_tx, head_rx) = oneshot::channel();
        let (taken_tx, taken_rx) = oneshot::channel();
        let shared = self.clone();
        let shutdown = self.engine.shutdown_token();
        let (prepared, sent_under) = prepared;
        let out = Outgoing {
            message,
            shared: shared_meta,
            extra: headers,
            headers: prepared,
            sent_under,
            head: head_tx,
            taken: taken_tx,
        };
        let exchange = async move { shared.exchange(out).await };
        let closed = stream;
        let exchange = Box::pin(
            async move {
                tokio::select! {
                    _ = exchange => {}
                    _ = closed.cancelled_owned() => tracing::debug!("the request's stream was closed"),
                    _ = shutdown.cancelled_owned() => {}
                }
            }
            .instrument(span),
        );
        // The next request does not wait for this one: see `InFlight`.
        let started = Started {
            id,
            taken: Some(taken_rx),
            sent: false,
            head: head_rx,
            driver: None,
        };
        Some((started, exchange))
    }

    /// One request's exchange, on the task `start_request` spawned or in
    /// its caller's task (see `driven`), over the wire it takes.
    async fn exchange(self: &Arc<Self>, out: Outgoing) {
        let Message::Request(request) = &out.message else {
            return;
        };
        let id = request.id.clone();
        let modern = modern_version_of(request.meta(), out.shared.as_ref()).is_some();
        let outcome = match Wire::of(self.old_endpoint().is_some(), modern) {
            Wire::HttpSse => fallback::exchange(self, out).await,
            Wire::Modern => modern::exchange(self, out).await,
            Wire::Session => session::exchange(self, out).await,
        };
        if let Err(e) = outcome {
            self.engine.fail_request(&id, e);
        }
    }

    /// POSTs a notification or an answer, waiting (boundedly) for the
    /// server to take it before the next message leaves.
    async fn post_one_way(&self, message: Message) {
        let method = message.method().unwrap_or("(answer)").to_owned();
        if self.old_endpoint().is_some() {
            let posted = tokio::time::timeout(
                self.config.notification_timeout,
                self.post_old(&message, &[], None),
            )
            .await;
            match posted {
                Ok(Ok(())) => {}
                Ok(Err(error)) => tracing::warn!(%method, %error, "the server refused a message"),
                Err(_) => tracing::warn!(%method, "the server did not take a message in time"),
            }
            return;
        }
        let (headers, sent_under) = self.message_headers(&message, None, &[]);
        let body = Bytes::from(serde_json::to_vec(&message).unwrap_or_default());
        let sent = tokio::time::timeout(
            self.config.notification_timeout,
            self.send(Method::POST, headers, body, None),
        )
        .await;
        match sent {
            Ok(Ok(response)) if response.status().is_success() => {}
            Ok(Ok(response)) => {
                let error = self.status_error(response, sent_under).await;
                tracing::warn!(%method, %error, "the server refused a message");
            }
            Ok(Err(error)) => tracing::warn!(%method, %error, "a message could not be sent"),
            Err(_) => tracing::warn!(
                %method,
                after = ?self.config.notification_timeout,
                "the server did not take a message in time"
            ),
        }
    }
}
