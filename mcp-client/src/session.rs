//! One connection's state and the one place requests are made: the era's
//! envelope, gating, timeouts, progress, and the `-32022` retry.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use mcp_protocol::error_codes;
use mcp_protocol::meta::{self, RequestMetaBuilder};
use mcp_protocol::types::{LoggingLevel, ProgressNotificationParams};
use mcp_protocol::version::{VersionRejection, VersionRetry};
use mcp_protocol::{Era, Notification, ProtocolVersion, Request, RequestId, methods};
use mcp_transport::{Listener, RequestOptions, SharedMeta, Tap, Transport, TransportError};
use serde_json::{Map, Value};

use crate::cache::Cache;
use crate::config::Config;
use crate::error::{ClientError, ErrorKind, Result};
use crate::events::Events;
use crate::gating;
use crate::kept_params::KeptParams;
use crate::options::CallOptions;
use crate::recovery::Recovery;
use crate::supervision::Supervisor;
use crate::tool_schemas::{InputSchemas, OutputSchemas};
use crate::trace;
use crate::verdict::Verdict;

/// Request ids: the client owns them, one counter per client.
#[derive(Debug, Default)]
pub(crate) struct Ids(AtomicI64);

impl Ids {
    pub(crate) fn next(&self) -> RequestId {
        RequestId::Number(self.0.fetch_add(1, Ordering::Relaxed) + 1)
    }
}

/// A request's params with the era's `_meta`, and the constant part of
/// it when the transport puts that on the wire itself.
pub(crate) struct Enveloped {
    pub(crate) params: Option<Value>,
    pub(crate) shared: Option<SharedMeta>,
}

/// Puts the era's `_meta` on a request's params.
///
/// Modern: protocol version, client capabilities, client info (the same on
/// every request: left to the transport when `splice`, which says the
/// transport takes them), log level. Legacy: none of those. Both: the
/// progress token and the caller's extras (which never override the
/// protocol's keys).
pub(crate) fn envelope(
    config: &Config,
    version: &ProtocolVersion,
    params: Option<Value>,
    extra: &Map<String, Value>,
    progress_token: Option<RequestId>,
    log_level: Option<&LoggingLevel>,
    splice: bool,
) -> Enveloped {
    let mut builder = RequestMetaBuilder::new();
    let shared = match version.era() {
        Era::Modern => {
            if let Some(level) = log_level {
                builder = builder.log_level(level);
            }
            Some(config.modern_meta.get(version, || {
                RequestMetaBuilder::modern(
                    version,
                    &config.capabilities(version),
                    &config.client_info,
                )
                .build()
            }))
        }
        Era::Legacy => None,
    };
    if let Some(token) = progress_token {
        builder = builder.progress_token(token);
    }
    let meta = builder.merge_missing(extra).build();
    let params = if meta.is_empty() {
        params
    } else {
        meta::with_meta(params, meta)
    };
    // The shared members win over any of the same names, spliced or not.
    match shared {
        Some(shared) if !splice => Enveloped {
            params: shared.merge_into(params),
            shared: None,
        },
        shared => Enveloped { params, shared },
    }
}

/// The live state of a connected client.
pub(crate) struct Session {
    pub(crate) config: Arc<Config>,
    /// The connection; replaced when a supervised client reconnects.
    transport: RwLock<Arc<dyn Transport>>,
    pub(crate) ids: Arc<Ids>,
    verdict: RwLock<Verdict>,
    log_level: RwLock<Option<LoggingLevel>>,
    in_flight: AtomicUsize,
    /// Whether the server has accepted the revision in use on this
    /// connection (a `server/discover` listing it, or any answer): from
    /// then on a request keeps no copy of its params for a `-32022` retry.
    version_confirmed: AtomicBool,
    pub(crate) late_discover: Arc<AtomicBool>,
    pub(crate) events: Events,
    pub(crate) cache: Arc<Cache>,
    pub(crate) output_schemas: OutputSchemas,
    pub(crate) input_schemas: InputSchemas,
    /// What an expired session or a lost answer is recovered with.
    pub(crate) recovery: Recovery,
    /// Restarts the connection when it ends, when the client is supervised.
    pub(crate) supervisor: Option<Supervisor>,
    /// The connection's listener, for streams that feed the same events.
    pub(crate) listener: Listener,
    /// What drops stale cache entries, for listeners of listen streams.
    pub(crate) invalidation: Tap<Notification>,
}

