//! Renewing a connection, one piece for both ways it is renewed: an
//! expired legacy session initialized again on the same transport, and a
//! supervised connection restarted through its connector. Either runs once
//! for every request that met the end under one generation (the session's
//! [`Renewal`](crate::session::Renewal): one lock, one generation, one busy
//! flag), drops the caches (the new session may differ) and, in legacy,
//! sets the log level and the resource subscriptions again.
//!
//! Also here: what a request waits for before it goes out
//! ([`Session::ready`]), and the bound a call's own time puts on waiting
//! for a restart ([`Session::until`]).

use mcp_protocol::{Era, Request, methods};
use mcp_transport::{GoneInfo, RequestOptions, TransportError};
use serde_json::json;
use tokio::time::Instant;

use crate::connect::Connecting;
use crate::error::{ClientError, ErrorKind, Result};
use crate::events::{ServerEvent, deliver};
use crate::handshake::{self, InitializeFailure};
use crate::restart_policy::RestartAttempt;
use crate::session::Session;
use crate::supervision::{Forget, Supervisor};
use crate::trace;

/// What is renewed.
#[derive(Clone, Copy)]
pub(crate) enum Renew<'a> {
    /// The expired legacy session, initialized again on the same
    /// transport.
    Session,
    /// The supervised connection, which ended with this: connected again
    /// through the connector.
    Connection(&'a TransportError),
}

impl Session {
    /// Renews the connection, once for every request that met its end
    /// under generation `seen` (a request that finds it renewed since goes
    /// on, or fails as the supervisor gave up). For a connection: attempt
    /// after attempt within the budget; on success the new connection is
    /// in place (the verdict reused, or probed again when it no longer
    /// holds). Without a supervisor there is no connection to renew.
    pub(crate) async fn renew(&self, seen: u64, what: Renew<'_>) -> Result<()> {
        let supervisor = match what {
            Renew::Session => None,
            Renew::Connection(_) => match &self.supervisor {
                Some(supervisor) => Some(supervisor),
                None => return Ok(()),
            },
        };
        let Some(renewing) = self.renewal.begin(seen).await else {
            // Another request already renewed it (or gave up).
            return supervisor.and_then(Supervisor::failure).map_or(Ok(()), Err);
        };
        let _restarting = match supervisor {
            Some(supervisor) => {
                let held = supervisor.restarting.lock().await;
                if supervisor.is_stopped() {
                    return Err(ClientError::from(TransportError::Closed));
                }
                Some(held)
            }
            None => None,
        };
        // Cleared however this ends: a call whose timeout runs out drops
        // the renewal, and later requests must not wait for it.
        let _busy = renewing.busy();
        // Boxed: rare, and large beside a request (connecting again is a
        // whole connect, several KiB of future), which every request's
        // future would otherwise carry room for at each level of a call.
        let outcome = match (what, supervisor) {
            (Renew::Connection(cause), Some(supervisor)) => {
                Box::pin(self.restart_attempts(supervisor, cause)).await
            }
            _ => Box::pin(self.initialize_again()).await,
        };
        renewing.renewed();
        if let (Err(e), Some(supervisor)) = (&outcome, supervisor) {
            supervisor.give_up(e.clone());
        }
        outcome
    }

    /// A new legacy session on the same transport: `initialize` with the
    /// revision in use, `notifications/initialized`, then the settings of
    /// the old one.
    async fn initialize_again(&self) -> Result<()> {
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
        self.reapply_settings().await;
        Ok(())
    }

    /// The log level and subscriptions of the old session, on the new one;
    /// a failure is logged, not fatal (the requests still deserve their
    /// retry).
    async fn reapply_settings(&self) {
        let options = || RequestOptions::new().timeout(self.config.request_timeout);
        let version = self.version();
        if let Some(level) = self.log_level() {
            let params = json!({ "level": level.as_str() });
            let request = Request::new(self.ids.next(), methods::LOGGING_SET_LEVEL, Some(params));
            let sent = trace::traced_request(&*self.transport(), request, options(), &version);
            if let Err(error) = sent.await {
                tracing::warn!(%error, "could not set the log level on the new session");
            }
        }
        for uri in self.renewal.subscriptions() {
            let request = Request::new(
                self.ids.next(),
                methods::RESOURCES_SUBSCRIBE,
                Some(json!({ "uri": uri })),
            );
            let sent = trace::traced_request(&*self.transport(), request, options(), &version);
            if let Err(error) = sent.await {
                tracing::warn!(%error, %uri, "could not subscribe again on the new session");
            }
        }
    }

