//! The streams of one server: each request's SSE stream (or JSON answer),
//! the GET stream, every event kept for resumption, and the routing of
//! what the server sends to the stream it belongs to.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use mcp_protocol::meta::{PROGRESS_TOKEN, SUBSCRIPTION_ID};
use mcp_protocol::{Message, RequestId};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use crate::session::Out;

/// The GET stream's number: request streams count from 1.
pub(super) const STANDALONE: u64 = 0;

/// How many answered streams are kept for resumption; older ones are
/// forgotten, so that a long run (a benchmark) does not grow without end.
const KEPT_ANSWERED: usize = 256;

/// Where a stream's bytes go while a client reads it.
pub(super) type Live = mpsc::UnboundedSender<Bytes>;

/// How a request is answered.
pub(super) enum Form {
    /// On its SSE stream; events carry ids when `ids`.
    Sse { ids: bool },
    /// As one JSON body: the answer goes here; what else belongs to the
    /// request goes on the GET stream.
    Json(Option<oneshot::Sender<Message>>),
}

/// What a request stream is set up with.
pub(super) struct Opening {
    /// The request it answers.
    pub(super) request: RequestId,
    /// Its `_meta.progressToken`.
    pub(super) token: Option<RequestId>,
    /// How it is answered.
    pub(super) form: Form,
    /// Pad the answer to more than this many bytes.
    pub(super) pad_to: Option<usize>,
}

struct Stream {
    token: Option<RequestId>,
    form: Form,
    pad_to: Option<usize>,
    /// Every event written, in order (event `n` has id `<stream>-<n+1>`).
    events: Vec<Bytes>,
    /// How many of `events` the live reader was given.
    sent: usize,
    live: Option<Live>,
    answered: bool,
}

impl Stream {
    fn new(opening: Option<Opening>) -> Stream {
        let (token, form, pad_to) = match opening {
            Some(o) => (o.token, o.form, o.pad_to),
            None => (None, Form::Sse { ids: true }, None),
        };
        Stream {
            token,
            form,
            pad_to,
            events: Vec::new(),
            sent: 0,
            live: None,
            answered: false,
        }
    }

    fn ids(&self) -> bool {
        matches!(self.form, Form::Sse { ids: true })
    }

    /// Writes an event (kept, and given to the live reader if any).
    fn push(&mut self, no: u64, fields: &str) {
        let chunk = if self.ids() {
            format!("id: {no}-{}\n{fields}\n", self.events.len() + 1)
        } else {
            format!("{fields}\n")
        };
        self.events.push(Bytes::from(chunk));
        self.flush();
    }

    fn flush(&mut self) {
        let Some(live) = &self.live else { return };
        while self.sent < self.events.len() {
            if live.send(self.events[self.sent].clone()).is_err() {
                self.live = None;
                return;
            }
            self.sent += 1;
        }
    }
}

/// The streams of one server (a legacy session, the modern server, a
/// stateless server, or an HTTP+SSE connection).
pub(super) struct Hub {
    state: Mutex<HubState>,
    /// Whether it has a GET stream for what belongs to no request.
    standalone: bool,
}

struct HubState {
    streams: HashMap<u64, Stream>,
    by_request: HashMap<RequestId, u64>,
    next: u64,
    /// The version the `initialize` answer named.
    version: Option<String>,
    initialize: Option<RequestId>,
    /// Answered streams, oldest first.
    answered: VecDeque<u64>,
    gone: bool,
}

impl Hub {
    /// An empty hub; `standalone`: it keeps a GET stream, whose events
    /// carry ids when `ids`.
    pub(super) fn new(standalone: bool, ids: bool) -> Arc<Hub> {
        let mut streams = HashMap::new();
        if standalone {
            let mut get = Stream::new(None);
            get.form = Form::Sse { ids };
            streams.insert(STANDALONE, get);
        }
        Arc::new(Hub {
            state: Mutex::new(HubState {
                streams,
                by_request: HashMap::new(),
                next: 1,
                version: None,
                initialize: None,
                answered: VecDeque::new(),
                gone: false,
            }),
            standalone,
        })
    }

