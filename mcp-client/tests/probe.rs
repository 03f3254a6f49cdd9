//! The era probe, row by row: every row of the design's probe table and the
//! extra cases (a late discover answer, a server that fixes its era at the
//! first message, a server that dies on the probe), as one table.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{FnConnector, FnServer, Reply, discover_result, initialize_result, legacy_after};
use mcp_client::{Client, ClientBuilder, EraMode, ErrorKind, Reached};
use mcp_protocol::{Era, ProtocolVersion};
use serde_json::json;

enum Expect {
    /// Connected in this era, reached this way, over this many connections.
    Connected(Era, Reached, usize),
    /// Failed with an error of this kind.
    Fails(fn(&ErrorKind) -> bool),
}

struct Row {
    name: &'static str,
    server: Arc<FnServer>,
    builder: fn() -> ClientBuilder,
    expect: Expect,
    /// How many `server/discover` requests reach the wire, on all
    /// connections together.
    discovers: usize,
}

/// Lets the fake server's task take in what the client queued.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(1)).await;
}

fn default_builder() -> ClientBuilder {
    Client::builder()
}

fn offers_future_version() -> ClientBuilder {
    let mut versions = ProtocolVersion::KNOWN.to_vec();
    versions.push(ProtocolVersion::new("2027-01-01"));
    Client::builder().protocol_versions(versions)
}

