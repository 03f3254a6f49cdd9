//! The clients under test and the stdio latency, throughput and connect
//! cases.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_client::{Client, EraMode, HttpTransportBuilder, Verdict};
use mcp_transport_http::{HttpService, ProxyConfig};
use mcp_transport_stdio::StdioCommand;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::sync::Semaphore;

use crate::bare::{Bare, Era, Wire};
use crate::report::{Connect, Latency, Report, Stats, Throughput, Who};
use crate::{Result, Settings};

/// A client to test, and how it finds the server's era.
#[derive(Clone, Debug)]
pub enum ClientKind {
    /// Ours, in this mode.
    Ours(EraMode),
    /// Ours, with the verdict of an earlier connection.
    OursSaved(Box<Verdict>),
    /// rmcp, in this lifecycle.
    #[cfg(feature = "rmcp")]
    Rmcp(RmcpMode),
}

/// rmcp's three lifecycles.
#[cfg(feature = "rmcp")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RmcpMode {
    /// `initialize` (what `ServiceExt::serve` does).
    Initialize,
    /// `server/discover` only.
    Discover,
    /// `server/discover`, falling back to `initialize`.
    Auto,
}

/// The clients a run compares with the limit: ours, and rmcp when built in.
pub fn clients() -> Vec<Who> {
    let mut who = vec![Who::Ours];
    if cfg!(feature = "rmcp") {
        who.push(Who::Rmcp);
    }
    who
}

impl ClientKind {
    /// `who` pinned to `era`.
    pub fn pinned(who: Who, era: Era) -> Self {
        match (who, era) {
            #[cfg(feature = "rmcp")]
            (Who::Rmcp, Era::Legacy) => ClientKind::Rmcp(RmcpMode::Initialize),
            #[cfg(feature = "rmcp")]
            (Who::Rmcp, Era::Modern) => ClientKind::Rmcp(RmcpMode::Discover),
            (_, era) => ClientKind::Ours(era.mode()),
        }
    }

    /// Who this is in the report.
    pub fn who(&self) -> Who {
        match self {
            ClientKind::Ours(_) | ClientKind::OursSaved(_) => Who::Ours,
            #[cfg(feature = "rmcp")]
            ClientKind::Rmcp(_) => Who::Rmcp,
        }
    }

    /// How it finds the era, for the report.
    pub fn mode_name(&self) -> &'static str {
        match self {
            ClientKind::Ours(EraMode::Legacy) => "legacy",
            ClientKind::Ours(EraMode::Modern) => "modern",
            ClientKind::OursSaved(_) => "saved verdict",
            #[cfg(feature = "rmcp")]
            ClientKind::Rmcp(RmcpMode::Initialize) => "legacy",
            #[cfg(feature = "rmcp")]
            ClientKind::Rmcp(RmcpMode::Discover) => "modern",
            _ => "auto",
        }
    }
}

/// Where a connection goes.
#[derive(Clone)]
pub enum Target<'a> {
    /// The server binary spawned over stdio with `--era ERA` and these
    /// extra flags.
    Stdio(&'a Path, &'a str, &'a [String]),
    /// A Streamable HTTP endpoint; ours sends through this service (so that
    /// many clients share one pool), when given.
    Http(&'a str, Option<&'a HttpService>),
}

/// An open connection of either client.
pub enum Conn {
    /// Ours.
    Ours(Client),
    /// rmcp's.
    #[cfg(feature = "rmcp")]
    Rmcp(rmcp::service::RunningService<rmcp::service::RoleClient, ()>),
}

/// A handle that calls `echo`, cheap to clone into tasks.
#[derive(Clone)]
pub enum Caller {
    /// Ours.
    Ours(Client),
    /// rmcp's peer.
    #[cfg(feature = "rmcp")]
    Rmcp(rmcp::Peer<rmcp::service::RoleClient>),
}

/// Our HTTP transport to `url`, with no proxy (the limit has none).
pub fn our_http(url: &str, service: Option<&HttpService>) -> HttpTransportBuilder {
    let builder = HttpTransportBuilder::new(url).proxy(ProxyConfig::None);
    match service {
        Some(s) => builder.service(s.clone()),
        None => builder,
    }
}

