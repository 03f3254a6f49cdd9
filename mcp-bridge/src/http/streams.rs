//! The SSE streams of one legacy session: each `POST` that carries
//! requests gets a stream that ends once they are all answered, and the
//! `GET` stream carries what belongs to no request. Every event has an id
//! (`{stream}-{n}`) and stays in its stream's history for a while, so a
//! client whose stream broke can `GET` with `Last-Event-ID` and read on.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use mcp_protocol::RequestId;
use tokio::sync::mpsc;

/// Bytes of history kept per stream for resumption.
const HISTORY_BYTES: usize = 1 << 20;
/// Streams whose history is kept once they ended.
const ENDED_KEPT: usize = 16;
/// Events waiting for a slow reader past which progress and log
/// notifications are dropped (answers and requests never are).
const QUEUE_BOUND: usize = 1024;
/// Events waiting for a reader past which its stream ends.
const KEPT_BOUND: usize = 4 * QUEUE_BOUND;
/// Messages kept for a `GET` stream that is not open yet.
const BACKLOG: usize = 256;

/// What a message is to the queue bounds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Weight {
    /// An answer or a request: never dropped.
    Kept,
    /// Progress or a log line: dropped when the reader is far behind.
    Droppable,
}

/// The reading end of a stream, for an HTTP body.
pub(crate) struct Reader {
    pub(crate) events: mpsc::UnboundedReceiver<Bytes>,
    pub(crate) queued: Arc<AtomicUsize>,
}

struct Stream {
    next_event: u64,
    history: VecDeque<(u64, Bytes)>,
    history_bytes: usize,
    reader: Option<(mpsc::UnboundedSender<Bytes>, Arc<AtomicUsize>)>,
    /// The client's requests on it not answered yet (a `POST` stream).
    unanswered: usize,
    /// A `POST` stream whose requests are all answered.
    ended: bool,
}

impl Stream {
    fn new() -> Stream {
        Stream {
            next_event: 1,
            history: VecDeque::new(),
            history_bytes: 0,
            reader: None,
            unanswered: 0,
            ended: false,
        }
    }

    fn attach(&mut self) -> Reader {
        let (tx, events) = mpsc::unbounded_channel();
        let queued = Arc::new(AtomicUsize::new(0));
        self.reader = Some((tx, queued.clone()));
        Reader { events, queued }
    }

    fn push(&mut self, number: u64, json: &[u8], weight: Weight) -> bool {
        if let Some((_, queued)) = &self.reader
            && weight == Weight::Droppable
            && queued.load(Ordering::Relaxed) >= QUEUE_BOUND
        {
            tracing::debug!("dropped a notification for a client that reads too slowly");
            return false;
        }
        let event = self.next_event;
        self.next_event += 1;
        let mut frame = Vec::with_capacity(json.len() + 40);
        frame.extend_from_slice(format!("id: {number}-{event}\ndata: ").as_bytes());
        frame.extend_from_slice(json);
        frame.extend_from_slice(b"\n\n");
        let frame = Bytes::from(frame);
        self.history_bytes += frame.len();
        self.history.push_back((event, frame.clone()));
        while self.history_bytes > HISTORY_BYTES && self.history.len() > 1 {
            if let Some((_, old)) = self.history.pop_front() {
                self.history_bytes -= old.len();
            }
        }
        if let Some((tx, queued)) = &self.reader {
            if queued.fetch_add(1, Ordering::Relaxed) >= KEPT_BOUND {
                // A reader this far behind reads nothing: its stream ends
                // (the history keeps the rest for a resume), so that
                // memory stays bounded and the session can go idle.
                tracing::warn!(
                    bound = KEPT_BOUND,
                    "a client did not read its stream; the stream ends"
                );
                self.reader = None;
            } else if tx.send(frame).is_err() {
                // The client went away; the history keeps it for a resume.
                self.reader = None;
            }
        }
        true
    }

