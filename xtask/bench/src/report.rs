//! What a run measured, and the Markdown table it prints.

use std::fmt::Write;
use std::time::Duration;

use crate::Settings;
use crate::bare::Era;
use crate::memory::Measured;

/// Whose numbers these are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    /// `mcp-client`.
    Ours,
    /// rmcp, the official Rust SDK.
    Rmcp,
    /// A bare pipe moving the same bytes.
    Limit,
}

impl Who {
    /// Its name in the table and in memory case names.
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
fn paired(a: &[f64], b: &[f64]) -> Option<f64> {
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
    pub era: Era,
    pub who: Who,
    pub stats: Stats,
}

/// One throughput case.
pub struct Throughput {
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
        self.calls as f64 / self.elapsed.as_secs_f64()
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

/// One connect case.
pub struct Connect {
    /// The server's `--era`.
    pub server: &'static str,
    /// How the client found the era.
    pub mode: &'static str,
    pub who: Who,
    pub stats: Stats,
}

/// Everything one run measured.
#[derive(Default)]
pub struct Report {
    /// The load average when the run started.
    pub load_before: String,
    /// What our client sends, per era.
    pub wire: Vec<String>,
    pub latency: Vec<Latency>,
    pub throughput: Vec<Throughput>,
    pub memory: Vec<Memory>,
    pub connect: Vec<Connect>,
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
    } else {
        format!("{us:.0} µs")
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

impl Report {
    /// The report as Markdown.
    pub fn markdown(&self, settings: &Settings) -> String {
        let mut s = String::new();
        let _ = self.write(&mut s, settings);
        s
    }

    fn write(&self, s: &mut String, settings: &Settings) -> std::fmt::Result {
        writeln!(s, "# mcp-client benchmarks over stdio\n")?;
        writeln!(
            s,
            "Server: `mcp-testkit-server` (release). **ours** = `mcp-client` + `mcp-transport-stdio` \
             (default settings); **rmcp** = rmcp {} client over `TokioChildProcess`; \
             **limit** = a bare pipe writing the same request bytes our client sends \
             (captured from it) and reading the answer line, no client library. \
             Ratios are ours ÷ limit and ours ÷ rmcp (rmcp rows: rmcp ÷ limit). \
             {} CPUs, load average {} at the start and {} at the end \
             (the machine is shared; rounds take turns so that load falls on every \
             client alike); everything below measured in one run.\n",
            RMCP_VERSION,
            std::thread::available_parallelism().map_or(0, |n| n.get()),
            self.load_before,
            load_average(),
        )?;
        writeln!(s, "What our client sends (and the limit replays):\n")?;
        for line in &self.wire {
            writeln!(s, "- {line}")?;
        }

        writeln!(
            s,
            "\n## Latency: one `tools/call echo` round trip\n\n\
             {} sequential calls per client after {} warm-up, text \"hello\", in 20 rounds \
             taking turns (ours, rmcp, limit, ours, …) on three open connections. \
             Lower is better. Ratios: the median over rounds of the ratio of the two \
             clients' medians in the same round.\n",
            settings.calls, settings.warmup
        )?;
        writeln!(s, "| era | client | median | p99 | ÷ limit | ÷ rmcp |")?;
        writeln!(s, "|---|---|---:|---:|---:|---:|")?;
        for row in &self.latency {
            let find = |who: Who| {
                self.latency
                    .iter()
                    .find(|r| r.era == row.era && r.who == who)
                    .and_then(|r| paired(&row.stats.rounds, &r.stats.rounds))
            };
            let vl = if row.who == Who::Limit {
                String::new()
            } else {
                times(find(Who::Limit))
            };
            let vr = if row.who == Who::Ours {
                times(find(Who::Rmcp))
            } else {
                String::new()
            };
            writeln!(
                s,
                "| {} | {} | {} | {} | {vl} | {vr} |",
                row.era.flag(),
                row.who.name(),
                us(row.stats.median),
                us(row.stats.p99),
            )?;
        }

        writeln!(
            s,
            "\n## Throughput: concurrent callers on one connection\n\n\
             Each case: up to {} calls or {:.0?}, whichever ends first, after {} warm-up, \
             in 10 rounds taking turns as above. Each caller is a task calling in a loop; \
             the limit keeps as many requests in flight as there are callers, writing \
             all that may go in one write and reading answers in order. Higher calls/s \
             is better (ratios < 1 are slower); latency is per call under that load. \
             Ratios are paired by round as above.\n",
            settings.throughput_calls, settings.throughput_time, settings.warmup
        )?;
        writeln!(
            s,
            "| era | callers | client | calls/s | ÷ limit | ÷ rmcp | median | p99 |"
        )?;
        writeln!(s, "|---|---:|---|---:|---:|---:|---:|---:|")?;
        for row in &self.throughput {
            let find = |who: Who| {
                self.throughput
                    .iter()
                    .find(|r| r.era == row.era && r.callers == row.callers && r.who == who)
                    .and_then(|r| paired(&row.rates, &r.rates))
            };
            let vl = if row.who == Who::Limit {
                String::new()
            } else {
                times(find(Who::Limit))
            };
            let vr = if row.who == Who::Ours {
                times(find(Who::Rmcp))
            } else {
                String::new()
            };
            writeln!(
                s,
                "| {} | {} | {} | {:.0} | {vl} | {vr} | {} | {} |",
                row.era.flag(),
                row.callers,
                row.who.name(),
                row.rate(),
                us(row.stats.median),
                us(row.stats.p99),
            )?;
        }

        let size = self.memory.first().map_or(0, |m| m.size);
        writeln!(
            s,
            "\n## Memory on a large result\n\n\
             One `tools/call echo` with a text of {} (so the request carries it too), \
             each case in a fresh process, 3 runs, median shown: **peak RSS growth** is \
             the peak resident memory during the call minus the resident memory just \
             before it (arguments already built; `VmHWM` reset through `clear_refs`); \
             **peak heap** is the most live heap bytes above those before the call, \
             counted by the bench's allocator (exact, not subject to page granularity \
             or allocator caching). Lower is better.\n",
            mib(size as u64)
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

        writeln!(
            s,
            "\n## Connect: spawn to the first `tools/list` answer\n\n\
             {} connects per case after 3 warm-up, the cases taking turns (closing not \
             timed). `auto` probes with `server/discover` and falls back to `initialize`; \
             a `dual` server answers the probe, so auto ends modern there. The limit \
             replays our client's handshake bytes for the era it ends in. Lower is \
             better; ratios paired by round.\n",
            settings.connects
        )?;
        writeln!(
            s,
            "| server | client | finds era | median | p99 | ÷ limit | ÷ rmcp |"
        )?;
        writeln!(s, "|---|---|---|---:|---:|---:|---:|")?;
        for row in &self.connect {
            // The era the connection ends in: a dual server is modern.
            let era_of = |server: &str| {
                if server == "legacy" {
                    "legacy"
                } else {
                    "modern"
                }
            };
            let limit = self
                .connect
                .iter()
                .find(|r| r.who == Who::Limit && r.server == era_of(row.server))
                .and_then(|r| paired(&row.stats.rounds, &r.stats.rounds));
            let rmcp = self
                .connect
                .iter()
                .find(|r| r.who == Who::Rmcp && r.server == row.server && r.mode == row.mode)
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
                "| {} | {} | {} | {} | {} | {vl} | {vr} |",
                row.server,
                row.who.name(),
                row.mode,
                us(row.stats.median),
                us(row.stats.p99),
            )?;
        }
        Ok(())
    }
}

/// The rmcp version this crate is built against (kept in step with
/// Cargo.toml by hand).
const RMCP_VERSION: &str = "3.11";