impl Conn {
    /// Spawns the server with `--era server_era` and connects.
    pub async fn connect(kind: ClientKind, server: &Path, server_era: &str) -> Result<Conn> {
        Self::open(kind, Target::Stdio(server, server_era, &[])).await
    }

    /// Connects to `target`.
    pub async fn open(kind: ClientKind, target: Target<'_>) -> Result<Conn> {
        let ours = |mode: Option<EraMode>, saved: Option<Verdict>| {
            let mut b = Client::builder();
            if let Some(mode) = mode {
                b = b.era(mode);
            }
            if let Some(v) = saved {
                b = b.saved_verdict(v);
            }
            b
        };
        let (mode, saved) = match &kind {
            ClientKind::Ours(mode) => (Some(*mode), None),
            ClientKind::OursSaved(v) => (None, Some((**v).clone())),
            #[cfg(feature = "rmcp")]
            ClientKind::Rmcp(mode) => return rmcp_open(*mode, target).await,
        };
        let b = ours(mode, saved);
        Ok(Conn::Ours(match target {
            Target::Stdio(server, era, extra) => {
                let command = StdioCommand::new(server)
                    .args(["--era", era])
                    .args(extra.iter().map(String::as_str));
                b.connect(command).await?
            }
            Target::Http(url, service) => b.connect(our_http(url, service)).await?,
        }))
    }

    /// Our client, if this is ours.
    pub fn ours(&self) -> Option<&Client> {
        match self {
            Conn::Ours(c) => Some(c),
            #[cfg(feature = "rmcp")]
            Conn::Rmcp(_) => None,
        }
    }

    /// The echo caller of this connection.
    pub fn caller(&self) -> Caller {
        match self {
            Conn::Ours(c) => Caller::Ours(c.clone()),
            #[cfg(feature = "rmcp")]
            Conn::Rmcp(s) => Caller::Rmcp(s.peer().clone()),
        }
    }

    /// `tools/list`, first page: how many tools.
    pub async fn list_tools(&self) -> Result<usize> {
        Ok(match self {
            Conn::Ours(c) => c.list_tools().await?.items.len(),
            #[cfg(feature = "rmcp")]
            Conn::Rmcp(s) => s.list_tools(None).await?.tools.len(),
        })
    }

    /// `resources/read`: the length of the first content's blob or text.
    pub async fn read_resource(&self, uri: &str) -> Result<usize> {
        let v = match self {
            Conn::Ours(c) => serde_json::to_value(c.read_resource(uri).await?)?,
            #[cfg(feature = "rmcp")]
            Conn::Rmcp(s) => serde_json::to_value(
                s.read_resource(rmcp::model::ReadResourceRequestParams::new(uri))
                    .await?,
            )?,
        };
        let first = &v["contents"][0];
        Ok(first["blob"]
            .as_str()
            .or(first["text"].as_str())
            .map_or(0, str::len))
    }

    /// Closes the connection (the server exits).
    pub async fn close(self) -> Result {
        match self {
            Conn::Ours(c) => c.close().await,
            #[cfg(feature = "rmcp")]
            Conn::Rmcp(s) => {
                s.cancel().await?;
            }
        }
        Ok(())
    }
}

#[cfg(feature = "rmcp")]
async fn rmcp_open(mode: RmcpMode, target: Target<'_>) -> Result<Conn> {
    use rmcp::model::ProtocolVersion;
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
    use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
    let lifecycle = match mode {
        RmcpMode::Initialize => ClientLifecycleMode::Initialize,
        RmcpMode::Discover => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
        RmcpMode::Auto => ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: None,
        },
    };
    Ok(Conn::Rmcp(match target {
        Target::Stdio(server, era, extra) => {
            let command = tokio::process::Command::new(server).configure(|c| {
                c.args(["--era", era]).args(extra);
            });
            let (transport, _) = TokioChildProcess::builder(command)
                .stderr(std::process::Stdio::null())
                .spawn()?;
            ().serve_with_lifecycle(transport, lifecycle).await?
        }
        Target::Http(url, _) => {
            let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
            ().serve_with_lifecycle(transport, lifecycle).await?
        }
    }))
}

