//! Memory on a large result: one `tools/call echo` whose text is
//! [`Settings::large`] bytes, each case in a child process of its own (this
//! same binary with `--mem-case`), which reports how far its peak resident
//! memory rose above what it held before the call.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::bare::{Bare, Era, Wire};
use crate::cases::{ClientKind, Conn};
use crate::report::{Memory, Report, Who};
use crate::{Result, Settings};

/// What a child measured.
#[derive(Debug, Clone, Copy, Default)]
pub struct Measured {
    /// Peak resident memory during the call minus resident memory before.
    pub growth: u64,
    /// Peak live heap bytes during the call minus live heap bytes before.
    pub heap: u64,
    /// Bytes of the request line (limit only).
    pub request_bytes: u64,
    /// Bytes of the answer line (limit only).
    pub answer_bytes: u64,
    /// Whether the peak could be reset before the call (`clear_refs`).
    pub exact: bool,
    /// The heap of the answer parsed to a `serde_json::Value` (large
    /// results, limit only).
    pub parsed: u64,
}

/// Runs every case, each in a child process.
pub async fn run(settings: &Settings, report: &mut Report) -> Result {
    let exe = std::env::current_exe()?;
    for era in Era::BOTH {
        for who in crate::cases::clients().into_iter().chain([Who::Limit]) {
            let case = format!("{}-{}", who.name(), era.flag());
            let mut runs = Vec::new();
            for _ in 0..settings.memory_runs {
                runs.push(one_case(settings, &exe, &case).await?);
            }
            let median = |f: fn(&Measured) -> u64| {
                let mut v: Vec<u64> = runs.iter().map(f).collect();
                v.sort();
                v[v.len() / 2]
            };
            report.memory.push(Memory {
                era,
                who,
                size: settings.large,
                measured: Measured {
                    growth: median(|m| m.growth),
                    heap: median(|m| m.heap),
                    ..runs[0]
                },
                growth_range: (
                    runs.iter().map(|m| m.growth).min().unwrap_or(0),
                    runs.iter().map(|m| m.growth).max().unwrap_or(0),
                ),
            });
        }
    }
    Ok(())
}

/// How long one memory case may take.
const LIMIT_SECS: u64 = 60;

