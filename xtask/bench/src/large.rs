//! Large results over stdio: `resources/read` of a large blob, `tools/call`
//! answering a large text, `tools/list` of many tools. Wall time of the one
//! call and its peak heap as a multiple of the payload (the answer's bytes
//! on the wire), each case in a child process of its own (`--mem-case
//! large-KIND-WHO-ERA`), as the memory cases.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::bare::{Bare, Era, Wire};
use crate::cases::{ClientKind, Conn, Target};
use crate::memory::{Heap, Peak};
use crate::report::{Large, Report, Who};
use crate::{Result, Settings};

/// The three large results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `resources/read` of `fake://blob/large`.
    Blob,
    /// `tools/call big_text`.
    Text,
    /// `tools/list` of many tools.
    List,
}

impl Kind {
    /// All, in report order.
    pub const ALL: [Kind; 3] = [Kind::Blob, Kind::Text, Kind::List];

    /// The name in case names.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Blob => "blob",
            Kind::Text => "text",
            Kind::List => "list",
        }
    }

    fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// What the row is, for the report.
    pub fn describe(self, settings: &Settings) -> String {
        match self {
            Kind::Blob => format!(
                "`resources/read` of a {} blob",
                crate::report::size(settings.large_blob)
            ),
            Kind::Text => format!(
                "`tools/call` answering {} of text",
                crate::report::size(settings.large_text)
            ),
            Kind::List => format!("`tools/list` of {} tools", settings.large_tools + 11),
        }
    }

    /// The server's flags for this content.
    fn flags(self, settings: &Settings) -> Vec<String> {
        match self {
            Kind::Blob => vec!["--blob-bytes".into(), settings.large_blob.to_string()],
            Kind::Text => vec!["--text-bytes".into(), settings.large_text.to_string()],
            Kind::List => vec!["--tools".into(), settings.large_tools.to_string()],
        }
    }
}

/// Runs every large case, each in a child process.
pub async fn run(settings: &Settings, report: &mut Report) -> Result {
    let exe = std::env::current_exe()?;
    for kind in Kind::ALL {
        for era in Era::BOTH {
            for who in crate::cases::clients().into_iter().chain([Who::Limit]) {
                let case = format!("large-{}-{}-{}", kind.name(), who.name(), era.flag());
                let mut runs = Vec::new();
                for _ in 0..settings.memory_runs {
                    match crate::memory::one_case(settings, &exe, &case).await {
                        Ok(m) => runs.push(m),
                        Err(e) => {
                            // rmcp reads a line of tens of MiB slowly: its
                            // row says so instead of stopping the run.
                            report.notes.push(format!("large result, {case}: {e}"));
                            break;
                        }
                    }
                }
                if runs.is_empty() {
                    continue;
                }
                let median = |f: fn(&crate::memory::Measured) -> u64| {
                    let mut v: Vec<u64> = runs.iter().map(f).collect();
                    v.sort();
                    v[v.len() / 2]
                };
                report.large.push(Large {
                    kind,
                    era,
                    who,
                    heap: median(|m| m.heap),
                    growth: median(|m| m.growth),
                    wall: Duration::from_nanos(median(|m| m.request_bytes)),
                    answer_bytes: median(|m| m.answer_bytes),
                    parsed: median(|m| m.parsed),
                });
            }
        }
    }
    Ok(())
}

/// One case in this (child) process: `KIND-WHO-ERA`. Prints what it
/// measured as JSON (`request_bytes` carries the wall time in ns).
pub async fn child(settings: &Settings, case: &str) -> Result {
    let mut parts = case.splitn(3, '-');
    let (kind, who, era) = (parts.next(), parts.next(), parts.next());
    let kind = kind
        .and_then(Kind::parse)
        .ok_or_else(|| format!("bad large case {case:?}"))?;
    let era = match era {
        Some("legacy") => Era::Legacy,
        Some("modern") => Era::Modern,
        _ => return Err(format!("bad large case {case:?}").into()),
    };
    let flags = kind.flags(settings);
    Heap::track();
    let (heap, growth, wall, answer_bytes);
    let mut parsed = 0;
    match who {
        Some(name @ ("ours" | "rmcp")) => {
            let who = if name == "ours" { Who::Ours } else { Who::Rmcp };
            let conn = Conn::open(
                ClientKind::pinned(who, era),
                Target::Stdio(&settings.server, era.flag(), &flags),
            )
            .await?;
            conn.caller().echo_checked("hello").await?;
            let (h, p, start) = (Heap::start(), Peak::start(), Instant::now());
            let got = match kind {
                Kind::Blob => conn.read_resource("fake://blob/large").await?,
                Kind::Text => {
                    let v = conn.caller().call_value("big_text", "").await?;
                    v["content"][0]["text"].as_str().map_or(0, str::len)
                }
                Kind::List => conn.list_tools().await?,
            };
            wall = start.elapsed();
            (growth, heap) = (p.growth(), h.growth());
            let want = match kind {
                Kind::Blob => settings.large_blob.div_ceil(3) * 4,
                Kind::Text => settings.large_text,
                Kind::List => settings.large_tools + 11,
            };
            if got != want {
                return Err(format!("{case}: got {got}, not {want}").into());
            }
            answer_bytes = 0;
            conn.close().await?;
        }
        Some("limit") => {
            let wire = Wire::capture(&settings.server).await?;
            let captured = wire.era(era);
            let line = request_line(captured, kind)?;
            let mut bare = Bare::spawn_with(&settings.server, era, &flags)?;
            // The handshake only: the captured connect ends with the first
            // `tools/list`, which would warm the server's listing for the
            // limit alone (ours and rmcp meet a server that never listed).
            let handshake = match captured.connect.split_last() {
                Some((last, rest)) if last.contains("\"tools/list\"") => rest,
                _ => &captured.connect[..],
            };
            bare.replay(handshake).await?;
            let (h, p, start) = (Heap::start(), Peak::start(), Instant::now());
            let answer = bare.round_trip(&line).await?;
            wall = start.elapsed();
            (growth, heap) = (p.growth(), h.growth());
            answer_bytes = answer.len() as u64 + 1;
            // The floor of any client that parses: the answer as a `Value`.
            let h = Heap::start();
            let value: Value = serde_json::from_slice(answer)?;
            parsed = h.growth();
            drop(value);
            bare.close().await?;
        }
        _ => return Err(format!("bad large case {case:?}").into()),
    }
    println!(
        "{}",
        json!({
            "growth": growth,
            "heap": heap,
            "request_bytes": wall.as_nanos() as u64,
            "answer_bytes": answer_bytes,
            "parsed": parsed,
            "exact": Peak::resettable(),
        })
    );
    Ok(())
}

/// The request line of `kind`, built from what our client sends (its
/// envelope kept, id 7).
fn request_line(captured: &crate::bare::Captured, kind: Kind) -> Result<Vec<u8>> {
    let mut v: Value = match kind {
        Kind::List => serde_json::from_str(
            captured
                .connect
                .last()
                .ok_or("no tools/list in the handshake")?,
        )?,
        _ => serde_json::from_slice(&captured.call.render(7, ""))?,
    };
    v["id"] = json!(7);
    match kind {
        Kind::Blob => {
            v["method"] = json!("resources/read");
            let meta = v["params"]["_meta"].take();
            v["params"] = json!({ "uri": "fake://blob/large" });
            if !meta.is_null() {
                v["params"]["_meta"] = meta;
            }
        }
        Kind::Text => v["params"]["name"] = json!("big_text"),
        Kind::List => {}
    }
    let mut line = serde_json::to_vec(&v)?;
    line.push(b'\n');
    Ok(line)
}
