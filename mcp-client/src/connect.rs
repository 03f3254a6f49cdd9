//! Connecting: the era probe and both handshakes.
//!
//! `Auto` follows the probe table of the design row by row.
//! [`probe::next`] is this table as a function, and the
//! test of each row (in `probe.rs`) is named in its last column; the probe
//! itself only sends, waits and carries out the step:
//!
//! | what the probe sees | step | test |
//! |---|---|---|
//! | a `DiscoverResult` sharing a modern revision with the client | [`probe::Step::Modern`] (reached by `Discover`, or `DiscoverRetried` after the retry) | `discover_sharing_a_modern_revision` |
//! | a `DiscoverResult` whose list shares none | [`probe::Step::Legacy`] (`LegacyByVersionList`) | `discover_sharing_no_modern_revision` |
//! | a success that is no valid `DiscoverResult`, or lists no revision; an answer that is not JSON-RPC | [`probe::Step::Legacy`] (`LegacyAfterInvalidDiscover`) | `no_valid_discover_result` |
//! | `-32022` whose `supported` shares a modern revision, no retry made | [`probe::Step::Retry`] with it, once (even the one just sent) | `rejected_sharing_a_modern_revision` |
//! | the same after the retry | [`probe::Step::NoSharedVersion`]: a negotiation error | `rejected_again_after_the_retry` |
//! | `-32022` listing only legacy revisions, or a legacy one the client offers (beside modern ones it does not know) | [`probe::Step::Legacy`] (`LegacyByVersionList`) | `rejected_listing_legacy_revisions` |
//! | `-32022` sharing no revision at all, or listing none | [`probe::Step::NoSharedVersion`]: a negotiation error naming both lists | `rejected_sharing_nothing` |
//! | `-32021` | [`probe::Step::Fail`]: modern, but the server needs a capability the client has no handler for | `missing_client_capability` |
//! | `-32020` | [`probe::Step::Fail`]: modern, but a header mismatch only an HTTP transport can fix | `header_mismatch` |
//! | any other JSON-RPC error | [`probe::Step::Legacy`] (`LegacyAfterProbeError`), same connection | `other_json_rpc_error` |
//! | an HTTP 4xx with no JSON-RPC error (an HTTP+SSE server has no POST there) | [`probe::Step::Legacy`] (`LegacyAfterProbeError` with the status) | `http_client_error` |
//! | no answer when the probe timer ends, over a transport that does not answer every request (stdio) | [`probe::Step::Legacy`] (`LegacyAfterSilence`), same connection | `silence_where_not_every_request_is_answered` |
//! | a timeout over a transport that answers every request (HTTP) | [`probe::Step::Fail`] | `timeout_where_every_request_is_answered` |
//! | the server dies during the probe | [`probe::Step::LegacyOnNewConnection`], keeping its stderr tail | `server_died` |
//! | the transport is closed, the probe cancelled, anything else | [`probe::Step::Fail`] | `closed_cancelled_or_anything_else` |
//!
//! A client pinned to modern fails as `NotModern` on the same evidence of a
//! legacy server (a JSON-RPC error of no modern meaning, an answer that is
//! not JSON-RPC, an HTTP 4xx without a JSON-RPC body).
//!
//! The fallback never keys on one error code. If the legacy `initialize`
//! then gets `-32022`, the server is modern after all: the client switches,
//! once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_protocol::error_codes::{self, supported_versions};
use mcp_protocol::types::{DiscoverResult, InitializeResult};
use mcp_protocol::version::{VersionRejection, VersionRetry};
use mcp_protocol::{Era, ProtocolVersion, Request, methods};
use mcp_transport::{ConnectionHandlers, Connector, RequestOptions, Transport, TransportError};
use serde_json::{Map, Value};

use crate::config::{Config, EraMode};
use crate::envelope::envelope;
use crate::error::{ClientError, ErrorKind, Result};
use crate::handshake::{self, InitializeFailure};
use crate::ids::Ids;
use crate::modern_discover::{self, Discovering};
use crate::probe::{self, Probing, Seen, Step};
use crate::server_requests::NegotiatedRevision;
use crate::trace;
use crate::verdict::{Reached, Verdict};

