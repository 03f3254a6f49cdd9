//! The reading of a response's events, driven over bytes held in memory,
//! for the workspace's fuzz targets (`fuzz/`) and their replay on stable.
//! Not part of the API: hidden from the docs and free to change.

use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use futures::Stream;
use http_body::Frame;

use crate::error::BoxError;
use crate::sse::{self, ReadError};

/// One event, as the transport reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// `event:`.
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: Option<String>,
    /// `id:`.
    pub id: Option<String>,
    /// `retry:`.
    pub retry: Option<u64>,
}

/// How reading a body's events ended (the transport stops at the first
/// failure).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// The body ended.
    Done,
    /// An event passed the bound.
    TooLarge {
        /// Its size when that was seen.
        size: usize,
        /// The start of its first `data:` line.
        prefix: Vec<u8>,
    },
    /// The parser refused a line.
    Invalid(String),
}

/// The events of a body that arrives as `chunks` (one body frame each),
/// each event at most `max` bytes, read as the transport reads them.
pub fn read_events(chunks: &[&[u8]], max: usize) -> (Vec<Event>, End) {
    let frames: Vec<Result<Frame<Bytes>, BoxError>> = chunks
        .iter()
        .map(|c| Ok(Frame::data(Bytes::copy_from_slice(c))))
        .collect();
    let body = http_body_util::BodyExt::boxed(http_body_util::StreamBody::new(
        futures::stream::iter(frames),
    ));
    let (mut events, _) = sse::events(body, max);
    let mut cx = Context::from_waker(Waker::noop());
    let mut out = Vec::new();
    loop {
        let next = match Pin::new(&mut events).poll_next(&mut cx) {
            Poll::Ready(next) => next,
            Poll::Pending => unreachable!("a body held in memory is always ready"),
        };
        let end = match next {
            Some(Ok(e)) => {
                out.push(Event {
                    event: e.event,
                    data: e.data,
                    id: e.id,
                    retry: e.retry,
                });
                continue;
            }
            None => End::Done,
            Some(Err(sse_stream::Error::Body(e))) => match e.downcast_ref::<ReadError>() {
                Some(ReadError::TooLarge(t)) => End::TooLarge {
                    size: t.size,
                    prefix: t.prefix.clone(),
                },
                _ => End::Invalid(e.to_string()),
            },
            Some(Err(e)) => End::Invalid(e.to_string()),
        };
        return (out, end);
    }
}
