//! Streamable HTTP over loopback: throughput at 1, 16 and 64 callers with
//! answers as JSON and as SSE, and connect time, against the reference
//! server's HTTP mode (`mcp-reference-server --http 0`).
//!
//! The limit is a bare hyper client posting the bytes our client sends over
//! stdio (the same JSON-RPC body) with the headers the era needs, on a
//! pooled connection, and reading each answer body whole without parsing.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Request};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use mcp_client::{Client, EraMode};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::bare::{Era, Template, Wire};
use crate::cases::{ClientKind, Conn, Load, Loads, Target, clients, concurrent};
use crate::report::{Connect, Report, Stats, Who};
use crate::{Result, Settings};

/// The reference server serving HTTP on a free loopback port.
pub struct HttpServer {
    _child: Child,
    /// Its MCP endpoint.
    pub url: String,
}

impl HttpServer {
    /// Starts `server --era ERA --http 0` with these extra flags and waits
    /// for the line naming its URL.
    pub async fn start(server: &Path, era: &str, extra: &[&str]) -> Result<Self> {
        let mut child = Command::new(server)
            .args(["--era", era, "--http", "0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).await?;
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .ok_or_else(|| format!("the HTTP server said {line:?}"))?
            .to_owned();
        Ok(HttpServer { _child: child, url })
    }
}

/// The bare HTTP client: one hyper client (its pool) and the headers of the
/// era's requests after the handshake.
pub struct BareHttp {
    client: HyperClient<HttpConnector, Full<Bytes>>,
    url: http::Uri,
    headers: HeaderMap,
}

/// The `_meta` key of the protocol version on modern requests.
fn meta_version(line: &str) -> Option<String> {
    let v: Value = serde_json::from_str(line).ok()?;
    let meta = v["params"]["_meta"].as_object()?;
    meta.iter()
        .find(|(k, _)| k.ends_with("protocolVersion"))
        .and_then(|(_, v)| v.as_str().map(str::to_owned))
}

/// The JSON of an answer body, whether JSON or SSE (its last `data:` line).
pub fn answer_json(body: &[u8]) -> Result<Value> {
    let text = std::str::from_utf8(body)?;
    if let Some(data) = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .rfind(|d| !d.trim().is_empty())
    {
        return Ok(serde_json::from_str(data.trim())?);
    }
    Ok(serde_json::from_str(text)?)
}

impl BareHttp {
    /// A fresh client to `url` (no connection yet) with the request
    /// headers every era sends.
    fn new(url: &str) -> Result<Self> {
        let client = HyperClient::builder(TokioExecutor::new()).build_http();
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(
            http::header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        Ok(BareHttp {
            client,
            url: url.parse()?,
            headers,
        })
    }

    /// Connects the way our client does in `era`: legacy replays its
    /// handshake lines (keeping the session id and version), modern needs
    /// nothing before a request.
    pub async fn connect(url: &str, wire: &Wire, era: Era) -> Result<Self> {
        let mut bare = Self::new(url)?;
        let captured = wire.era(era);
        match era {
            Era::Legacy => {
                for line in &captured.connect {
                    let v: Value = serde_json::from_str(line)?;
                    let method = v["method"].as_str().unwrap_or_default();
                    if method == "tools/list" {
                        break;
                    }
                    let (head, body) = bare.post_raw(line.as_bytes().to_vec().into()).await?;
                    if method == "initialize" {
                        if let Some(id) = head.get("mcp-session-id") {
                            bare.headers
                                .insert(HeaderName::from_static("mcp-session-id"), id.clone());
                        }
                        let answer = answer_json(&body)?;
                        let version = answer["result"]["protocolVersion"]
                            .as_str()
                            .ok_or_else(|| format!("initialize answered {answer}"))?;
                        bare.headers.insert(
                            HeaderName::from_static("mcp-protocol-version"),
                            HeaderValue::from_str(version)?,
                        );
                    }
                }
            }
            Era::Modern => {
                let line = captured.call.render(1, "hello");
                let version = meta_version(std::str::from_utf8(&line)?)
                    .ok_or("our modern call has no protocol version in _meta")?;
                bare.headers.insert(
                    HeaderName::from_static("mcp-protocol-version"),
                    HeaderValue::from_str(&version)?,
                );
                bare.headers.insert(
                    HeaderName::from_static("mcp-method"),
                    HeaderValue::from_static("tools/call"),
                );
                bare.headers.insert(
                    HeaderName::from_static("mcp-name"),
                    HeaderValue::from_static("echo"),
                );
            }
        }
        Ok(bare)
    }

    async fn post_raw(&self, body: Bytes) -> Result<(HeaderMap, Bytes)> {
        let mut request = Request::post(self.url.clone()).body(Full::new(body))?;
        *request.headers_mut() = self.headers.clone();
        let response = self.client.request(request).await?;
        let (parts, body) = response.into_parts();
        let bytes = body.collect().await?.to_bytes();
        if !parts.status.is_success() {
            return Err(format!(
                "the limit got {}: {}",
                parts.status,
                String::from_utf8_lossy(&bytes)
            )
            .into());
        }
        Ok((parts.headers, bytes))
    }

    /// Posts one body and reads the answer body whole.
    pub async fn post(&self, body: Bytes) -> Result<Bytes> {
        Ok(self.post_raw(body).await?.1)
    }
}

/// Bodies for the limit: the captured call, ids from `first`.
pub(crate) fn bodies(template: &Template, first: u64, count: usize) -> Vec<Bytes> {
    template
        .lines(first, count, "hello")
        .into_iter()
        .map(|mut l| {
            l.pop();
            Bytes::from(l)
        })
        .collect()
}

/// `callers` tasks posting the pre-rendered bodies until they or the time
/// run out.
pub(crate) async fn bare_concurrent(
    bare: &Arc<BareHttp>,
    callers: usize,
    bodies: Arc<Vec<Bytes>>,
    max_time: Duration,
) -> Result<Load> {
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..callers {
        let (bare, bodies, next) = (bare.clone(), bodies.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            let mut times = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= bodies.len() || start.elapsed() >= max_time {
                    break;
                }
                let t = Instant::now();
                bare.post(bodies[i].clone()).await?;
                times.push(t.elapsed());
            }
            Ok::<_, crate::BoxError>(times)
        }));
    }
    let mut times = Vec::new();
    for task in tasks {
        times.extend(task.await??);
    }
    Ok(Load {
        calls: times.len(),
        elapsed: start.elapsed(),
        times,
    })
}

