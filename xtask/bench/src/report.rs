//! What a run measured, and the Markdown it writes (`BENCHMARKS.md`).

use std::fmt::Write;
use std::time::Duration;

use crate::Settings;
use crate::bare::Era;
use crate::large::Kind;
use crate::memory::Measured;

/// Whose numbers these are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    /// `mcp-client`.
    Ours,
    /// rmcp, the official Rust SDK.
    Rmcp,
    /// A bare pipe (or bare hyper client) moving the same bytes.
    Limit,
}

impl Who {
    /// Its name in the table and in case names.
    pub fn name(self) -> &'static str {
        match self {
            Who::Ours => "ours",
            Who::Rmcp => "rmcp",
            Who::Limit => "limit",
        }
    }
}

/// Median and p99 of some durations, and the median of each round.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// The median of all samples.
    pub median: Duration,
    /// The 99th percentile of all samples.
    pub p99: Duration,
    /// The median of each round, in seconds.
    pub rounds: Vec<f64>,
}

impl Stats {
    /// Of these rounds of samples.
    pub fn of_rounds(rounds: Vec<Vec<Duration>>) -> Self {
        let medians = rounds
            .iter()
            .map(|r| quantile(r.clone(), 0.5).as_secs_f64())
            .collect();
        let all: Vec<Duration> = rounds.into_iter().flatten().collect();
        Stats {
            median: quantile(all.clone(), 0.5),
            p99: quantile(all, 0.99),
            rounds: medians,
        }
    }
}

fn quantile(mut times: Vec<Duration>, q: f64) -> Duration {
    times.sort();
    let n = times.len();
    if n == 0 {
        return Duration::ZERO;
    }
    times[((q * n as f64).ceil() as usize).clamp(1, n) - 1]
}

/// The median over rounds of `a ÷ b` in the same round: the machine's other
/// load, which changes from one moment to the next, falls on both alike.
pub fn paired(a: &[f64], b: &[f64]) -> Option<f64> {
    let mut ratios: Vec<f64> = a
        .iter()
        .zip(b)
        .filter(|(_, b)| **b > 0.0)
        .map(|(a, b)| a / b)
        .collect();
    if ratios.is_empty() {
        return None;
    }
    ratios.sort_by(f64::total_cmp);
    let n = ratios.len();
    Some(if n % 2 == 1 {
        ratios[n / 2]
    } else {
        (ratios[n / 2 - 1] + ratios[n / 2]) / 2.0
    })
}

fn times(r: Option<f64>) -> String {
    r.map_or_else(|| "–".into(), |r| format!("{r:.2}×"))
}

/// One latency case.
pub struct Latency {
    pub transport: &'static str,
    pub payload: &'static str,
    pub era: Era,
    pub who: Who,
    pub stats: Stats,
}

/// One throughput case.
pub struct Throughput {
    pub transport: &'static str,
    /// HTTP: "JSON" or "SSE"; stdio: empty.
    pub answers: &'static str,
    pub era: Era,
    pub callers: usize,
    pub who: Who,
    pub calls: usize,
    pub elapsed: Duration,
    /// Calls per second in each round.
    pub rates: Vec<f64>,
    pub stats: Stats,
}

