//! The timeline of one recorded connection: which server messages wait
//! for which client messages, and what has been replayed.

use std::collections::HashMap;

use mcp_protocol::{Message, RequestId};
use serde_json::Value;

use super::diff;
use super::file::{Entry, Kind};
use super::rules::MatchRules;

/// One connection's entries and how far the replay got.
pub(super) struct Timeline {
    pub(super) entries: Vec<Entry>,
    /// Client entries matched by what the client sent.
    pub(super) consumed: Vec<bool>,
    /// Server entries sent to the client.
    pub(super) played: Vec<bool>,
    /// For a server entry, the client entry that must be matched first
    /// (`None`: nothing; it plays at once).
    anchors: Vec<Option<usize>>,
    /// Server entries that can never play (an answer to no request).
    orphans: Vec<bool>,
    /// Recorded request id → the id the client used this time.
    pub(super) ids: HashMap<RequestId, RequestId>,
    /// Recorded progress token → the token the client used this time.
    pub(super) tokens: HashMap<String, Value>,
}

impl Timeline {
    pub(super) fn new(entries: Vec<Entry>) -> Timeline {
        let n = entries.len();
        let mut anchors = vec![None; n];
        let mut orphans = vec![false; n];
        for i in 0..n {
            if entries[i].is_send() {
                continue;
            }
            let answered = match &entries[i].kind {
                Kind::Recv(Message::Response(r)) => Some(r.id.clone()),
                Kind::Recv(Message::Error(e)) => e.id.clone(),
                Kind::Failure { id, .. } => Some(id.clone()),
                _ => None,
            };
            anchors[i] = match answered {
                // An answer waits for its request, and for the client's
                // last answer to a server request asked meanwhile (a
                // sampling request inside a tool call).
                Some(id) => match (0..i).rev().find(|&j| is_request_with(&entries[j], &id)) {
                    Some(q) => Some(
                        ((q + 1)..i)
                            .rev()
                            .find(|&j| is_answer(&entries[j]))
                            .unwrap_or(q),
                    ),
                    None => {
                        orphans[i] = true;
                        None
                    }
                },
                // Anything else the server sent waits for what the client
                // sent last before it (a request, or an answer).
                None => (0..i).rev().find(|&j| blocks(&entries[j])),
            };
        }
        Timeline {
            entries,
            consumed: vec![false; n],
            played: vec![false; n],
            anchors,
            orphans,
            ids: HashMap::new(),
            tokens: HashMap::new(),
        }
    }

    /// The first server entry that may play now, in recorded order.
    pub(super) fn next_playable(&self) -> Option<usize> {
        (0..self.entries.len()).find(|&i| {
            !self.entries[i].is_send()
                && !self.played[i]
                && !self.orphans[i]
                && self.anchors[i].is_none_or(|a| self.consumed[a])
        })
    }

    /// The first unconsumed client request equal to this one under `rules`.
    pub(super) fn find_request(
        &self,
        method: &str,
        params: &Value,
        rules: &MatchRules,
    ) -> Option<usize> {
        (0..self.entries.len()).find(|&i| {
            !self.consumed[i]
                && matches!(&self.entries[i].kind, Kind::Send(Message::Request(r))
                    if r.method == method && rules.normalize(method, r.params.as_ref()) == *params)
        })
    }

    /// The first unconsumed client notification equal to this one.
    pub(super) fn find_notification(
        &self,
        method: &str,
        params: &Value,
        rules: &MatchRules,
    ) -> Option<usize> {
        (0..self.entries.len()).find(|&i| {
            !self.consumed[i]
                && matches!(&self.entries[i].kind, Kind::Send(Message::Notification(n))
                    if n.method == method && rules.normalize(method, n.params.as_ref()) == *params)
        })
    }