fn rows() -> Vec<Row> {
    vec![
        Row {
            name: "a valid DiscoverResult sharing a version: modern",
            server: legacy_after(|_| Reply::Ok(discover_result(&["2026-07-28"]))),
            builder: default_builder,
            expect: Expect::Connected(Era::Modern, Reached::Discover, 1),
            discovers: 1,
        },
        Row {
            name: "-32022 sharing a modern version: modern, discover retried once",
            server: FnServer::new(|_, r| {
                let v =
                    r.params.as_ref().unwrap()["_meta"]["io.modelcontextprotocol/protocolVersion"]
                        .as_str()
                        .unwrap()
                        .to_owned();
                if v == "2026-07-28" {
                    Reply::Ok(discover_result(&["2026-07-28"]))
                } else {
                    Reply::Err(
                        -32022,
                        "Unsupported protocol version",
                        Some(json!({"supported": ["2026-07-28"], "requested": v})),
                    )
                }
            }),
            builder: offers_future_version,
            expect: Expect::Connected(Era::Modern, Reached::DiscoverRetried, 1),
            discovers: 2,
        },
        Row {
            name: "-32022 listing only legacy versions: legacy",
            server: legacy_after(|_| {
                Reply::Err(
                    -32022,
                    "Unsupported protocol version",
                    Some(json!({"supported": ["2025-11-25", "2025-06-18"]})),
                )
            }),
            builder: default_builder,
            expect: Expect::Connected(Era::Legacy, Reached::LegacyByVersionList, 1),
            discovers: 1,
        },
        Row {
            name: "-32022 sharing no version: negotiation error naming both lists",
            server: legacy_after(|_| {
                Reply::Err(
                    -32022,
                    "Unsupported",
                    Some(json!({"supported": ["2099-01-01"]})),
                )
            }),
            builder: default_builder,
            expect: Expect::Fails(|k| {
                matches!(k, ErrorKind::Negotiation { client, server }
                    if server == &[ProtocolVersion::new("2099-01-01")] && !client.is_empty())
            }),
            discovers: 1,
        },
        Row {
            name: "-32022 listing legacy versions and modern ones the client does not know: legacy",
            server: legacy_after(|_| {
                Reply::Err(
                    -32022,
                    "Unsupported protocol version",
                    Some(json!({"supported": ["2099-01-01", "2025-11-25"]})),
                )
            }),
            builder: default_builder,
            expect: Expect::Connected(Era::Legacy, Reached::LegacyByVersionList, 1),
            discovers: 1,
        },
        Row {
            name: "-32022 listing the very version sent: retried once with it, as the design says",
            server: {
                let calls = std::sync::atomic::AtomicUsize::new(0);
                FnServer::new(move |_, r| {
                    if r.method != "server/discover" {
                        return Reply::Silent;
                    }
                    if calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                        Reply::Err(
                            -32022,
                            "Unsupported protocol version",
                            Some(json!({"supported": ["2026-07-28"], "requested": "2026-07-28"})),
                        )
                    } else {
                        Reply::Ok(discover_result(&["2026-07-28"]))
                    }
                })
            },
            builder: default_builder,
            expect: Expect::Connected(Era::Modern, Reached::DiscoverRetried, 1),
            discovers: 2,
        },
        Row {
            name: "-32020: modern, and the connect fails at once naming the header (no resend)",
            server: legacy_after(|_| {
                Reply::Err(-32020, "Header mismatch: Mcp-Method does not match", None)
            }),
            builder: default_builder,
            expect: Expect::Fails(
                |k| matches!(k, ErrorKind::HeaderMismatch { message, .. } if message.contains("Mcp-Method")),
            ),
            discovers: 1,
        },
        Row {
            name: "-32021: a typed error naming requiredCapabilities, at once (no resend)",
            server: legacy_after(|_| {
                Reply::Err(
                    -32021,
                    "Missing capability",
                    Some(json!({"requiredCapabilities": {"sampling": {}}})),
                )
            }),
            builder: default_builder,
            expect: Expect::Fails(|k| {
                matches!(k, ErrorKind::MissingClientCapability { required, .. }
                    if required == &json!({"sampling": {}}))
            }),
            discovers: 1,
        },
        Row {
            name: "-32601: legacy, same connection",
            server: legacy_after(|_| Reply::Err(-32601, "Method not found", None)),
            builder: default_builder,
            expect: Expect::Connected(
                Era::Legacy,
                Reached::LegacyAfterProbeError { code: -32601 },
                1,
            ),
            discovers: 1,
        },
        Row {
            name: "-32602: legacy, same connection",
            server: legacy_after(|_| Reply::Err(-32602, "Invalid params", None)),
            builder: default_builder,
            expect: Expect::Connected(
                Era::Legacy,
                Reached::LegacyAfterProbeError { code: -32602 },
                1,
            ),
            discovers: 1,
        },
        Row {
            name: "-32000: legacy, same connection",
            server: legacy_after(|_| Reply::Err(-32000, "Not initialized", None)),
            builder: default_builder,
            expect: Expect::Connected(
                Era::Legacy,
                Reached::LegacyAfterProbeError { code: -32000 },
                1,
            ),
            discovers: 1,
        },
        Row {
            name: "a success that is no DiscoverResult: legacy",
            server: legacy_after(|_| Reply::Ok(json!({}))),
            builder: default_builder,
            expect: Expect::Connected(Era::Legacy, Reached::LegacyAfterInvalidDiscover, 1),
            discovers: 1,
        },
        Row {
            name: "silence until the probe timer ends: legacy, same connection",
            server: legacy_after(|_| Reply::Silent),
            builder: default_builder,
            expect: Expect::Connected(Era::Legacy, Reached::LegacyAfterSilence, 1),
            discovers: 1,
        },
        Row {
            name: "the server dies on the probe: legacy on a new connection",
            server: legacy_after(|conn| {
                if conn == 0 {
                    Reply::Die("thread 'main' panicked: expected initialize")
                } else {
                    Reply::Err(-32601, "never probed twice", None)
                }
            }),
            builder: default_builder,
            expect: Expect::Connected(Era::Legacy, Reached::LegacyAfterServerDied, 2),
            discovers: 1,
        },
        Row {
            name: "initialize gets -32022 after a silent probe: modern after all",
            server: FnServer::new(|_, r| match r.method.as_str() {
                "initialize" => Reply::Err(
                    -32022,
                    "Unsupported protocol version",
                    Some(json!({"supported": ["2026-07-28"]})),
                ),
                "server/discover" if r.params.as_ref().unwrap()["_meta"].is_object() => {
                    // The first discover is lost to a slow start; the
                    // second, after the switch, is answered.
                    static SEEN: std::sync::atomic::AtomicBool =
                        std::sync::atomic::AtomicBool::new(false);
                    if SEEN.swap(true, std::sync::atomic::Ordering::SeqCst) {
                        Reply::Ok(discover_result(&["2026-07-28"]))
                    } else {
                        Reply::Silent
                    }
                }
                _ => Reply::Silent,
            }),
            builder: default_builder,
            expect: Expect::Connected(Era::Modern, Reached::ModernAfterInitializeRejected, 1),
            discovers: 2,
        },
        Row {
            name: "pinned legacy: no probe",
            server: legacy_after(|_| Reply::Die("probed!")),
            builder: || Client::builder().era(EraMode::Legacy),
            expect: Expect::Connected(Era::Legacy, Reached::PinnedLegacy, 1),
            discovers: 0,
        },
        Row {
            name: "pinned modern against a legacy-only server: NotModern, suggesting Auto",
            server: legacy_after(|_| Reply::Err(-32601, "Method not found", None)),
            builder: || Client::builder().era(EraMode::Modern),
            expect: Expect::Fails(
                |k| matches!(k, ErrorKind::NotModern { evidence } if evidence.contains("-32601")),
            ),
            discovers: 1,
        },
        Row {
            name: "a malformed answer to the probe: legacy",
            server: legacy_after(|_| Reply::Malformed),
            builder: default_builder,
            expect: Expect::Connected(Era::Legacy, Reached::LegacyAfterInvalidDiscover, 1),
            discovers: 1,
        },
        Row {
            name: "pinned modern: one discover for the capabilities",
            server: legacy_after(|_| Reply::Ok(discover_result(&["2026-07-28"]))),
            builder: || Client::builder().era(EraMode::Modern),
            expect: Expect::Connected(Era::Modern, Reached::PinnedModern, 1),
            discovers: 1,
        },
    ]
}