    fn lock(&self) -> MutexGuard<'_, HubState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Drains a server's outbound queue into the streams until it ends.
    pub(super) fn spawn_router(self: &Arc<Hub>, mut out: mpsc::UnboundedReceiver<Out>) {
        let hub = self.clone();
        tokio::spawn(async move {
            while let Some(item) = out.recv().await {
                match item {
                    Out::Message(m) => hub.route(m, None),
                    Out::Related { message, request } => hub.route(message, Some(request)),
                    Out::Exit { .. } => hub.close_all(),
                    Out::End => {}
                }
            }
        });
    }

    /// Opens a request's stream; returns its number.
    pub(super) fn open(&self, opening: Opening, initialize: bool) -> u64 {
        let mut state = self.lock();
        let no = state.next;
        state.next += 1;
        if initialize {
            state.initialize = Some(opening.request.clone());
        }
        state.by_request.insert(opening.request.clone(), no);
        state.streams.insert(no, Stream::new(Some(opening)));
        no
    }

    /// Writes an event of this name and data on stream `no`.
    pub(super) fn push_event(&self, no: u64, event: &str, data: &str) {
        if let Some(s) = self.lock().streams.get_mut(&no) {
            s.push(no, &format!("event: {event}\ndata: {data}\n"));
        }
    }

    /// Writes a priming event (an id, empty data, and `retry:` if given).
    pub(super) fn prime(&self, no: u64, retry: Option<Duration>) {
        let mut state = self.lock();
        if let Some(s) = state.streams.get_mut(&no) {
            let retry = retry.map(|r| format!("retry: {}\n", r.as_millis()));
            s.push(no, &format!("{}data: \n", retry.unwrap_or_default()));
        }
    }

    /// Gives stream `no` a reader, replaying the events after `after`
    /// (all not yet given to a reader when `None`).
    pub(super) fn attach(&self, no: u64, after: Option<usize>, live: Live) -> Attach {
        let mut state = self.lock();
        if state.gone {
            return Attach::Unknown;
        }
        let Some(s) = state.streams.get_mut(&no) else {
            return Attach::Unknown;
        };
        if s.live.as_ref().is_some_and(|l| !l.is_closed()) {
            return Attach::Busy;
        }
        if let Some(after) = after {
            s.sent = after.min(s.events.len());
        }
        s.live = Some(live);
        s.flush();
        if s.answered {
            // Everything was replayed; the stream ends here.
            s.live = None;
        }
        Attach::Attached
    }

    /// Closes stream `no`'s reader without ending the stream (it can be
    /// resumed).
    pub(super) fn detach(&self, no: u64) {
        if let Some(s) = self.lock().streams.get_mut(&no) {
            s.live = None;
        }
    }

    /// Whether stream `no`'s request was answered.
    pub(super) fn answered(&self, no: u64) -> bool {
        self.lock().streams.get(&no).is_none_or(|s| s.answered)
    }

    /// The version the `initialize` answer named, once it passed.
    pub(super) fn version(&self) -> Option<String> {
        self.lock().version.clone()
    }

    /// Ends every stream (the server is gone).
    pub(super) fn close_all(&self) {
        let mut state = self.lock();
        state.gone = true;
        for s in state.streams.values_mut() {
            s.live = None;
            if let Form::Json(tx) = &mut s.form {
                tx.take();
            }
        }
    }

