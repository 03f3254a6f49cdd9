//! The legacy GET stream: server messages outside any request, reopened
//! with `Last-Event-ID` when it ends.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method};
use mcp_protocol::Inbound;
use mcp_transport::TransportError;
use tokio::sync::oneshot;
use tracing::Instrument;

use crate::service::ResponseBody;
use crate::sse::{self, ReadError};

use super::Shared;
use super::answer::{Next, content_type, next_within};

/// How many times in a row the GET stream is reopened without receiving
/// a message before it is given up.
const GET_MAX_ATTEMPTS: u32 = 5;
/// The first reconnect delay of the GET stream (a server's `retry:` is a
/// floor above it); it doubles up to [`GET_MAX_DELAY`].
const GET_FIRST_DELAY: Duration = Duration::from_millis(500);
const GET_MAX_DELAY: Duration = Duration::from_secs(30);
/// How long the GET stream's response head may take: a server that never
/// answers the GET must not hold it (and its connection) forever; it is
/// then reopened as a stream that failed.
const GET_HEAD_TIMEOUT: Duration = Duration::from_secs(10);

impl Shared {
    /// Opens the legacy GET stream once; the receiver ends when its first
    /// response head came (or it failed).
    pub(super) fn open_get_stream(self: &Arc<Self>) -> oneshot::Receiver<()> {
        let (head_tx, head_rx) = oneshot::channel();
        let session = self.state().session_id.clone();
        {
            let mut get_for = self.get_for.lock().unwrap_or_else(|p| p.into_inner());
            if get_for.as_ref() == Some(&session) {
                return head_rx;
            }
            *get_for = Some(session.clone());
        }
        let shared = self.clone();
        let shutdown = self.engine.shutdown_token();
        let span = tracing::debug_span!("mcp_http_get");
        tokio::spawn(
            async move {
                tokio::select! {
                    _ = shared.get_loop(head_tx, session) => {}
                    _ = shutdown.cancelled_owned() => {}
                }
            }
            .instrument(span),
        );
        head_rx
    }

    /// The legacy GET stream: server messages outside any request. A 405,
    /// another 4xx or a 200 that is not SSE means the server offers none,
    /// and it is never asked again; a stream that ends or fails is
    /// reopened with `Last-Event-ID`, after the server's `retry:` or a
    /// doubling delay, and given up after [`GET_MAX_ATTEMPTS`] reopenings
    /// in a row that brought no message (a clean close counts). It belongs
    /// to `session`: once that session expired it is not reopened (the
    /// next session opens a stream of its own).
    async fn get_loop(&self, head: oneshot::Sender<()>, session: Option<String>) {
        let mut head = Some(head);
        let mut cursor = GetCursor::default();
        loop {
            if self.state().session_id != session {
                tracing::debug!("the GET stream's session ended");
                return;
            }
            let sent = self.open_get(cursor.last_id.as_deref()).await;
            if let Some(h) = head.take() {
                let _ = h.send(());
            }
            match sent {
                Err(error) => tracing::debug!(%error, "the GET stream could not be opened"),
                Ok(response) => {
                    let status = response.status();
                    let sse =
                        content_type(response.headers()).as_deref() == Some("text/event-stream");
                    if status.is_client_error() || (status.is_success() && !sse) {
                        tracing::debug!(
                            status = status.as_u16(),
                            "the server offers no GET stream"
                        );
                        return;
                    }
                    if status.is_success() {
                        self.read_get_stream(response.into_body(), &mut cursor)
                            .await;
                    } else {
                        tracing::debug!(
                            status = status.as_u16(),
                            "the GET stream was refused for now"
                        );
                    }
                }
            }
            let Some(delay) = cursor.next_delay() else {
                tracing::warn!(
                    attempts = cursor.attempts,
                    "gave up reopening the GET stream"
                );
                return;
            };
            tokio::time::sleep(delay).await;
        }
    }

    /// Sends the GET (resuming after `last_id`), waiting at most
    /// [`GET_HEAD_TIMEOUT`] for its response head.
    async fn open_get(
        &self,
        last_id: Option<&str>,
    ) -> Result<http::Response<ResponseBody>, TransportError> {
        let mut headers = self.legacy_headers("text/event-stream");
        if let Some(id) = last_id
            && let Ok(v) = HeaderValue::try_from(id)
        {
            headers.insert(HeaderName::from_static("last-event-id"), v);
        }
        tokio::time::timeout(
            GET_HEAD_TIMEOUT,
            self.send(Method::GET, headers, Bytes::new(), None),
        )
        .await
        .unwrap_or_else(|_| {
            Err(TransportError::StreamBroken {
                may_have_run: false,
                cause: format!("the server did not answer the GET within {GET_HEAD_TIMEOUT:?}"),
            })
        })
    }

    /// Reads one opened GET stream until it ends, goes quiet or fails,
    /// handing its messages to the engine.
    async fn read_get_stream(&self, body: ResponseBody, cursor: &mut GetCursor) {
        let max = self.config.max_message_size;
        let (mut events, activity) = sse::events(body, max);
        loop {
            let event = match next_within(&mut events, &activity, self.config.idle_timeout).await {
                Next::Event(Some(event)) => event,
                Next::Event(None) => return,
                Next::Idle(idle) => {
                    tracing::debug!(?idle, "the GET stream went quiet; reopening it");
                    return;
                }
            };
            match event {
                Ok(event) => self.receive_get_event(event, cursor),
                Err(sse_stream::Error::Body(e)) => {
                    if let Some(ReadError::TooLarge(t)) = e.downcast_ref::<ReadError>() {
                        self.engine.receive_oversized(&t.prefix, t.size, max);
                    }
                    return;
                }
                Err(error) => {
                    tracing::warn!(%error, "the GET stream is not valid SSE");
                    return;
                }
            }
        }
    }

    /// One event of the GET stream: its id and `retry:` are kept for the
    /// reopening; a message (not another event type, not empty data)
    /// resets the attempts and goes to the engine.
    fn receive_get_event(&self, event: sse_stream::Sse, cursor: &mut GetCursor) {
        if let Some(id) = event.id {
            cursor.last_id = Some(id);
        }
        if let Some(ms) = event.retry {
            cursor.retry_floor = Duration::from_millis(ms);
        }
        if event.event.as_deref().is_some_and(|e| e != "message") {
            return;
        }
        let Some(data) = event.data.filter(|d| !d.trim().is_empty()) else {
            return;
        };
        cursor.attempts = 0;
        match Inbound::parse(data.as_bytes()) {
            Ok(inbound) => self.engine.receive_inbound(inbound),
            Err(error) => self.engine.receive_malformed(error),
        }
    }
}

/// Where the GET stream stands between reopenings: the last event id to
/// resume after, the server's `retry:` floor and the reopenings in a row
/// that brought no message.
#[derive(Default)]
struct GetCursor {
    last_id: Option<String>,
    retry_floor: Duration,
    attempts: u32,
}

impl GetCursor {
    /// Counts one more reopening and says how long to wait before it, or
    /// `None` once [`GET_MAX_ATTEMPTS`] were spent.
    fn next_delay(&mut self) -> Option<Duration> {
        self.attempts += 1;
        if self.attempts > GET_MAX_ATTEMPTS {
            return None;
        }
        let backoff = GET_FIRST_DELAY
            .saturating_mul(1 << (self.attempts - 1).min(10))
            .min(GET_MAX_DELAY);
        Some(backoff.max(self.retry_floor))
    }
}
