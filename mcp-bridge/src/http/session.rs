//! One legacy session (2025-03-26 to 2025-11-25) of a client over HTTP:
//! its own upstream session, an engine that serves its requests and
//! correlates the server's requests to it, and the streams its messages
//! go out on.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use mcp_protocol::meta::PROGRESS_TOKEN;
use mcp_protocol::methods::{NOTIFICATION_CANCELLED, NOTIFICATION_MESSAGE, NOTIFICATION_PROGRESS};
use mcp_protocol::{Message, Notification, Request, RequestId};
use mcp_transport::{
    Engine, Outbound, OutboundReceiver, RequestOptions, ResponseFuture, Transport, TransportError,
};
use tokio::time::Instant;

use super::streams::{Reader, Streams, Weight};
use crate::link::{Downstream, Link};

/// A client's session over HTTP.
pub(crate) struct Session {
    pub(crate) id: String,
    pub(crate) link: Arc<Link>,
    pub(crate) engine: Engine,
    client: Arc<Client>,
    last_seen: Mutex<Instant>,
    ended: AtomicBool,
}

/// The session as the relay sees its client.
pub(crate) struct Client {
    engine: Engine,
    streams: Mutex<Streams>,
    /// The server's requests relayed to the client → the client's request
    /// they came during.
    routes: Arc<Mutex<HashMap<RequestId, RequestId>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Session {
    /// A session for `link` (not connected upstream yet), and the engine's
    /// queue, which [`route`](Self::route) drains.
    pub(crate) fn new(id: String, link: Arc<Link>) -> (Arc<Session>, OutboundReceiver) {
        let (engine, outbound) = Engine::new(crate::relay::downstream_handlers(&link));
        let client = Arc::new(Client {
            engine: engine.clone(),
            streams: Mutex::new(Streams::default()),
            routes: Arc::default(),
        });
        link.set_downstream(client.clone());
        let session = Arc::new(Session {
            id,
            link,
            engine,
            client,
            last_seen: Mutex::new(Instant::now()),
            ended: AtomicBool::new(false),
        });
        (session, outbound)
    }

    /// Writes what the engine sends the client onto its streams, until
    /// the session ends.
    pub(crate) async fn route(self: Arc<Session>, mut outbound: OutboundReceiver) {
        while let Some(item) = outbound.recv().await {
            let message = match item {
                Outbound::Cancel { .. } | Outbound::Message(_) | Outbound::Line { .. } => {
                    item.into_message()
                }
                _ => continue,
            };
            self.client.send(message);
        }
    }

    /// Takes in a `POST`'s messages; returns the stream their answers go
    /// on, if any of them is a request.
    pub(crate) fn post(&self, messages: Vec<Message>) -> Option<Reader> {
        self.touch();
        let requests: Vec<(RequestId, Option<String>)> = messages
            .iter()
            .filter_map(|m| match m {
                Message::Request(r) => Some((r.id.clone(), token_of(r))),
                _ => None,
            })
            .collect();
        // The stream exists before the engine sees a request, so nothing
        // said during it goes astray.
        let reader =
            (!requests.is_empty()).then(|| lock(&self.client.streams).open_post(&requests));
        for message in messages {
            let cancelled = match &message {
                Message::Notification(n) if n.method == NOTIFICATION_CANCELLED => n
                    .params
                    .as_ref()
                    .and_then(|p| p.get("requestId"))
                    .and_then(RequestId::from_value),
                _ => None,
            };
            self.engine.receive(message);
            if let Some(id) = cancelled {
                lock(&self.client.streams).forget(&id);
            }
        }
        reader
    }

    /// Opens the `GET` stream (`None`: one is open already), or resumes
    /// the stream `last_event_id` names (`Some(None)`: no such stream).
    pub(crate) fn get(&self, last_event_id: Option<&str>) -> Result<Reader, GetRefused> {
        self.touch();
        let mut streams = lock(&self.client.streams);
        match last_event_id {
            Some(id) => streams.resume(id).ok_or(GetRefused::UnknownEvent),
            None => streams.open_get().ok_or(GetRefused::AlreadyOpen),
        }
    }

    /// Ends the session: its streams close, its pending requests fail, and
    /// its upstream session is closed.
    pub(crate) async fn end(&self) {
        if self.ended.swap(true, Ordering::AcqRel) {
            return;
        }
        lock(&self.client.streams).close_all();
        let engine = self.engine.clone();
        engine.close().await;
        if let Some(upstream) = self.link.upstream() {
            upstream.close().await;
        }
    }

    pub(crate) fn is_ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }

    /// Whether nothing happened for `idle` and nothing is under way.
    pub(crate) fn idle_for(&self, idle: std::time::Duration) -> bool {
        lock(&self.last_seen).elapsed() >= idle
            && self.link.in_flight() == 0
            && !lock(&self.client.streams).any_open()
    }

    fn touch(&self) {
        *lock(&self.last_seen) = Instant::now();
    }
}

/// Why a `GET` got no stream.
#[derive(Debug)]
pub(crate) enum GetRefused {
    AlreadyOpen,
    UnknownEvent,
}

/// A request's progress token, as JSON text (the key progress is routed
/// by).
fn token_of(request: &Request) -> Option<String> {
    request
        .meta()
        .and_then(|m| m.get(PROGRESS_TOKEN))
        .map(|t| t.to_string())
}

impl Client {
    /// Puts one message of the engine's on the stream it belongs to.
    fn send(&self, message: Message) {
        let json = match serde_json::to_vec(&message) {
            Ok(json) => json,
            Err(e) => {
                tracing::warn!(error = %e, "a message for the client could not be written");
                return;
            }
        };
        let mut streams = lock(&self.streams);
        match &message {
            Message::Response(r) => streams.answer(&r.id, &json),
            Message::Error(e) => match &e.id {
                Some(id) => streams.answer(id, &json),
                None => streams.unrelated(&json, Weight::Kept),
            },
            Message::Request(r) => {
                let during = lock(&self.routes).get(&r.id).cloned();
                streams.during(during.as_ref(), None, &json, Weight::Kept);
            }
            Message::Notification(n) => {
                // The engine's own: a cancel of a relayed server request
                // goes where the request went.
                let of = n
                    .params
                    .as_ref()
                    .and_then(|p| p.get("requestId"))
                    .and_then(RequestId::from_value);
                let during = of.and_then(|id| lock(&self.routes).get(&id).cloned());
                streams.during(during.as_ref(), None, &json, weight_of(n));
            }
        }
    }
}

fn weight_of(notification: &Notification) -> Weight {
    match notification.method.as_str() {
        NOTIFICATION_PROGRESS | NOTIFICATION_MESSAGE => Weight::Droppable,
        _ => Weight::Kept,
    }
}

impl Downstream for Client {
    fn notify(
        &self,
        notification: Notification,
        during: Option<&RequestId>,
    ) -> Result<(), TransportError> {
        let token = notification
            .params
            .as_ref()
            .and_then(|p| p.get("progressToken"))
            .map(|t| t.to_string());
        let weight = weight_of(&notification);
        let json = serde_json::to_vec(&Message::Notification(notification)).map_err(|e| {
            TransportError::Malformed {
                detail: e.to_string(),
            }
        })?;
        lock(&self.streams).during(during, token.as_deref(), &json, weight);
        Ok(())
    }

    fn request(&self, request: Request, during: Option<&RequestId>) -> ResponseFuture {
        let id = request.id.clone();
        if let Some(during) = during {
            lock(&self.routes).insert(id.clone(), during.clone());
        }
        let answer = self.engine.request(request, RequestOptions::new());
        // The route goes when the request is answered or given up.
        let routed = Routed(self.routes.clone(), id);
        Box::pin(async move {
            let result = answer.await;
            drop(routed);
            result
        })
    }
}

/// Takes a relayed request's route out when dropped.
struct Routed(Arc<Mutex<HashMap<RequestId, RequestId>>>, RequestId);

impl Drop for Routed {
    fn drop(&mut self) {
        lock(&self.0).remove(&self.1);
    }
}