impl Caller {
    /// `tools/call echo {text}`, the result dropped.
    pub async fn echo(&self, text: &str) -> Result {
        match self {
            Caller::Ours(c) => {
                c.call_tool("echo", json!({ "text": text })).await?;
            }
            #[cfg(feature = "rmcp")]
            Caller::Rmcp(p) => {
                p.call_tool(rmcp_call("echo", text)).await?;
            }
        }
        Ok(())
    }

    /// `tools/call NAME {text}` as JSON.
    pub async fn call_value(&self, name: &str, text: &str) -> Result<Value> {
        Ok(match self {
            Caller::Ours(c) => {
                serde_json::to_value(c.call_tool(name, json!({ "text": text })).await?)?
            }
            #[cfg(feature = "rmcp")]
            Caller::Rmcp(p) => serde_json::to_value(p.call_tool(rmcp_call(name, text)).await?)?,
        })
    }

    /// `tools/call echo {text}`, the result's text checked.
    pub async fn echo_checked(&self, text: &str) -> Result {
        let result = self.call_value("echo", text).await?;
        if result["content"][0]["text"] != text {
            return Err(format!("echo answered {result}").into());
        }
        Ok(())
    }
}

/// rmcp's params of `tools/call NAME {text}`.
#[cfg(feature = "rmcp")]
pub fn rmcp_call(name: &str, text: &str) -> rmcp::model::CallToolRequestParams {
    let mut args = serde_json::Map::new();
    args.insert("text".into(), Value::String(text.to_owned()));
    rmcp::model::CallToolRequestParams::new(name.to_owned()).with_arguments(args)
}

/// The contenders of one era, open side by side so that their rounds can
/// alternate: the machine's other load then falls on all of them alike.
struct Contenders {
    /// Ours, then rmcp when built in.
    clients: Vec<(Who, Conn)>,
    bare: Bare,
}

impl Contenders {
    async fn open(settings: &Settings, wire: &Wire, era: Era) -> Result<Self> {
        let mut clients = Vec::new();
        for who in clients_list() {
            let conn =
                Conn::connect(ClientKind::pinned(who, era), &settings.server, era.flag()).await?;
            let caller = conn.caller();
            caller.echo_checked("hello").await?;
            for _ in 0..settings.warmup {
                caller.echo("hello").await?;
            }
            clients.push((who, conn));
        }
        let mut bare = Bare::spawn(&settings.server, era)?;
        bare.replay(&wire.era(era).connect).await?;
        let check = bare
            .round_trip(&wire.era(era).call.render(999, "hello"))
            .await?;
        check_answer(check, 999, "hello")?;
        Ok(Contenders { clients, bare })
    }

    async fn close(self) -> Result {
        for (_, conn) in self.clients {
            conn.close().await?;
        }
        self.bare.close().await
    }
}

fn clients_list() -> Vec<Who> {
    clients()
}

/// How many rounds the latency calls are split into.
const LATENCY_ROUNDS: usize = 20;
/// How many rounds the stdio throughput calls are split into. Many short
/// rounds pair ours with the limit closely in time: on a shared host the
/// ratio within one round still ranges from about 0.6 to 1.2, and the
/// median of 40 such ratios moves half as much from run to run as that of
/// 10 (16 callers, modern, 6 runs of 100,000 calls each: 0.70–0.81
/// against 0.64–0.86).
pub const THROUGHPUT_ROUNDS: usize = 40;

