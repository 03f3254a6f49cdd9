//! One connection's state: the transport in use, the verdict, the log
//! level, the ids, the requests in flight, what the client learned of the
//! server (caches, tool schemas, which calls are harmless to re-send), and
//! what renews the connection ([`Renewal`], and the [`Supervisor`] of a
//! supervised client). Calls are made in [`call`](crate::call); the
//! renewal itself is `renewal.rs`.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use mcp_protocol::result::RegisteredResultTypes;
use mcp_protocol::types::LoggingLevel;
use mcp_protocol::{Era, Notification, ProtocolVersion};
use mcp_transport::{Listener, Tap, Transport};

use crate::cache::Cache;
use crate::config::Config;
use crate::error::{ClientError, Result};
use crate::events::Events;
use crate::gating;
use crate::ids::Ids;
use crate::in_flight::InFlight;
use crate::resend::Resend;
use crate::supervision::Supervisor;
use crate::tool_schemas::{InputSchemas, OutputSchemas};
use crate::verdict::{Reached, Verdict};

/// The live state of a connected client.
pub(crate) struct Session {
    pub(crate) config: Arc<Config>,
    /// The connection; replaced when a supervised client reconnects.
    transport: RwLock<Arc<dyn Transport>>,
    pub(crate) ids: Arc<Ids>,
    verdict: RwLock<Verdict>,
    log_level: RwLock<Option<LoggingLevel>>,
    /// Client requests waiting for their answers (shared with the
    /// server-request handler, which some server requests need one for).
    pub(crate) in_flight: Arc<InFlight>,
    /// Whether the server has accepted the revision in use on this
    /// connection (a `server/discover` listing it, or any answer): from
    /// then on a request keeps no copy of its params for a `-32022` retry.
    pub(crate) version_confirmed: AtomicBool,
    pub(crate) late_discover: Arc<AtomicBool>,
    pub(crate) events: Events,
    pub(crate) cache: Arc<Cache>,
    pub(crate) output_schemas: OutputSchemas,
    pub(crate) input_schemas: InputSchemas,
    /// Which requests that may have run may be sent again.
    pub(crate) resend: Resend,
    /// What renews an expired session or an ended connection, once for
    /// every request that met it.
    pub(crate) renewal: Renewal,
    /// Restarts the connection when it ends, when the client is supervised.
    pub(crate) supervisor: Option<Supervisor>,
    /// The connection's listener, for streams that feed the same events.
    pub(crate) listener: Listener,
    /// What drops stale cache entries, for listeners of listen streams.
    pub(crate) invalidation: Tap<Notification>,
}

/// What the client makes before it connects, for the session it then
/// becomes part of: the connection must have somewhere to deliver events
/// from its first message on.
pub(crate) struct SessionParts {
    pub(crate) config: Arc<Config>,
    pub(crate) ids: Arc<Ids>,
    pub(crate) in_flight: Arc<InFlight>,
    pub(crate) late_discover: Arc<AtomicBool>,
    pub(crate) events: Events,
    pub(crate) cache: Arc<Cache>,
    pub(crate) listener: Listener,
    pub(crate) invalidation: Tap<Notification>,
    pub(crate) supervisor: Option<Supervisor>,
}

impl Session {
    pub(crate) fn new(
        parts: SessionParts,
        transport: Arc<dyn Transport>,
        verdict: Verdict,
    ) -> Self {
        let SessionParts {
            config,
            ids,
            in_flight,
            late_discover,
            events,
            cache,
            listener,
            invalidation,
            supervisor,
        } = parts;
        let log_level = config.log_level.clone();
        let version_confirmed = AtomicBool::new(verdict.reached != Reached::Saved);
        Session {
            config,
            transport: RwLock::new(transport),
            ids,
            verdict: RwLock::new(verdict),
            log_level: RwLock::new(log_level),
            in_flight,
            version_confirmed,
            late_discover,
            events,
            cache,
            listener,
            invalidation,
            output_schemas: OutputSchemas::default(),
            input_schemas: InputSchemas::default(),
            resend: Resend::default(),
            renewal: Renewal::default(),
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

    /// `e`, saying which method of which server failed.
    pub(crate) fn fail(&self, method: &str, e: impl Into<ClientError>) -> ClientError {
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
                    gating::check_always_enforced(method, &verdict.version, &verdict.capabilities)
                }
            })
        };
        checked.map_err(|k| self.fail(method, k))
    }

    /// Whether this connection restarts when it ends.
    pub(crate) fn supervised(&self) -> bool {
        self.supervisor.as_ref().is_some_and(|s| !s.is_stopped())
    }

    /// The error a supervised connection gave up with, if it did.
    pub(crate) fn supervision_failure(&self) -> Option<ClientError> {
        self.supervisor.as_ref().and_then(Supervisor::failure)
    }

    /// The result types the client reads: the tasks extension's too when
    /// it declared it.
    pub(crate) fn registered_result_types(&self) -> RegisteredResultTypes {
        if self.config.tasks {
            RegisteredResultTypes::new().with_tasks_extension()
        } else {
            RegisteredResultTypes::new()
        }
    }
}