#[tokio::test(start_paused = true)]
async fn probe_table() {
    let mut failures = Vec::new();
    for row in rows() {
        let outcome = (row.builder)()
            .connect(FnConnector(row.server.clone()))
            .await;
        settle().await;
        let discovers = row
            .server
            .methods()
            .iter()
            .filter(|(_, m)| m == "server/discover")
            .count();
        let ok = discovers == row.discovers
            && match (&row.expect, &outcome) {
                (Expect::Connected(era, reached, conns), Ok(client)) => {
                    let v = client.verdict();
                    v.era == *era && v.reached == *reached && row.server.connections() == *conns
                }
                (Expect::Fails(check), Err(e)) => check(e.kind()),
                _ => false,
            };
        let seen = match &outcome {
            Ok(c) => format!(
                "{:?} via {:?}, {} connection(s), {discovers} discover(s)",
                c.era(),
                c.verdict().reached,
                row.server.connections()
            ),
            Err(e) => format!("error: {e}, {discovers} discover(s)"),
        };
        println!("{:<70} {}", row.name, if ok { "ok" } else { "FAILED" });
        if !ok {
            failures.push(format!("{}: got {seen}", row.name));
        }
    }
    assert!(failures.is_empty(), "rows failed:\n{}", failures.join("\n"));
}

#[tokio::test(start_paused = true)]
async fn probe_waits_its_own_timer_and_sends_no_wire_cancel() {
    let server = legacy_after(|_| Reply::Silent);
    let start = tokio::time::Instant::now();
    let client = Client::builder()
        .probe_timeout(Duration::from_secs(3))
        .connect(FnConnector(server.clone()))
        .await
        .unwrap();
    assert_eq!(start.elapsed(), Duration::from_secs(3));
    settle().await;
    let methods: Vec<String> = server.methods().into_iter().map(|(_, m)| m).collect();
    assert_eq!(
        methods,
        ["server/discover", "initialize", "notifications/initialized"],
        "the probe is not cancelled on the wire"
    );
    drop(client);
}

#[tokio::test(start_paused = true)]
async fn a_late_discover_answer_is_noted_but_changes_nothing() {
    let server =
        legacy_after(|_| Reply::Later(Duration::from_secs(15), discover_result(&["2026-07-28"])));
    let client = Client::builder()
        .connect(FnConnector(server.clone()))
        .await
        .unwrap();
    assert_eq!(client.era(), Era::Legacy);
    assert!(!client.verdict().late_discover_answer);
    tokio::time::sleep(Duration::from_secs(10)).await;
    let verdict = client.verdict();
    assert_eq!(verdict.era, Era::Legacy);
    assert!(verdict.late_discover_answer);
}

