//! The client's `initialize`, answered by the bridge for all its servers:
//! each server is told the client's params, and the client gets one
//! answer that speaks for them all.

use std::sync::atomic::Ordering;

use futures::future::join_all;
use mcp_protocol::Notification;
use mcp_protocol::error_codes::INTERNAL_ERROR;
use mcp_protocol::methods::{INITIALIZE, NOTIFICATION_INITIALIZED};
use mcp_transport::TransportError;
use serde_json::{Map, Value, json};

use crate::fanout::member::{Shared, rpc};

/// Sends the client's `initialize` params to every server and answers for
/// them all. A server that fails its handshake is left out (a warning
/// names it); if none succeeds, the client gets an error naming each.
pub(crate) async fn initialize(
    shared: &Shared,
    params: Option<Value>,
) -> Result<Value, TransportError> {
    // A second `initialize` on one session gets the first one's answer
    // (once it is given).
    if shared.begun.swap(true, Ordering::AcqRel) && shared.opened().await {
        return Ok(shared.handshake.get().cloned().unwrap_or_default());
    }
    shared.begun.store(true, Ordering::Release);
    shared.settled.notify_waiters();
    let _settling = Settling(shared);
    let asked = shared
        .live()
        .map(|(_, member)| {
            let params = params.clone();
            async move {
                let outcome = shared.ask(member, INITIALIZE, params).await;
                (member, outcome)
            }
        })
        .collect::<Vec<_>>();
    let mut failures = Vec::new();
    for (member, outcome) in join_all(asked).await {
        match outcome {
            Ok(result) => {
                let _ = member.initialized.set(result);
            }
            Err(error) => {
                tracing::warn!(server = %member.name, %error, "the server failed its handshake; serving the others");
                failures.push(format!("{}: {error}", member.name));
                member.gone.store(true, Ordering::Release);
                let _ = member.transport.close().await;
            }
        }
    }
    let answers: Vec<(&str, &Value)> = shared
        .members
        .iter()
        .filter_map(|m| Some((m.name.as_str(), m.initialized.get()?)))
        .collect();
    if answers.is_empty() {
        return Err(rpc(
            INTERNAL_ERROR,
            format!(
                "none of the bridge's servers completed its handshake: {}",
                failures.join("; ")
            ),
        ));
    }
    let answer = shared
        .handshake
        .get_or_init(|| merged(&answers, &shared.info))
        .clone();
    // The client said `initialized` before it had the answer.
    if shared.client_initialized.load(Ordering::Acquire) {
        tell_initialized(shared);
    }
    Ok(answer)
}

/// Tells those waiting for the handshake that it is over, when the
/// `initialize` ends (answered, failed, or dropped); one that failed lets
/// the next try again.
struct Settling<'a>(&'a Shared);

impl Drop for Settling<'_> {
    fn drop(&mut self) {
        if self.0.handshake.get().is_none() {
            self.0.begun.store(false, Ordering::Release);
        }
        self.0.settled.notify_waiters();
    }
}

/// The client's `notifications/initialized`: told to every server that
/// completed its handshake, now or (a client that did not wait for the
/// answer) once the handshake is over.
pub(crate) fn initialized(shared: &Shared) {
    shared.client_initialized.store(true, Ordering::Release);
    if shared.handshake.get().is_some() {
        tell_initialized(shared);
    }
}

/// Tells each server that completed its handshake, once, that the client
/// is initialized.
fn tell_initialized(shared: &Shared) {
    for (_, member) in shared.live() {
        if member.initialized.get().is_none() || member.told.swap(true, Ordering::AcqRel) {
            continue;
        }
        let notification = Notification::new(NOTIFICATION_INITIALIZED, None);
        if let Err(error) = member.transport.notify(notification) {
            tracing::debug!(server = %member.name, %error, "{NOTIFICATION_INITIALIZED} was not sent");
        }
    }
}

/// One answer for all: the protocol version, the union of capabilities,
/// the bridge's own `serverInfo`, each server's instructions under its
/// name.
fn merged(answers: &[(&str, &Value)], info: &(String, String)) -> Value {
    let mut capabilities = Map::new();
    let has = |name: &str| {
        answers
            .iter()
            .any(|(_, a)| a.get("capabilities").and_then(|c| c.get(name)).is_some())
    };
    for list in ["tools", "prompts"] {
        if has(list) {
            capabilities.insert(list.into(), json!({"listChanged": true}));
        }
    }
    if has("resources") {
        let subscribe = answers.iter().any(|(_, a)| {
            a.pointer("/capabilities/resources/subscribe") == Some(&Value::Bool(true))
        });
        capabilities.insert(
            "resources".into(),
            json!({"listChanged": true, "subscribe": subscribe}),
        );
    }
    for plain in ["logging", "completions"] {
        if has(plain) {
            capabilities.insert(plain.into(), json!({}));
        }
    }
    let mut answer = json!({
        "protocolVersion": version(answers),
        "capabilities": capabilities,
        "serverInfo": {"name": info.0, "version": info.1},
    });
    let instructions: Vec<String> = answers
        .iter()
        .filter_map(|(name, a)| {
            let text = a.get("instructions")?.as_str()?;
            Some(format!("{name}: {text}"))
        })
        .collect();
    if !instructions.is_empty() {
        answer["instructions"] = Value::String(instructions.join("\n\n"));
    }
    answer
}

/// The version every server answered, when they agree (the client's own
/// when every server accepted it); else the oldest of their answers (they
/// are dates), which each server answered or came after.
fn version(answers: &[(&str, &Value)]) -> String {
    answers
        .iter()
        .filter_map(|(_, a)| a.get("protocolVersion")?.as_str())
        .min()
        .unwrap_or("2025-06-18")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(version: &str, capabilities: Value) -> Value {
        json!({"protocolVersion": version, "capabilities": capabilities,
               "serverInfo": {"name": "s", "version": "1"}})
    }

    #[test]
    fn capabilities_are_the_union_and_lists_may_change() {
        let a = answer("2025-06-18", json!({"tools": {}}));
        let b = answer(
            "2025-06-18",
            json!({"resources": {"subscribe": true}, "logging": {}}),
        );
        let info = ("mcp-bridge".to_owned(), "0.1.0".to_owned());
        let merged = merged(&[("a", &a), ("b", &b)], &info);
        assert_eq!(
            merged["capabilities"],
            json!({"tools": {"listChanged": true},
                   "resources": {"listChanged": true, "subscribe": true},
                   "logging": {}})
        );
        assert_eq!(merged["serverInfo"]["name"], "mcp-bridge");
        assert_eq!(merged["protocolVersion"], "2025-06-18");
    }

    #[test]
    fn servers_that_disagree_get_the_oldest_version_they_answered() {
        let a = answer("2025-11-25", json!({}));
        let b = answer("2025-03-26", json!({}));
        assert_eq!(version(&[("a", &a), ("b", &b)]), "2025-03-26");
    }

    #[test]
    fn instructions_are_each_servers_under_its_name() {
        let mut a = answer("2025-06-18", json!({}));
        a["instructions"] = json!("Use echo.");
        let merged = merged(&[("a", &a)], &("m".into(), "1".into()));
        assert_eq!(merged["instructions"], "a: Use echo.");
    }
}