impl Throughput {
    fn rate(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    fn same(&self, other: &Throughput) -> bool {
        self.transport == other.transport
            && self.answers == other.answers
            && self.era == other.era
            && self.callers == other.callers
    }
}

/// One memory case.
pub struct Memory {
    pub era: Era,
    pub who: Who,
    pub size: usize,
    /// The median of the runs.
    pub measured: Measured,
    /// The lowest and highest peak growth of the runs.
    pub growth_range: (u64, u64),
}

/// One large-result case (medians of the runs).
pub struct Large {
    pub kind: Kind,
    pub era: Era,
    pub who: Who,
    pub heap: u64,
    pub growth: u64,
    pub wall: Duration,
    /// The answer's bytes on the wire (the limit's rows only).
    pub answer_bytes: u64,
    /// The heap of the answer parsed to a `Value` (the limit's rows only).
    pub parsed: u64,
}

/// One connect case.
pub struct Connect {
    pub transport: &'static str,
    /// The server's `--era`.
    pub server: &'static str,
    /// How the client found the era.
    pub mode: &'static str,
    pub who: Who,
    pub stats: Stats,
}

/// One many-idle-connections case.
pub struct Idle {
    pub transport: &'static str,
    pub era: Era,
    pub who: Who,
    pub connections: usize,
    pub heap_per_connection: f64,
    pub tasks_per_connection: f64,
    pub connect_each: Duration,
    pub call_median: Duration,
    /// How far the paused clock ran on while the connections were idle:
    /// zero when none has a timer armed.
    pub clock_ran_on: Duration,
    /// Blocks of 4 KiB and more added per connection, by size.
    pub big: String,
}

/// One micro-benchmark: seconds per operation in each round.
pub struct Micro {
    pub what: String,
    pub floor_is: &'static str,
    pub ours: Vec<f64>,
    pub floor: Vec<f64>,
}

impl Micro {
    /// A row.
    pub fn new(what: String, floor_is: &'static str, ours: Vec<f64>, floor: Vec<f64>) -> Self {
        Micro {
            what,
            floor_is,
            ours,
            floor,
        }
    }
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or_default()
}

/// Everything one run measured.
#[derive(Default)]
pub struct Report {
    /// The load average when the run started.
    pub load_before: String,
    /// What our client sends, per era.
    pub wire: Vec<String>,
    /// Lines our client sends on a connect with a saved verdict, before its
    /// first request, per server era.
    pub saved_verdict_lines: Vec<(&'static str, usize, usize)>,
    pub latency: Vec<Latency>,
    pub throughput: Vec<Throughput>,
    pub memory: Vec<Memory>,
    pub large: Vec<Large>,
    pub connect: Vec<Connect>,
    pub idle: Vec<Idle>,
    pub micro: Vec<Micro>,
    /// What failed or could not be measured.
    pub notes: Vec<String>,
    /// How long the run took.
    pub took: Duration,
    /// Whether a row failed.
    pub failed: bool,
}

/// The 1-minute load average, from `/proc/loadavg`.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

fn us(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us >= 10_000.0 {
        format!("{:.1} ms", us / 1000.0)
    } else if us >= 10.0 {
        format!("{us:.0} µs")
    } else {
        format!("{us:.2} µs")
    }
}

/// A span of (possibly virtual) time that may run to hours: `0 s` when none.
fn seconds(d: Duration) -> String {
    if d.is_zero() {
        "0 s".into()
    } else if d < Duration::from_secs(1) {
        us(d)
    } else {
        format!("{:.0} s", d.as_secs_f64())
    }
}

fn ratio(a: f64, b: Option<f64>) -> String {
    match b {
        Some(b) if b > 0.0 => format!("{:.2}×", a / b),
        _ => "–".into(),
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// A size for prose: "8 MiB", "16 KiB", "300 B".
pub fn size(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} B")
    }
}

/// This machine: CPU model, cores, memory, kernel.
fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown CPU".to_owned(), |(_, m)| m.trim().to_owned());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or("?".to_owned(), |kb| {
            format!("{:.1} GiB", kb as f64 / 1048576.0)
        });
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map_or("?".to_owned(), |k| k.trim().to_owned());
    format!("{model}, {cores} CPUs available (nproc), {mem} of memory, Linux {kernel}")
}

/// Today's date in UTC, from the system clock.
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // Days to a civil date (Howard Hinnant's algorithm).
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let (h, min) = ((secs % 86_400) / 3600, (secs % 3600) / 60);
    format!("{y:04}-{m:02}-{d:02} {h:02}:{min:02} UTC")
}

/// The commit measured, and whether the tree had changes.
fn commit() -> String {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(head) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{head} (with uncommitted changes)")
            } else {
                head
            }
        }
        None => "unknown".into(),
    }
}

/// One target's verdict.
struct Target {
    what: String,
    measured: String,
    met: Option<bool>,
}

impl Report {
    /// The report as Markdown.
    pub fn markdown(&self, settings: &Settings) -> String {
        let mut s = String::new();
        let _ = self.write(&mut s, settings);
        s
    }