#[tokio::test(start_paused = true)]
async fn the_dead_servers_stderr_tail_is_kept() {
    let server = legacy_after(|conn| {
        if conn == 0 {
            Reply::Die("Error: unexpected method server/discover")
        } else {
            Reply::Silent
        }
    });
    let client = Client::builder()
        .connect(FnConnector(server))
        .await
        .unwrap();
    assert_eq!(
        client.verdict().probe_stderr_tail.as_deref(),
        Some("Error: unexpected method server/discover")
    );
}

#[tokio::test(start_paused = true)]
async fn closed_transport_is_fatal() {
    let err = Client::builder()
        .connect(|_h: mcp_transport::ConnectionHandlers| async {
            Err::<Arc<dyn mcp_transport::Transport>, _>(mcp_transport::TransportError::Closed)
        })
        .await
        .unwrap_err();
    assert!(matches!(
        err.kind(),
        ErrorKind::Transport(mcp_transport::TransportError::Closed)
    ));
}

/// The legacy handshake with every legacy version: the client offers the
/// newest, accepts a counter-offer it knows, and refuses one it does not.
#[tokio::test(start_paused = true)]
async fn legacy_handshake_with_every_version() {
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let server = FnServer::new(move |_, r| match r.method.as_str() {
            "initialize" => {
                let mut result = initialize_result(r);
                result["protocolVersion"] = json!(version);
                Reply::Ok(result)
            }
            _ => Reply::Err(-32601, "Method not found", None),
        });
        let client = Client::builder()
            .era(EraMode::Legacy)
            .connect(FnConnector(server.clone()))
            .await
            .unwrap();
        assert_eq!(client.protocol_version().as_str(), version);
        settle().await;
        let requests = server.requests();
        let offered = &requests[0].params.as_ref().unwrap()["protocolVersion"];
        assert_eq!(
            offered, "2025-11-25",
            "the newest legacy version is offered"
        );
        let sent = server.methods();
        assert_eq!(sent[1].1, "notifications/initialized");
    }
    let server = FnServer::new(|_, r| {
        let mut result = initialize_result(r);
        result["protocolVersion"] = json!("2023-01-01");
        Reply::Ok(result)
    });
    let err = Client::builder()
        .era(EraMode::Legacy)
        .connect(FnConnector(server.clone()))
        .await
        .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Negotiation { .. }), "{err}");
    assert!(
        !server
            .methods()
            .iter()
            .any(|(_, m)| m == "notifications/initialized"),
        "nothing more is sent after a failed negotiation"
    );
}

#[tokio::test(start_paused = true)]
async fn a_saved_verdict_skips_the_probe_and_a_stale_one_probes_again() {
    let server = legacy_after(|_| Reply::Die("probed"));
    let first = Client::builder()
        .era(EraMode::Legacy)
        .connect(FnConnector(server.clone()))
        .await
        .unwrap();
    let saved = first.verdict();
    let saved_json = serde_json::to_string(&saved).unwrap();
    let saved = serde_json::from_str(&saved_json).unwrap();
    let again = Client::builder()
        .saved_verdict(saved)
        .connect(FnConnector(server.clone()))
        .await
        .unwrap();
    assert_eq!(again.verdict().reached, Reached::Saved);
    assert!(!server.methods().iter().any(|(_, m)| m == "server/discover"));

    // The server became modern: the saved legacy verdict fails, and the
    // client probes again on a fresh connection.
    let modern = FnServer::new(|_, r| match r.method.as_str() {
        "server/discover" => Reply::Ok(discover_result(&["2026-07-28"])),
        _ => Reply::Err(-32601, "Method not found", None),
    });
    let client = Client::builder()
        .saved_verdict(first.verdict())
        .connect(FnConnector(modern.clone()))
        .await
        .unwrap();
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(modern.connections(), 2);
}

/// 2024-11-05 servers refuse a version with `-32602` and the versions they
/// support: the client retries once with one it shares.
#[tokio::test(start_paused = true)]
async fn an_invalid_params_refusal_listing_versions_is_retried_once() {
    let server = FnServer::new(|_, r| {
        let offered = r.params.as_ref().unwrap()["protocolVersion"].clone();
        if offered == "2024-11-05" {
            Reply::Ok(initialize_result(r))
        } else {
            Reply::Err(
                -32602,
                "Unsupported protocol version",
                Some(json!({"supported": ["2024-11-05"], "requested": offered})),
            )
        }
    });
    let client = Client::builder()
        .era(EraMode::Legacy)
        .connect(FnConnector(server.clone()))
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2024_11_05);
    let initializes = server
        .methods()
        .into_iter()
        .filter(|(_, m)| m == "initialize")
        .count();
    assert_eq!(initializes, 2);
}

