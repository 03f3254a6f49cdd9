//! Recovering what HTTP can lose: an expired legacy session (one
//! re-initialize for every request that met it, then each retried once)
//! and a broken answer stream (re-sent only where running twice is
//! harmless).
//!
//! Both are decided in [`Session::send`](crate::session::Session::send),
//! the one place requests are made; this file holds what they need.

use std::collections::{BTreeSet, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

use mcp_protocol::types::Tool;
use mcp_protocol::{Request, methods};
use mcp_transport::RequestOptions;
use serde_json::{Value, json};

use crate::error::{ClientError, Result};
use crate::handshake::{self, InitializeFailure};
use crate::session::Session;

/// What the client remembers so that it can recover a connection.
#[derive(Default)]
pub(crate) struct Recovery {
    /// Held while the session is re-initialized, so that it happens once
    /// however many requests met the expiry.
    pub(crate) reinitializing: tokio::sync::Mutex<()>,
    /// Set while a re-initialize runs: new requests wait for it rather
    /// than going out with no session.
    pub(crate) busy: AtomicBool,
    /// Bumped by each re-initialize. A request that met an expiry under an
    /// older generation finds the session already renewed.
    generation: AtomicU64,
    /// URIs subscribed with `resources/subscribe`, re-applied on a new
    /// session.
    subscribed: Mutex<BTreeSet<String>>,
    /// Tools whose annotations say `readOnlyHint` or `idempotentHint`.
    harmless_tools: RwLock<HashSet<String>>,
}

impl Recovery {
    /// The session generation a request goes out under.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Marks the end of a re-initialize or restart.
    pub(crate) fn bump(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// Waits while a re-initialize runs (cheap when none does).
    pub(crate) async fn settled(&self) {
        if self.busy.load(Ordering::Acquire) {
            drop(self.reinitializing.lock().await);
        }
    }

    pub(crate) fn subscribed(&self, uri: &str) {
        self.lock_subscribed().insert(uri.to_owned());
    }

    pub(crate) fn unsubscribed(&self, uri: &str) {
        self.lock_subscribed().remove(uri);
    }

    fn lock_subscribed(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.subscribed.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Remembers which listed tools are harmless to call twice.
    pub(crate) fn learn_tools(&self, tools: &[Tool]) {
        let mut harmless = self
            .harmless_tools
            .write()
            .unwrap_or_else(|p| p.into_inner());
        for tool in tools {
            let hints = tool.annotations.as_ref();
            let safe = hints
                .is_some_and(|a| a.read_only_hint == Some(true) || a.idempotent_hint == Some(true));
            if safe {
                harmless.insert(tool.name.clone());
            } else {
                harmless.remove(&tool.name);
            }
        }
    }

    /// Whether a request that may have run (its answer lost, or a 503 met
    /// after a gateway forwarded it) may be sent again: its method says
    /// re-sending is harmless ([`methods::resend_is_harmless`]: discover,
    /// lists, reads, `prompts/get`, completion, ping, listens,
    /// subscriptions), or it calls a tool whose annotations say it is
    /// read-only or idempotent.
    pub(crate) fn resend_is_harmless(&self, method: &str, params: Option<&Value>) -> bool {
        if method == methods::TOOLS_CALL {
            return params
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .is_some_and(|name| {
                    self.harmless_tools
                        .read()
                        .unwrap_or_else(|p| p.into_inner())
                        .contains(name)
                });
        }
        methods::resend_is_harmless(method)
    }
}

impl Session {
    /// Renews an expired legacy session, once for all the requests that
    /// met the expiry under generation `seen`: `initialize` with the
    /// revision in use, `notifications/initialized`, the log level and the
    /// resource subscriptions again, and the caches dropped (the new
    /// session may differ).
    pub(crate) async fn reinitialize(&self, seen: u64) -> Result<()> {
        let recovery = &self.recovery;
        let _held = recovery.reinitializing.lock().await;
        if recovery.generation() != seen {
            return Ok(());
        }
        recovery.busy.store(true, Ordering::Release);
        // Boxed, like a restart: rare, and large beside a request.
        let outcome = Box::pin(self.handshake_again()).await;
        recovery.bump();
        recovery.busy.store(false, Ordering::Release);
        outcome
    }

    async fn handshake_again(&self) -> Result<()> {
        let version = self.version();
        tracing::info!(%version, "the server's session expired; initializing a new one");
        let transport = self.transport();
        let exchange = handshake::initialize(
            &*transport,
            &self.config,
            self.ids.next(),
            &version,
            std::slice::from_ref(&version),
            |result| {
                self.update_verdict(|v| {
                    v.capabilities = result.capabilities;
                    v.server_info = Some(result.server_info);
                    v.instructions = result.instructions;
                });
            },
        );
        match exchange.await {
            Ok(()) => {}
            Err(InitializeFailure::Refused(e)) => {
                return Err(ClientError::from(e).with_method(methods::INITIALIZE));
            }
            // A different revision now would change what every later
            // message means; the connection is not silently switched.
            Err(InitializeFailure::Revision(other)) => {
                return Err(ClientError::invalid(format!(
                    "the new session answered revision {other} instead of {version}"
                ))
                .with_method(methods::INITIALIZE));
            }
            Err(InitializeFailure::Failed(e)) => return Err(e),
        }
        self.cache.clear();
        self.reapply().await;
        Ok(())
    }

    /// The log level and subscriptions of the old session, on the new one;
    /// a failure is logged, not fatal (the requests still deserve their
    /// retry).
    pub(crate) async fn reapply(&self) {
        let options = || RequestOptions::new().timeout(self.config.request_timeout);
        let version = self.version();
        if let Some(level) = self.log_level() {
            let params = json!({ "level": level.as_str() });
            let request = Request::new(self.ids.next(), methods::LOGGING_SET_LEVEL, Some(params));
            let sent = crate::trace::send(&*self.transport(), request, options(), &version);
            if let Err(error) = sent.await {
                tracing::warn!(%error, "could not set the log level on the new session");
            }
        }
        let uris: Vec<String> = self.recovery.lock_subscribed().iter().cloned().collect();
        for uri in uris {
            let request = Request::new(
                self.ids.next(),
                methods::RESOURCES_SUBSCRIBE,
                Some(json!({ "uri": uri })),
            );
            let sent = crate::trace::send(&*self.transport(), request, options(), &version);
            if let Err(error) = sent.await {
                tracing::warn!(%error, %uri, "could not subscribe again on the new session");
            }
        }
    }
}