    fn latency_ratio(&self, row: &Latency, who: Who) -> Option<f64> {
        self.latency
            .iter()
            .find(|r| {
                r.transport == row.transport
                    && r.payload == row.payload
                    && r.era == row.era
                    && r.who == who
            })
            .and_then(|r| paired(&row.stats.rounds, &r.stats.rounds))
    }

    fn throughput_ratio(&self, row: &Throughput, who: Who) -> Option<f64> {
        self.throughput
            .iter()
            .find(|r| r.same(row) && r.who == who)
            .and_then(|r| paired(&row.rates, &r.rates))
    }

    fn large_find(&self, row: &Large, who: Who) -> Option<&Large> {
        self.large
            .iter()
            .find(|r| r.kind == row.kind && r.era == row.era && r.who == who)
    }

    fn connect_find(
        &self,
        transport: &str,
        server: &str,
        mode: &str,
        who: Who,
    ) -> Option<&Connect> {
        self.connect.iter().find(|r| {
            r.transport == transport && r.server == server && r.mode == mode && r.who == who
        })
    }

    fn write(&self, s: &mut String, settings: &Settings) -> std::fmt::Result {
        writeln!(s, "# Benchmarks\n")?;
        writeln!(
            s,
            "Written by `cargo xtask bench` (the crate `xtask/bench/`); do not edit by hand. \
             {} on {}, commit {}, in {:.0} s.\n",
            today(),
            machine(),
            commit(),
            self.took.as_secs_f64()
        )?;
        if settings.quick {
            writeln!(
                s,
                "**A `--quick` run** (CI's smoke test: tiny sizes, few rounds, no rmcp, \
                 a lightly optimised build): its figures say that every row runs, \
                 nothing about speed.\n"
            )?;
        }
        writeln!(
            s,
            "**ours** = `mcp-client` with default settings over `mcp-transport-stdio` or \
             `mcp-transport-http`; **rmcp** = rmcp {RMCP_VERSION} (the official Rust SDK) over \
             `TokioChildProcess` or its reqwest `StreamableHttpClientTransport`; **limit** = \
             the same bytes moved with no client library: over stdio a bare pipe writing \
             the request lines our client sends (captured from it through `tee`) and \
             reading answer lines, over HTTP a bare hyper client posting the same JSON \
             bodies on pooled connections and reading each answer body whole. The server \
             is always `mcp-reference-server`, built with the bench. Ratios are ours ÷ limit and \
             ours ÷ rmcp (rmcp rows: rmcp ÷ limit).\n\n\
             **Noise.** The machine is shared: other builds ran on its {} CPUs during the \
             run (load average {} at the start, {} at the end). Contenders therefore take \
             turns in rounds (ours, rmcp, limit, ours, …) on connections open side by side, \
             and every ratio is the median over rounds of the ratio within a round, so that \
             load falls on all alike; absolute figures still move from run to run.\n",
            std::thread::available_parallelism().map_or(0, |n| n.get()),
            self.load_before,
            load_average(),
        )?;
        writeln!(s, "What our client sends (and the limit replays):\n")?;
        for line in &self.wire {
            writeln!(s, "- {line}")?;
        }
        self.write_targets(s, settings)?;
        self.write_latency(s, settings)?;
        self.write_throughput(s, settings)?;
        self.write_memory(s)?;
        self.write_large(s, settings)?;
        self.write_connect(s, settings)?;
        self.write_idle(s)?;
        self.write_micro(s)?;
        if !self.notes.is_empty() {
            writeln!(s, "\n## Notes from the run\n")?;
            for note in &self.notes {
                writeln!(s, "- {}", note.replace('\n', " "))?;
            }
        }
        Ok(())
    }

