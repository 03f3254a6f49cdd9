//! Lines passed through unparsed, between a client over a byte stream and
//! a server over one (`mcp bridge` from stdio to a command): once the
//! client's handshake is done, each of its requests goes to the server as
//! the line it sent, and the server's answer comes back as the line the
//! server wrote. Both sides keep the client's ids, so nothing needs
//! renumbering; the bridge reads only the envelope (`id`, `method`) to
//! know which answer is whose.
//!
//! Only a plain link passes lines: one with no tool policy, no tool search
//! and no translation between eras, whose work on a call is only to relay
//! it. Everything else (the handshake, notifications both ways, the
//! server's requests and the client's answers to them) goes through the
//! engines as before, in the order it was read. What the bridge owes a
//! passed call it still does: when the server goes, the call gets an error
//! that says it may have run; when the client goes, the server is told
//! the call is cancelled; a client's cancel reaches the server.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use mcp_protocol::error_codes::INVALID_REQUEST;
use mcp_protocol::framing::{encode_line_into, sniff};
use mcp_protocol::meta::PROGRESS_TOKEN;
use mcp_protocol::methods::{
    INITIALIZE, NOTIFICATION_CANCELLED, NOTIFICATION_INITIALIZED, NOTIFICATION_PROGRESS,
};
use mcp_protocol::{ErrorObject, ErrorResponse, Inbound, Message, RequestId};
use mcp_transport::{GoneInfo, LineKind, LineSender, LineTap, Transport, TransportError};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::link::{Link, UpstreamEra};
use crate::relayed::relayed_error;

/// The calls a link passed through, waiting for the server's answer.
pub(crate) struct Passthrough {
    link: Weak<Link>,
    pending: Mutex<Pending>,
    /// `pending`'s size, read without the lock by every line the server
    /// sends.
    waiting: AtomicUsize,
    /// The client sent `initialize` and not yet its
    /// `notifications/initialized`: nothing passes meanwhile (the engine
    /// sees the handshake, and may find the server needs translating).
    handshaking: AtomicBool,
    /// Set once lines pass; a plain link stays so.
    open: AtomicBool,
}

impl Passthrough {
    /// The passthrough of `link`, if the link is plain (see the module).
    pub(crate) fn of(link: &Arc<Link>) -> Option<Arc<Passthrough>> {
        let plain = link.search.is_none()
            && link.tools.is_open()
            && link.upstream_era == UpstreamEra::AsTheClient;
        plain.then(|| {
            Arc::new(Passthrough {
                link: Arc::downgrade(link),
                pending: Mutex::default(),
                waiting: AtomicUsize::new(0),
                handshaking: AtomicBool::new(false),
                open: AtomicBool::new(false),
            })
        })
    }

    /// The tap on the client's lines.
    pub(crate) fn from_client(self: &Arc<Self>) -> Arc<dyn LineTap> {
        Arc::new(FromClient(self.clone()))
    }

    /// The tap on the server's lines.
    pub(crate) fn from_server(self: &Arc<Self>) -> Arc<dyn LineTap> {
        Arc::new(FromServer(self.clone()))
    }

