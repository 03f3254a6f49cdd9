//! The limit: a bare pipe moving the bytes our client sends, with plain
//! tokio I/O and no client library.
//!
//! [`Wire::capture`] records, once per era, what our client writes to the
//! server (through `tee`): the lines of its handshake up to the first
//! `tools/list`, and one `tools/call echo` line, which becomes a
//! [`Template`] whose id and text are swapped for each request.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use mcp_client::{Client, EraMode};
use mcp_protocol::framing::{LineSplitter, Split};
use mcp_transport_stdio::StdioCommand;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::Result;

/// The two eras the benchmarks run in, and the server flag of each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Era {
    /// `initialize` first, then requests (2025-11-25 and before).
    Legacy,
    /// Self-contained requests with `_meta` (2026-07-28).
    Modern,
}

impl Era {
    /// Both, in report order.
    pub const BOTH: [Era; 2] = [Era::Legacy, Era::Modern];

    /// The `--era` value of `mcp-reference-server`.
    pub fn flag(self) -> &'static str {
        match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        }
    }

    /// Our client's era mode pinned to this era.
    pub fn mode(self) -> EraMode {
        match self {
            Era::Legacy => EraMode::Legacy,
            Era::Modern => EraMode::Modern,
        }
    }
}

/// A captured request line whose id and `text` argument can be replaced.
#[derive(Clone, Debug)]
pub struct Template {
    line: String,
    id: Range<usize>,
    id_is_string: bool,
    text: Range<usize>,
}

/// The text of the captured call, found again in its line.
const MARK: &str = "bench-mark-7c1f";

impl Template {
    fn parse(line: &str) -> Result<Self> {
        let value: Value = serde_json::from_str(line)?;
        let id = &value["id"];
        let needle = format!("\"id\":{id}");
        let at = unique(line, &needle).ok_or_else(|| format!("no single {needle} in {line}"))?;
        let id_range = at + "\"id\":".len()..at + needle.len();
        let text_needle = format!("\"{MARK}\"");
        let text_at = unique(line, &text_needle)
            .ok_or_else(|| format!("no single {text_needle} in {line}"))?;
        Ok(Template {
            line: line.to_owned(),
            id: id_range,
            id_is_string: id.is_string(),
            text: text_at..text_at + text_needle.len(),
        })
    }

    /// The request line (newline included) with this id and text.
    pub fn render(&self, id: u64, text: &str) -> Vec<u8> {
        let id = if self.id_is_string {
            json!(id.to_string()).to_string()
        } else {
            id.to_string()
        };
        let text = Value::String(text.to_owned()).to_string();
        let mut parts = [(self.id.clone(), id), (self.text.clone(), text)];
        parts.sort_by_key(|(range, _)| range.start);
        let mut out = Vec::with_capacity(self.line.len() + parts[1].1.len() + 32);
        let mut at = 0;
        for (range, with) in parts {
            out.extend_from_slice(&self.line.as_bytes()[at..range.start]);
            out.extend_from_slice(with.as_bytes());
            at = range.end;
        }
        out.extend_from_slice(&self.line.as_bytes()[at..]);
        out.push(b'\n');
        out
    }

    /// Every request line of a run, rendered before it starts.
    pub fn lines(&self, first_id: u64, count: usize, text: &str) -> Vec<Vec<u8>> {
        (0..count as u64)
            .map(|i| self.render(first_id + i, text))
            .collect()
    }
}

fn unique(haystack: &str, needle: &str) -> Option<usize> {
    let first = haystack.find(needle)?;
    haystack[first + 1..]
        .find(needle)
        .is_none()
        .then_some(first)
}

/// What our client sends in one era.
#[derive(Clone, Debug)]
pub struct Captured {
    /// The lines up to and including the first `tools/list` request.
    pub connect: Vec<String>,
    /// The `tools/call echo` line.
    pub call: Template,
}

/// What our client sends, per era.
#[derive(Clone, Debug)]
pub struct Wire {
    legacy: Captured,
    modern: Captured,
}