/// What the client makes before it connects: the connection must have
/// somewhere to deliver events from its first message on.
pub(crate) struct Prelude {
    pub(crate) config: Arc<Config>,
    pub(crate) ids: Arc<Ids>,
    pub(crate) late_discover: Arc<AtomicBool>,
    pub(crate) events: Events,
    pub(crate) cache: Arc<Cache>,
    pub(crate) listener: Listener,
    pub(crate) invalidation: Tap<Notification>,
    pub(crate) supervisor: Option<Supervisor>,
}

impl Session {
    pub(crate) fn new(prelude: Prelude, transport: Arc<dyn Transport>, verdict: Verdict) -> Self {
        let Prelude {
            config,
            ids,
            late_discover,
            events,
            cache,
            listener,
            invalidation,
            supervisor,
        } = prelude;
        let log_level = config.log_level.clone();
        let version_confirmed = AtomicBool::new(verdict.reached != crate::verdict::Reached::Saved);
        Session {
            config,
            transport: RwLock::new(transport),
            ids,
            verdict: RwLock::new(verdict),
            log_level: RwLock::new(log_level),
            in_flight: AtomicUsize::new(0),
            version_confirmed,
            late_discover,
            events,
            cache,
            listener,
            invalidation,
            output_schemas: OutputSchemas::default(),
            input_schemas: InputSchemas::default(),
            recovery: Recovery::default(),
            supervisor,
        }
    }