/// Throughput over HTTP: per era and answer form, each contender's
/// callers in turn, 10 rounds.
pub async fn throughput(settings: &Settings, wire: &Wire, report: &mut Report) -> Result {
    let rounds = 10;
    let per_round = settings.http_calls.div_ceil(rounds);
    let time = settings.throughput_time / rounds as u32;
    for era in settings.eras() {
        for (answers, flags) in [("JSON", &["--json"][..]), ("SSE", &[][..])] {
            let server = HttpServer::start(&settings.server, era.flag(), flags).await?;
            let mut conns = Vec::new();
            for who in clients() {
                let kind = ClientKind::pinned(who, era);
                match Conn::open(kind, Target::Http(&server.url, None)).await {
                    Ok(conn) => {
                        conn.caller().echo_checked("hello").await?;
                        for _ in 0..settings.warmup {
                            conn.caller().echo("hello").await?;
                        }
                        conns.push((who, conn));
                    }
                    Err(e) => report.notes.push(format!(
                        "HTTP {} {answers}: {} could not connect: {e}",
                        era.flag(),
                        who.name()
                    )),
                }
            }
            let bare = Arc::new(BareHttp::connect(&server.url, wire, era).await?);
            let check = bare
                .post(bodies(&wire.era(era).call, 5, 1).remove(0))
                .await?;
            let answer = answer_json(&check)?;
            if answer["result"]["content"][0]["text"] != "hello" {
                return Err(format!("the HTTP limit got {answer}").into());
            }
            let mut next_id = 100_000;
            for &callers in &settings.http_callers {
                let mut loads: Vec<Loads> = (0..=conns.len()).map(|_| Loads::default()).collect();
                let mut failed = vec![false; conns.len()];
                for _ in 0..rounds {
                    for (i, (who, conn)) in conns.iter().enumerate() {
                        if failed[i] {
                            continue;
                        }
                        match concurrent(callers, per_round, time, conn.caller()).await {
                            Ok(load) => loads[i].add(load),
                            Err(e) => {
                                failed[i] = true;
                                report.notes.push(format!(
                                    "HTTP {} {answers} {callers} callers: {} failed: {e}",
                                    era.flag(),
                                    who.name()
                                ));
                            }
                        }
                    }
                    let b = Arc::new(bodies(&wire.era(era).call, next_id, per_round));
                    next_id += per_round as u64;
                    let last = loads.len() - 1;
                    loads[last].add(bare_concurrent(&bare, callers, b, time).await?);
                }
                let who = conns.iter().map(|(w, _)| *w).chain([Who::Limit]);
                for ((who, load), failed) in who.zip(loads).zip(failed.into_iter().chain([false])) {
                    if !failed {
                        report
                            .throughput
                            .push(load.row("HTTP", answers, era, callers, who));
                    }
                }
            }
            for (_, conn) in conns {
                conn.close().await?;
            }
        }
    }
    Ok(())
}

