//! Server-sent events, parsed by `sse-stream`, with a bound on the size of
//! one event that the parser itself does not keep.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame};
use mcp_protocol::framing::PREFIX_LEN;

use crate::error::BoxError;
use crate::service::ResponseBody;

/// An event grew past the limit: its first bytes and the size seen.
#[derive(Debug)]
pub(crate) struct EventTooLarge {
    /// The start of the event's first `data` line (JSON, to find its id).
    pub(crate) prefix: Vec<u8>,
    pub(crate) size: usize,
}

impl std::fmt::Display for EventTooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "an event of {} bytes or more", self.size)
    }
}

impl std::error::Error for EventTooLarge {}

/// Why reading a stream's body failed.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// An event passed the limit.
    TooLarge(EventTooLarge),
    /// The body itself failed (reset, closed early).
    Body(BoxError),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::TooLarge(e) => e.fmt(f),
            ReadError::Body(e) => f.write_str(&crate::error::chain(e.as_ref())),
        }
    }
}

impl std::error::Error for ReadError {}

/// A body that fails with [`EventTooLarge`] once the event being received
/// (the bytes since the last blank line) passes `max` bytes, so the parser
/// never buffers more than about that. Blank lines end events, comments
/// included, so a long-lived stream of keep-alives never trips it.
pub(crate) struct Bounded {
    inner: ResponseBody,
    activity: Activity,
    max: usize,
    /// Bytes of the current event, line ends excluded.
    size: usize,
    at_line_start: bool,
    last_cr: bool,
    prefix: Vec<u8>,
    /// An event past the bound, reported once the bytes of its frame
    /// before the one that passed it have gone on.
    pending: Option<EventTooLarge>,
}

impl Bounded {
    pub(crate) fn new(inner: ResponseBody, max: usize, activity: Activity) -> Self {
        Bounded {
            inner,
            activity,
            max,
            size: 0,
            at_line_start: true,
            last_cr: false,
            prefix: Vec::new(),
            pending: None,
        }
    }

    /// Counts the bytes of the current event; past the bound, fails with
    /// the index in `bytes` of the byte that passed it.
    fn scan(&mut self, bytes: &[u8]) -> Result<(), (usize, EventTooLarge)> {
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'\n' && self.last_cr {
                self.last_cr = false;
                continue;
            }
            if b == b'\n' || b == b'\r' {
                if self.at_line_start {
                    self.size = 0;
                    self.prefix.clear();
                } else if self.prefix.len() < PREFIX_LEN * 2 {
                    self.prefix.push(b'\n');
                }
                self.at_line_start = true;
                self.last_cr = b == b'\r';
                continue;
            }
            self.at_line_start = false;
            self.last_cr = false;
            self.size += 1;
            if self.prefix.len() < PREFIX_LEN * 2 {
                self.prefix.push(b);
            }
            if past(self.size, self.max) {
                let e = EventTooLarge {
                    prefix: data_prefix(&self.prefix),
                    size: self.size,
                };
                return Err((i, e));
            }
        }
        Ok(())
    }
}

/// Whether an event of `size` bytes is past the bound `max`.
#[cfg(not(fuzz_planted))]
fn past(size: usize, max: usize) -> bool {
    size > max
}

/// The bug `cargo xtask fuzz --planted` builds in, for the `sse` target to
/// find: an event one byte over the bound passes.
#[cfg(fuzz_planted)]
fn past(size: usize, max: usize) -> bool {
    size > max.saturating_add(1)
}

/// The JSON after the first `data:` field of an event's raw start.
fn data_prefix(raw: &[u8]) -> Vec<u8> {
    raw.split(|&b| b == b'\n')
        .find_map(|line| line.strip_prefix(b"data:"))
        .map(|rest| rest.strip_prefix(b" ").unwrap_or(rest).to_vec())
        .unwrap_or_default()
}

impl Body for Bounded {
    type Data = Bytes;
    type Error = ReadError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, ReadError>>> {
        let this = &mut *self;
        if let Some(e) = this.pending.take() {
            return Poll::Ready(Some(Err(ReadError::TooLarge(e))));
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                this.activity.touch();
                if let Some(data) = frame.data_ref()
                    && let Err((at, e)) = this.scan(data)
                {
                    if at == 0 {
                        return Poll::Ready(Some(Err(ReadError::TooLarge(e))));
                    }
                    // The bytes before the one past the bound go to the
                    // parser first, as they would had the frame been split
                    // there: the events they end are read, and a line the
                    // parser refuses is reported, before the bound is.
                    let before = data.slice(..at);
                    this.pending = Some(e);
                    return Poll::Ready(Some(Ok(Frame::data(before))));
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(ReadError::Body(e)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.pending.is_none() && self.inner.is_end_stream()
    }
}

/// When a body last brought bytes (keep-alive comments included), for an
/// idle-read timeout.
#[derive(Clone)]
pub(crate) struct Activity(std::sync::Arc<std::sync::Mutex<tokio::time::Instant>>);

impl Activity {
    fn new() -> Self {
        Activity(std::sync::Arc::new(std::sync::Mutex::new(
            tokio::time::Instant::now(),
        )))
    }

    fn touch(&self) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = tokio::time::Instant::now();
    }

    /// When the body last brought bytes.
    pub(crate) fn last(&self) -> tokio::time::Instant {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The events of a response body, at most `max` bytes each, and its
/// activity.
pub(crate) fn events(body: ResponseBody, max: usize) -> (sse_stream::SseStream<Bounded>, Activity) {
    let activity = Activity::new();
    (
        sse_stream::SseStream::new(Bounded::new(body, max, activity.clone())),
        activity,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;
    use http_body_util::BodyExt;

    fn body(chunks: Vec<&'static str>) -> ResponseBody {
        let frames = futures::stream::iter(
            chunks
                .into_iter()
                .map(|c| Ok::<_, BoxError>(Frame::data(Bytes::from_static(c.as_bytes())))),
        );
        BodyExt::boxed(http_body_util::StreamBody::new(frames))
    }

    #[tokio::test]
    async fn comments_and_split_chunks() {
        let (mut s, _) = events(
            body(vec![
                ": keep-alive\n\n",
                "id: 1\nda",
                "ta: {\"a\":1}\r\n\r\n",
                "data:\n\n",
            ]),
            64,
        );
        let first = s.next().await.unwrap().unwrap();
        assert_eq!(first.data.as_deref(), Some("{\"a\":1}"));
        assert_eq!(first.id.as_deref(), Some("1"));
        let priming = s.next().await.unwrap().unwrap();
        assert_eq!(priming.data.as_deref(), Some(""));
        assert!(s.next().await.is_none());
    }

    #[tokio::test]
    async fn many_small_events_never_trip_the_bound() {
        let chunks: Vec<&'static str> =
            std::iter::repeat_n(": ping\n\ndata: {}\n\n", 100).collect();
        let (s, _) = events(body(chunks), 16);
        assert_eq!(
            s.filter(|e| std::future::ready(e.is_ok())).count().await,
            100
        );
    }

    #[tokio::test]
    async fn an_oversized_event_fails_with_its_prefix() {
        let (mut s, _) = events(
            body(vec![
                "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"x\":\"",
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            ]),
            64,
        );
        let Some(Err(sse_stream::Error::Body(e))) = s.next().await else {
            panic!("expected a body error")
        };
        let Some(ReadError::TooLarge(e)) = e.downcast_ref::<ReadError>() else {
            panic!("expected EventTooLarge")
        };
        assert!(e.prefix.starts_with(b"{\"jsonrpc\":\"2.0\",\"id\":7"));
        assert!(e.size > 64);
    }
}