    /// Whether someone reads it now (a reader that went away is noticed
    /// here, not only at the next send).
    fn is_read(&self) -> bool {
        self.reader.as_ref().is_some_and(|(tx, _)| !tx.is_closed())
    }

    fn is_open(&self) -> bool {
        !self.ended && self.is_read()
    }
}

/// Every stream of a session, and what routes a message to one.
#[derive(Default)]
pub(crate) struct Streams {
    next_stream: u64,
    streams: HashMap<u64, Stream>,
    /// The client's request → the `POST` stream it came on.
    owner: HashMap<RequestId, u64>,
    /// A progress token → the stream of the request that gave it.
    tokens: HashMap<String, u64>,
    /// The `GET` stream, while one is open.
    get: Option<u64>,
    /// Messages for a `GET` stream not opened yet.
    backlog: VecDeque<(Vec<u8>, Weight)>,
    ended: VecDeque<u64>,
}

impl Streams {
    /// Opens a `POST` stream for these requests (with their progress
    /// tokens, as JSON text).
    pub(crate) fn open_post(&mut self, requests: &[(RequestId, Option<String>)]) -> Reader {
        let number = self.new_stream();
        let stream = self.streams.get_mut(&number).expect("just made");
        stream.unanswered = requests.len();
        let reader = stream.attach();
        for (id, token) in requests {
            self.owner.insert(id.clone(), number);
            if let Some(token) = token {
                self.tokens.insert(token.clone(), number);
            }
        }
        reader
    }

    /// Opens the `GET` stream, unless one is open already (`None`).
    pub(crate) fn open_get(&mut self) -> Option<Reader> {
        if let Some(get) = self.get
            && self.streams.get(&get).is_some_and(Stream::is_open)
        {
            return None;
        }
        // The one before, whose reader left, is kept a while for a resume
        // like an ended request stream, not for ever.
        if let Some(old) = self.get.take() {
            self.retire(old);
        }
        let number = self.new_stream();
        self.get = Some(number);
        let stream = self.streams.get_mut(&number).expect("just made");
        let reader = stream.attach();
        for (json, weight) in std::mem::take(&mut self.backlog) {
            stream.push(number, &json, weight);
        }
        Some(reader)
    }

    /// Resumes the stream an event id names: the events after it, then
    /// whatever comes. `None` when the id names no stream kept.
    pub(crate) fn resume(&mut self, last_event_id: &str) -> Option<Reader> {
        let (number, event) = last_event_id.trim().split_once('-')?;
        let (number, event): (u64, u64) = (number.parse().ok()?, event.parse().ok()?);
        let stream = self.streams.get_mut(&number)?;
        let reader = stream.attach();
        for (n, frame) in &stream.history {
            if *n > event {
                reader.queued.fetch_add(1, Ordering::Relaxed);
                let _ = stream.reader.as_ref().map(|(tx, _)| tx.send(frame.clone()));
            }
        }
        if stream.ended {
            // Nothing more will come: the body ends after the replay.
            stream.reader = None;
        }
        Some(reader)
    }

    /// The answer to the client's request `id`: on its stream, which ends
    /// once every request it carried is answered.
    pub(crate) fn answer(&mut self, id: &RequestId, json: &[u8]) {
        match self.owner.remove(id) {
            Some(number) => {
                if let Some(stream) = self.streams.get_mut(&number) {
                    stream.push(number, json, Weight::Kept);
                }
                self.done_with(number);
            }
            None => {
                tracing::debug!(%id, "an answer for a request no stream waits for; sent on the GET stream");
                self.unrelated(json, Weight::Kept);
            }
        }
    }

    /// The client gave up request `id` (its cancel): nothing will answer
    /// it.
    pub(crate) fn forget(&mut self, id: &RequestId) {
        if let Some(number) = self.owner.remove(id) {
            self.done_with(number);
        }
    }

    fn done_with(&mut self, number: u64) {
        let Some(stream) = self.streams.get_mut(&number) else {
            return;
        };
        stream.unanswered = stream.unanswered.saturating_sub(1);
        if stream.unanswered == 0 {
            self.tokens.retain(|_, n| *n != number);
            self.retire(number);
        }
    }