    fn targets(&self) -> Vec<Target> {
        let mut out = Vec::new();
        let verdict = |ok: bool| Some(ok);
        // Latency.
        for row in self.latency.iter().filter(|r| r.who == Who::Ours) {
            if let Some(r) = self.latency_ratio(row, Who::Limit) {
                out.push(Target {
                    what: format!(
                        "{} latency ({}, {}) ≤ 1.2× limit",
                        row.transport,
                        row.payload,
                        row.era.flag()
                    ),
                    measured: format!("{r:.2}×"),
                    met: verdict(r <= 1.2),
                });
            }
        }
        // HTTP latency: one caller, the inverse of the rate ratio.
        for row in self
            .throughput
            .iter()
            .filter(|r| r.transport == "HTTP" && r.callers == 1 && r.who == Who::Ours)
        {
            if let Some(r) = self.throughput_ratio(row, Who::Limit) {
                out.push(Target {
                    what: format!(
                        "HTTP latency ({} answers, {}, one caller) ≤ 1.2× limit",
                        row.answers,
                        row.era.flag()
                    ),
                    measured: format!("{:.2}×", 1.0 / r),
                    met: verdict(1.0 / r <= 1.2),
                });
            }
        }
        // The bridge's latency: one caller, the inverse of the rate ratio.
        for row in self
            .throughput
            .iter()
            .filter(|r| r.transport == "bridge" && r.callers == 1 && r.who == Who::Ours)
        {
            if let Some(r) = self.throughput_ratio(row, Who::Limit) {
                out.push(Target {
                    what: format!(
                        "latency through the bridge ({}, one caller) ≤ 1.3× a bare relay",
                        row.era.flag()
                    ),
                    measured: format!("{:.2}×", 1.0 / r),
                    met: verdict(1.0 / r <= 1.3),
                });
            }
        }
        // Throughput.
        for row in self
            .throughput
            .iter()
            .filter(|r| r.who == Who::Ours && r.callers >= 16)
        {
            let name = if row.answers.is_empty() {
                format!(
                    "{} {} callers, {}",
                    row.transport,
                    row.callers,
                    row.era.flag()
                )
            } else {
                format!(
                    "{} ({}) {} callers, {}",
                    row.transport,
                    row.answers,
                    row.callers,
                    row.era.flag()
                )
            };
            if let Some(r) = self.throughput_ratio(row, Who::Limit) {
                let must = row.transport == "stdio" && row.callers == 16 && row.era == Era::Modern;
                out.push(Target {
                    what: format!("throughput {name} ≥ 0.75× limit"),
                    measured: format!("{r:.2}×"),
                    met: verdict(r >= 0.75),
                });
                if must {
                    out.push(Target {
                        what: format!("**MUST**: throughput {name} ≥ 0.7× limit"),
                        measured: format!("{r:.2}×"),
                        met: verdict(r >= 0.7),
                    });
                }
            }
            if let Some(r) = self.throughput_ratio(row, Who::Rmcp) {
                out.push(Target {
                    what: format!("throughput {name} ≥ 1.5× rmcp"),
                    measured: format!("{r:.2}×"),
                    met: verdict(r >= 1.5),
                });
            }
        }
        // Memory on the echo.
        for row in self.memory.iter().filter(|r| r.who == Who::Ours) {
            let r = row.measured.heap as f64 / row.size as f64;
            out.push(Target {
                what: format!(
                    "**MUST**: peak heap on the {} echo ({}) ≤ 2× payload",
                    size(row.size),
                    row.era.flag()
                ),
                measured: format!("{r:.2}×"),
                met: verdict(r <= 2.0),
            });
        }
        // Large results.
        for row in self.large.iter().filter(|r| r.who == Who::Ours) {
            let payload = self
                .large_find(row, Who::Limit)
                .map_or(0, |l| l.answer_bytes);
            if payload > 0 {
                let r = row.heap as f64 / payload as f64;
                out.push(Target {
                    what: format!(
                        "peak heap on {} ({}) ≤ 2× payload",
                        row.kind.name(),
                        row.era.flag()
                    ),
                    measured: format!("{r:.2}×"),
                    met: verdict(r <= 2.0),
                });
            }
            if let Some(rmcp) = self.large_find(row, Who::Rmcp) {
                let r = row.wall.as_secs_f64() / rmcp.wall.as_secs_f64().max(1e-9);
                out.push(Target {
                    what: format!(
                        "{} ({}) no slower than rmcp",
                        row.kind.name(),
                        row.era.flag()
                    ),
                    measured: format!("{r:.2}× rmcp's wall time"),
                    met: verdict(r <= 1.0),
                });
            }
        }
        // Saved verdict.
        for &(era, lines, pinned_lines) in &self.saved_verdict_lines {
            out.push(Target {
                what: format!(
                    "**MUST**: a saved verdict ({era} server) costs no round trip over a pinned connect"
                ),
                measured: format!(
                    "{lines} message(s) before the first request with the saved verdict, {pinned_lines} pinned"
                ),
                met: verdict(lines <= pinned_lines),
            });
        }
        // Idle connections.
        for row in self.idle.iter().filter(|r| r.who == Who::Ours) {
            out.push(Target {
                what: format!(
                    "an idle {} connection ({}) ≤ 64 KiB of client heap",
                    row.transport,
                    row.era.flag()
                ),
                measured: format!(
                    "{:.1} KiB, {:.2} tasks",
                    row.heap_per_connection / 1024.0,
                    row.tasks_per_connection
                ),
                met: verdict(row.heap_per_connection <= 64.0 * 1024.0),
            });
        }
        for row in self.idle.iter().filter(|r| r.who == Who::Ours) {
            out.push(Target {
                what: format!(
                    "an idle {} connection ({}) arms no timer",
                    row.transport,
                    row.era.flag()
                ),
                measured: format!(
                    "paused clock ran on {} over 1 s idle",
                    seconds(row.clock_ran_on)
                ),
                met: verdict(row.clock_ran_on.is_zero()),
            });
        }
        // Parsing.
        for row in self.micro.iter().filter(|r| r.what.starts_with("parse")) {
            if let Some(r) = paired(&row.ours, &row.floor) {
                out.push(Target {
                    what: format!("{} ≤ 1.5× the `Value` floor", row.what),
                    measured: format!("{r:.2}×"),
                    met: verdict(r <= 1.5),
                });
            }
        }
        out
    }

