//! The clients under test and the latency, throughput and connect cases.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_client::{Client, EraMode};
use mcp_transport_stdio::StdioCommand;
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Map, Value, json};
use tokio::io::AsyncWriteExt;
use tokio::sync::Semaphore;

use crate::bare::{Bare, Era, Wire};
use crate::report::{Connect, Latency, Report, Stats, Throughput, Who};
use crate::{Result, Settings};

/// A client to test, and how it finds the server's era.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientKind {
    /// Ours, in this mode.
    Ours(EraMode),
    /// rmcp, in this lifecycle.
    Rmcp(RmcpMode),
}

/// rmcp's three lifecycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RmcpMode {
    /// `initialize` (what `ServiceExt::serve` does).
    Initialize,
    /// `server/discover` only.
    Discover,
    /// `server/discover`, falling back to `initialize`.
    Auto,
}

impl ClientKind {
    /// Pinned to `era`.
    pub fn pinned(ours: bool, era: Era) -> Self {
        match (ours, era) {
            (true, era) => ClientKind::Ours(era.mode()),
            (false, Era::Legacy) => ClientKind::Rmcp(RmcpMode::Initialize),
            (false, Era::Modern) => ClientKind::Rmcp(RmcpMode::Discover),
        }
    }

    /// Who this is in the report.
    pub fn who(self) -> Who {
        match self {
            ClientKind::Ours(_) => Who::Ours,
            ClientKind::Rmcp(_) => Who::Rmcp,
        }
    }

    /// How it finds the era, for the report.
    pub fn mode_name(self) -> &'static str {
        match self {
            ClientKind::Ours(EraMode::Legacy) | ClientKind::Rmcp(RmcpMode::Initialize) => "legacy",
            ClientKind::Ours(EraMode::Modern) | ClientKind::Rmcp(RmcpMode::Discover) => "modern",
            _ => "auto",
        }
    }
}

/// An open connection of either client.
pub enum Conn {
    /// Ours.
    Ours(Client),
    /// rmcp's.
    Rmcp(RunningService<RoleClient, ()>),
}

/// A handle that calls `echo`, cheap to clone into tasks.
#[derive(Clone)]
pub enum Caller {
    /// Ours.
    Ours(Client),
    /// rmcp's peer.
    Rmcp(rmcp::Peer<RoleClient>),
}

impl Conn {
    /// Spawns the server with `--era server_era` and connects.
    pub async fn connect(kind: ClientKind, server: &Path, server_era: &str) -> Result<Conn> {
        match kind {
            ClientKind::Ours(mode) => {
                let command = StdioCommand::new(server).args(["--era", server_era]);
                Ok(Conn::Ours(
                    Client::builder().era(mode).connect(command).await?,
                ))
            }
            ClientKind::Rmcp(mode) => {
                let command = tokio::process::Command::new(server).configure(|c| {
                    c.args(["--era", server_era]);
                });
                let (transport, _) = TokioChildProcess::builder(command)
                    .stderr(Stdio::null())
                    .spawn()?;
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
                Ok(Conn::Rmcp(
                    ().serve_with_lifecycle(transport, lifecycle).await?,
                ))
            }
        }
    }

    /// The echo caller of this connection.
    pub fn caller(&self) -> Caller {
        match self {
            Conn::Ours(c) => Caller::Ours(c.clone()),
            Conn::Rmcp(s) => Caller::Rmcp(s.peer().clone()),
        }
    }

    /// `tools/list`, first page.
    pub async fn list_tools(&self) -> Result<usize> {
        Ok(match self {
            Conn::Ours(c) => c.list_tools().await?.tools.len(),
            Conn::Rmcp(s) => s.list_tools(None).await?.tools.len(),
        })
    }

    /// Closes the connection (the server exits).
    pub async fn close(self) -> Result {
        match self {
            Conn::Ours(c) => c.close().await,
            Conn::Rmcp(s) => {
                s.cancel().await?;
            }
        }
        Ok(())
    }
}

