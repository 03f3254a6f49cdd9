//! The 2024-11-05 HTTP+SSE wire, a fallback for a server that refuses a
//! legacy `initialize` POST: a GET stream whose `endpoint` event names
//! where to POST, and which carries every answer.

use std::sync::{Arc, Weak};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http::header::ACCEPT;
use http::{HeaderValue, Method, Uri};
use mcp_protocol::{Inbound, Message, ProtocolVersion, Request, RequestId};
use mcp_transport::{Engine, TransportError};
use serde_json::Value;
use sse_stream::SseStream;
use tokio::sync::oneshot;

use crate::sse::{self, Bounded};
use crate::url::{Origin, resolve};

use super::Shared;
use super::answer::content_type;
use super::wire::Outgoing;

/// How long the HTTP+SSE fallback waits for the `endpoint` event.
const ENDPOINT_WAIT: Duration = Duration::from_secs(10);

/// Sends a request over HTTP+SSE: POSTed to the endpoint, its answer
/// coming on the GET stream.
pub(super) async fn exchange(shared: &Arc<Shared>, out: Outgoing) -> Result<(), TransportError> {
    let Message::Request(request) = &out.message else {
        return Ok(());
    };
    let merged;
    let message = match &out.shared {
        Some(s) => {
            let mut request = request.clone();
            request.params = s.merge_into(request.params.take());
            merged = Message::Request(request);
            &merged
        }
        None => &out.message,
    };
    let posted = shared.post_old(message, &out.extra, Some(out.taken)).await;
    let _ = out.head.send(());
    posted
}

impl Shared {
    /// Where the server of the 2024-11-05 transport said to POST, once it
    /// did (its `endpoint` event): the connection speaks that transport.
    pub(super) fn old_endpoint(&self) -> Option<Uri> {
        self.state().old_endpoint.clone()
    }

    /// POSTs a message to the HTTP+SSE endpoint; any 2xx takes it.
    pub(super) async fn post_old(
        &self,
        message: &Message,
        extra: &[(String, String)],
        taken: Option<oneshot::Sender<bool>>,
    ) -> Result<(), TransportError> {
        let endpoint = self
            .old_endpoint()
            .unwrap_or_else(|| self.config.url.clone());
        let (headers, _) = self.message_headers(message, None, extra);
        let body = Bytes::from(serde_json::to_vec(message).unwrap_or_default());
        let response = self
            .send_to(endpoint, Method::POST, headers, body, taken)
            .await?;
        if response.status().is_success() {
            Ok(())
        } else {
            Err(self.status_error(response, None).await)
        }
    }

    /// The 2024-11-05 HTTP+SSE transport, after an `initialize` POST was
    /// refused with 400/404/405 and no JSON-RPC body: GET the URL, expect
    /// an `endpoint` event (a URL on the same origin) within
    /// [`ENDPOINT_WAIT`], then POST every message there and read every
    /// answer from the GET stream. `Err(None)`: the server offers no such
    /// stream either, and the `initialize` error stands.
    pub(super) async fn fallback_to_sse(
        self: &Arc<Self>,
        request: &Request,
    ) -> Result<(), Option<TransportError>> {
        let mut events = self.open_old_stream().await.ok_or(None)?;
        let location = wait_for_endpoint(&mut events).await.map_err(Some)?;
        let endpoint = self.check_endpoint(location.trim()).map_err(Some)?;
        // The endpoint's query carries the session id: not for the log.
        tracing::info!(
            endpoint = %mcp_transport::record::redact_url(&endpoint.to_string()),
            "speaking the 2024-11-05 HTTP+SSE transport"
        );
        self.state().old_endpoint = Some(endpoint);
        self.spawn_old_reader(events, request.id.clone());
        self.post_old(&Message::Request(request.clone()), &[], None)
            .await
            .map_err(Some)
    }