    /// Whether the client's lines may pass now: not during a handshake,
    /// nor once it found the eras need translating (which is decided
    /// before the `initialize` answer goes out, so before the client's
    /// `notifications/initialized`).
    fn is_open(&self, link: &Link) -> bool {
        if self.open.load(Ordering::Acquire) {
            return true;
        }
        let open = !self.handshaking.load(Ordering::Acquire) && link.translation.get().is_none();
        if open {
            self.open.store(true, Ordering::Release);
        }
        open
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a call off the waiting list; its method, if it was on it.
    fn forget(&self, id: &RequestId) -> Option<String> {
        let mut pending = self.lock();
        let call = pending.calls.remove(id)?;
        if let Some(token) = &call.token {
            pending.tokens.remove(token);
        }
        self.waiting.store(pending.calls.len(), Ordering::Release);
        Some(call.method)
    }

    /// Every call waiting, taken off the list.
    fn drain(&self) -> Vec<(RequestId, String)> {
        let mut pending = self.lock();
        self.waiting.store(0, Ordering::Release);
        pending.tokens.clear();
        pending
            .calls
            .drain()
            .map(|(id, c)| (id, c.method))
            .collect()
    }

    /// Whether `token` is the progress token of a call passed through.
    fn passed_token(&self, token: &RequestId) -> bool {
        self.lock().tokens.contains_key(token)
    }

    /// The server is gone: each call passed to it gets the error a relayed
    /// call gets, which says it may have run.
    pub(crate) fn server_gone(&self, upstream: &Arc<dyn Transport>) {
        let calls = self.drain();
        if calls.is_empty() {
            return;
        }
        let why = upstream
            .line_sender()
            .and_then(|lines| lines.ended())
            .unwrap_or_else(|| {
                TransportError::gone(GoneInfo::new("the server's connection ended"))
            });
        let Some(link) = self.link.upgrade() else {
            return;
        };
        for (id, method) in calls {
            answer_error(&link, id, relayed_error(&method, why.clone(), "server"));
        }
    }

    /// The client is gone: the server is told each call passed to it is
    /// cancelled.
    pub(crate) fn client_gone(&self, upstream: &Arc<dyn Transport>) {
        let calls = self.drain();
        let Some(lines) = upstream.line_sender() else {
            return;
        };
        for (id, _) in calls {
            let cancel = Message::Notification(mcp_protocol::Notification::new(
                NOTIFICATION_CANCELLED,
                Some(serde_json::json!({ "requestId": id, "reason": "the client left" })),
            ));
            let _ = lines.send(encoded(&cancel), LineKind::Cancel);
        }
    }

    /// A request of the client's: passed to the server, or answered here
    /// when it cannot be (taken either way).
    fn pass_request(
        &self,
        link: &Link,
        id: RequestId,
        method: &str,
        params: Option<&RawValue>,
        line: &[u8],
    ) -> bool {
        let Some(upstream) = link.upstream().and_then(|u| u.line_sender()) else {
            return false;
        };
        let token = progress_token(params);
        {
            let mut pending = self.lock();
            if pending.calls.contains_key(&id)
                || token
                    .as_ref()
                    .is_some_and(|t| pending.tokens.contains_key(t))
            {
                drop(pending);
                let error = ErrorObject::new(
                    INVALID_REQUEST,
                    format!(
                        "the id {id} (or the progress token) is already one of a request in \
                         flight; each must be unique"
                    ),
                );
                answer_error(link, id, error);
                return true;
            }
            if let Some(token) = &token {
                pending.tokens.insert(token.clone(), id.clone());
            }
            let method = method.to_owned();
            pending.calls.insert(id.clone(), Passed { method, token });
            self.waiting.store(pending.calls.len(), Ordering::Release);
        }
        if let Err(error) = upstream.send(line.to_vec(), LineKind::Request(id.clone()))
            && let Some(method) = self.forget(&id)
        {
            answer_error(link, id, relayed_error(&method, error, "server"));
        }
        true
    }

    /// A cancel of the client's: passed on when it names a call passed
    /// through; the engine's otherwise.
    fn pass_cancel(&self, link: &Link, params: Option<&RawValue>, line: &[u8]) -> bool {
        #[derive(Deserialize)]
        struct Cancelled {
            #[serde(rename = "requestId")]
            request_id: RequestId,
        }
        let Some(Cancelled { request_id }) =
            params.and_then(|p| serde_json::from_str::<Cancelled>(p.get()).ok())
        else {
            return false;
        };
        if self.forget(&request_id).is_none() {
            return false;
        }
        if let Some(upstream) = link.upstream().and_then(|u| u.line_sender())
            && let Err(e) = upstream.send(line.to_vec(), LineKind::Cancel)
        {
            tracing::debug!(error = %e, "a cancel for the server was not sent");
        }
        true
    }
}

/// The client's lines: its requests pass once the handshake is done.
struct FromClient(Arc<Passthrough>);

impl LineTap for FromClient {
    fn take(&self, line: &[u8]) -> bool {
        let Some(link) = self.0.link.upgrade() else {
            return false;
        };
        let Some(envelope) = Envelope::read(line) else {
            return false;
        };
        match (envelope.id, envelope.method.as_deref()) {
            (Some(_), Some(INITIALIZE)) => {
                self.0.handshaking.store(true, Ordering::Release);
                self.0.open.store(false, Ordering::Release);
                false
            }
            (Some(id), Some(method)) if self.0.is_open(&link) => {
                self.0
                    .pass_request(&link, id, method, envelope.params, line)
            }
            (None, Some(NOTIFICATION_INITIALIZED)) => {
                self.0.handshaking.store(false, Ordering::Release);
                false
            }
            (None, Some(NOTIFICATION_CANCELLED)) => {
                self.0.pass_cancel(&link, envelope.params, line)
            }
            _ => false,
        }
    }
}

/// The server's lines: an answer to a call passed through goes back as it
/// is.
struct FromServer(Arc<Passthrough>);

impl LineTap for FromServer {
    fn take(&self, line: &[u8]) -> bool {
        if self.0.waiting.load(Ordering::Acquire) == 0 {
            return false;
        }
        let Some(envelope) = Envelope::read(line) else {
            return self.0.unreadable(line);
        };
        let ours = match (&envelope.id, envelope.method.as_deref()) {
            (Some(id), None) => self.0.forget(id).is_some(),
            // The engine drops progress for a request it does not know.
            (None, Some(NOTIFICATION_PROGRESS)) => progress_token_of_notification(envelope.params)
                .is_some_and(|token| self.0.passed_token(&token)),
            _ => false,
        };
        if !ours {
            return false;
        }
        let kind = match envelope.id {
            Some(_) => LineKind::Answer,
            None => LineKind::Notification,
        };
        self.0.to_client(line.to_vec(), kind);
        true
    }