    fn write_targets(&self, s: &mut String, _: &Settings) -> std::fmt::Result {
        let targets = self.targets();
        let met = targets.iter().filter(|t| t.met == Some(true)).count();
        let missed = targets.iter().filter(|t| t.met == Some(false)).count();
        writeln!(
            s,
            "\n## Targets\n\n{met} met, {missed} missed, {} not measurable (ratios of medians, \
             paired by round; the tables below have the figures).\n",
            targets.len() - met - missed
        )?;
        writeln!(s, "| target | measured | |")?;
        writeln!(s, "|---|---:|---|")?;
        for t in &targets {
            let v = match t.met {
                Some(true) => "met",
                Some(false) => "**missed**",
                None => "–",
            };
            writeln!(s, "| {} | {} | {v} |", t.what, t.measured)?;
        }
        Ok(())
    }

    fn write_latency(&self, s: &mut String, settings: &Settings) -> std::fmt::Result {
        writeln!(
            s,
            "\n## Latency over stdio: one `tools/call echo` round trip\n\n\
             {} sequential calls per client and payload after {} warm-up, in 20 rounds \
             taking turns on three open connections. Lower is better.\n",
            settings.calls, settings.warmup
        )?;
        writeln!(
            s,
            "| payload | era | client | median | p99 | ÷ limit | ÷ rmcp |"
        )?;
        writeln!(s, "|---|---|---|---:|---:|---:|---:|")?;
        for row in &self.latency {
            let vl = if row.who == Who::Limit {
                String::new()
            } else {
                times(self.latency_ratio(row, Who::Limit))
            };
            let vr = if row.who == Who::Ours {
                times(self.latency_ratio(row, Who::Rmcp))
            } else {
                String::new()
            };
            writeln!(
                s,
                "| {} | {} | {} | {} | {} | {vl} | {vr} |",
                row.payload,
                row.era.flag(),
                row.who.name(),
                us(row.stats.median),
                us(row.stats.p99),
            )?;
        }
        Ok(())
    }