/// What renews a connection (a legacy session re-initialized, or a
/// supervised connection restarted), shared by both: one lock, so that a
/// renewal happens once however many requests met the end; one
/// generation, bumped by each renewal, so that a request that met the end
/// under an older one finds it already renewed; one flag, so that new
/// requests wait for a renewal under way rather than go out on what it
/// replaces.
#[derive(Default)]
pub(crate) struct Renewal {
    lock: tokio::sync::Mutex<()>,
    busy: AtomicBool,
    generation: AtomicU64,
    /// URIs subscribed with `resources/subscribe`, subscribed again on a
    /// new session.
    subscribed: Mutex<BTreeSet<String>>,
}

impl Renewal {
    /// The generation a request goes out under.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Waits while a renewal runs (cheap when none does).
    pub(crate) async fn wait_while_renewing(&self) {
        if self.busy.load(Ordering::Acquire) {
            drop(self.lock.lock().await);
        }
    }

    /// Takes the renewal for a request that met the end under generation
    /// `seen`; `None` when another request has renewed it since.
    pub(crate) async fn begin(&self, seen: u64) -> Option<Renewing<'_>> {
        let held = self.lock.lock().await;
        (self.generation() == seen).then_some(Renewing {
            renewal: self,
            _held: held,
        })
    }

    pub(crate) fn subscribed(&self, uri: &str) {
        self.lock_subscribed().insert(uri.to_owned());
    }

    pub(crate) fn unsubscribed(&self, uri: &str) {
        self.lock_subscribed().remove(uri);
    }

    /// The URIs to subscribe to again on a new session.
    pub(crate) fn subscriptions(&self) -> Vec<String> {
        self.lock_subscribed().iter().cloned().collect()
    }

    fn lock_subscribed(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.subscribed.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A renewal under way: holds the lock until dropped.
pub(crate) struct Renewing<'a> {
    renewal: &'a Renewal,
    _held: tokio::sync::MutexGuard<'a, ()>,
}

impl Renewing<'_> {
    /// Makes new requests wait until the returned guard drops (however the
    /// renewal ends: a call whose timeout runs out drops it).
    pub(crate) fn busy(&self) -> Busy<'_> {
        self.renewal.busy.store(true, Ordering::Release);
        Busy(&self.renewal.busy)
    }

    /// Marks the renewal done: a new generation.
    pub(crate) fn renewed(&self) {
        self.renewal.generation.fetch_add(1, Ordering::AcqRel);
    }
}

/// Clears the busy flag when dropped.
pub(crate) struct Busy<'a>(&'a AtomicBool);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use mcp_reference_server::{FakeConfig, FakeServer};

    use super::Renewal;
    use crate::Client;

    /// One renewal for every request that met the end under a
    /// generation: a request that comes after it finds it done; the busy
    /// flag holds new requests only while it runs, however it ends.
    #[tokio::test]
    async fn a_renewal_runs_once_per_generation() {
        let renewal = Renewal::default();
        let seen = renewal.generation();
        {
            let renewing = renewal.begin(seen).await.expect("the first renews");
            let busy = renewing.busy();
            assert!(renewal.busy.load(std::sync::atomic::Ordering::Acquire));
            renewing.renewed();
            drop(busy);
        }
        assert!(!renewal.busy.load(std::sync::atomic::Ordering::Acquire));
        assert_eq!(renewal.generation(), seen + 1);
        // A request that met the same end later finds it renewed.
        assert!(renewal.begin(seen).await.is_none());
        // A renewal dropped before it is done leaves the generation, and
        // clears the flag.
        let renewing = renewal.begin(seen + 1).await.expect("a new end renews");
        let busy = renewing.busy();
        drop(busy);
        drop(renewing);
        assert!(!renewal.busy.load(std::sync::atomic::Ordering::Acquire));
        assert_eq!(renewal.generation(), seen + 1);
        renewal.wait_while_renewing().await;
    }

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