/// Connect time over HTTP (the server already running): a fresh client
/// and connection, handshake, first `tools/list` answer.
pub async fn connect(settings: &Settings, wire: &Wire, report: &mut Report) -> Result {
    let mut servers = Vec::new();
    for era in ["legacy", "modern", "dual"] {
        servers.push((era, HttpServer::start(&settings.server, era, &[]).await?));
    }
    let url = |era: &str| {
        servers
            .iter()
            .find(|(e, _)| *e == era)
            .map(|(_, s)| s.url.clone())
            .unwrap_or_default()
    };
    let mut saved = Vec::new();
    for era in ["modern", "dual"] {
        let conn = Conn::open(
            ClientKind::Ours(EraMode::Auto),
            Target::Http(&url(era), None),
        )
        .await?;
        saved.push((era, conn.ours().map(Client::verdict).ok_or("ours")?));
        conn.close().await?;
    }
    let mut cases: Vec<(ClientKind, &'static str)> = vec![
        (ClientKind::Ours(EraMode::Legacy), "legacy"),
        (ClientKind::Ours(EraMode::Modern), "modern"),
        (ClientKind::Ours(EraMode::Auto), "dual"),
    ];
    for (era, verdict) in &saved {
        cases.push((ClientKind::OursSaved(Box::new(verdict.clone())), era));
    }
    if cfg!(feature = "rmcp") {
        cases.push((ClientKind::pinned(Who::Rmcp, Era::Legacy), "legacy"));
        cases.push((ClientKind::pinned(Who::Rmcp, Era::Modern), "modern"));
    }
    let warmup = 3;
    let mut times = vec![Vec::new(); cases.len() + 2];
    let mut broken = vec![None; cases.len()];
    for round in 0..warmup + settings.connects {
        for (i, (kind, era)) in cases.iter().enumerate() {
            if broken[i].is_some() {
                continue;
            }
            let start = Instant::now();
            let outcome = async {
                let conn = Conn::open(kind.clone(), Target::Http(&url(era), None)).await?;
                let tools = conn.list_tools().await?;
                let took = start.elapsed();
                conn.close().await?;
                Ok::<_, crate::BoxError>((tools, took))
            }
            .await;
            match outcome {
                Ok((_, took)) if round >= warmup => times[i].push(vec![took]),
                Ok(_) => {}
                Err(e) => broken[i] = Some(e.to_string()),
            }
        }
        for (i, era) in Era::BOTH.into_iter().enumerate() {
            let start = Instant::now();
            let bare = BareHttp::connect(&url(era.flag()), wire, era).await?;
            // The first tools/list, as the clients' connects end.
            let list = wire.era(era).connect.last().cloned().unwrap_or_default();
            let mut bare = bare;
            if era == Era::Modern {
                bare.headers.insert(
                    HeaderName::from_static("mcp-method"),
                    HeaderValue::from_static("tools/list"),
                );
                bare.headers.remove("mcp-name");
            }
            bare.post(Bytes::from(list)).await?;
            let took = start.elapsed();
            if round >= warmup {
                times[cases.len() + i].push(vec![took]);
            }
        }
    }
    let mut times = times.into_iter();
    for (((kind, era), times), broken) in cases.into_iter().zip(times.by_ref()).zip(broken) {
        if let Some(e) = broken {
            report.notes.push(format!(
                "HTTP connect, {} {} on {era}: {e}",
                kind.who().name(),
                kind.mode_name()
            ));
            continue;
        }
        report.connect.push(Connect {
            transport: "HTTP",
            server: era,
            mode: kind.mode_name(),
            who: kind.who(),
            stats: Stats::of_rounds(times),
        });
    }
    for (era, times) in Era::BOTH.into_iter().zip(times) {
        report.connect.push(Connect {
            transport: "HTTP",
            server: era.flag(),
            mode: era.flag(),
            who: Who::Limit,
            stats: Stats::of_rounds(times),
        });
    }
    Ok(())
}