    fn too_large(&self, prefix: &[u8], size: usize, limit: usize) {
        if self.0.waiting.load(Ordering::Acquire) == 0 {
            return;
        }
        let sniffed = sniff(prefix);
        if let Some(id) = sniffed.id.filter(|_| !sniffed.request) {
            self.0
                .failed(id, TransportError::MessageTooLarge { size, limit });
        }
    }
}

impl Passthrough {
    /// A line of the server's whose envelope is not one to pass (not
    /// UTF-8, say), while calls wait: if it answers one, the client still
    /// gets an answer, the message as the engine reads it or an error that
    /// says why it could not be read. Taken only in the first case; the
    /// engine still reports the second.
    fn unreadable(&self, line: &[u8]) -> bool {
        match Inbound::parse(line) {
            Ok(Inbound::Single(message @ (Message::Response(_) | Message::Error(_)))) => {
                let ours = message.id().is_some_and(|id| self.forget(id).is_some());
                if ours {
                    self.to_client(encoded(&message), LineKind::Answer);
                }
                ours
            }
            Err(e) if !e.request => {
                if let Some(id) = e.id {
                    let detail = e.kind.to_string();
                    self.failed(id, TransportError::Malformed { detail });
                }
                false
            }
            _ => false,
        }
    }

    /// The server's answer to `id` could not be read: the client gets the
    /// error a relayed call gets, if `id` is a call passed through.
    fn failed(&self, id: RequestId, error: TransportError) {
        if let Some(method) = self.forget(&id)
            && let Some(link) = self.link.upgrade()
        {
            answer_error(&link, id, relayed_error(&method, error, "server"));
        }
    }

    fn to_client(&self, line: Vec<u8>, kind: LineKind) {
        match self.link.upgrade().and_then(|link| client_lines(&link)) {
            Some(client) => {
                if let Err(e) = client.send(line, kind) {
                    tracing::debug!(error = %e, "a line for the client was not sent");
                }
            }
            None => tracing::debug!("a line for the client after it was gone"),
        }
    }
}

/// A call passed through.
struct Passed {
    method: String,
    /// Its progress token, if it asked for progress.
    token: Option<RequestId>,
}

/// The calls passed through, by the client's id, and their progress
/// tokens.
#[derive(Default)]
struct Pending {
    calls: HashMap<RequestId, Passed>,
    tokens: HashMap<RequestId, RequestId>,
}

/// The progress token in a request's `params._meta`, looked for only when
/// the params name one.
fn progress_token(params: Option<&RawValue>) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "_meta")]
        meta: Option<Meta>,
    }
    #[derive(Deserialize)]
    struct Meta {
        #[serde(rename = "progressToken")]
        token: Option<RequestId>,
    }
    let params = params?.get();
    memchr::memmem::find(params.as_bytes(), PROGRESS_TOKEN.as_bytes())?;
    serde_json::from_str::<Params>(params).ok()?.meta?.token
}

