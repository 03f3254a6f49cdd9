//! A request's answer: a JSON body, or an SSE stream read to its end (and
//! resumed by GET when a legacy one breaks), and what a failed status means.

use std::borrow::Cow;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use futures::future::BoxFuture;
use http::header::{CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderName, HeaderValue, Method};
use http_body_util::BodyExt;
use mcp_protocol::jsonrpc::answer_text;
use mcp_protocol::{ErrorResponse, Inbound, Message, ProtocolVersion, RequestId};
use mcp_transport::TransportError;
use serde_json::Value;

use crate::service::ResponseBody;
use crate::sse::{self, ReadError};

use super::Shared;

/// How many times a broken legacy stream is resumed.
const MAX_RESUMES: u32 = 3;
/// A success answer up to this size goes to its caller as text, parsed
/// there; a larger one is parsed here, once (finding its end in a second
/// pass would cost more than the hand-off saves).
const TEXT_ANSWER_MAX: usize = 8 * 1024;
/// How long to wait before resuming when the server gave no `retry:`.
const DEFAULT_RESUME_DELAY: Duration = Duration::from_secs(1);

/// Where a stream got to, for resuming it.
#[derive(Default)]
struct Cursor {
    last_id: Option<String>,
    retry: Option<Duration>,
    /// Whether the last read delivered any message.
    delivered: bool,
}

impl Cursor {
    /// Notes an event's id and `retry:`; the data of a message (not
    /// another event type, not empty), which counts as delivered.
    fn take_message(&mut self, event: sse_stream::Sse) -> Option<String> {
        if let Some(event_id) = event.id {
            self.last_id = Some(event_id);
        }
        if let Some(ms) = event.retry {
            self.retry = Some(Duration::from_millis(ms));
        }
        if event.event.as_deref().is_some_and(|e| e != "message") {
            tracing::debug!(event = ?event.event, "skipped an event that is not a message");
            return None;
        }
        let data = event.data.filter(|d| !d.trim().is_empty())?;
        self.delivered = true;
        Some(data)
    }
}

/// How reading a request's events ended.
enum Read {
    Answered,
    Ended,
    Failed(TransportError),
}

/// How long a request's SSE stream is read on after its answer, for the
/// server to end it (see [`finish_stream`]).
const FINISH_WAIT: Duration = Duration::from_millis(250);

/// How many turns of the runtime the end of a stream whose answer came is
/// waited for before [`FINISH_WAIT`]'s timer is armed.
const FINISH_TURNS: usize = 2;

/// How much of a non-JSON-RPC body an error keeps.
const EXCERPT_CHARS: usize = 512;
/// How much of an error body is read to find a JSON-RPC error in it.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

impl Shared {
    /// Reads a request's answer from its response.
    pub(super) async fn read_answer(
        &self,
        id: &RequestId,
        response: http::Response<ResponseBody>,
        sent_under: Option<u64>,
        initialize: bool,
        legacy: bool,
    ) -> Result<(), TransportError> {
        let status = response.status();
        if !status.is_success() {
            return Err(self.status_error(response, sent_under).await);
        }
        let content_type = content_type(response.headers());
        let max = self.config.max_message_size;
        match content_type.as_deref() {
            Some("text/event-stream") => {
                let events = sse::events(response.into_body(), max);
                self.read_stream_answer(events, id, initialize, legacy)
                    .await
            }
            Some("application/json") | None => {
                let body = read_limited(response.into_body(), max).await?;
                if body.iter().all(u8::is_ascii_whitespace) {
                    return Err(TransportError::StreamBroken {
                        may_have_run: true,
                        cause: format!(
                            "the server accepted the request (HTTP {}) without answering it",
                            status.as_u16()
                        ),
                    });
                }
                if self.deliver(&body, id, initialize, false) {
                    return Ok(());
                }
                Err(TransportError::Malformed {
                    detail: "the response body held no answer to the request".into(),
                })
            }
            Some(other) => {
                let body = read_excerpt(response.into_body()).await;
                Err(TransportError::Http {
                    status: status.as_u16(),
                    body: format!("(Content-Type {other}) {}", excerpt(&body)),
                })
            }
        }
    }