    /// The first unconsumed client answer to the server request `id`.
    pub(super) fn find_answer(&self, id: &RequestId) -> Option<usize> {
        (0..self.entries.len()).find(|&i| {
            !self.consumed[i]
                && match &self.entries[i].kind {
                    Kind::Send(Message::Response(r)) => r.id == *id,
                    Kind::Send(Message::Error(e)) => e.id.as_ref() == Some(id),
                    _ => false,
                }
        })
    }

    /// The method of the server request `id`, as recorded.
    pub(super) fn server_request_method(&self, id: &RequestId) -> String {
        self.entries
            .iter()
            .find_map(|e| match &e.kind {
                Kind::Recv(Message::Request(r)) if r.id == *id => Some(r.method.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// Why a request matched nothing: the closest recorded request and how
    /// it differs.
    pub(super) fn explain_request(
        &self,
        method: &str,
        id: &RequestId,
        sent: &Value,
        rules: &MatchRules,
    ) -> String {
        let mut text = format!(
            "the cassette has no request matching {method} (id {id}) with params {}",
            diff::short(sent)
        );
        let closest = (0..self.entries.len())
            .filter_map(|i| match &self.entries[i].kind {
                Kind::Send(Message::Request(r)) if r.method == method => {
                    let recorded = rules.normalize(method, r.params.as_ref());
                    Some((
                        self.consumed[i],
                        diff::distance(&recorded, sent),
                        i,
                        recorded,
                    ))
                }
                _ => None,
            })
            .min_by_key(|(consumed, distance, i, _)| (*distance, *consumed, *i));
        match closest {
            Some((consumed, 0, i, _)) if consumed => text.push_str(&format!(
                "\n  it matches line {} exactly, which was already replayed: the cassette has it \
                 fewer times than the client sent it",
                self.entries[i].line
            )),
            Some((consumed, _, i, recorded)) => {
                text.push_str(&format!(
                    "\n  closest recorded: line {}, {method}{}; it differs at:",
                    self.entries[i].line,
                    if consumed { " (already replayed)" } else { "" }
                ));
                for d in diff::differences(&recorded, sent) {
                    text.push_str("\n    ");
                    text.push_str(&d);
                }
            }
            None => {
                let pending: Vec<String> = (0..self.entries.len())
                    .filter(|&i| !self.consumed[i])
                    .filter_map(|i| match &self.entries[i].kind {
                        Kind::Send(Message::Request(r)) => {
                            Some(format!("{} (line {})", r.method, self.entries[i].line))
                        }
                        _ => None,
                    })
                    .collect();
                text.push_str(&format!(
                    "\n  the cassette recorded no {method} request on this connection; requests not yet replayed: {}",
                    if pending.is_empty() { "none".to_owned() } else { pending.join(", ") }
                ));
            }
        }
        text
    }

    /// The client entries never matched, described.
    pub(super) fn unused(&self, rules: &MatchRules) -> Vec<String> {
        (0..self.entries.len())
            .filter(|&i| !self.consumed[i])
            .filter_map(|i| match &self.entries[i].kind {
                Kind::Send(Message::Notification(n)) if rules.ignores_notification(&n.method) => {
                    None
                }
                Kind::Send(m) => Some(format!(
                    "line {}: {}",
                    self.entries[i].line,
                    diff::short(&m.to_value())
                )),
                _ => None,
            })
            .collect()
    }
}

fn is_request_with(entry: &Entry, id: &RequestId) -> bool {
    matches!(&entry.kind, Kind::Send(Message::Request(r)) if r.id == *id)
}

fn is_answer(entry: &Entry) -> bool {
    matches!(
        &entry.kind,
        Kind::Send(Message::Response(_) | Message::Error(_))
    )
}

/// Whether server entries after this client entry wait for it: requests
/// and answers do; notifications do not (a client may send them at
/// another moment, or not at all when they are ignored).
fn blocks(entry: &Entry) -> bool {
    matches!(
        &entry.kind,
        Kind::Send(Message::Request(_) | Message::Response(_) | Message::Error(_))
    )
}