/// How long an unanswered probe stays pending after the probe timer gave
/// up on it, so that a late answer can still be noted.
const LATE_PROBE_WINDOW: Duration = Duration::from_secs(60);

/// A connection and what was learned on it.
pub(crate) struct Established {
    pub(crate) transport: Arc<dyn Transport>,
    pub(crate) verdict: Verdict,
    /// The `server/discover` result that was read (modern), for the cache:
    /// `Client::discover` then need not ask again within its `ttlMs`.
    pub(crate) discover: Option<Value>,
}

pub(crate) struct Connecting<'a> {
    pub(crate) config: &'a Config,
    pub(crate) connector: &'a dyn Connector,
    pub(crate) handlers: ConnectionHandlers,
    pub(crate) ids: Arc<Ids>,
    pub(crate) late_discover: Arc<AtomicBool>,
    /// Told the legacy revision before `initialized` goes out, so that
    /// server requests are answered as that revision declares.
    pub(crate) negotiated: Arc<NegotiatedRevision>,
}

/// What the probe concluded.
enum Probe {
    Modern(Box<DiscoverResult>, ProtocolVersion, Reached),
    Legacy(Reached),
    Died(Option<String>),
}

impl Connecting<'_> {
    pub(crate) async fn run(&self, saved: Option<Verdict>) -> Result<Established> {
        if let Some(saved) = saved {
            match self.resume(saved).await {
                Ok(e) => return Ok(e),
                Err(e) => {
                    tracing::info!(error = %e, "a saved verdict no longer holds; probing again")
                }
            }
        }
        match self.config.mode {
            EraMode::Legacy => {
                let transport = self.open().await?;
                self.legacy(transport, Reached::PinnedLegacy, None, false)
                    .await
            }
            EraMode::Modern => {
                let transport = self.open().await?;
                let version = self.newest(Era::Modern)?;
                self.modern(transport, version, Reached::PinnedModern).await
            }
            EraMode::Auto => self.auto().await,
        }
    }

    async fn open(&self) -> Result<Arc<dyn Transport>> {
        self.connector
            .connect(self.handlers.clone())
            .await
            .map_err(ClientError::from)
    }

    fn newest(&self, era: Era) -> Result<ProtocolVersion> {
        self.config.offered(era).into_iter().next().ok_or_else(|| {
            ClientError::usage(format!(
                "the client offers no {era} protocol revision; add one to the offered versions"
            ))
        })
    }

    async fn auto(&self) -> Result<Established> {
        let transport = self.open().await?;
        let Ok(version) = self.newest(Era::Modern) else {
            return self
                .legacy(transport, Reached::LegacyByVersionList, None, true)
                .await;
        };
        match self.probe(&transport, version).await? {
            Probe::Modern(discover, version, reached) => {
                Ok(self.established_modern(transport, *discover, version, reached))
            }
            Probe::Legacy(reached) => self.legacy(transport, reached, None, true).await,
            Probe::Died(stderr_tail) => {
                tracing::info!("the server died on the era probe; starting it again for legacy");
                transport.close().await;
                let transport = self.open().await?;
                self.legacy(transport, Reached::LegacyAfterServerDied, stderr_tail, true)
                    .await
            }
        }
    }

    fn request(&self, method: &str, version: &ProtocolVersion, params: Option<Value>) -> Request {
        // Handshakes merge the shared members: they are few.
        let params = envelope(self.config, version, params, &Map::new(), None, None, false).params;
        Request::new(self.ids.next(), method, params)
    }

    /// Sends `server/discover` under the probe timer and carries out what
    /// [`probe::next`] reads from each outcome (the table in the module
    /// docs): only the I/O is here.
    async fn probe(&self, transport: &Arc<dyn Transport>, first: ProtocolVersion) -> Result<Probe> {
        let mut version = first;
        let mut probing = Probing {
            offered: &self.config.versions,
            retried: false,
            // Over HTTP a legacy server answers every POST too: silence is
            // a fault, not an era, and the probe timeout is the request's
            // own timer, which the transport holds still while an
            // authorization (a person, maybe) answers a 401.
            answers_every_request: transport.profile().answers_every_request,
        };
        loop {
            let request = self.request(methods::SERVER_DISCOVER, &version, None);
            // The probe is never cancelled on the wire.
            let options = RequestOptions::new().no_wire_cancel();
            let every = probing.answers_every_request;
            let options = if every {
                options.timeout(self.config.probe_timeout)
            } else {
                // It keeps waiting in the background a while so a late
                // answer can be noted.
                options.max_total(LATE_PROBE_WINDOW)
            };
            let mut answer = tokio::spawn(trace::traced_request(
                &**transport,
                request,
                options,
                &version,
            ));
            let seen = tokio::select! {
                joined = &mut answer => match joined.unwrap_or(Err(TransportError::Cancelled)) {
                    Ok(value) => Seen::Answer(value),
                    Err(e) => Seen::Error(e),
                },
                _ = tokio::time::sleep(self.config.probe_timeout), if !every => {
                    let late = self.late_discover.clone();
                    tokio::spawn(async move {
                        if let Ok(Ok(v)) = answer.await
                            && serde_json::from_value::<DiscoverResult>(v).is_ok() {
                                tracing::info!("a server/discover answer arrived after the probe timed out; the connection stays legacy");
                                late.store(true, Ordering::Relaxed);
                            }
                    });
                    Seen::Silence
                }
            };
            match probe::next(&probing, seen) {
                Step::Modern(discover, version, reached) => {
                    return Ok(Probe::Modern(discover, version, reached));
                }
                Step::Retry(v) => {
                    version = v;
                    probing.retried = true;
                }
                Step::Legacy(reached) => return Ok(Probe::Legacy(reached)),
                Step::LegacyOnNewConnection(stderr_tail) => return Ok(Probe::Died(stderr_tail)),
                Step::NoSharedVersion(server) => return Err(self.negotiation(Era::Modern, server)),
                Step::Fail(e) => return Err(e),
            }
        }
    }

    fn negotiation(&self, era: Era, server: Vec<ProtocolVersion>) -> ClientError {
        let client = match era {
            Era::Modern => self.config.versions.clone(),
            Era::Legacy => self.config.offered(Era::Legacy),
        };
        ClientError::new(ErrorKind::Negotiation { client, server })
    }

    fn established_modern(
        &self,
        transport: Arc<dyn Transport>,
        discover: DiscoverResult,
        version: ProtocolVersion,
        reached: Reached,
    ) -> Established {
        let server_info = discover.server_info();
        let raw = serde_json::to_value(&discover).ok();
        Established {
            discover: raw,
            transport,
            verdict: Verdict {
                era: Era::Modern,
                version,
                capabilities: discover.capabilities,
                server_info,
                instructions: discover.instructions,
                reached,
                probe_stderr_tail: None,
                late_discover_answer: false,
            },
        }
    }

    /// A modern connection: one `server/discover` (retried once on
    /// `-32022`) to learn the server's capabilities; [`modern_discover::next`]
    /// reads each outcome.
    async fn modern(
        &self,
        transport: Arc<dyn Transport>,
        first: ProtocolVersion,
        reached: Reached,
    ) -> Result<Established> {
        let mut version = first;
        let mut retried = false;
        loop {
            let request = self.request(methods::SERVER_DISCOVER, &version, None);
            let options = RequestOptions::new().timeout(self.config.request_timeout);
            let outcome = trace::traced_request(&*transport, request, options, &version).await;
            let at = Discovering {
                offered: &self.config.versions,
                version: &version,
                retried,
            };
            match modern_discover::next(&at, outcome) {
                modern_discover::Step::Done(discover) => {
                    return Ok(self.established_modern(transport, *discover, version, reached));
                }
                modern_discover::Step::Retry(v) => {
                    version = v;
                    retried = true;
                }
                modern_discover::Step::NoSharedVersion(server) => {
                    return Err(self.negotiation(Era::Modern, server));
                }
                modern_discover::Step::Fail(e) => return Err(e),
            }
        }
    }

    /// The legacy handshake: `initialize` offering the newest legacy
    /// revision, then `notifications/initialized`. `may_switch` allows the
    /// one switch to modern when `initialize` gets `-32022`; `stderr_tail`
    /// is that of a server that died on the probe.
    async fn legacy(
        &self,
        transport: Arc<dyn Transport>,
        reached: Reached,
        stderr_tail: Option<String>,
        may_switch: bool,
    ) -> Result<Established> {
        let offered = self.config.offered(Era::Legacy);
        let Some(mut offer) = offered.first().cloned() else {
            return Err(self.negotiation(Era::Legacy, Vec::new()));
        };
        let mut countered = false;
        let result = loop {
            let exchange = handshake::initialize(
                &*transport,
                self.config,
                self.ids.next(),
                &offer,
                &offered,
                |result| {
                    self.negotiated.set(result.protocol_version.clone());
                    result
                },
            );
            let failure = match exchange.await {
                Ok(result) => break result,
                Err(InitializeFailure::Refused(e)) => e,
                Err(InitializeFailure::Revision(v)) => {
                    return Err(self.negotiation(Era::Legacy, vec![v]));
                }
                Err(InitializeFailure::Failed(e)) => return Err(e),
            };
            match &failure {
                TransportError::Rpc { code, data, .. }
                    if *code == error_codes::UNSUPPORTED_PROTOCOL_VERSION && may_switch =>
                {
                    // The switch is the one retry: `modern` is entered once.
                    let rejection =
                        VersionRejection::read(data.as_ref(), &self.config.versions, true);
                    return match rejection.next {
                        VersionRetry::Retry(v) => {
                            tracing::info!(version = %v, "initialize was rejected with -32022: the server is modern");
                            self.modern(transport, v, Reached::ModernAfterInitializeRejected)
                                .await
                        }
                        VersionRetry::NoRetry(_) | VersionRetry::NoneShared => {
                            Err(self.negotiation(Era::Legacy, rejection.supported))
                        }
                    };
                }
                // 2024-11-05 rejects an unsupported version with -32602 and
                // the versions it supports: one counter-offer.
                TransportError::Rpc { code, data, .. }
                    if *code == error_codes::INVALID_PARAMS && !countered =>
                {
                    let supported = supported_versions(data.as_ref());
                    match self.config.best_shared(Era::Legacy, &supported) {
                        Some(v) if v != offer => {
                            offer = v;
                            countered = true;
                            continue;
                        }
                        _ if !supported.is_empty() => {
                            return Err(self.negotiation(Era::Legacy, supported));
                        }
                        // With no list, the server's error as it is.
                        _ => {}
                    }
                }
                _ => {}
            }
            return Err(ClientError::from(failure).with_method(methods::INITIALIZE));
        };
        Ok(legacy_established(transport, result, reached, stderr_tail))
    }

    /// Connects on a saved verdict, skipping the probe: legacy goes
    /// straight to `initialize`; modern sends nothing at all (a modern
    /// connection has no handshake, and the saved capabilities stand in for
    /// a `server/discover`). A modern server that no longer speaks the
    /// saved revision says so on the first request (`-32022`, retried with
    /// one it lists).
    async fn resume(&self, saved: Verdict) -> Result<Established> {
        let transport = self.open().await?;
        let outcome = match saved.era {
            Era::Legacy => {
                self.legacy(transport.clone(), Reached::Saved, None, false)
                    .await
            }
            Era::Modern if self.config.offered(Era::Modern).contains(&saved.version) => {
                return Ok(Established {
                    transport,
                    discover: None,
                    verdict: Verdict {
                        reached: Reached::Saved,
                        probe_stderr_tail: None,
                        late_discover_answer: false,
                        ..saved
                    },
                });
            }
            Era::Modern => {
                // The client no longer offers the saved revision: ask.
                let newest = self.newest(Era::Modern)?;
                self.modern(transport.clone(), newest, Reached::Saved).await
            }
        };
        if outcome.is_err() {
            transport.close().await;
        }
        outcome
    }
}

/// A legacy connection from the `InitializeResult` that set it up.
fn legacy_established(
    transport: Arc<dyn Transport>,
    result: InitializeResult,
    reached: Reached,
    stderr_tail: Option<String>,
) -> Established {
    Established {
        transport,
        discover: None,
        verdict: Verdict {
            era: Era::Legacy,
            version: result.protocol_version,
            capabilities: result.capabilities,
            server_info: Some(result.server_info),
            instructions: result.instructions,
            reached,
            probe_stderr_tail: stderr_tail,
            late_discover_answer: false,
        },
    }
}
