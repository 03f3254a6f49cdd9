//! Connecting: the era probe and both handshakes.
//!
//! `Auto` follows the probe table of the design row by row:
//!
//! | what the probe sees | verdict |
//! |---|---|
//! | a valid `DiscoverResult` sharing a version with the client | modern |
//! | `-32022` whose `supported` shares a modern version | modern: discover again with it, once (even the one just sent) |
//! | `-32022` listing legacy versions (and modern ones the client does not know) | legacy |
//! | `-32022` sharing no version at all | negotiation error naming both lists |
//! | `-32021` | modern, but the connect fails: the server needs a capability the client has no handler for |
//! | `-32020` | modern, but the connect fails: a header mismatch only an HTTP transport can fix |
//! | any other JSON-RPC error, or a success that is no valid `DiscoverResult` | legacy, same connection |
//! | no answer when the probe timer ends | legacy, same connection (stdio); over a transport that answers every request (HTTP), the connect fails |
//! | the server dies during the probe | legacy on a new connection (once), keeping its stderr tail |
//! | the transport is closed, or the probe cancelled | the connect fails |
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
use mcp_protocol::types::DiscoverResult;
use mcp_protocol::version::{VersionRejection, VersionRetry};
use mcp_protocol::{Era, ProtocolVersion, Request, methods};
use mcp_transport::{ConnectionHandlers, Connector, RequestOptions, Transport, TransportError};
use serde_json::{Map, Value};

use crate::config::{Config, EraMode};
use crate::envelope::envelope;
use crate::error::{ClientError, ErrorKind, Result};
use crate::handshake::{self, InitializeFailure};
use crate::ids::Ids;
use crate::server_requests::NegotiatedRevision;
use crate::trace;
use crate::verdict::{Reached, Verdict};

/// How long an unanswered probe stays pending after the probe timer gave
/// up on it, so that a late answer can still be noted.
const LATE_PROBE_WINDOW: Duration = Duration::from_secs(60);