impl Wire {
    /// Runs our client once per era through `tee` and keeps its bytes.
    pub async fn capture(server: &Path) -> Result<Self> {
        Ok(Wire {
            legacy: capture_era(server, Era::Legacy).await?,
            modern: capture_era(server, Era::Modern).await?,
        })
    }

    /// What our client sends in `era`.
    pub fn era(&self, era: Era) -> &Captured {
        match era {
            Era::Legacy => &self.legacy,
            Era::Modern => &self.modern,
        }
    }

    /// The captured lines, for the report (methods and sizes).
    pub fn describe(&self) -> Vec<String> {
        Era::BOTH
            .iter()
            .map(|&era| {
                let c = self.era(era);
                let methods: Vec<String> = c
                    .connect
                    .iter()
                    .map(|l| {
                        let v: Value = serde_json::from_str(l).unwrap_or_default();
                        format!(
                            "{} ({} B)",
                            v["method"].as_str().unwrap_or("?"),
                            l.len() + 1
                        )
                    })
                    .collect();
                let call = c.call.render(1, "hello");
                format!(
                    "{}: connect = {}; call = tools/call echo ({} B with text \"hello\")",
                    era.flag(),
                    methods.join(", "),
                    call.len()
                )
            })
            .collect()
    }
}

async fn capture_era(server: &Path, era: Era) -> Result<Captured> {
    let file = capture_path(era);
    let _ = std::fs::remove_file(&file);
    let command = StdioCommand::new("/bin/sh").args([
        "-c".as_ref(),
        r#"tee "$0" | "$1" --era "$2""#.as_ref(),
        file.as_os_str(),
        server.as_os_str(),
        era.flag().as_ref(),
    ]);
    let client = Client::builder().era(era.mode()).connect(command).await?;
    client.list_tools().await?;
    client.call_tool("echo", json!({ "text": MARK })).await?;
    client.close().await;
    let text = std::fs::read_to_string(&file)?;
    let _ = std::fs::remove_file(&file);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let method = |l: &str| -> String {
        serde_json::from_str::<Value>(l)
            .ok()
            .and_then(|v| v["method"].as_str().map(str::to_owned))
            .unwrap_or_default()
    };
    let list = lines
        .iter()
        .position(|l| method(l) == "tools/list")
        .ok_or_else(|| format!("{}: our client sent no tools/list: {text}", era.flag()))?;
    let call = lines
        .iter()
        .find(|l| method(l) == "tools/call")
        .ok_or_else(|| format!("{}: our client sent no tools/call: {text}", era.flag()))?;
    Ok(Captured {
        connect: lines[..=list].iter().map(|l| (*l).to_owned()).collect(),
        call: Template::parse(call)?,
    })
}

fn capture_path(era: Era) -> PathBuf {
    std::env::temp_dir().join(format!(
        "mcp-bench-{}-{}.jsonl",
        std::process::id(),
        era.flag()
    ))
}

/// A server process driven by hand: request lines in, answer lines out.
pub struct Bare {
    /// The server process.
    pub child: Child,
    /// Its stdin.
    pub stdin: ChildStdin,
    /// Its stdout, as lines.
    pub stdout: Lines,
}

/// A server's stdout split into lines by the splitter every reader of the
/// workspace uses (`mcp_protocol::framing`), so that the bare pipe frames
/// exactly as the transport does. A line is handed out in place, never
/// copied, so that the memory of the limit is what the pipe needs.
pub struct Lines {
    stdout: ChildStdout,
    splitter: LineSplitter,
    buf: Vec<u8>,
    /// Where the bytes not yet taken start in `buf`.
    start: usize,
    chunk: Vec<u8>,
}

impl Lines {
    fn new(stdout: ChildStdout) -> Self {
        Lines {
            stdout,
            splitter: LineSplitter::new(mcp_transport_stdio::DEFAULT_MAX_MESSAGE_SIZE),
            buf: Vec::with_capacity(4096),
            start: 0,
            chunk: vec![0; 8 * 1024],
        }
    }