impl Caller {
    /// `tools/call echo {text}`, the result dropped.
    pub async fn echo(&self, text: &str) -> Result {
        match self {
            Caller::Ours(c) => {
                c.call_tool("echo", json!({ "text": text })).await?;
            }
            Caller::Rmcp(p) => {
                let mut args = Map::new();
                args.insert("text".into(), Value::String(text.to_owned()));
                p.call_tool(CallToolRequestParams::new("echo").with_arguments(args))
                    .await?;
            }
        }
        Ok(())
    }

    /// `tools/call echo {text}`, the result's text checked.
    pub async fn echo_checked(&self, text: &str) -> Result {
        let result = match self {
            Caller::Ours(c) => {
                serde_json::to_value(c.call_tool("echo", json!({ "text": text })).await?)?
            }
            Caller::Rmcp(p) => {
                let mut args = Map::new();
                args.insert("text".into(), Value::String(text.to_owned()));
                serde_json::to_value(
                    p.call_tool(CallToolRequestParams::new("echo").with_arguments(args))
                        .await?,
                )?
            }
        };
        if result["content"][0]["text"] != text {
            return Err(format!("echo answered {result}").into());
        }
        Ok(())
    }
}

/// Latency: sequential echo round trips, each client in each era.
/// The three contenders of one era, open side by side so that their rounds
/// can alternate: the machine's other load then falls on all of them alike.
struct Contenders {
    ours: Conn,
    rmcp: Conn,
    bare: Bare,
}

impl Contenders {
    async fn open(settings: &Settings, wire: &Wire, era: Era) -> Result<Self> {
        let ours =
            Conn::connect(ClientKind::pinned(true, era), &settings.server, era.flag()).await?;
        let rmcp =
            Conn::connect(ClientKind::pinned(false, era), &settings.server, era.flag()).await?;
        let mut bare = Bare::spawn(&settings.server, era)?;
        bare.replay(&wire.era(era).connect).await?;
        let check = bare
            .round_trip(&wire.era(era).call.render(999, "hello"))
            .await?;
        check_answer(check, 999)?;
        for conn in [&ours, &rmcp] {
            let caller = conn.caller();
            caller.echo_checked("hello").await?;
            for _ in 0..settings.warmup {
                caller.echo("hello").await?;
            }
        }
        Ok(Contenders { ours, rmcp, bare })
    }

    async fn close(self) -> Result {
        self.ours.close().await?;
        self.rmcp.close().await?;
        self.bare.close().await
    }
}

/// How many rounds the latency calls are split into.
const LATENCY_ROUNDS: usize = 20;
/// How many rounds the throughput calls are split into.
const THROUGHPUT_ROUNDS: usize = 10;