    /// Reads a request's answer from its SSE stream; a legacy stream that
    /// breaks after naming an event is resumed by GET, at most
    /// [`MAX_RESUMES`] times.
    async fn read_stream_answer(
        &self,
        events: (sse_stream::SseStream<sse::Bounded>, sse::Activity),
        id: &RequestId,
        initialize: bool,
        legacy: bool,
    ) -> Result<(), TransportError> {
        let mut cursor = Cursor::default();
        let mut outcome = self
            .read_events(events, id, initialize, legacy, &mut cursor)
            .await;
        let mut resumes = 0;
        loop {
            let broken = match outcome {
                Read::Answered => return Ok(()),
                Read::Failed(e) => e,
                Read::Ended => TransportError::StreamBroken {
                    may_have_run: true,
                    cause: "the response stream ended before the answer".into(),
                },
            };
            // Only a legacy stream that named an event can be resumed, and
            // only boundedly.
            let resumable = legacy
                && matches!(broken, TransportError::StreamBroken { .. })
                && cursor.last_id.is_some()
                && resumes < MAX_RESUMES;
            if !resumable {
                return Err(broken);
            }
            resumes += 1;
            let before = cursor.last_id.clone();
            let delay = cursor.retry.unwrap_or(DEFAULT_RESUME_DELAY);
            tracing::debug!(?delay, last_event_id = ?before, "resuming a broken stream by GET");
            tokio::time::sleep(delay).await;
            let events = self.resume(before.as_deref().unwrap_or_default()).await?;
            outcome = self
                .read_events(events, id, initialize, false, &mut cursor)
                .await;
            if matches!(outcome, Read::Ended) && cursor.last_id == before && !cursor.delivered {
                return Err(TransportError::StreamBroken {
                    may_have_run: true,
                    cause: "the resumed stream ended with nothing".into(),
                });
            }
        }
    }

    /// Reads a request's events until its answer, and on for a moment:
    /// when `keep` (legacy), delivering what comes until the server ends
    /// the stream or [`FINISH_WAIT`] passed; otherwise skipping it, for the
    /// stream's end ([`finish_stream`]). Notes the event id and `retry:`
    /// for resumption.
    async fn read_events(
        &self,
        (mut events, activity): (sse_stream::SseStream<sse::Bounded>, sse::Activity),
        id: &RequestId,
        initialize: bool,
        keep: bool,
        cursor: &mut Cursor,
    ) -> Read {
        let mut answered = false;
        // Once answered, what is left of a kept stream is read for
        // [`FINISH_WAIT`] at most: a server that leaves each stream open
        // must not cost a connection and a task per call until the
        // transport closes.
        let mut finish_by = None;
        cursor.delivered = false;
        loop {
            let next = next_within(&mut events, &activity, self.config.idle_timeout);
            let next = match finish_by {
                None => next.await,
                Some(deadline) => match tokio::time::timeout_at(deadline, next).await {
                    Ok(next) => next,
                    Err(_) => {
                        tracing::debug!("the stream stayed open after the answer; it is closed");
                        return Read::Answered;
                    }
                },
            };
            let event = match next {
                Next::Event(Some(event)) => event,
                Next::Event(None) => break,
                Next::Idle(_) if answered => return Read::Answered,
                Next::Idle(idle) => {
                    return Read::Failed(TransportError::StreamBroken {
                        may_have_run: true,
                        cause: format!("the response stream brought nothing for {idle:?}"),
                    });
                }
            };
            let event = match event {
                Ok(event) => event,
                Err(_) if answered => return Read::Answered,
                Err(e) => return Read::Failed(self.stream_failure(e)),
            };
            let Some(data) = cursor.take_message(event) else {
                continue;
            };
            // Read on after the answer either way (see below), so the
            // caller's going must not close the stream.
            if self.deliver(data.as_bytes(), id, initialize, true) {
                if !keep {
                    finish_stream(&mut events).await;
                    return Read::Answered;
                }
                if !answered {
                    finish_by = Some(tokio::time::Instant::now() + FINISH_WAIT);
                }
                answered = true;
            }
        }
        if answered {
            Read::Answered
        } else {
            Read::Ended
        }
    }