    fn write_throughput(&self, s: &mut String, settings: &Settings) -> std::fmt::Result {
        for transport in ["stdio", "HTTP", "bridge"] {
            let rows: Vec<&Throughput> = self
                .throughput
                .iter()
                .filter(|r| r.transport == transport)
                .collect();
            if rows.is_empty() {
                continue;
            }
            if transport == "stdio" {
                writeln!(
                    s,
                    "\n## Throughput over stdio: concurrent callers on one connection\n\n\
                     Each case: up to {} calls or {:.0?}, whichever ends first, in {} rounds \
                     taking turns. Each caller is a task calling `echo` in a loop; the limit \
                     keeps as many requests in flight as there are callers, writing all that \
                     may go in one write and reading answers in order. Higher calls/s is \
                     better; latency is per call under that load.\n",
                    settings.throughput_calls,
                    settings.throughput_time,
                    crate::cases::THROUGHPUT_ROUNDS
                )?;
            } else if transport == "bridge" {
                writeln!(
                    s,
                    "\n## Through the bridge: `mcp bridge` against a bare relay\n\n\
                     The same request lines, written by the limit's own client (as many in \
                     flight as there are callers, answers read as they come), through \
                     `mcp_bridge::Bridge` serving the reference server on its stdio \
                     (\"ours\") and through a relay of two pipes copying bytes (\"limit\"): \
                     the ratio is the bridge's own cost. With one caller this is its \
                     latency. {} rounds taking turns.\n",
                    crate::cases::THROUGHPUT_ROUNDS
                )?;
            } else {
                writeln!(
                    s,
                    "\n## Throughput over HTTP (loopback)\n\n\
                     `mcp-reference-server --http 0` (two worker threads), answers as JSON \
                     (`--json`) or as SSE; one client per contender, its callers sharing it \
                     (our client and hyper open a pooled connection per concurrent request; \
                     rmcp caps concurrent POSTs at 16 by default). Up to {} calls or {:.0?} \
                     per case, 10 rounds taking turns. With one caller this is the HTTP \
                     latency.\n",
                    settings.http_calls, settings.throughput_time
                )?;
            }
            writeln!(
                s,
                "| answers | era | callers | client | calls/s | ÷ limit | ÷ rmcp | median | p99 |"
            )?;
            writeln!(s, "|---|---|---:|---|---:|---:|---:|---:|---:|")?;
            for row in rows {
                let vl = if row.who == Who::Limit {
                    String::new()
                } else {
                    times(self.throughput_ratio(row, Who::Limit))
                };
                let vr = if row.who == Who::Ours {
                    times(self.throughput_ratio(row, Who::Rmcp))
                } else {
                    String::new()
                };
                writeln!(
                    s,
                    "| {} | {} | {} | {} | {:.0} | {vl} | {vr} | {} | {} |",
                    if row.answers.is_empty() {
                        "–"
                    } else {
                        row.answers
                    },
                    row.era.flag(),
                    row.callers,
                    row.who.name(),
                    row.rate(),
                    us(row.stats.median),
                    us(row.stats.p99),
                )?;
            }
        }
        Ok(())
    }

    fn write_memory(&self, s: &mut String) -> std::fmt::Result {
        let Some(first) = self.memory.first() else {
            return Ok(());
        };
        writeln!(
            s,
            "\n## Memory on a large echo (stdio)\n\n\
             One `tools/call echo` with a text of {} (so the request carries it too), \
             each case in a fresh process, median of the runs: **peak RSS growth** is \
             the peak resident memory during the call minus the resident memory just \
             before it (arguments already built; `VmHWM` reset through `clear_refs`); \
             **peak heap** is the most live heap bytes above those before the call, \
             counted by the bench's allocator (exact, not subject to page granularity \
             or allocator caching). Payload = the text's size. Lower is better.\n",
            size(first.size)
        )?;
        writeln!(
            s,
            "| era | client | peak RSS growth (min–max) | ÷ payload | peak heap | ÷ payload | heap ÷ limit | heap ÷ rmcp | bytes on the wire |"
        )?;
        writeln!(s, "|---|---|---:|---:|---:|---:|---:|---:|---:|")?;
        for row in &self.memory {
            let find = |who: Who| {
                self.memory
                    .iter()
                    .find(|r| r.era == row.era && r.who == who)
                    .map(|r| r.measured.heap as f64)
            };
            let heap = row.measured.heap as f64;
            let vl = if row.who == Who::Limit {
                String::new()
            } else {
                ratio(heap, find(Who::Limit))
            };
            let vr = if row.who == Who::Ours {
                ratio(heap, find(Who::Rmcp))
            } else {
                String::new()
            };
            let wire = if row.who == Who::Limit {
                format!(
                    "{} out + {} in",
                    mib(row.measured.request_bytes),
                    mib(row.measured.answer_bytes)
                )
            } else {
                String::new()
            };
            writeln!(
                s,
                "| {} | {} | {} ({}–{}){} | {:.2}× | {} | {:.2}× | {vl} | {vr} | {wire} |",
                row.era.flag(),
                row.who.name(),
                mib(row.measured.growth),
                mib(row.growth_range.0),
                mib(row.growth_range.1),
                if row.measured.exact {
                    ""
                } else {
                    " (peak not reset)"
                },
                row.measured.growth as f64 / row.size as f64,
                mib(row.measured.heap),
                heap / row.size as f64,
            )?;
        }
        Ok(())
    }