    /// The next line (without its newline); an error at the end of stdout.
    pub async fn next_line(&mut self) -> Result<&[u8]> {
        loop {
            match self.splitter.split(&self.buf[self.start..]) {
                Split::Line { len, consumed } => {
                    let at = self.start;
                    self.start += consumed;
                    return Ok(&self.buf[at..at + len]);
                }
                Split::Incomplete { consumed } => self.start += consumed,
                Split::TooLarge { seen, .. } => {
                    return Err(
                        format!("the server wrote a line over the limit ({seen} bytes)").into(),
                    );
                }
                _ => return Err("the server wrote a line over the limit".into()),
            }
            self.buf.drain(..self.start);
            self.start = 0;
            let n = self.stdout.read(&mut self.chunk).await?;
            if n == 0 {
                return Err("the server closed its stdout".into());
            }
            self.buf.extend_from_slice(&self.chunk[..n]);
        }
    }
}

impl Bare {
    /// Starts the server in `era`.
    pub fn spawn(server: &Path, era: Era) -> Result<Self> {
        Self::spawn_with(server, era, &[])
    }

    /// Starts the server in `era` with these extra flags.
    pub fn spawn_with(server: &Path, era: Era, extra: &[String]) -> Result<Self> {
        let mut child = Command::new(server)
            .args(["--era", era.flag()])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = Lines::new(child.stdout.take().ok_or("no stdout")?);
        Ok(Bare {
            child,
            stdin,
            stdout,
        })
    }

    /// Writes one line (newline included).
    pub async fn send(&mut self, line: &[u8]) -> Result {
        self.stdin.write_all(line).await?;
        Ok(())
    }

    /// Reads one line (without its newline).
    pub async fn read_line(&mut self) -> Result<&[u8]> {
        self.stdout.next_line().await
    }

    /// One request line out, one answer line in.
    pub async fn round_trip(&mut self, line: &[u8]) -> Result<&[u8]> {
        self.send(line).await?;
        self.read_line().await
    }

    /// Sends the captured handshake lines, waiting for the answer of each
    /// request (by id) before the next line, as a client would.
    pub async fn replay(&mut self, lines: &[String]) -> Result {
        for line in lines {
            let id = serde_json::from_str::<Value>(line)?
                .get("id")
                .cloned()
                .filter(|id| !id.is_null());
            self.send(format!("{line}\n").as_bytes()).await?;
            if let Some(id) = id {
                loop {
                    let answer: Value = serde_json::from_slice(self.read_line().await?)?;
                    if answer.get("id") == Some(&id) {
                        if let Some(error) = answer.get("error") {
                            return Err(format!("the server refused {line}: {error}").into());
                        }
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// Closes stdin and waits for the server to exit.
    pub async fn close(self) -> Result {
        let Bare {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        child.wait().await?;
        Ok(())
    }
}

/// How many messages our client sends before its first `tools/list` on a
/// connect to a `server_era` server: pinned to `mode`, or with `saved`.
pub async fn messages_before_list(
    server: &Path,
    server_era: &str,
    mode: EraMode,
    saved: Option<mcp_client::Verdict>,
) -> Result<usize> {
    let file = std::env::temp_dir().join(format!(
        "mcp-bench-{}-count-{server_era}.jsonl",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&file);
    let command = StdioCommand::new("/bin/sh").args([
        "-c".as_ref(),
        r#"tee "$0" | "$1" --era "$2""#.as_ref(),
        file.as_os_str(),
        server.as_os_str(),
        server_era.as_ref(),
    ]);
    let mut builder = Client::builder().era(mode);
    if let Some(v) = saved {
        builder = builder.saved_verdict(v);
    }
    let client = builder.connect(command).await?;
    client.list_tools().await?;
    client.close().await;
    let text = std::fs::read_to_string(&file)?;
    let _ = std::fs::remove_file(&file);
    let methods: Vec<String> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str::<Value>(l)
                .ok()
                .and_then(|v| v["method"].as_str().map(str::to_owned))
                .unwrap_or_default()
        })
        .collect();
    methods
        .iter()
        .position(|m| m == "tools/list")
        .ok_or_else(|| format!("no tools/list sent: {text}").into())
}