/// Runs one case in a child process and reads what it measured.
pub async fn one_case(settings: &Settings, exe: &std::path::Path, case: &str) -> Result<Measured> {
    let out = tokio::time::timeout(
        Duration::from_secs(LIMIT_SECS),
        tokio::process::Command::new(exe)
            .arg("--server")
            .arg(&settings.server)
            .args(if settings.quick {
                &["--quick"][..]
            } else {
                &[][..]
            })
            .args(["--mem-case", case])
            .kill_on_drop(true)
            .output(),
    )
    .await
    .map_err(|_| format!("memory case {case} took over {LIMIT_SECS} s"))??;
    if !out.status.success() {
        return Err(format!(
            "memory case {case} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    let v: Value = serde_json::from_slice(&out.stdout)?;
    let n = |k: &str| v[k].as_u64().unwrap_or_default();
    Ok(Measured {
        growth: n("growth"),
        heap: n("heap"),
        request_bytes: n("request_bytes"),
        answer_bytes: n("answer_bytes"),
        exact: v["exact"].as_bool().unwrap_or(false),
        parsed: n("parsed"),
    })
}

/// One case, in this (child) process; prints what it measured as JSON.
pub async fn child(settings: &Settings, case: &str) -> Result {
    if let Some(rest) = case.strip_prefix("large-") {
        return crate::large::child(settings, rest).await;
    }
    if let Some(rest) = case.strip_prefix("idle-") {
        return crate::idle::child(settings, rest).await;
    }
    let (who, era) = case
        .split_once('-')
        .ok_or_else(|| format!("bad memory case {case:?}"))?;
    let era = match era {
        "legacy" => Era::Legacy,
        "modern" => Era::Modern,
        other => return Err(format!("bad era {other:?}").into()),
    };
    Heap::track();
    let text = "x".repeat(settings.large);
    let mut measured = Measured::default();
    match who {
        "ours" | "rmcp" => {
            let conn = Conn::connect(
                ClientKind::pinned(if who == "ours" { Who::Ours } else { Who::Rmcp }, era),
                &settings.server,
                era.flag(),
            )
            .await?;
            conn.caller().echo_checked("hello").await?;
            let answer_len = match &conn {
                Conn::Ours(client) => {
                    let args = json!({ "text": text });
                    let (heap, before) = (Heap::start(), Peak::start());
                    let result = client.call_tool("echo", args).await?;
                    (measured.growth, measured.heap) = (before.growth(), heap.growth());
                    serde_json::to_value(&result)?["content"][0]["text"]
                        .as_str()
                        .map_or(0, str::len)
                }
                #[cfg(feature = "rmcp")]
                Conn::Rmcp(service) => {
                    let mut args = serde_json::Map::new();
                    args.insert("text".into(), Value::String(text.clone()));
                    let params =
                        rmcp::model::CallToolRequestParams::new("echo").with_arguments(args);
                    let (heap, before) = (Heap::start(), Peak::start());
                    let result = service.call_tool(params).await?;
                    (measured.growth, measured.heap) = (before.growth(), heap.growth());
                    serde_json::to_value(&result)?["content"][0]["text"]
                        .as_str()
                        .map_or(0, str::len)
                }
            };
            if answer_len != settings.large {
                return Err(format!("echo answered {answer_len} bytes of text").into());
            }
            conn.close().await?;
        }
        "limit" => {
            let wire = Wire::capture(&settings.server).await?;
            let captured = wire.era(era);
            let mut bare = Bare::spawn(&settings.server, era)?;
            bare.replay(&captured.connect).await?;
            let line = captured.call.render(7, &text);
            measured.request_bytes = line.len() as u64;
            let (heap, before) = (Heap::start(), Peak::start());
            let answer = bare.round_trip(&line).await?.len();
            (measured.growth, measured.heap) = (before.growth(), heap.growth());
            // The line came without its newline.
            measured.answer_bytes = answer as u64 + 1;
            if answer < settings.large {
                return Err(format!("the bare pipe read {answer} bytes").into());
            }
            bare.close().await?;
        }
        other => return Err(format!("bad client {other:?}").into()),
    }
    measured.exact = Peak::resettable();
    println!(
        "{}",
        json!({
            "growth": measured.growth,
            "heap": measured.heap,
            "request_bytes": measured.request_bytes,
            "answer_bytes": measured.answer_bytes,
            "exact": measured.exact,
        })
    );
    Ok(())
}

/// Resident memory before a call, and the peak after it.
pub struct Peak {
    rss: u64,
    hwm: u64,
}

impl Peak {
    /// Resets the peak (where the kernel lets us) and notes what is
    /// resident now.
    pub fn start() -> Self {
        let _ = Self::reset();
        Peak {
            rss: status("VmRSS:"),
            hwm: status("VmHWM:"),
        }
    }

    fn reset() -> std::io::Result<()> {
        std::fs::write("/proc/self/clear_refs", "5")
    }

    pub fn resettable() -> bool {
        Self::reset().is_ok()
    }

    /// How far the peak rose above the resident memory at the start (or
    /// above the old peak, when it could not be reset).
    pub fn growth(&self) -> u64 {
        let hwm = status("VmHWM:");
        if Self::resettable() {
            hwm.saturating_sub(self.rss)
        } else {
            hwm.saturating_sub(self.hwm)
        }
    }
}

/// A `/proc/self/status` field, in bytes.
fn status(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// The global allocator: the system's, counting live and peak heap bytes
/// while [`Heap::track`] is on (only in memory cases: the others pay one
/// relaxed load per allocation).
pub struct Counting;

static TRACK: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

/// Live allocations of at least 4 KiB, by power of two of their size (the
/// attribution of where a heap goes: `BIG[k]` counts sizes in
/// `[2^k, 2^(k+1))`).
static BIG: [AtomicIsize; 40] = [const { AtomicIsize::new(0) }; 40];
/// The smallest size `BIG` counts.
const BIG_FROM: usize = 4096;

fn bucket(size: usize) -> usize {
    (usize::BITS - 1 - size.leading_zeros()) as usize
}

fn grew(by: isize) {
    if TRACK.load(Ordering::Relaxed) {
        let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
        PEAK.fetch_max(now, Ordering::Relaxed);
    }
}

fn shrank(by: isize) {
    if TRACK.load(Ordering::Relaxed) {
        LIVE.fetch_sub(by, Ordering::Relaxed);
    }
}

/// Whether allocations are counted (the `cpu` row only: a counter shared by
/// every thread costs a contended cache line per allocation).
static COUNT: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicIsize = AtomicIsize::new(0);
/// The counted allocations by power of two of their size, as `BIG`.
static BY_SIZE: [AtomicIsize; 40] = [const { AtomicIsize::new(0) }; 40];

/// Starts or stops counting allocations.
pub fn count_allocations(on: bool) {
    COUNT.store(on, Ordering::Relaxed);
}

/// The allocations counted so far.
pub fn allocations() -> u64 {
    ALLOCATIONS.load(Ordering::Relaxed) as u64
}

/// The allocations counted so far by size, as (lowest size of the power
/// of two, count): a size names what a block is (a JSON object's map
/// node is about 630 bytes) where a count alone does not.
pub fn allocations_by_size() -> Vec<(usize, u64)> {
    (0..40)
        .map(|k| (1usize << k, BY_SIZE[k].load(Ordering::Relaxed) as u64))
        .collect()
}

fn counted(size: usize) {
    if COUNT.load(Ordering::Relaxed) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BY_SIZE[bucket(size.max(1)).min(39)].fetch_add(1, Ordering::Relaxed);
    }
}

/// Counts a block of `size` coming (`+1`) or going (`-1`) in `BIG`.
fn big(size: usize, delta: isize) {
    if size >= BIG_FROM && TRACK.load(Ordering::Relaxed) {
        BIG[bucket(size).min(39)].fetch_add(delta, Ordering::Relaxed);
    }
}

/// The live allocations of at least 4 KiB now, as (lowest size of the
/// bucket, count).
pub fn big_allocations() -> Vec<(usize, isize)> {
    (0..40)
        .map(|k| (1usize << k, BIG[k].load(Ordering::Relaxed)))
        .filter(|(_, n)| *n != 0)
        .collect()
}

// SAFETY: every call goes to `System` unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as the caller promised.
        let p = unsafe { System.alloc(layout) };
        counted(layout.size());
        if !p.is_null() {
            grew(layout.size() as isize);
            big(layout.size(), 1);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as the caller promised.
        let p = unsafe { System.alloc_zeroed(layout) };
        counted(layout.size());
        if !p.is_null() {
            grew(layout.size() as isize);
            big(layout.size(), 1);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as the caller promised.
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size() as isize);
        big(layout.size(), -1);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as the caller promised.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        counted(new_size);
        if !p.is_null() {
            let by = new_size as isize - layout.size() as isize;
            if by >= 0 {
                grew(by)
            } else {
                shrank(-by)
            }
            big(layout.size(), -1);
            big(new_size, 1);
        }
        p
    }
}

/// Peak live heap bytes above a starting point.
pub struct Heap {
    start: isize,
}

impl Heap {
    /// Turns counting on (for the rest of the process).
    pub fn track() {
        TRACK.store(true, Ordering::Relaxed);
    }

    pub fn start() -> Self {
        let start = LIVE.load(Ordering::Relaxed);
        PEAK.store(start, Ordering::Relaxed);
        Heap { start }
    }

    pub fn growth(&self) -> u64 {
        (PEAK.load(Ordering::Relaxed) - self.start).max(0) as u64
    }

    /// Live heap bytes now above the starting point (negative: fewer).
    pub fn live(&self) -> i64 {
        (LIVE.load(Ordering::Relaxed) - self.start) as i64
    }
}