    /// Ends stream `number`, its history kept for a resume until
    /// [`ENDED_KEPT`] streams ended after it.
    fn retire(&mut self, number: u64) {
        let Some(stream) = self.streams.get_mut(&number) else {
            return;
        };
        stream.ended = true;
        stream.reader = None;
        self.ended.push_back(number);
        while self.ended.len() > ENDED_KEPT {
            if let Some(old) = self.ended.pop_front() {
                self.streams.remove(&old);
            }
        }
    }

    /// A message that belongs to the client's request `during` (or, with
    /// a progress token, to the request that gave it): on that request's
    /// stream until it ends, even while no one reads it (the client that
    /// lost it resumes it with `Last-Event-ID` and reads on), else as one
    /// that belongs to none.
    pub(crate) fn during(
        &mut self,
        during: Option<&RequestId>,
        token: Option<&str>,
        json: &[u8],
        weight: Weight,
    ) {
        let number = during
            .and_then(|id| self.owner.get(id))
            .or_else(|| token.and_then(|t| self.tokens.get(t)))
            .copied();
        if let Some(number) = number
            && let Some(stream) = self.streams.get_mut(&number)
            && !stream.ended
        {
            stream.push(number, json, weight);
            return;
        }
        self.unrelated(json, weight);
    }

    /// A message that belongs to no request: on the `GET` stream, else on
    /// an open request stream (the client reads every stream), else kept
    /// for the `GET` stream to come.
    pub(crate) fn unrelated(&mut self, json: &[u8], weight: Weight) {
        let open = self
            .get
            .filter(|n| self.streams.get(n).is_some_and(Stream::is_open))
            .or_else(|| {
                self.streams
                    .iter()
                    .filter(|(_, s)| s.is_open())
                    .map(|(n, _)| *n)
                    .max()
            });
        if let Some(number) = open
            && let Some(stream) = self.streams.get_mut(&number)
        {
            stream.push(number, json, weight);
            return;
        }
        if self.backlog.len() >= BACKLOG {
            if weight == Weight::Droppable {
                return;
            }
            // Progress and log lines go first; a message kept is lost
            // only when the backlog holds nothing else.
            match self
                .backlog
                .iter()
                .position(|(_, w)| *w == Weight::Droppable)
            {
                Some(i) => drop(self.backlog.remove(i)),
                None => {
                    tracing::warn!(
                        bound = BACKLOG,
                        "dropped the oldest message kept for a GET stream no client opened"
                    );
                    self.backlog.pop_front();
                }
            }
        }
        self.backlog.push_back((json.to_vec(), weight));
    }

    /// Ends every stream (the session is over).
    pub(crate) fn close_all(&mut self) {
        for stream in self.streams.values_mut() {
            stream.ended = true;
            stream.reader = None;
        }
        self.get = None;
    }

    /// Whether any stream is being read now.
    pub(crate) fn any_open(&self) -> bool {
        self.streams.values().any(Stream::is_read)
    }

    fn new_stream(&mut self) -> u64 {
        self.next_stream += 1;
        self.streams.insert(self.next_stream, Stream::new());
        self.next_stream
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(reader: &mut Reader) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(frame) = reader.events.try_recv() {
            out.push(String::from_utf8(frame.to_vec()).unwrap());
        }
        out
    }

    #[test]
    fn a_post_stream_carries_its_progress_and_ends_with_its_answers() {
        let mut streams = Streams::default();
        let mut reader = streams.open_post(&[(1.into(), Some("\"t\"".into())), (2.into(), None)]);
        streams.during(None, Some("\"t\""), b"{\"p\":1}", Weight::Droppable);
        streams.answer(&1.into(), b"{\"a\":1}");
        streams.answer(&2.into(), b"{\"a\":2}");
        assert_eq!(
            drain(&mut reader),
            [
                "id: 1-1\ndata: {\"p\":1}\n\n",
                "id: 1-2\ndata: {\"a\":1}\n\n",
                "id: 1-3\ndata: {\"a\":2}\n\n"
            ]
        );
        // The stream ended: its sender is gone.
        assert!(reader.events.try_recv().is_err());
        assert!(!streams.any_open());
    }