    fn route(&self, message: Message, related: Option<RequestId>) {
        let mut state = self.lock();
        let answer_to = match &message {
            Message::Response(r) => Some(r.id.clone()),
            Message::Error(e) => e.id.clone(),
            _ => None,
        };
        let target = match &answer_to {
            Some(id) => state.by_request.get(id).copied(),
            None => related
                .as_ref()
                .and_then(|r| state.by_request.get(r).copied())
                .or_else(|| of_notification(&state, &message)),
        };
        if answer_to.is_some() && target.is_none() {
            // An answer nobody waits for (a second one, a wrong id) still
            // reaches the client, on the GET stream.
            if self.standalone {
                push_message(&mut state, STANDALONE, &message);
            }
            return;
        }
        let Some(no) = target.or(self.standalone.then_some(STANDALONE)) else {
            return;
        };
        let json_stream = state
            .streams
            .get(&no)
            .is_some_and(|s| matches!(s.form, Form::Json(_)));
        if json_stream && answer_to.is_none() {
            // A JSON answer carries nothing else: it goes on the GET stream.
            if self.standalone {
                push_message(&mut state, STANDALONE, &message);
            }
            return;
        }
        if let Some(id) = answer_to {
            if let (Message::Response(r), Some(init)) = (&message, &state.initialize)
                && &r.id == init
                && let Some(v) = r.result.get("protocolVersion").and_then(Value::as_str)
            {
                state.version = Some(v.to_owned());
            }
            state.by_request.remove(&id);
            let Some(s) = state.streams.get_mut(&no) else {
                return;
            };
            let message = padded(message, s.pad_to);
            s.answered = true;
            state.answered.push_back(no);
            if state.answered.len() > KEPT_ANSWERED
                && let Some(old) = state.answered.pop_front()
            {
                state.streams.remove(&old);
            }
            let Some(s) = state.streams.get_mut(&no) else {
                return;
            };
            if let Form::Json(tx) = &mut s.form {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(message);
                }
                return;
            }
            push_message(&mut state, no, &message);
            if let Some(s) = state.streams.get_mut(&no) {
                // The answer ends its stream.
                s.live = None;
            }
            return;
        }
        push_message(&mut state, no, &message);
    }
}

/// What [`Hub::attach`] did.
pub(super) enum Attach {
    /// The reader gets the stream.
    Attached,
    /// No such stream (or its server is gone).
    Unknown,
    /// Someone reads it already.
    Busy,
}

fn push_message(state: &mut HubState, no: u64, message: &Message) {
    if let Some(s) = state.streams.get_mut(&no) {
        s.push(
            no,
            &format!("event: message\ndata: {}\n", message.to_value()),
        );
    }
}

/// The stream a notification belongs to: a listen stream's by
/// subscription id, or a request's by progress token.
fn of_notification(state: &HubState, message: &Message) -> Option<u64> {
    let Message::Notification(n) = message else {
        return None;
    };
    if let Some(sub) = n
        .meta()
        .and_then(|m| m.get(SUBSCRIPTION_ID))
        .and_then(RequestId::from_value)
    {
        return state.by_request.get(&sub).copied();
    }
    let token = n
        .params
        .as_ref()
        .and_then(|p| p.get(PROGRESS_TOKEN))
        .and_then(RequestId::from_value)?;
    state
        .streams
        .iter()
        .find(|(_, s)| !s.answered && s.token.as_ref() == Some(&token))
        .map(|(no, _)| *no)
}

/// The answer, with a `padding` string in its result making its JSON over
/// `pad_to` bytes.
pub(super) fn padded(message: Message, pad_to: Option<usize>) -> Message {
    let Some(size) = pad_to else { return message };
    match message {
        Message::Response(mut r) => {
            if let Some(object) = r.result.as_object_mut() {
                object.insert("padding".into(), json!("x".repeat(size + 1)));
            }
            Message::Response(r)
        }
        other => other,
    }
}

/// Reads an event id of ours: `(stream, events seen)`.
pub(super) fn parse_event_id(id: &str) -> Option<(u64, usize)> {
    let (no, n) = id.trim().split_once('-')?;
    Some((no.parse().ok()?, n.parse().ok()?))
}