    /// The error a failed read of a request's stream is (an oversized
    /// message is also reported to the engine).
    fn stream_failure(&self, error: sse_stream::Error) -> TransportError {
        match error {
            sse_stream::Error::Body(e) => match e.downcast_ref::<ReadError>() {
                Some(ReadError::TooLarge(t)) => {
                    let max = self.config.max_message_size;
                    self.engine.receive_oversized(&t.prefix, t.size, max);
                    TransportError::MessageTooLarge {
                        size: t.size,
                        limit: max,
                    }
                }
                _ => TransportError::StreamBroken {
                    may_have_run: true,
                    cause: format!("the response stream failed: {e}"),
                },
            },
            e => TransportError::Malformed {
                detail: format!("the response stream is not valid SSE ({e})"),
            },
        }
    }

    /// Reopens a broken legacy stream: GET with `Last-Event-ID`.
    async fn resume(
        &self,
        last_id: &str,
    ) -> Result<(sse_stream::SseStream<sse::Bounded>, sse::Activity), TransportError> {
        let mut headers = self.legacy_headers("text/event-stream");
        if let Ok(v) = HeaderValue::try_from(last_id) {
            headers.insert(HeaderName::from_static("last-event-id"), v);
        }
        let response = self.send(Method::GET, headers, Bytes::new(), None).await?;
        let status = response.status();
        if !status.is_success() {
            let cause = format!("resuming the stream failed with HTTP {}", status.as_u16());
            return Err(TransportError::StreamBroken {
                may_have_run: true,
                cause,
            });
        }
        if content_type(response.headers()).as_deref() != Some("text/event-stream") {
            return Err(TransportError::StreamBroken {
                may_have_run: true,
                cause: "the resumed stream is not SSE".into(),
            });
        }
        Ok(sse::events(
            response.into_body(),
            self.config.max_message_size,
        ))
    }

    /// Leaves the stream of request `id` open when its future ends: called
    /// before the answer wakes the caller, whose dropping the future would
    /// otherwise close it.
    fn keep_stream(&self, id: &RequestId) {
        if let Some(p) = self.state().requests.get_mut(id) {
            p.close_on_drop = false;
        }
    }

    /// Gives one body or event's messages to the engine; true when the
    /// request's answer was among them.
    fn deliver(&self, bytes: &[u8], id: &RequestId, initialize: bool, keep: bool) -> bool {
        // The commonest body, a small success answer to this request, goes
        // to its caller unparsed, as over stdio.
        if !initialize
            && bytes.len() <= TEXT_ANSWER_MAX
            && let Some((answered, result)) = answer_text(bytes)
            && &answered == id
        {
            if keep {
                self.keep_stream(id);
            }
            self.engine.receive_result(id, result);
            return true;
        }
        let inbound = match Inbound::parse(bytes) {
            Ok(inbound) => inbound,
            Err(error) => {
                let ours = error.id.as_ref() == Some(id) && !error.request;
                self.engine.receive_malformed(error);
                return ours;
            }
        };
        let mut answered = false;
        for message in inbound.into_messages(|e| self.engine.receive_malformed(e)) {
            match &message {
                Message::Response(r) if &r.id == id => {
                    if initialize
                        && let Some(version) =
                            r.result.get("protocolVersion").and_then(Value::as_str)
                    {
                        self.state().legacy_version = Some(ProtocolVersion::new(version));
                    }
                    answered = true;
                }
                Message::Error(ErrorResponse { id: Some(e), .. }) if e == id => answered = true,
                Message::Error(ErrorResponse { id: None, error }) => {
                    // On a request's own response, a null id can only
                    // mean this request.
                    self.engine
                        .fail_request(id, TransportError::from_rpc(error.clone()));
                    answered = true;
                    continue;
                }
                _ => {}
            }
            if answered && keep {
                self.keep_stream(id);
            }
            // A server request on this stream belongs to this request.
            self.engine.receive_for(id, message);
        }
        answered
    }