    #[test]
    fn unrelated_messages_wait_for_the_get_stream() {
        let mut streams = Streams::default();
        streams.unrelated(b"{\"n\":1}", Weight::Kept);
        let mut get = streams.open_get().expect("the first");
        assert!(streams.open_get().is_none(), "one at a time");
        assert_eq!(drain(&mut get), ["id: 1-1\ndata: {\"n\":1}\n\n"]);
    }

    #[test]
    fn a_broken_stream_resumes_after_the_last_event_read() {
        let mut streams = Streams::default();
        let first = streams.open_post(&[(7.into(), None)]);
        streams.during(Some(&7.into()), None, b"{\"p\":1}", Weight::Droppable);
        drop(first);
        streams.during(Some(&7.into()), None, b"{\"p\":2}", Weight::Droppable);
        let mut again = streams.resume("1-1").expect("kept");
        streams.answer(&7.into(), b"{\"a\":7}");
        assert_eq!(
            drain(&mut again),
            [
                "id: 1-2\ndata: {\"p\":2}\n\n",
                "id: 1-3\ndata: {\"a\":7}\n\n"
            ]
        );
        assert!(streams.resume("9-1").is_none());
        assert!(streams.resume("junk").is_none());
    }

    #[test]
    fn a_get_stream_whose_reader_left_can_be_opened_again() {
        let mut streams = Streams::default();
        let first = streams.open_get().expect("the first");
        assert!(streams.any_open());
        drop(first);
        assert!(!streams.any_open());
        assert!(streams.open_get().is_some(), "not refused as already open");
    }

    #[test]
    fn a_slow_reader_loses_progress_but_never_answers() {
        let mut streams = Streams::default();
        let mut reader = streams.open_post(&[(1.into(), None)]);
        for _ in 0..QUEUE_BOUND + 10 {
            streams.during(Some(&1.into()), None, b"{}", Weight::Droppable);
        }
        streams.answer(&1.into(), b"{\"a\":1}");
        let frames = drain(&mut reader);
        assert_eq!(frames.len(), QUEUE_BOUND + 1);
        assert!(frames.last().unwrap().contains("\"a\":1"));
    }

    #[test]
    fn get_streams_opened_again_and_again_are_not_all_kept() {
        let mut streams = Streams::default();
        for _ in 0..100 {
            drop(streams.open_get().expect("the last one's reader left"));
        }
        assert!(
            streams.streams.len() <= ENDED_KEPT + 1,
            "{}",
            streams.streams.len()
        );
    }

    #[test]
    fn a_stream_never_read_ends_past_its_bound() {
        let mut streams = Streams::default();
        let mut reader = streams.open_get().expect("a GET stream");
        for _ in 0..KEPT_BOUND + 10 {
            streams.unrelated(b"{}", Weight::Kept);
        }
        assert!(!streams.any_open(), "the stream ended");
        assert_eq!(drain(&mut reader).len(), KEPT_BOUND);
    }

    #[test]
    fn a_full_backlog_loses_progress_before_anything_kept() {
        let mut streams = Streams::default();
        streams.unrelated(b"{\"kept\":0}", Weight::Kept);
        for _ in 1..BACKLOG {
            streams.unrelated(b"{}", Weight::Droppable);
        }
        streams.unrelated(b"{\"kept\":1}", Weight::Kept);
        let mut reader = streams.open_get().expect("a GET stream");
        let frames = drain(&mut reader);
        assert_eq!(frames.len(), BACKLOG);
        assert!(frames[0].contains("\"kept\":0"), "{}", frames[0]);
        assert!(frames.last().unwrap().contains("\"kept\":1"));
    }
}