    /// GETs the URL for an HTTP+SSE event stream; `None` when the server
    /// offers none (it failed, refused or answered something else).
    async fn open_old_stream(&self) -> Option<SseStream<Bounded>> {
        let mut headers = self.config.headers.clone();
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        let response = self
            .send(Method::GET, headers, Bytes::new(), None)
            .await
            .ok()?;
        let sse = content_type(response.headers()).as_deref() == Some("text/event-stream");
        if !response.status().is_success() || !sse {
            return None;
        }
        let max = self.config.max_message_size;
        Some(sse::events(response.into_body(), max).0)
    }

    /// The endpoint the server named, resolved against the URL; refused
    /// when it is not a URL or lies on another origin.
    fn check_endpoint(&self, location: &str) -> Result<Uri, TransportError> {
        let refuse = |reason: &str| TransportError::RedirectRefused {
            status: 200,
            location: location.to_owned(),
            reason: reason.to_owned(),
        };
        let Some(endpoint) = resolve(&self.config.url, location) else {
            return Err(refuse("the HTTP+SSE endpoint is not a valid URL"));
        };
        if Origin::of(&endpoint).as_ref() != Some(&self.config.origin) {
            tracing::warn!(
                location = %mcp_transport::record::redact_url(location),
                "refused an HTTP+SSE endpoint on another origin"
            );
            return Err(refuse(
                "the HTTP+SSE endpoint is on another origin, where nothing was sent",
            ));
        }
        Ok(endpoint)
    }

    /// Reads every answer from the HTTP+SSE event stream until it ends or
    /// the transport shuts down.
    fn spawn_old_reader(self: &Arc<Self>, events: SseStream<Bounded>, init_id: RequestId) {
        let engine = self.engine.clone();
        let shared = Arc::downgrade(self);
        let shutdown = self.engine.shutdown_token();
        tokio::spawn(async move {
            tokio::select! {
                _ = read_old_stream(events, &engine, &shared, &init_id) => {
                    // The old transport has no resumption: a lost stream
                    // is a lost session.
                    engine.peer_gone(mcp_transport::GoneInfo::new("the HTTP+SSE event stream ended"));
                }
                _ = shutdown.cancelled_owned() => {}
            }
        });
    }
}

/// The data of the first `endpoint` event, within [`ENDPOINT_WAIT`].
async fn wait_for_endpoint(events: &mut SseStream<Bounded>) -> Result<String, TransportError> {
    let endpoint = tokio::time::timeout(ENDPOINT_WAIT, async {
        while let Some(Ok(event)) = events.next().await {
            if event.event.as_deref() == Some("endpoint") {
                return event.data;
            }
        }
        None
    })
    .await;
    let Ok(Some(location)) = endpoint else {
        return Err(TransportError::Http {
            status: 200,
            body: format!(
                "the server's event stream sent no endpoint event within {ENDPOINT_WAIT:?}"
            ),
        });
    };
    Ok(location)
}

/// Hands each message of the HTTP+SSE stream to the engine, noting the
/// version the `initialize` answer (`init_id`) agreed on.
async fn read_old_stream(
    mut events: SseStream<Bounded>,
    engine: &Engine,
    shared: &Weak<Shared>,
    init_id: &RequestId,
) {
    while let Some(event) = events.next().await {
        let Ok(event) = event else { break };
        if event.event.as_deref().is_some_and(|e| e != "message") {
            continue;
        }
        let Some(data) = event.data.filter(|d| !d.trim().is_empty()) else {
            continue;
        };
        let inbound = match Inbound::parse(data.as_bytes()) {
            Ok(inbound) => inbound,
            Err(error) => {
                engine.receive_malformed(error);
                continue;
            }
        };
        for message in inbound.into_messages(|e| engine.receive_malformed(e)) {
            if let Message::Response(r) = &message
                && &r.id == init_id
                && let Some(v) = r.result.get("protocolVersion").and_then(Value::as_str)
                && let Some(shared) = shared.upgrade()
            {
                shared.state().legacy_version = Some(ProtocolVersion::new(v));
            }
            engine.receive(message);
        }
    }
}