    /// The error a non-2xx answer is.
    pub(super) async fn status_error(
        &self,
        response: http::Response<ResponseBody>,
        sent_under: Option<u64>,
    ) -> TransportError {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = read_excerpt(response.into_body()).await;
        match status {
            401 | 403 => {
                return TransportError::AuthorizationRequired {
                    status,
                    challenge: headers
                        .get(WWW_AUTHENTICATE)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned),
                };
            }
            429 | 503 => {
                return TransportError::RetryLater {
                    status,
                    retry_after: headers.get(RETRY_AFTER).and_then(retry_after),
                    body: excerpt(&body),
                };
            }
            _ => {}
        }
        let rpc = match Message::from_value(serde_json::from_slice(&body).unwrap_or(Value::Null)) {
            Ok(Message::Error(e)) => Some(e.error),
            _ => None,
        };
        if let Some(epoch) = sent_under
            && (status == 404 || (status == 400 && names_the_session(rpc.as_ref(), &body)))
        {
            let mut state = self.state();
            // Only the session the request carried: one opened since
            // (a renewal that another request's expiry started) stays.
            if state.session_epoch == epoch {
                tracing::info!(status, "the server's session expired; forgetting it");
                state.session_id = None;
                state.expired = Some(status);
            }
            drop(state);
            return TransportError::SessionExpired { status };
        }
        match rpc {
            Some(error) if status < 500 => TransportError::from_rpc(error),
            _ => TransportError::Http {
                status,
                body: excerpt(&body),
            },
        }
    }
}

/// The Python SDK's answer to an unknown session: 400 with this text,
/// not JSON-RPC (`StreamableHTTPSessionManager`).
const PYTHON_SDK_NO_SESSION: &str = "Bad Request: No valid session ID provided";

/// Whether a 400 to a request that carried a session says that session is
/// gone. Only what servers say of sessions is read: the answer's JSON-RPC
/// error (`-32001`, or a message naming the session, as the TypeScript
/// SDK's servers send), or the Python SDK's exact text. Anything else
/// that happens to mention a session (a proxy's HTML page with
/// `sessionStorage` in its script) is not taken for an expiry: forgetting
/// the session would fail every request in flight and start a new one.
fn names_the_session(rpc: Option<&mcp_protocol::ErrorObject>, body: &[u8]) -> bool {
    match rpc {
        Some(e) => e.code == -32001 || e.message.to_ascii_lowercase().contains("session"),
        None => std::str::from_utf8(body)
            .is_ok_and(|text| text.trim().eq_ignore_ascii_case(PYTHON_SDK_NO_SESSION)),
    }
}

/// What waiting for the next event gave.
pub(super) enum Next {
    Event(Option<Result<sse_stream::Sse, sse_stream::Error>>),
    /// No bytes at all (not even a keep-alive) for this long.
    Idle(Duration),
}

/// The next event, or `Idle` once the body brought no bytes for `idle`.
pub(super) async fn next_within(
    events: &mut sse_stream::SseStream<sse::Bounded>,
    activity: &sse::Activity,
    idle: Option<Duration>,
) -> Next {
    let Some(idle) = idle else {
        return Next::Event(events.next().await);
    };
    let next = events.next();
    tokio::pin!(next);
    loop {
        let deadline = activity.last() + idle;
        tokio::select! {
            event = &mut next => return Next::Event(event),
            _ = tokio::time::sleep_until(deadline) => {
                if activity.last() + idle <= tokio::time::Instant::now() {
                    return Next::Idle(idle);
                }
            }
        }
    }
}