fn not_modern(evidence: String) -> ClientError {
    ClientError::new(ErrorKind::NotModern { evidence }).with_method(methods::SERVER_DISCOVER)
}

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

    /// Sends `server/discover` under the probe timer and reads the outcome
    /// by the table in the module docs.
    async fn probe(&self, transport: &Arc<dyn Transport>, first: ProtocolVersion) -> Result<Probe> {
        let mut version = first;
        let mut retried = false;
        loop {
            let request = self.request(methods::SERVER_DISCOVER, &version, None);
            // The probe is never cancelled on the wire.
            let options = RequestOptions::new().no_wire_cancel();
            // Over HTTP a legacy server answers every POST too: silence is
            // a fault, not an era, and the probe timeout is the request's
            // own timer, which the transport holds still while an
            // authorization (a person, maybe) answers a 401.
            let every = transport.profile().answers_every_request;
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
            let outcome = tokio::select! {
                joined = &mut answer => joined.unwrap_or(Err(TransportError::Cancelled)),
                _ = tokio::time::sleep(self.config.probe_timeout), if !every => {
                    let late = self.late_discover.clone();
                    tokio::spawn(async move {
                        if let Ok(Ok(v)) = answer.await
                            && serde_json::from_value::<DiscoverResult>(v).is_ok() {
                                tracing::info!("a server/discover answer arrived after the probe timed out; the connection stays legacy");
                                late.store(true, Ordering::Relaxed);
                            }
                    });
                    return Ok(Probe::Legacy(Reached::LegacyAfterSilence));
                }
            };
            let reached = if retried {
                Reached::DiscoverRetried
            } else {
                Reached::Discover
            };
            let error = match outcome {
                Ok(value) => return Ok(self.read_discover(value, reached)),
                Err(e) => e,
            };
            match error {
                TransportError::Rpc { code, data, .. }
                    if code == error_codes::UNSUPPORTED_PROTOCOL_VERSION =>
                {
                    let rejection =
                        VersionRejection::read(data.as_ref(), &self.config.versions, !retried);
                    let supported = rejection.supported;
                    match rejection.next {
                        VersionRetry::Retry(v) => {
                            version = v;
                            retried = true;
                            continue;
                        }
                        VersionRetry::NoRetry(_) => {}
                        VersionRetry::NoneShared => {
                            if !supported.is_empty()
                                && (supported.iter().all(|v| v.era() == Era::Legacy)
                                    || self.config.best_shared(Era::Legacy, &supported).is_some())
                            {
                                // Modern revisions the client does not know
                                // beside a legacy one it does: speak legacy.
                                return Ok(Probe::Legacy(Reached::LegacyByVersionList));
                            }
                        }
                    }
                    return Err(self.negotiation(Era::Modern, supported));
                }
                TransportError::Rpc {
                    code,
                    message,
                    data,
                } if code == error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY => {
                    // Modern, but resending cannot help: a capability is
                    // declared whenever its handler is set.
                    let required = data
                        .as_ref()
                        .and_then(|d| d.get("requiredCapabilities"))
                        .cloned()
                        .unwrap_or(Value::Null);
                    return Err(ClientError::new(ErrorKind::MissingClientCapability {
                        required,
                        message,
                    })
                    .with_method(methods::SERVER_DISCOVER));
                }
                TransportError::Rpc {
                    code,
                    message,
                    data,
                } if code == error_codes::HEADER_MISMATCH => {
                    // Modern; only a transport that sends headers can fix
                    // this, by rebuilding them, so nothing is resent here.
                    return Err(
                        ClientError::new(ErrorKind::HeaderMismatch { message, data })
                            .with_method(methods::SERVER_DISCOVER),
                    );
                }
                TransportError::Rpc { code, .. } => {
                    return Ok(Probe::Legacy(Reached::LegacyAfterProbeError { code }));
                }
                TransportError::Timeout { .. } if !transport.profile().answers_every_request => {
                    return Ok(Probe::Legacy(Reached::LegacyAfterSilence));
                }
                // A malformed answer is no DiscoverResult: legacy evidence.
                TransportError::Malformed { .. } => {
                    return Ok(Probe::Legacy(Reached::LegacyAfterInvalidDiscover));
                }
                TransportError::ServerGone(info) => return Ok(Probe::Died(info.stderr_tail)),
                TransportError::Http { status, .. } if (400..500).contains(&status) => {
                    return Ok(Probe::Legacy(Reached::LegacyAfterProbeError {
                        code: i64::from(status),
                    }));
                }
                other => {
                    return Err(ClientError::from(other).with_method(methods::SERVER_DISCOVER));
                }
            }
        }
    }

    fn read_discover(&self, value: Value, reached: Reached) -> Probe {
        let Ok(discover) = serde_json::from_value::<DiscoverResult>(value) else {
            return Probe::Legacy(Reached::LegacyAfterInvalidDiscover);
        };
        if discover.supported_versions.is_empty() {
            return Probe::Legacy(Reached::LegacyAfterInvalidDiscover);
        }
        match self
            .config
            .best_shared(Era::Modern, &discover.supported_versions)
        {
            Some(v) => Probe::Modern(Box::new(discover), v, reached),
            None => Probe::Legacy(Reached::LegacyByVersionList),
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
    /// `-32022`) to learn the server's capabilities.
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
            match trace::traced_request(&*transport, request, options, &version).await {
                Ok(value) => {
                    let mut discover: DiscoverResult =
                        serde_json::from_value(value).map_err(|e| {
                            not_modern(format!(
                                "its server/discover answer is no DiscoverResult: {e}"
                            ))
                        })?;
                    if !discover.supported_versions.contains(&version) {
                        let supported = std::mem::take(&mut discover.supported_versions);
                        let rejection =
                            VersionRejection::decide(supported, &self.config.versions, !retried);
                        match rejection.next {
                            VersionRetry::Retry(v) => {
                                version = v;
                                retried = true;
                                continue;
                            }
                            VersionRetry::NoRetry(_) | VersionRetry::NoneShared => {
                                return Err(self.negotiation(Era::Modern, rejection.supported));
                            }
                        }
                    }
                    return Ok(self.established_modern(transport, discover, version, reached));
                }
                Err(TransportError::Rpc {
                    code,
                    message,
                    data,
                }) if code == error_codes::UNSUPPORTED_PROTOCOL_VERSION => {
                    let rejection =
                        VersionRejection::read(data.as_ref(), &self.config.versions, !retried);
                    match rejection.next {
                        VersionRetry::Retry(v) => {
                            version = v;
                            retried = true;
                        }
                        VersionRetry::NoneShared if !retried => {
                            return Err(self.negotiation(Era::Modern, rejection.supported));
                        }
                        // The one retry is spent: the server's refusal stands.
                        VersionRetry::NoRetry(_) | VersionRetry::NoneShared => {
                            let rejected = TransportError::Rpc {
                                code,
                                message,
                                data,
                            };
                            return Err(
                                ClientError::from(rejected).with_method(methods::SERVER_DISCOVER)
                            );
                        }
                    }
                }
                Err(TransportError::Rpc { code, message, .. })
                    if !error_codes::is_modern_only(code) =>
                {
                    return Err(not_modern(format!(
                        "it answered server/discover with error {code}: {message}"
                    )));
                }
                Err(TransportError::Malformed { detail }) => {
                    return Err(not_modern(format!(
                        "its server/discover answer is not JSON-RPC: {detail}"
                    )));
                }
                // What the probe reads as legacy (an HTTP+SSE server has no
                // POST at its URL: 404 or 405) is no modern server either.
                Err(TransportError::Http { status, .. }) if (400..500).contains(&status) => {
                    return Err(not_modern(format!(
                        "it answered server/discover with HTTP {status} and no JSON-RPC error"
                    )));
                }
                Err(e) => return Err(ClientError::from(e).with_method(methods::SERVER_DISCOVER)),
            }
        }
    }

    /// The legacy handshake: `initialize` offering the newest legacy
    /// revision, then `notifications/initialized`. `may_switch` allows the
    /// one switch to modern when `initialize` gets `-32022`.
    async fn legacy(
        &self,
        transport: Arc<dyn Transport>,
        reached: Reached,
        probe_stderr_tail: Option<String>,
        may_switch: bool,
    ) -> Result<Established> {
        let offered = self.config.offered(Era::Legacy);
        let Some(mut offer) = offered.first().cloned() else {
            return Err(self.negotiation(Era::Legacy, Vec::new()));
        };
        let mut countered = false;
        loop {
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
                Ok(result) => {
                    return Ok(Established {
                        transport,
                        discover: None,
                        verdict: Verdict {
                            era: Era::Legacy,
                            version: result.protocol_version,
                            capabilities: result.capabilities,
                            server_info: Some(result.server_info),
                            instructions: result.instructions,
                            reached,
                            probe_stderr_tail,
                            late_discover_answer: false,
                        },
                    });
                }
                Err(InitializeFailure::Refused(e)) => e,
                Err(InitializeFailure::Revision(v)) => {
                    return Err(self.negotiation(Era::Legacy, vec![v]));
                }
                Err(InitializeFailure::Failed(e)) => return Err(e),
            };
            match failure {
                TransportError::Rpc { code, data, .. }
                    if code == error_codes::UNSUPPORTED_PROTOCOL_VERSION && may_switch =>
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
                // the versions it supports.
                TransportError::Rpc {
                    code,
                    message,
                    data,
                } if code == error_codes::INVALID_PARAMS && !countered => {
                    let supported = supported_versions(data.as_ref());
                    match self.config.best_shared(Era::Legacy, &supported) {
                        Some(v) if v != offer => {
                            offer = v;
                            countered = true;
                        }
                        _ if supported.is_empty() => {
                            return Err(ClientError::from(TransportError::Rpc {
                                code,
                                message,
                                data,
                            })
                            .with_method(methods::INITIALIZE));
                        }
                        _ => return Err(self.negotiation(Era::Legacy, supported)),
                    }
                }
                other => return Err(ClientError::from(other).with_method(methods::INITIALIZE)),
            }
        }
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