/// The token a `notifications/progress` names.
fn progress_token_of_notification(params: Option<&RawValue>) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "progressToken")]
        token: RequestId,
    }
    serde_json::from_str::<Params>(params?.get())
        .ok()
        .map(|p| p.token)
}

/// What the bridge reads of a line it may pass: its members, validated as
/// JSON-RPC's (one object, `"jsonrpc": "2.0"`); `None` for anything else,
/// which the engine then reads and answers as it should.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    #[serde(default)]
    id: Option<RequestId>,
    #[serde(default, borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
}

impl<'a> Envelope<'a> {
    fn read(line: &'a [u8]) -> Option<Envelope<'a>> {
        // A struct also reads from an array; a batch is the engine's.
        if line.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return None;
        }
        // The fields skipped are not checked for UTF-8; a line passed on
        // whole must be text, or the engine reads it and says so.
        let text = std::str::from_utf8(line).ok()?;
        serde_json::from_str::<Envelope>(text)
            .ok()
            .filter(|e| e.jsonrpc == "2.0")
    }
}

/// What the envelope of `line` says, if it is one the bridge may pass:
/// its id and method (for `fuzzing.rs`).
#[cfg(feature = "http")]
pub(crate) fn envelope_of(line: &[u8]) -> Option<(Option<RequestId>, Option<String>)> {
    Envelope::read(line).map(|e| (e.id, e.method.map(Cow::into_owned)))
}

/// The client's side as lines, if it takes them.
fn client_lines(link: &Link) -> Option<LineSender> {
    link.downstream.get().and_then(|d| d.line_sender())
}

/// Answers the client's request `id` with `error`.
fn answer_error(link: &Link, id: RequestId, error: ErrorObject) {
    let Some(client) = client_lines(link) else {
        return;
    };
    let message = Message::Error(ErrorResponse {
        id: Some(id),
        error,
    });
    if let Err(e) = client.send(encoded(&message), LineKind::Answer) {
        tracing::debug!(error = %e, "an error for the client was not sent");
    }
}

fn encoded(message: &Message) -> Vec<u8> {
    let mut line = Vec::new();
    encode_line_into(message, &mut line);
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_one_json_rpc_object_is_read_as_an_envelope() {
        let request = br#" {"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"a":1}}"#;
        let envelope = Envelope::read(request).expect("a request");
        assert_eq!(envelope.id, Some(RequestId::String("x".into())));
        assert_eq!(envelope.method.as_deref(), Some("tools/call"));
        assert_eq!(envelope.params.map(RawValue::get), Some(r#"{"a":1}"#));
        for not in [
            &br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#[..],
            br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            br#"{"id":1,"method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"} trailing"#,
            b"not json",
            // Not UTF-8 in a field the envelope skips.
            b"{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":1,\"message\":\"\xee\"}}",
        ] {
            assert!(
                Envelope::read(not).is_none(),
                "{}",
                String::from_utf8_lossy(not)
            );
        }
    }

    #[test]
    fn a_progress_token_is_read_from_meta_only() {
        let raw = |s: &str| RawValue::from_string(s.to_owned()).unwrap();
        let asked = raw(r#"{"name":"x","_meta":{"progressToken":7}}"#);
        assert_eq!(progress_token(Some(&asked)), Some(RequestId::Number(7)));
        let elsewhere = raw(r#"{"arguments":{"progressToken":7}}"#);
        assert_eq!(progress_token(Some(&elsewhere)), None);
        assert_eq!(progress_token(None), None);
        let progress = raw(r#"{"progressToken":"p","progress":1}"#);
        assert_eq!(
            progress_token_of_notification(Some(&progress)),
            Some(RequestId::String("p".into()))
        );
    }
}