    /// Restart attempts, one after another within the budget, until one
    /// connects; each is told as [`ServerEvent::Restarted`].
    async fn restart_attempts(
        &self,
        supervisor: &Supervisor,
        cause: &TransportError,
    ) -> Result<()> {
        let mut history: Vec<RestartAttempt> = Vec::new();
        let mut cause_text = cause.to_string();
        let mut gone = match cause {
            TransportError::ServerGone(info) => Some((**info).clone()),
            _ => None,
        };
        // Whether what ended the connection (or failed the last attempt)
        // shows a server that was reached: only then does the restart count
        // against the budget.
        let mut reached = reached_server(cause);
        for attempt in 1u32.. {
            if supervisor.is_stopped() {
                return Err(ClientError::from(TransportError::Closed));
            }
            supervisor.set_cause(Some(cause_text.as_str()));
            if reached && !supervisor.within_budget() {
                tracing::warn!(
                    attempts = history.len(),
                    "the restart budget is spent; giving up"
                );
                return Err(ClientError::new(ErrorKind::RestartsExhausted {
                    attempts: history,
                }));
            }
            let at = supervisor.next_attempt(attempt);
            let after = at.saturating_duration_since(Instant::now());
            tracing::info!(attempt, ?after, cause = %cause_text, "the connection ended; connecting again");
            tokio::select! {
                () = tokio::time::sleep_until(at) => {}
                () = supervisor.stopped() => return Err(ClientError::from(TransportError::Closed)),
            }
            supervisor.going_out(reached);
            let mut record = RestartAttempt {
                attempt,
                after,
                cause: cause_text.clone(),
                gone: gone.take(),
                failure: None,
            };
            match self.reconnect(supervisor).await {
                Ok(()) => {
                    supervisor.set_cause(None);
                    self.announce(ServerEvent::Restarted(record));
                    return Ok(());
                }
                Err(_) if supervisor.is_stopped() => {
                    return Err(ClientError::from(TransportError::Closed));
                }
                Err(e) => {
                    if let Some(TransportError::RetryLater { retry_after, .. }) =
                        e.transport_error()
                    {
                        supervisor.asked_to_wait(*retry_after);
                    }
                    reached = e.transport_error().is_none_or(reached_server);
                    tracing::warn!(attempt, error = %e, "the restart failed");
                    record.failure = Some(e.to_string());
                    cause_text = e.to_string();
                    if let Some(TransportError::ServerGone(info)) = e.transport_error() {
                        gone = Some((**info).clone());
                    }
                    self.announce(ServerEvent::Restarted(record.clone()));
                    history.push(record);
                }
            }
        }
        unreachable!("the loop returns")
    }

    /// An event of the supervisor's, to the callback and the streams like
    /// the server's own.
    fn announce(&self, event: ServerEvent) {
        deliver(self.config.event_callback.as_deref(), &self.events, event);
    }

    /// One connection attempt, with the verdict in hand. `close` ends it
    /// at once: what it opened is closed (a server process ends before
    /// `close` returns) and nothing is put in place.
    async fn reconnect(&self, supervisor: &Supervisor) -> Result<()> {
        let opened = supervisor.opened_connector();
        // What this attempt opened is let go however it ends (a call whose
        // timeout runs out drops it): a failed attempt's connections are
        // dropped, as the attempt's own would be.
        let _forget = Forget(&supervisor.opened);
        let connecting = Connecting {
            config: &self.config,
            connector: &opened,
            handlers: supervisor.handlers.clone(),
            ids: self.ids.clone(),
            late_discover: self.late_discover.clone(),
            negotiated: supervisor.negotiated.clone(),
        };
        let established = tokio::select! {
            biased;
            () = supervisor.stopped() => None,
            established = connecting.run(Some(self.verdict())) => Some(established?),
        };
        let Some(established) = established.filter(|_| !supervisor.is_stopped()) else {
            opened.close_all().await;
            return Err(ClientError::from(TransportError::Closed));
        };
        let old = self.transport();
        // All in place before the first wait: a call whose timeout runs
        // out drops the restart at any await.
        self.replace_transport(established.transport);
        self.update_verdict(|v| *v = established.verdict);
        self.cache.clear();
        old.close().await;
        if self.era() == Era::Legacy {
            // Cut short by `close`, which closes the new connection.
            tokio::select! {
                () = self.reapply_settings() => {}
                () = supervisor.stopped() => {}
            }
        }
        Ok(())
    }

    /// `wait`, for a supervised client no later than `deadline`: a call
    /// that runs out of time waiting for a restart fails saying so (and
    /// when the server asked to be retried).
    pub(crate) async fn until<T>(
        &self,
        deadline: Instant,
        wait: impl Future<Output = Result<T>>,
    ) -> Result<T> {
        let Some(supervisor) = &self.supervisor else {
            return wait.await;
        };
        match tokio::time::timeout_at(deadline, wait).await {
            Ok(outcome) => outcome,
            Err(_) => Err(supervisor.restarting_error()),
        }
    }

    /// Waits until a request may go out, and returns the generation it
    /// goes out under: after a renewal in progress, and, for a supervised
    /// client whose connection already ended, after restarting it (nothing
    /// was sent on the dead one).
    pub(crate) async fn ready(&self) -> Result<u64> {
        if self.supervisor.is_some() && !self.supervised() {
            // Closed: the request meets the closed connection at once,
            // rather than waiting for a restart that a future nobody polls
            // may hold.
            return Ok(self.renewal.generation());
        }
        self.renewal.wait_while_renewing().await;
        if !self.supervised() {
            return Ok(self.renewal.generation());
        }
        if let Some(e) = self.supervision_failure() {
            return Err(e);
        }
        let generation = self.renewal.generation();
        if let Some(cause) = self
            .supervisor
            .as_ref()
            .and_then(|s| s.pending_restart(generation))
        {
            // A call met the server's 503 and left the restart to this one.
            self.renew(generation, Renew::Connection(&cause)).await?;
            return Ok(self.renewal.generation());
        }
        if self.transport().is_alive() {
            return Ok(generation);
        }
        let ended = TransportError::ServerGone(Box::new(GoneInfo::new("the connection had ended")));
        self.renew(generation, Renew::Connection(&ended)).await?;
        Ok(self.renewal.generation())
    }
}

/// Whether a failure shows a server that was reached (it died, or answered
/// something other than "later"), which a restart after it counts against
/// the budget for. Nothing reached (a refused connection) and a server
/// that asked to be retried later prove nothing about a crash loop.
fn reached_server(e: &TransportError) -> bool {
    !matches!(
        e,
        TransportError::Unreachable { .. } | TransportError::RetryLater { .. }
    )
}