/// A modern call refused with `-32022` whose `supported` lists the very
/// revision that was sent is retried once with it (a transient refusal),
/// not failed as a negotiation error.
#[tokio::test(start_paused = true)]
async fn a_call_refused_listing_its_own_version_is_retried_once() {
    let refused = std::sync::atomic::AtomicUsize::new(0);
    let server = FnServer::new(move |_, r| match r.method.as_str() {
        "server/discover" => Reply::Ok(discover_result(&["2026-07-28"])),
        "tools/list" if refused.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 => {
            Reply::Err(
                -32022,
                "Unsupported protocol version",
                Some(json!({"supported": ["2026-07-28"], "requested": "2026-07-28"})),
            )
        }
        "tools/list" => Reply::Ok(json!({"tools": []})),
        _ => Reply::Err(-32601, "Method not found", None),
    });
    let client = Client::builder()
        .enforce_server_capabilities(false)
        .connect(FnConnector(server.clone()))
        .await
        .unwrap();
    assert_eq!(client.era(), Era::Modern);
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.is_empty());
    let lists = server
        .methods()
        .into_iter()
        .filter(|(_, m)| m == "tools/list")
        .count();
    assert_eq!(lists, 2, "one refusal, one retry");
}

/// The `server/discover` answer read when connecting is cached by its
/// `ttlMs`: `discover()` within it asks nothing.
#[tokio::test(start_paused = true)]
async fn discover_after_connect_is_served_from_the_connect_answer() {
    let server = FnServer::new(|_, r| match r.method.as_str() {
        "server/discover" => {
            let mut result = discover_result(&["2026-07-28"]);
            result["ttlMs"] = json!(60_000);
            Reply::Ok(result)
        }
        _ => Reply::Err(-32601, "Method not found", None),
    });
    let client = Client::builder()
        .connect(FnConnector(server.clone()))
        .await
        .unwrap();
    let discovered = client.discover().await.unwrap();
    assert_eq!(
        discovered.supported_versions,
        [ProtocolVersion::V2026_07_28]
    );
    let count = || {
        server
            .methods()
            .into_iter()
            .filter(|(_, m)| m == "server/discover")
            .count()
    };
    assert_eq!(count(), 1, "discover() asked again within the ttl");
    tokio::time::sleep(Duration::from_secs(61)).await;
    client.discover().await.unwrap();
    settle().await;
    assert_eq!(count(), 2, "after the ttl it asks");
}

/// A saved modern verdict costs no round trip: nothing is sent on connect,
/// and the first call is the first message.
#[tokio::test(start_paused = true)]
async fn a_saved_modern_verdict_sends_nothing_on_connect() {
    let server = FnServer::new(|_, r| match r.method.as_str() {
        "server/discover" => Reply::Ok(discover_result(&["2026-07-28"])),
        "ping" | "tools/list" => Reply::Ok(json!({"tools": []})),
        _ => Reply::Err(-32601, "Method not found", None),
    });
    let first = Client::builder()
        .connect(FnConnector(server.clone()))
        .await
        .unwrap();
    assert_eq!(first.era(), Era::Modern);
    let saved: mcp_client::Verdict =
        serde_json::from_str(&serde_json::to_string(&first.verdict()).unwrap()).unwrap();
    let before = server.methods().len();
    let again = Client::builder()
        .saved_verdict(saved)
        .connect(FnConnector(server.clone()))
        .await
        .unwrap();
    assert_eq!(again.verdict().reached, Reached::Saved);
    assert_eq!(again.protocol_version().as_str(), "2026-07-28");
    assert_eq!(server.methods().len(), before, "nothing sent on connect");
    again.list_tools().await.unwrap();
    let sent: Vec<String> = server.methods()[before..]
        .iter()
        .map(|(_, m)| m.clone())
        .collect();
    assert_eq!(sent, ["tools/list"]);
}