/// Reads what is left of a stream whose answer came, for at most
/// [`FINISH_WAIT`]: the server ends it right after the answer, and a
/// response read to its end lets the HTTP client keep the connection for
/// the next request (one dropped before its end is closed, and the next
/// request pays for a new connection, TLS included). What comes after the
/// answer is no one's any more and is skipped.
///
/// The end is nearly always in hand, or a turn of the HTTP client's
/// connection task away, so it is waited for [`FINISH_TURNS`] turns of
/// the runtime before the timer is armed: a timer armed on every call
/// woke the worker thread that sleeps on the runtime's clock (0.7 more
/// wakes of it per call, one caller's calls with SSE answers).
async fn finish_stream(events: &mut sse_stream::SseStream<sse::Bounded>) {
    let rest = async {
        let mut skipped = 0usize;
        while let Some(Ok(_)) = events.next().await {
            skipped += 1;
        }
        skipped
    };
    tokio::pin!(rest);
    let mut ended = None;
    for _ in 0..FINISH_TURNS {
        // tokio's yield defers its wake until the worker has nothing else
        // to run: a later poll is certain, and puts nothing off.
        tokio::select! {
            biased;
            skipped = &mut rest => {
                ended = Some(skipped);
                break;
            }
            () = tokio::task::yield_now() => {}
        }
    }
    let outcome = match ended {
        Some(skipped) => Ok(skipped),
        None => tokio::time::timeout(FINISH_WAIT, rest).await,
    };
    match outcome {
        Ok(0) => {}
        Ok(skipped) => tracing::debug!(skipped, "skipped events after the answer"),
        Err(_) => tracing::debug!("the stream stayed open after the answer; it is closed"),
    }
}

/// The media type of `Content-Type`, lowercase, without parameters (the
/// two an MCP server answers with are not copied).
pub(super) fn content_type(headers: &HeaderMap) -> Option<Cow<'static, str>> {
    let value = headers.get(CONTENT_TYPE)?.to_str().ok()?;
    let media = value.split(';').next().unwrap_or_default().trim();
    for known in ["application/json", "text/event-stream"] {
        if media.eq_ignore_ascii_case(known) {
            return Some(Cow::Borrowed(known));
        }
    }
    Some(Cow::Owned(media.to_ascii_lowercase()))
}

/// `Retry-After` as a delay: seconds, or an HTTP date.
fn retry_after(value: &HeaderValue) -> Option<Duration> {
    let text = value.to_str().ok()?.trim();
    if let Ok(seconds) = text.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let when = httpdate::parse_http_date(text).ok()?;
    Some(
        when.duration_since(std::time::SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// A whole body of at most `max` bytes.
fn read_limited(
    body: ResponseBody,
    max: usize,
) -> BoxFuture<'static, Result<Bytes, TransportError>> {
    Box::pin(async move {
        let mut body = body;
        // A body of one frame (the usual) is kept as it came, not copied.
        let mut first: Option<Bytes> = None;
        let mut kept = Vec::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| TransportError::StreamBroken {
                may_have_run: true,
                cause: format!(
                    "the response body failed: {}",
                    crate::error::chain(e.as_ref())
                ),
            })?;
            if let Ok(data) = frame.into_data() {
                let size = first.as_ref().map_or(0, Bytes::len) + kept.len() + data.len();
                if size > max {
                    return Err(TransportError::MessageTooLarge { size, limit: max });
                }
                if first.is_none() && kept.is_empty() {
                    first = Some(data);
                } else {
                    if let Some(first) = first.take() {
                        kept.extend_from_slice(&first);
                    }
                    kept.extend_from_slice(&data);
                }
            }
        }
        Ok(first.unwrap_or_else(|| Bytes::from(kept)))
    })
}

/// The start of a body, for an error.
fn read_excerpt(body: ResponseBody) -> BoxFuture<'static, Bytes> {
    Box::pin(async move {
        let mut body = body;
        let mut kept = Vec::new();
        let reading = async {
            while kept.len() < ERROR_BODY_LIMIT {
                match body.frame().await {
                    Some(Ok(frame)) => {
                        if let Some(data) = frame.data_ref() {
                            kept.extend_from_slice(data);
                        }
                    }
                    _ => break,
                }
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(5), reading).await;
        Bytes::from(kept)
    })
}

fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    let mut cut: String = text.chars().take(EXCERPT_CHARS).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}