    fn write_large(&self, s: &mut String, settings: &Settings) -> std::fmt::Result {
        if self.large.is_empty() {
            return Ok(());
        }
        writeln!(
            s,
            "\n## Large results (stdio)\n\n\
             One call each, in a fresh process (server started with `--blob-bytes`, \
             `--text-bytes` or `--tools`), median of {} runs: the wall time of the call \
             (request out to typed result back) and its peak heap as above; no \
             contender's server has listed its tools before (each answered the handshake, \
             and for ours and rmcp one `echo`). Payload = \
             the answer's bytes on the wire (for the blob, its base64 text), as the limit \
             read them. **parsed floor**: the heap of that answer parsed to a \
             `serde_json::Value` (limit rows), what any client that parses it holds at \
             least besides the line. Lower is better.\n",
            settings.memory_runs
        )?;
        writeln!(
            s,
            "| result | era | client | wall | ÷ limit | ÷ rmcp | peak heap | ÷ payload | peak RSS growth | payload | parsed floor |"
        )?;
        writeln!(s, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")?;
        for row in &self.large {
            let limit = self.large_find(row, Who::Limit);
            let payload = limit.map_or(0, |l| l.answer_bytes);
            let wall = row.wall.as_secs_f64();
            let vl = if row.who == Who::Limit {
                String::new()
            } else {
                ratio(wall, limit.map(|l| l.wall.as_secs_f64()))
            };
            let vr = if row.who == Who::Ours {
                ratio(
                    wall,
                    self.large_find(row, Who::Rmcp)
                        .map(|l| l.wall.as_secs_f64()),
                )
            } else {
                String::new()
            };
            writeln!(
                s,
                "| {} | {} | {} | {} | {vl} | {vr} | {} | {} | {} | {} | {} |",
                row.kind.describe(settings),
                row.era.flag(),
                row.who.name(),
                us(row.wall),
                mib(row.heap),
                ratio(row.heap as f64, Some(payload as f64)),
                mib(row.growth),
                if row.who == Who::Limit {
                    mib(payload)
                } else {
                    String::new()
                },
                if row.who == Who::Limit {
                    format!(
                        "{} ({})",
                        mib(row.parsed),
                        ratio(row.parsed as f64, Some(payload as f64))
                    )
                } else {
                    String::new()
                },
            )?;
        }
        Ok(())
    }

    fn write_connect(&self, s: &mut String, settings: &Settings) -> std::fmt::Result {
        writeln!(
            s,
            "\n## Connect\n\n\
             Over stdio: spawn to the first `tools/list` answer; over HTTP (the server \
             already running): a fresh client and connection to the first `tools/list` \
             answer. {} connects per case after 3 warm-up, the cases taking turns \
             (closing not timed). `auto` probes with `server/discover` and falls back to \
             `initialize`; a `dual` server answers the probe, so auto ends modern there. \
             `saved verdict` connects with the verdict of an earlier connection \
             (`ClientBuilder::saved_verdict`). The limit replays our client's handshake \
             for the era it ends in. Lower is better.\n",
            settings.connects
        )?;
        for &(era, lines, pinned) in &self.saved_verdict_lines {
            writeln!(
                s,
                "Messages our client sends before its first request ({era} server, \
                 counted through `tee`): {lines} with a saved verdict, {pinned} pinned.\n"
            )?;
        }
        writeln!(
            s,
            "| transport | server | client | finds era | median | p99 | ÷ limit | ÷ rmcp |"
        )?;
        writeln!(s, "|---|---|---|---|---:|---:|---:|---:|")?;
        for row in &self.connect {
            let era_of = |server: &str| {
                if server == "legacy" {
                    "legacy"
                } else {
                    "modern"
                }
            };
            let limit = self
                .connect_find(
                    row.transport,
                    era_of(row.server),
                    era_of(row.server),
                    Who::Limit,
                )
                .and_then(|r| paired(&row.stats.rounds, &r.stats.rounds));
            let rmcp = self
                .connect_find(row.transport, row.server, row.mode, Who::Rmcp)
                .and_then(|r| paired(&row.stats.rounds, &r.stats.rounds));
            let vl = if row.who == Who::Limit {
                String::new()
            } else {
                times(limit)
            };
            let vr = if row.who == Who::Ours {
                times(rmcp)
            } else {
                String::new()
            };
            writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {vl} | {vr} |",
                row.transport,
                row.server,
                row.who.name(),
                row.mode,
                us(row.stats.median),
                us(row.stats.p99),
            )?;
        }
        Ok(())
    }

