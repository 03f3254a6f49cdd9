//! What must hold of a played script: after each step, and at its end.

use mcp_protocol::RequestId;
use mcp_protocol::result::normalize_result;
use mcp_transport::{Transport, TransportError};
use serde_json::Value;

use super::{HANG, Play, settle};

impl Play {
    /// While the connection lives, the pending table holds exactly the
    /// calls still in flight, and a call given up was cancelled on the
    /// wire or never written.
    pub(super) async fn check_in_flight(&mut self) {
        let alive = self.transport.is_alive();
        for c in &mut self.callers {
            if c.ended.is_none() && c.task.is_finished() {
                let outcome = (&mut c.task).await;
                c.ended = Some(outcome.ok());
                let given_up = matches!(
                    c.ended,
                    Some(Some(Err(
                        TransportError::Cancelled | TransportError::Timeout { .. }
                    )))
                );
                let seen = self.seen.lock().unwrap();
                if alive && given_up && !c.reused {
                    assert!(
                        seen.cancels.contains(&c.id) || !seen.requests.contains(&c.id),
                        "call {} was given up, and the server was never told",
                        c.id
                    );
                }
            }
        }
        if !alive {
            return;
        }
        let running = self.callers.iter().filter(|c| c.ended.is_none()).count();
        assert_eq!(
            self.transport.pending_count(),
            running,
            "the pending table and the calls in flight differ"
        );
    }

    pub(super) async fn finish(mut self) {
        // The server's stream ends: every call must end.
        self.end_stream().await;
        let callers = std::mem::take(&mut self.callers);
        let mut outcomes = Vec::new();
        for mut c in callers {
            let id = c.id.clone();
            let outcome = match c.ended.take() {
                Some(ended) => ended,
                None => match tokio::time::timeout(HANG, c.task).await {
                    Ok(Ok(outcome)) => Some(outcome),
                    Ok(Err(join)) => {
                        assert!(join.is_cancelled() && c.dropped, "call {id}: {join}");
                        None
                    }
                    Err(_) => panic!("call {id} never ended after the server's stream did"),
                },
            };
            outcomes.push((c.id, c.timeout, c.cancelled, c.reused, outcome));
        }
        if std::env::var_os("MCP_FUZZ_SHOW").is_some() {
            for (id, .., outcome) in &outcomes {
                eprintln!("call {id}: {outcome:?}");
            }
        }
        assert_eq!(self.transport.pending_count(), 0, "a request left pending");
        for (id, timeout, cancelled, reused, outcome) in outcomes {
            if let Some(outcome) = outcome {
                self.check_outcome(&id, timeout, cancelled, reused, &outcome);
            }
        }
        self.check_server_requests();
        drop(self.transport);
        let reader = self.reader;
        tokio::time::timeout(HANG, reader)
            .await
            .expect("the client's stream ends once the transport is dropped")
            .expect("the server's reader never fails");
        for _ in 0..8 {
            settle().await;
        }
        let alive = tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks();
        assert_eq!(alive, 0, "tasks left behind");
    }

    fn check_outcome(
        &self,
        id: &RequestId,
        timeout: bool,
        cancelled: bool,
        reused: bool,
        outcome: &Result<Value, TransportError>,
    ) {
        let sent = self.sent.get(id);
        let unreadable = sent.is_some_and(|s| s.unreadable);
        if sent.is_some_and(|s| s.wild) || reused {
            // Junk named it, or two calls shared its id: anything goes.
            return;
        }
        match outcome {
            Ok(value) => assert!(
                sent.is_some_and(|s| s
                    .results
                    .iter()
                    .any(|r| normalize_result(r.clone()) == *value)),
                "call {id} got {value}, which the server never sent it"
            ),
            Err(TransportError::Rpc { code, .. }) => assert!(
                sent.is_some_and(|s| s.errors.contains(code)),
                "call {id} got error {code}, which the server never sent it"
            ),
            Err(TransportError::Timeout { .. }) => assert!(timeout, "call {id} timed out"),
            Err(TransportError::Cancelled) => assert!(cancelled, "call {id} was cancelled"),
            Err(TransportError::DuplicateId(_)) => assert!(reused, "call {id}: duplicate"),
            Err(TransportError::MessageTooLarge { .. } | TransportError::Malformed { .. }) => {
                assert!(unreadable, "call {id}: {outcome:?}, but no line named it")
            }
            Err(TransportError::ServerGone(_)) => {}
            Err(TransportError::Closed) => assert!(self.closed, "call {id} closed"),
            Err(other) => panic!("call {id}: {other:?} cannot happen here"),
        }
    }

    /// No server request is answered twice, and the client answers only
    /// what was asked.
    fn check_server_requests(&self) {
        if self.junk_requests {
            return;
        }
        let seen = self.seen();
        for (id, n) in &seen.answers {
            assert!(*n <= 1, "server request {id} answered {n} times");
            assert!(
                self.server_requests.iter().any(|r| r.to_string() == *id),
                "answered {id}, never asked"
            );
        }
    }
}

/// The ids of answers a line of junk holds, and whether it holds a
/// request of the server's.
pub(super) fn named_ids(line: &[u8]) -> (Vec<RequestId>, bool) {
    use mcp_protocol::{Inbound, Message};
    let sniffed = mcp_protocol::framing::sniff(line);
    let mut request = sniffed.request;
    let mut ids: Vec<RequestId> = sniffed.id.into_iter().collect();
    match Inbound::parse(line) {
        Ok(inbound) => {
            let mut errors = Vec::new();
            for message in inbound.into_messages(|e| errors.push(e)) {
                match message {
                    Message::Request(_) | Message::Notification(_) => request = true,
                    other => ids.extend(other.id().cloned()),
                }
            }
            for e in errors {
                request |= e.request;
                ids.extend(e.id);
            }
        }
        Err(e) => {
            request |= e.request;
            ids.extend(e.id);
        }
    }
    (ids, request)
}