/// Latency: sequential echo round trips, each client in each era, in
/// alternating rounds.
pub async fn latency(settings: &Settings, wire: &Wire, report: &mut Report) -> Result {
    for era in Era::BOTH {
        let mut c = Contenders::open(settings, wire, era).await?;
        // The limit: the same request bytes, one line out, one line in.
        let lines = wire
            .era(era)
            .call
            .lines(1000, settings.warmup + settings.calls, "hello");
        for line in &lines[..settings.warmup] {
            c.bare.round_trip(line).await?;
        }
        let mut lines = lines[settings.warmup..].iter();
        let per_round = settings.calls.div_ceil(LATENCY_ROUNDS);
        let mut rounds: [Vec<Vec<Duration>>; 3] = Default::default();
        let (ours, rmcp) = (c.ours.caller(), c.rmcp.caller());
        for _ in 0..LATENCY_ROUNDS {
            for (caller, rounds) in [&ours, &rmcp].into_iter().zip(rounds.iter_mut()) {
                let mut times = Vec::with_capacity(per_round);
                for _ in 0..per_round {
                    let start = Instant::now();
                    caller.echo("hello").await?;
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
            rounds[2].push(times);
        }
        c.close().await?;
        for (who, rounds) in [Who::Ours, Who::Rmcp, Who::Limit].into_iter().zip(rounds) {
            report.latency.push(Latency {
                era,
                who,
                stats: Stats::of_rounds(rounds),
            });
        }
    }
    Ok(())
}

fn check_answer(line: &[u8], id: u64) -> Result {
    let answer: Value = serde_json::from_slice(line)?;
    if answer["id"].to_string().trim_matches('"') != id.to_string()
        || answer["result"]["content"][0]["text"] != "hello"
    {
        return Err(format!("the bare pipe got {answer}").into());
    }
    Ok(())
}

/// Calls made, the time they took, and each call's latency.
#[derive(Default)]
struct Load {
    calls: usize,
    elapsed: Duration,
    times: Vec<Duration>,
}

/// The rounds of one throughput case.
#[derive(Default)]
struct Loads {
    calls: usize,
    elapsed: Duration,
    rates: Vec<f64>,
    times: Vec<Vec<Duration>>,
}

impl Loads {
    fn add(&mut self, load: Load) {
        self.calls += load.calls;
        self.elapsed += load.elapsed;
        self.rates
            .push(load.calls as f64 / load.elapsed.as_secs_f64().max(1e-9));
        self.times.push(load.times);
    }
}

/// Throughput: N callers sharing one connection, in alternating rounds.
pub async fn throughput(settings: &Settings, wire: &Wire, report: &mut Report) -> Result {
    let rounds = THROUGHPUT_ROUNDS;
    let per_round = settings.throughput_calls.div_ceil(rounds);
    let time = settings.throughput_time / rounds as u32;
    for era in Era::BOTH {
        let mut c = Contenders::open(settings, wire, era).await?;
        let template = &wire.era(era).call;
        let mut next_id = 10_000;
        for &callers in &settings.callers {
            let mut loads: [Loads; 3] = Default::default();
            for _ in 0..rounds {
                loads[0].add(concurrent(callers, per_round, time, c.ours.caller()).await?);
                loads[1].add(concurrent(callers, per_round, time, c.rmcp.caller()).await?);
                let lines = template.lines(next_id, per_round, "hello");
                next_id += per_round as u64;
                loads[2].add(pipelined(&mut c.bare, callers, &lines).await?);
            }
            for (who, load) in [Who::Ours, Who::Rmcp, Who::Limit].into_iter().zip(loads) {
                report.throughput.push(Throughput {
                    era,
                    callers,
                    who,
                    calls: load.calls,
                    elapsed: load.elapsed,
                    rates: load.rates,
                    stats: Stats::of_rounds(load.times),
                });
            }
        }
        c.close().await?;
    }
    Ok(())
}

/// `callers` tasks calling in a loop until the calls or the time run out.
async fn concurrent(
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
async fn pipelined(bare: &mut Bare, window: usize, lines: &[Vec<u8>]) -> Result<Load> {
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

/// Connect time: spawn, handshake, first `tools/list` answer; the cases
/// take turns, one connect each per round.
pub async fn connect(settings: &Settings, wire: &Wire, report: &mut Report) -> Result {
    let cases: [(ClientKind, &str); 8] = [
        (ClientKind::Ours(EraMode::Legacy), "legacy"),
        (ClientKind::Rmcp(RmcpMode::Initialize), "legacy"),
        (ClientKind::Ours(EraMode::Auto), "legacy"),
        (ClientKind::Rmcp(RmcpMode::Auto), "legacy"),
        (ClientKind::Ours(EraMode::Modern), "modern"),
        (ClientKind::Rmcp(RmcpMode::Discover), "modern"),
        (ClientKind::Ours(EraMode::Auto), "dual"),
        (ClientKind::Rmcp(RmcpMode::Auto), "dual"),
    ];
    let warmup = 3;
    let mut times = vec![Vec::new(); cases.len() + Era::BOTH.len()];
    for round in 0..warmup + settings.connects {
        for (i, &(kind, server_era)) in cases.iter().enumerate() {
            let start = Instant::now();
            let conn = Conn::connect(kind, &settings.server, server_era).await?;
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
            server: server_era,
            mode: kind.mode_name(),
            who: kind.who(),
            stats: Stats::of_rounds(times),
        });
    }
    for (era, times) in Era::BOTH.into_iter().zip(times) {
        report.connect.push(Connect {
            server: era.flag(),
            mode: era.flag(),
            who: Who::Limit,
            stats: Stats::of_rounds(times),
        });
    }
    Ok(())
}