    fn write_idle(&self, s: &mut String) -> std::fmt::Result {
        if self.idle.is_empty() {
            return Ok(());
        }
        writeln!(
            s,
            "\n## Many idle connections\n\n\
             N clients connected in one process (each case a fresh process that raises its \
             own open-file limit), then idle for 0.5 s: the live heap they hold and the \
             tokio tasks alive, per connection; then one `tools/call echo` on each, in \
             turn. Over HTTP our clients share one connection pool (one `HttpService`, \
             as an application shares one per origin) and the server answers JSON; rmcp's \
             each have their own reqwest client. Over stdio each client has its own server \
             process. Whether any timer is armed: the case runs on tokio's current-thread \
             runtime, whose clock, once paused, jumps straight to the next timer whenever \
             the runtime is idle; the clock is paused for 1 s of real time while the \
             connections are idle, and how far it ran on is shown (0 s: no timer armed).\n"
        )?;
        writeln!(
            s,
            "| transport | era | client | connections | heap / connection | tasks / connection | paused clock ran on | connect (each) | one call each (median) | blocks ≥ 4 KiB per connection |"
        )?;
        writeln!(s, "|---|---|---|---:|---:|---:|---:|---:|---:|---|")?;
        for row in &self.idle {
            writeln!(
                s,
                "| {} | {} | {} | {} | {:.1} KiB | {:.2} | {} | {} | {} | {} |",
                row.transport,
                row.era.flag(),
                row.who.name(),
                row.connections,
                row.heap_per_connection / 1024.0,
                row.tasks_per_connection,
                seconds(row.clock_ran_on),
                us(row.connect_each),
                us(row.call_median),
                row.big,
            )?;
        }
        Ok(())
    }

    fn write_micro(&self, s: &mut String) -> std::fmt::Result {
        if self.micro.is_empty() {
            return Ok(());
        }
        writeln!(
            s,
            "\n## Protocol micro-benchmarks\n\n\
             In process, no I/O: ours (what the client does to a message: `Inbound::parse`, \
             `normalize_result`, the typed result; or the modern envelope and framing) \
             against `serde_json` alone on the same bytes, taking turns in 20 rounds; time \
             per operation, median of the rounds. Timed by the bench itself rather than \
             divan or criterion so that the floor is paired by round like every other row.\n"
        )?;
        writeln!(s, "| operation | ours | floor | floor is | ÷ floor |")?;
        writeln!(s, "|---|---:|---:|---|---:|")?;
        for row in &self.micro {
            writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                row.what,
                us(Duration::from_secs_f64(median(&row.ours))),
                us(Duration::from_secs_f64(median(&row.floor))),
                row.floor_is,
                times(paired(&row.ours, &row.floor)),
            )?;
        }
        Ok(())
    }
}

/// The rmcp version this crate is built against (kept in step with
/// Cargo.toml by hand).
const RMCP_VERSION: &str = "3.11";