    /// The connection in use now.
    pub(crate) fn transport(&self) -> Arc<dyn Transport> {
        self.transport
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Puts a new connection in place of the old one.
    pub(crate) fn replace_transport(&self, transport: Arc<dyn Transport>) {
        *self.transport.write().unwrap_or_else(|p| p.into_inner()) = transport;
    }

    pub(crate) fn verdict(&self) -> Verdict {
        let mut v = self
            .verdict
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        v.late_discover_answer |= self.late_discover.load(Ordering::Relaxed);
        v
    }

    /// Reads the verdict in place, under its lock: what a call needs of it
    /// (the era, the capabilities) without copying the whole of it. `f`
    /// must not read the verdict again (a read lock taken twice deadlocks
    /// when a writer queues in between).
    pub(crate) fn read_verdict<R>(&self, f: impl FnOnce(&Verdict) -> R) -> R {
        f(&self.verdict.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// The era in use (asked on every call).
    pub(crate) fn era(&self) -> Era {
        self.read_verdict(|v| v.era)
    }

    pub(crate) fn update_verdict(&self, f: impl FnOnce(&mut Verdict)) {
        f(&mut self.verdict.write().unwrap_or_else(|p| p.into_inner()));
    }

    pub(crate) fn version(&self) -> ProtocolVersion {
        self.read_verdict(|v| v.version.clone())
    }

    pub(crate) fn set_log_level(&self, level: Option<LoggingLevel>) {
        *self.log_level.write().unwrap_or_else(|p| p.into_inner()) = level;
    }

    /// The level chosen last (modern: sent on every request; legacy:
    /// set again on a new session).
    pub(crate) fn log_level(&self) -> Option<LoggingLevel> {
        self.log_level
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Whether any client request is waiting for its answer.
    pub(crate) fn has_requests_in_flight(&self) -> bool {
        self.in_flight.load(Ordering::Relaxed) > 0
    }

    pub(crate) fn server_name(&self) -> Option<String> {
        self.config.name.clone().or_else(|| {
            self.verdict
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .server_info
                .as_ref()
                .map(|i| i.name.clone())
        })
    }

    fn fail(&self, method: &str, e: impl Into<ClientError>) -> ClientError {
        e.into()
            .with_method(method)
            .with_server(self.server_name().as_deref())
    }

    /// Checks that `method` may be sent now: by revision, and by the
    /// server's capabilities unless that check is off.
    pub(crate) fn gate(&self, method: &str) -> Result<()> {
        // The verdict's lock is held only for the checks themselves and is
        // released before the error is built: `fail` reads the verdict
        // again (for the server's name), and a read lock taken twice
        // deadlocks when a writer queues in between.
        let checked = {
            let verdict = self.verdict.read().unwrap_or_else(|p| p.into_inner());
            gating::check_revision(method, &verdict.version).and_then(|()| {
                if self.config.enforce_server_capabilities {
                    gating::check_capability(method, &verdict.version, &verdict.capabilities)
                } else {
                    Ok(())
                }
            })
        };
        checked.map_err(|k| self.fail(method, k))
    }

    /// Sends one request in the era's envelope and waits for its result
    /// (normalized). Retried, each at most once and with a new id:
    ///
    /// * a modern `-32022`, with a revision from the server's list that
    ///   both sides know;
    /// * an expired legacy session ([`TransportError::SessionExpired`]),
    ///   after one re-initialize shared by every request that met it (the
    ///   server did not run the request);
    /// * a lost answer ([`TransportError::StreamBroken`]) when the server
    ///   cannot have run the request or running it twice is harmless;
    ///   otherwise the call fails with [`ErrorKind::MayHaveRun`].
    pub(crate) async fn send(
        &self,
        method: &str,
        params: Option<Value>,
        options: &CallOptions,
    ) -> Result<Value> {
        self.send_kept(method, params, options, None).await
    }

    /// [`send`](Self::send), when the caller keeps a copy of `params`
    /// itself (`kept`, equal to them): a retry is rebuilt from it, so no
    /// second copy is made here (a modern `tools/call` would otherwise
    /// copy its arguments twice per call).
    pub(crate) async fn send_kept(
        &self,
        method: &str,
        mut params: Option<Value>,
        options: &CallOptions,
        kept: Option<&KeptParams>,
    ) -> Result<Value> {
        // The copy made here, when the caller keeps none.
        let mut own: Option<KeptParams> = None;
        let _in_flight = InFlight::enter(&self.in_flight);
        let mut version = self.version();
        let mut retried = false;
        // Sessions expire and streams break only on transports that answer
        // every request over a connection of their own (HTTP).
        let recoverable = self.transport().answers_every_request();
        let (mut renewed, mut resent, mut restarted) = (false, false, false);
        // Waiting for a supervised connection's restart takes from the
        // call's own time, however many restarts it waits for.
        let deadline =
            tokio::time::Instant::now() + options.timeout.unwrap_or(self.config.request_timeout);
        loop {
            if params.is_none() {
                // A retry: the params went with the last attempt.
                params = kept.or(own.as_ref()).map(KeptParams::value);
            }
            let generation = self
                .until(deadline, self.ready())
                .await
                .map_err(|e| self.fail(method, e))?;
            let id = self.ids.next();
            let token = options.wants_progress().then(|| id.clone());
            let level = self.log_level();
            // A copy of the params is kept only while a retry is still
            // possible; large arguments are not copied for nothing.
            // Once the server has accepted the revision, a retry on
            // `-32022` is kept ready only for params small enough to copy
            // for nothing (a large call's arguments are not doubled).
            let version_retry = version.era() == Era::Modern
                && !retried
                && (!self.version_confirmed.load(Ordering::Relaxed)
                    || smaller_than(params.as_ref(), COPY_FOR_RETRY_LIMIT));
            let may_retry = version_retry
                || (recoverable && !(renewed && resent))
                || (self.supervised() && !restarted);
            if may_retry && kept.is_none() {
                own = params.as_ref().map(KeptParams::of);
            }
            let attempt = params.take();
            let span = trace::request_span(method, &id, &version, attempt.as_ref());
            trace::note_id_on_round(&id);
            let extra = trace::extras_with_context(&span, attempt.as_ref(), &options.meta);
            let transport = self.transport();
            let attempt = envelope(
                &self.config,
                &version,
                attempt,
                &extra,
                token,
                level.as_ref(),
                transport.takes_shared_meta(),
            );
            let request = Request::new(id, method, attempt.params);
            let mut transport_options = self.transport_options(method, options);
            transport_options.shared_meta = attempt.shared;
            let progress = match &options.on_progress {
                Some(callback) if method != methods::SUBSCRIPTIONS_LISTEN => {
                    let (listener, stream) = Listener::bounded("progress", 64);
                    transport_options = transport_options.listener(listener);
                    Some((stream, callback.clone()))
                }
                _ => None,
            };
            let answer = transport.request(request, transport_options);
            let outcome =
                tracing::Instrument::instrument(with_progress(answer, progress), span.clone())
                    .await;
            trace::record_request(&span, &outcome);
            match outcome {
                Err(TransportError::Rpc {
                    code,
                    message,
                    data,
                }) if code == error_codes::UNSUPPORTED_PROTOCOL_VERSION
                    && version.era() == Era::Modern =>
                {
                    let rejection =
                        VersionRejection::read(data.as_ref(), &self.config.versions, version_retry);
                    let rejected = TransportError::Rpc {
                        code,
                        message,
                        data,
                    };
                    match rejection.next {
                        VersionRetry::Retry(v) => {
                            tracing::info!(from = %version, to = %v, "the server rejected the protocol revision; retrying with one it supports");
                            self.update_verdict(|verdict| verdict.version = v.clone());
                            version = v;
                            retried = true;
                        }
                        VersionRetry::NoRetry(v) => {
                            // The server went back on a revision it had
                            // accepted, and no copy of the params was kept
                            // (they may be large): the next call uses a
                            // revision it lists.
                            self.update_verdict(|verdict| verdict.version = v);
                            return Err(self.fail(method, rejected));
                        }
                        VersionRetry::NoneShared if version_retry => {
                            return Err(self.fail(
                                method,
                                ErrorKind::Negotiation {
                                    client: self.config.offered(Era::Modern),
                                    server: rejection.supported,
                                },
                            ));
                        }
                        VersionRetry::NoneShared => return Err(self.fail(method, rejected)),
                    }
                }
                Err(TransportError::SessionExpired { .. })
                    if recoverable && !renewed && version.era() == Era::Legacy =>
                {
                    self.reinitialize(generation)
                        .await
                        .map_err(|e| self.fail(method, e))?;
                    renewed = true;
                }
                Err(TransportError::StreamBroken {
                    may_have_run,
                    cause,
                }) if recoverable && !resent => {
                    let sent = kept.or(own.as_ref()).map(KeptParams::value);
                    if may_have_run && !self.recovery.resend_is_harmless(method, sent.as_ref()) {
                        return Err(self.fail(
                            method,
                            ErrorKind::MayHaveRun {
                                cause: TransportError::StreamBroken {
                                    may_have_run,
                                    cause,
                                },
                            },
                        ));
                    }
                    tracing::info!(method, %cause, "the answer was lost; sending the request again");
                    resent = true;
                }
                Err(
                    TransportError::ServerGone(_)
                    | TransportError::Unreachable { .. }
                    | TransportError::RetryLater { status: 503, .. },
                ) if self.supervisor.is_some() && !self.supervised() => {
                    // `close` came while the request was out: what would
                    // have restarted the connection is its end.
                    return Err(self.fail(method, TransportError::Closed));
                }
                Err(
                    e @ (TransportError::ServerGone(_)
                    | TransportError::Unreachable { .. }
                    | TransportError::RetryLater { status: 503, .. }),
                ) if self.supervised() && !restarted => {
                    // A 503 is the server (or its gateway) saying it is not
                    // serving now: connect again once it said it would. A
                    // 429 is about this client's pace, which a new
                    // connection does not change.
                    let sent = kept.or(own.as_ref()).map(KeptParams::value);
                    let harmless = self.recovery.resend_is_harmless(method, sent.as_ref());
                    if let (TransportError::RetryLater { retry_after, .. }, Some(supervisor)) =
                        (&e, &self.supervisor)
                    {
                        supervisor.asked_to_wait(*retry_after);
                        if !harmless {
                            // A gateway answers 503 after forwarding too:
                            // the server may have run the request, which is
                            // not sent again. The next call restarts the
                            // connection, rather than this one waiting for
                            // a restart it cannot use.
                            supervisor.restart_later(generation, e.clone());
                            return Err(self.fail(method, ErrorKind::MayHaveRun { cause: e }));
                        }
                    }
                    self.until(deadline, self.restart(generation, &e))
                        .await
                        .map_err(|e| self.fail(method, e))?;
                    if !self.supervised() {
                        // Closed during the restart: nothing more goes out.
                        return Err(self.fail(method, TransportError::Closed));
                    }
                    // Unreachable: the request did not run, so trying again
                    // is always safe (the call's timeout bounds it). A 503
                    // here is for a request harmless to send again. A
                    // server that died with the request may have run it.
                    let reached = matches!(e, TransportError::ServerGone(_));
                    restarted = reached;
                    if reached && !harmless {
                        return Err(self.fail(method, ErrorKind::MayHaveRun { cause: e }));
                    }
                    tracing::info!(method, "sending the request again on the new connection");
                }
                Ok(value) => {
                    self.version_confirmed.store(true, Ordering::Relaxed);
                    if let Some(supervisor) = &self.supervisor {
                        supervisor.proven();
                    }
                    return Ok(value);
                }
                Err(e) => return Err(self.fail(method, e)),
            }
        }
    }

    /// `wait`, for a supervised client no later than `deadline`: a call
    /// that runs out of time waiting for a restart fails saying so (and
    /// when the server asked to be retried).
    async fn until<T>(
        &self,
        deadline: tokio::time::Instant,
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
    /// goes out under: after a re-initialize or restart in progress, and,
    /// for a supervised client whose connection already ended, after
    /// restarting it (nothing was sent on the dead one).
    async fn ready(&self) -> Result<u64> {
        if self.supervisor.is_some() && !self.supervised() {
            // Closed: the request meets the closed connection at once,
            // rather than waiting for a restart that a future nobody polls
            // may hold.
            return Ok(self.recovery.generation());
        }
        self.recovery.settled().await;
        if !self.supervised() {
            return Ok(self.recovery.generation());
        }
        if let Some(e) = self.supervision_failure() {
            return Err(e);
        }
        let generation = self.recovery.generation();
        if let Some(cause) = self
            .supervisor
            .as_ref()
            .and_then(|s| s.pending_restart(generation))
        {
            // A call met the server's 503 and left the restart to this one.
            self.restart(generation, &cause).await?;
            return Ok(self.recovery.generation());
        }
        if self.transport().is_alive() {
            return Ok(generation);
        }
        let ended = TransportError::ServerGone(Box::new(mcp_transport::GoneInfo::new(
            "the connection had ended",
        )));
        self.restart(generation, &ended).await?;
        Ok(self.recovery.generation())
    }

    fn transport_options(&self, method: &str, options: &CallOptions) -> RequestOptions {
        if method == methods::SUBSCRIPTIONS_LISTEN {
            // A listen stream lives as long as it is wanted; its
            // notifications feed the client's events like any others.
            let listener = options.listener.clone();
            let mut o =
                RequestOptions::new().listener(listener.unwrap_or_else(|| self.listener.clone()));
            if let Some(token) = &options.cancellation {
                o = o.cancellation(token.clone());
            }
            return o;
        }
        let timeout = options.timeout.unwrap_or(self.config.request_timeout);
        let max_total = options
            .max_total
            .unwrap_or(self.config.max_total_timeout)
            .max(timeout);
        let mut o = RequestOptions::new().timeout(timeout).max_total(max_total);
        o.headers = options.headers.clone();
        o.reset_on_progress = options.reset_on_progress;
        if method == methods::INITIALIZE {
            o = o.no_wire_cancel();
        }
        if let Some(token) = &options.cancellation {
            o = o.cancellation(token.clone());
        }
        o
    }
}

/// Waits for an answer while handing the request's progress to its
/// callback, on the caller's task and in order; progress that arrived
/// before the answer is delivered before this returns.
async fn with_progress(
    answer: mcp_transport::ResponseFuture,
    progress: Option<(
        mcp_transport::ListenerStream,
        crate::options::ProgressCallback,
    )>,
) -> std::result::Result<Value, TransportError> {
    let Some((mut stream, callback)) = progress else {
        return answer.await;
    };
    let deliver = |n: Notification| {
        if n.method != methods::NOTIFICATION_PROGRESS {
            return;
        }
        match serde_json::from_value::<ProgressNotificationParams>(n.params.unwrap_or(Value::Null))
        {
            Ok(p) => callback(p),
            Err(e) => tracing::debug!(error = %e, "skipped a malformed progress notification"),
        }
    };
    tokio::pin!(answer);
    loop {
        tokio::select! {
            biased;
            Some(n) = stream.recv() => deliver(n),
            outcome = &mut answer => {
                while let Some(n) = stream.try_recv() {
                    deliver(n);
                }
                return outcome;
            }
        }
    }
}

/// The params size up to which a copy is kept for a `-32022` retry after
/// the server accepted the revision.
pub(crate) const COPY_FOR_RETRY_LIMIT: usize = 64 * 1024;

/// Whether `value` holds fewer than about `limit` bytes of strings and
/// numbers; stops walking as soon as it knows.
pub(crate) fn smaller_than(value: Option<&Value>, limit: usize) -> bool {
    fn walk(value: &Value, budget: &mut usize) -> bool {
        let cost = match value {
            Value::String(s) => s.len(),
            _ => 8,
        };
        if cost >= *budget {
            return false;
        }
        *budget -= cost;
        match value {
            Value::Array(items) => items.iter().all(|v| walk(v, budget)),
            Value::Object(map) => map.iter().all(|(k, v)| {
                if k.len() >= *budget {
                    return false;
                }
                *budget -= k.len();
                walk(v, budget)
            }),
            _ => true,
        }
    }
    let mut budget = limit;
    value.is_none_or(|v| walk(v, &mut budget))
}

struct InFlight<'a>(&'a AtomicUsize);

impl<'a> InFlight<'a> {
    fn enter(counter: &'a AtomicUsize) -> Self {
        counter.fetch_add(1, Ordering::Relaxed);
        InFlight(counter)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use mcp_reference_server::{FakeConfig, FakeServer};

    use crate::Client;

    /// `gate` fails (by capability) while another thread keeps taking the
    /// verdict's write lock: with the read lock taken twice, a writer
    /// queued between the two reads deadlocks std's `RwLock`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failing_gate_never_takes_the_verdict_lock_twice() {
        let fake = FakeServer::new(FakeConfig::legacy());
        let client = Client::builder().connect(fake.connector()).await.unwrap();
        let session = client.session.clone();
        let writer = session.clone();
        let (done_tx, done_rx) = mpsc::channel();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop_writer = stop.clone();
        let writing = std::thread::spawn(move || {
            while !stop_writer.load(std::sync::atomic::Ordering::Relaxed) {
                writer.update_verdict(|_| {});
            }
        });
        std::thread::spawn(move || {
            for _ in 0..20_000 {
                // The fake does not advertise logging in legacy unless asked.
                assert!(session.gate("vendor/unknown").is_ok());
                let _ = session.gate(mcp_protocol::methods::SERVER_DISCOVER);
            }
            let _ = done_tx.send(());
        });
        let finished = done_rx.recv_timeout(Duration::from_secs(30));
        // Before joining: a deadlocked writer would never be joined.
        assert!(finished.is_ok(), "gate deadlocked with a writer waiting");
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        writing.join().unwrap();
    }
}