/// The latency payloads: "hello" and 16 KiB of text.
pub fn latency_payloads() -> [(&'static str, String); 2] {
    [
        ("\"hello\"", "hello".to_owned()),
        ("16 KiB", "x".repeat(16 * 1024)),
    ]
}

/// Latency: sequential echo round trips, each client in each era, in
/// alternating rounds, for each payload.
pub async fn latency(settings: &Settings, wire: &Wire, report: &mut Report) -> Result {
    for era in Era::BOTH {
        let mut c = Contenders::open(settings, wire, era).await?;
        let mut next_id = 1000;
        for (payload, text) in latency_payloads() {
            // The limit: the same request bytes, one line out, one line in.
            let lines = wire
                .era(era)
                .call
                .lines(next_id, settings.warmup + settings.calls, &text);
            next_id += lines.len() as u64;
            for line in &lines[..settings.warmup] {
                c.bare.round_trip(line).await?;
            }
            let callers: Vec<(Who, Caller)> =
                c.clients.iter().map(|(w, c)| (*w, c.caller())).collect();
            for (_, caller) in &callers {
                caller.echo_checked(&text).await?;
            }
            let mut lines = lines[settings.warmup..].iter();
            let per_round = settings.calls.div_ceil(LATENCY_ROUNDS);
            let mut rounds: Vec<Vec<Vec<Duration>>> = vec![Vec::new(); callers.len() + 1];
            for _ in 0..LATENCY_ROUNDS {
                for ((_, caller), rounds) in callers.iter().zip(rounds.iter_mut()) {
                    let mut times = Vec::with_capacity(per_round);
                    for _ in 0..per_round {
                        let start = Instant::now();
                        caller.echo(&text).await?;
                        times.push(start.elapsed());
                    }
                    rounds.push(times);
                }
                let mut times = Vec::with_capacity(per_round);
                for line in lines.by_ref().take(per_round) {
                    let start = Instant::now();
                    c.bare.round_trip(line).await?;
                    times.push(start.elapsed());
                }
                rounds.last_mut().expect("the limit").push(times);
            }
            let who = callers.iter().map(|(w, _)| *w).chain([Who::Limit]);
            for (who, rounds) in who.zip(rounds) {
                report.latency.push(Latency {
                    transport: "stdio",
                    payload,
                    era,
                    who,
                    stats: Stats::of_rounds(rounds),
                });
            }
        }
        c.close().await?;
    }
    Ok(())
}

/// Checks a bare answer line: its id, and its echoed text.
pub fn check_answer(line: &[u8], id: u64, text: &str) -> Result {
    let answer: Value = serde_json::from_slice(line)?;
    if answer["id"].to_string().trim_matches('"') != id.to_string()
        || answer["result"]["content"][0]["text"] != text
    {
        return Err(format!("the limit got {answer}").into());
    }
    Ok(())
}

/// Calls made, the time they took, and each call's latency.
#[derive(Default)]
pub struct Load {
    /// Calls made.
    pub calls: usize,
    /// Wall time.
    pub elapsed: Duration,
    /// Each call's latency.
    pub times: Vec<Duration>,
}

/// The rounds of one throughput case.
#[derive(Default)]
pub struct Loads {
    calls: usize,
    elapsed: Duration,
    rates: Vec<f64>,
    times: Vec<Vec<Duration>>,
}

impl Loads {
    /// Adds a round.
    pub fn add(&mut self, load: Load) {
        self.calls += load.calls;
        self.elapsed += load.elapsed;
        self.rates
            .push(load.calls as f64 / load.elapsed.as_secs_f64().max(1e-9));
        self.times.push(load.times);
    }

    /// The report row.
    pub fn row(
        self,
        transport: &'static str,
        answers: &'static str,
        era: Era,
        callers: usize,
        who: Who,
    ) -> Throughput {
        Throughput {
            transport,
            answers,
            era,
            callers,
            who,
            calls: self.calls,
            elapsed: self.elapsed,
            rates: self.rates,
            stats: Stats::of_rounds(self.times),
        }
    }
}

/// Throughput: N callers sharing one connection, in alternating rounds.
pub async fn throughput(settings: &Settings, wire: &Wire, report: &mut Report) -> Result {
    let rounds = THROUGHPUT_ROUNDS;
    let per_round = settings.throughput_calls.div_ceil(rounds);
    let time = settings.throughput_time / rounds as u32;
    for era in settings.eras() {
        let mut c = Contenders::open(settings, wire, era).await?;
        let template = &wire.era(era).call;
        let mut next_id = 10_000;
        for &callers in &settings.callers {
            let mut loads: Vec<Loads> = (0..=c.clients.len()).map(|_| Loads::default()).collect();
            for _ in 0..rounds {
                for (i, (who, conn)) in c.clients.iter().enumerate() {
                    let before = RoundTrace::start();
                    let load = concurrent(callers, per_round, time, conn.caller()).await?;
                    before.print(*who, &load);
                    loads[i].add(load);
                }
                let lines = template.lines(next_id, per_round, "hello");
                next_id += per_round as u64;
                let last = loads.len() - 1;
                let before = RoundTrace::start();
                let load = pipelined(&mut c.bare, callers, &lines).await?;
                before.print(Who::Limit, &load);
                loads[last].add(load);
            }
            let who = c.clients.iter().map(|(w, _)| *w).chain([Who::Limit]);
            for (who, load) in who.zip(loads) {
                report
                    .throughput
                    .push(load.row("stdio", "", era, callers, who));
            }
        }
        c.close().await?;
    }
    Ok(())
}

/// `callers` tasks calling in a loop until the calls or the time run out.
pub async fn concurrent(
    callers: usize,
    max_calls: usize,
    max_time: Duration,
    caller: Caller,
) -> Result<Load> {
    let issued = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..callers {
        let caller = caller.clone();
        let issued = issued.clone();
        tasks.push(tokio::spawn(async move {
            let mut times = Vec::new();
            while issued.fetch_add(1, Ordering::Relaxed) < max_calls && start.elapsed() < max_time {
                let t = Instant::now();
                caller.echo("hello").await?;
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

/// The limit of throughput: a writer keeping `window` requests in flight
/// (all that may go, in one write) and a reader taking the answers in order
/// (the server answers echo at once, so in order), no JSON handled on
/// either side.
pub async fn pipelined(bare: &mut Bare, window: usize, lines: &[Vec<u8>]) -> Result<Load> {
    let slots = Semaphore::new(window);
    let start = Instant::now();
    // When each request went, in nanoseconds from the start.
    let sent_at: Vec<AtomicU64> = lines.iter().map(|_| AtomicU64::new(0)).collect();
    let (stdin, stdout) = (&mut bare.stdin, &mut bare.stdout);
    let writer = async {
        let mut batch = Vec::with_capacity(window * lines.first().map_or(0, Vec::len));
        let mut next = 0;
        while next < lines.len() {
            slots.acquire().await?.forget();
            let mut take = 1;
            while next + take < lines.len()
                && slots.try_acquire().is_ok_and(|p| {
                    p.forget();
                    true
                })
            {
                take += 1;
            }
            batch.clear();
            let now = start.elapsed().as_nanos() as u64;
            for (line, at) in lines[next..next + take].iter().zip(&sent_at[next..]) {
                at.store(now, Ordering::Relaxed);
                batch.extend_from_slice(line);
            }
            stdin.write_all(&batch).await?;
            next += take;
        }
        Ok::<_, crate::BoxError>(())
    };
    let reader = async {
        let mut times = Vec::with_capacity(lines.len());
        for at in &sent_at {
            stdout.next_line().await?;
            slots.add_permits(1);
            let sent = Duration::from_nanos(at.load(Ordering::Relaxed));
            times.push(start.elapsed().saturating_sub(sent));
        }
        Ok::<_, crate::BoxError>(times)
    };
    let ((), times) = tokio::try_join!(writer, reader)?;
    Ok(Load {
        calls: times.len(),
        elapsed: start.elapsed(),
        times,
    })
}

/// Connect time over stdio: spawn, handshake, first `tools/list` answer;
/// the cases take turns, one connect each per round.
pub async fn connect(settings: &Settings, wire: &Wire, report: &mut Report) -> Result {
    // The verdicts our client reaches, saved for the saved-verdict cases.
    let mut saved = Vec::new();
    for era in ["legacy", "modern", "dual"] {
        let conn = Conn::connect(ClientKind::Ours(EraMode::Auto), &settings.server, era).await?;
        let verdict = conn.ours().map(Client::verdict).ok_or("ours")?;
        conn.close().await?;
        saved.push((era, verdict));
    }
    let mut cases: Vec<(ClientKind, &str)> = Vec::new();
    let mut add = |kind: ClientKind, era: &'static str| cases.push((kind, era));
    for (server, ours, rmcp) in [
        ("legacy", EraMode::Legacy, 0),
        ("legacy", EraMode::Auto, 2),
        ("modern", EraMode::Modern, 1),
        ("dual", EraMode::Auto, 2),
    ] {
        add(ClientKind::Ours(ours), server);
        #[cfg(feature = "rmcp")]
        add(
            ClientKind::Rmcp([RmcpMode::Initialize, RmcpMode::Discover, RmcpMode::Auto][rmcp]),
            server,
        );
        let _ = rmcp;
    }
    for (era, verdict) in &saved {
        add(ClientKind::OursSaved(Box::new(verdict.clone())), era);
    }
    let warmup = 3;
    let mut times = vec![Vec::new(); cases.len() + Era::BOTH.len()];
    for round in 0..warmup + settings.connects {
        for (i, (kind, server_era)) in cases.iter().enumerate() {
            let start = Instant::now();
            let conn = Conn::connect(kind.clone(), &settings.server, server_era).await?;
            let tools = conn.list_tools().await?;
            let took = start.elapsed();
            if tools == 0 {
                return Err("tools/list answered no tools".into());
            }
            conn.close().await?;
            if round >= warmup {
                times[i].push(vec![took]);
            }
        }
        for (i, era) in Era::BOTH.into_iter().enumerate() {
            let start = Instant::now();
            let mut bare = Bare::spawn(&settings.server, era)?;
            bare.replay(&wire.era(era).connect).await?;
            let took = start.elapsed();
            bare.close().await?;
            if round >= warmup {
                times[cases.len() + i].push(vec![took]);
            }
        }
    }
    let mut times = times.into_iter();
    for ((kind, server_era), times) in cases.into_iter().zip(times.by_ref()) {
        report.connect.push(Connect {
            transport: "stdio",
            server: server_era,
            mode: kind.mode_name(),
            who: kind.who(),
            stats: Stats::of_rounds(times),
        });
    }
    for (era, times) in Era::BOTH.into_iter().zip(times) {
        report.connect.push(Connect {
            transport: "stdio",
            server: era.flag(),
            mode: era.flag(),
            who: Who::Limit,
            stats: Stats::of_rounds(times),
        });
    }
    Ok(())
}

/// The client's own CPU time per call, at 1, 16 and 64 callers: this
/// process's user and system time over as many calls, with nothing else of
/// the bench running; beside it the server's (the bench's children), and
/// the limit's, client and server (over stdio, and over HTTP with JSON and
/// with SSE answers), so that a throughput ratio
/// can be read as a ratio of CPU spent per call. Unlike calls per second
/// it hardly moves with other load on the machine, so it shows what a
/// change to the client's per-call work is worth. Printed, not reported.
pub async fn cpu_per_call(settings: &Settings, wire: &Wire) -> Result {
    for era in Era::BOTH {
        let conn = Conn::connect(
            ClientKind::pinned(Who::Ours, era),
            &settings.server,
            era.flag(),
        )
        .await?;
        cpu_of(settings, &format!("stdio, {era:?}"), &conn).await?;
        conn.close().await?;
        limit_cpu(settings, wire, era).await?;
    }
    for (answers, flags) in [("JSON answers", &["--json"][..]), ("SSE answers", &[][..])] {
        for era in Era::BOTH {
            let server =
                crate::http::HttpServer::start(&settings.server, era.flag(), flags).await?;
            let conn = Conn::open(
                ClientKind::pinned(Who::Ours, era),
                Target::Http(&server.url, None),
            )
            .await?;
            cpu_of(settings, &format!("HTTP ({answers}), {era:?}"), &conn).await?;
            conn.close().await?;
            limit_http_cpu(wire, era, &server.url, answers).await?;
        }
    }
    Ok(())
}

/// The limit's CPU per call over HTTP (the bare hyper client, and the
/// server serving it), at 1, 16 and 64 callers.
async fn limit_http_cpu(wire: &Wire, era: Era, url: &str, answers: &str) -> Result {
    let bare = std::sync::Arc::new(crate::http::BareHttp::connect(url, wire, era).await?);
    for callers in [1, 16, 64] {
        let name = format!("HTTP ({answers}), {era:?}, {callers} callers, limit");
        if !picked(&name) {
            continue;
        }
        let bodies = std::sync::Arc::new(crate::http::bodies(
            &wire.era(era).call,
            1_000_000 + callers as u64 * CPU_CALLS as u64,
            CPU_CALLS,
        ));
        let before = Usage::now();
        let opened = tcp_active_opens();
        crate::memory::count_allocations(true);
        let allocations = crate::memory::allocations();
        let load =
            crate::http::bare_concurrent(&bare, callers, bodies, Duration::from_secs(60)).await?;
        crate::memory::count_allocations(false);
        let allocations = crate::memory::allocations() - allocations;
        let spent = before.per_call_since(&load);
        let opened = tcp_active_opens() - opened;
        eprintln!(
            "cpu per call, {name}: {:.2} µs, server {:.2} µs ({} calls, {:.0} calls/s, \
             {opened} TCP connections opened); \
             per call: {:.2} context switches, {:.1} allocations",
            spent.cpu_micros,
            spent.server_micros,
            load.calls,
            spent.rate,
            spent.switches,
            allocations as f64 / load.calls as f64,
        );
    }
    Ok(())
}

/// Prints the client's CPU time, system calls, context switches and
/// allocations per call on `conn`, at 1, 16 and 64 callers.
async fn cpu_of(settings: &Settings, label: &str, conn: &Conn) -> Result {
    let caller = conn.caller();
    for _ in 0..settings.warmup {
        caller.echo("hello").await?;
    }
    for callers in [1, 16, 64] {
        let name = format!("{label}, {callers} callers");
        if !picked(&name) {
            continue;
        }
        let before = Usage::now();
        let opened = tcp_active_opens();
        crate::memory::count_allocations(true);
        let allocations = crate::memory::allocations();
        let sizes = crate::memory::allocations_by_size();
        let load = concurrent(callers, CPU_CALLS, Duration::from_secs(60), caller.clone()).await?;
        crate::memory::count_allocations(false);
        let allocations = crate::memory::allocations() - allocations;
        let sizes: Vec<String> = crate::memory::allocations_by_size()
            .into_iter()
            .zip(sizes)
            .filter(|((_, after), (_, before))| after > before)
            .map(|((size, after), (_, before))| {
                format!("{size}: {:.2}", (after - before) as f64 / load.calls as f64)
            })
            .collect();
        let spent = before.per_call_since(&load);
        let opened = tcp_active_opens() - opened;
        // Sockets are written with `send` and read with `recv`, which
        // `/proc/self/io` does not count: over HTTP these two say little.
        eprintln!(
            "cpu per call, {name}: {:.2} µs, server {:.2} µs ({} calls, {:.0} calls/s, \
             {opened} TCP connections opened); \
             per call: {:.2} writes, {:.2} reads, {:.2} context switches, \
             {:.1} allocations (the bench's own included; by size from: {})",
            spent.cpu_micros,
            spent.server_micros,
            load.calls,
            spent.rate,
            spent.writes,
            spent.reads,
            spent.switches,
            allocations as f64 / load.calls as f64,
            sizes.join(", "),
        );
    }
    Ok(())
}

/// The calls each case of the `cpu` row makes.
const CPU_CALLS: usize = 50_000;

/// The limit's CPU per call over stdio (the bare pipe, and the server
/// serving it), at 1, 16 and 64 requests in flight: the floor the client's
/// figures compare with.
async fn limit_cpu(settings: &Settings, wire: &Wire, era: Era) -> Result {
    let mut bare = Bare::spawn(&settings.server, era)?;
    bare.replay(&wire.era(era).connect).await?;
    let template = &wire.era(era).call;
    for window in [1, 16, 64] {
        let name = format!("stdio, {era:?}, {window} callers, limit");
        if !picked(&name) {
            continue;
        }
        let lines = template.lines(1_000_000, CPU_CALLS, "hello");
        let before = Usage::now();
        let load = pipelined(&mut bare, window, &lines).await?;
        let spent = before.per_call_since(&load);
        eprintln!(
            "cpu per call, {name}: {:.2} µs, server {:.2} µs ({} calls, {:.0} calls/s); \
             per call: {:.2} writes, {:.2} reads, {:.2} context switches",
            spent.cpu_micros,
            spent.server_micros,
            load.calls,
            spent.rate,
            spent.writes,
            spent.reads,
            spent.switches,
        );
    }
    bare.close().await
}

/// Whether the `cpu` case `name` runs: `MCP_BENCH_CPU="stdio, modern, 16"`
/// (a part of the case's name) keeps only the matching cases, to profile
/// one of them alone.
fn picked(name: &str) -> bool {
    match std::env::var("MCP_BENCH_CPU") {
        Ok(only) => name.to_lowercase().contains(&only.to_lowercase()),
        Err(_) => true,
    }
}

/// The CPU time, user and system, of this process's live children (the
/// servers), summed from `/proc` (zero where there is none).
fn children_cpu_time() -> Duration {
    let me = std::process::id().to_string();
    // SAFETY: sysconf only reads a constant of the system.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let mut total = 0.0;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // The fields after the command's name, which is in parentheses.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // rest[0] is the state (field 3): ppid is field 4, utime 14, stime 15.
        if fields.get(1) != Some(&me.as_str()) {
            continue;
        }
        let field = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        total += field(11) + field(12);
    }
    Duration::from_secs_f64(total / ticks)
}

/// A counter of this process's system calls from `/proc/self/io`
/// (`syscr`: reads, `syscw`: writes; 0 where there is none).
fn syscalls(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .ok()
        .and_then(|io| {
            io.lines()
                .find_map(|l| l.strip_prefix(field)?.strip_prefix(": ")?.parse().ok())
        })
        .unwrap_or(0)
}

/// TCP connections opened on this machine so far (`ActiveOpens` in
/// `/proc/net/snmp`; 0 where there is none).
fn tcp_active_opens() -> u64 {
    let Ok(snmp) = std::fs::read_to_string("/proc/net/snmp") else {
        return 0;
    };
    let mut tcp = snmp.lines().filter(|l| l.starts_with("Tcp:"));
    let (Some(names), Some(values)) = (tcp.next(), tcp.next()) else {
        return 0;
    };
    names
        .split_whitespace()
        .zip(values.split_whitespace())
        .find(|(n, _)| *n == "ActiveOpens")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
}

/// This process's context switches, voluntary and not.
fn switches() -> u64 {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    (usage.ru_nvcsw + usage.ru_nivcsw) as u64
}

/// This process's user plus system CPU time.
fn cpu_time() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// What this process and its servers had spent at one moment: CPU time,
/// write and read system calls, context switches. The `cpu` row and the
/// round trace both report the difference over a load, per call.
#[derive(Clone, Copy)]
struct Usage {
    cpu: Duration,
    servers: Duration,
    writes: u64,
    reads: u64,
    switches: u64,
}

/// [`Usage`] spent over a load, per call, and the load's rate.
struct PerCall {
    cpu_micros: f64,
    server_micros: f64,
    writes: f64,
    reads: f64,
    switches: f64,
    /// Calls per second.
    rate: f64,
}

impl Usage {
    fn now() -> Self {
        Usage {
            cpu: cpu_time(),
            servers: children_cpu_time(),
            writes: syscalls("syscw"),
            reads: syscalls("syscr"),
            switches: switches(),
        }
    }

    /// What was spent since `self`, per call of `load`.
    fn per_call_since(self, load: &Load) -> PerCall {
        let now = Usage::now();
        let calls = load.calls.max(1) as f64;
        let micros = |after: Duration, before: Duration| {
            after.saturating_sub(before).as_secs_f64() * 1e6 / calls
        };
        let count = |after: u64, before: u64| after.saturating_sub(before) as f64 / calls;
        PerCall {
            cpu_micros: micros(now.cpu, self.cpu),
            server_micros: micros(now.servers, self.servers),
            writes: count(now.writes, self.writes),
            reads: count(now.reads, self.reads),
            switches: count(now.switches, self.switches),
            rate: load.calls as f64 / load.elapsed.as_secs_f64().max(1e-9),
        }
    }
}

/// A profiling aid for the stdio throughput rows: with `MCP_BENCH_TRACE`
/// set, each round prints its contender's rate and, per call, the CPU time
/// of this process and of the servers, context switches, and write and
/// read system calls. A row's spread shows here round by round.
struct RoundTrace(Option<Usage>);

impl RoundTrace {
    fn start() -> Self {
        RoundTrace(std::env::var_os("MCP_BENCH_TRACE").map(|_| Usage::now()))
    }

    fn print(self, who: Who, load: &Load) {
        let Some(before) = self.0 else {
            return;
        };
        let spent = before.per_call_since(load);
        eprintln!(
            "round {:<5} {:>7.0} calls/s; per call: {:.2} µs, server {:.2} µs, \
             {:.2} context switches, {:.2} writes, {:.2} reads",
            who.name(),
            spent.rate,
            spent.cpu_micros,
            spent.server_micros,
            spent.switches,
            spent.writes,
            spent.reads,
        );
    }
}
