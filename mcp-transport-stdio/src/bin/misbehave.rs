//! A deliberately badly behaved MCP stdio server, for this crate's tests
//! only (it is not installed for anything else's use).
//!
//! Process behaviours, by flag:
//!
//! * `--stderr-flood N`: write N bytes to stderr before reading anything;
//! * `--no-read`: never read stdin (nor answer anything);
//! * `--ignore-eof`: keep running when stdin ends;
//! * `--ignore-term`: ignore `SIGTERM` (a grandchild inherits this);
//! * `--grandchild FILE`: start a grandchild (this binary, `--sleeper`)
//!   sharing its stdio and process group; its pid goes to FILE and to
//!   stderr as `grandchild <pid>`;
//! * `--sleeper`: sleep forever.
//!
//! Per-request behaviours, by method (anything else is echoed back as
//! `{"echo": params}`):
//!
//! * `junk/ascii`, `junk/utf8`, `junk/json`, `junk/null_id`: write a line of
//!   ASCII noise, invalid UTF-8, JSON that is not JSON-RPC, or an error with
//!   a null id, then answer;
//! * `big` `{"size": N}`: answer with a line of more than N bytes, id first;
//! * `big/noid` `{"size": N}`: write a notification of more than N bytes,
//!   then answer;
//! * `stderr` `{"bytes": N}`: write N bytes to stderr, then answer;
//! * `die` `{"code": C, "message": M}`: write M to stderr and exit with C,
//!   without answering;
//! * `hang`: never answer;
//! * `close_stdout`: close stdout and sleep forever, without answering;
//! * `env` `{"name": N}`: answer with that environment variable's value;
//! * `cwd`: answer with the working directory;
//! * `seen`: answer with the notifications received so far.

use std::io::{BufRead, Write};
use std::time::Duration;

use serde_json::{Value, json};

fn sleep_forever() -> ! {
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

fn flood_stderr(bytes: usize) {
    let line = format!("{}\n", "noise on stderr ".repeat(6));
    let mut err = std::io::stderr().lock();
    let mut written = 0;
    while written < bytes {
        err.write_all(line.as_bytes()).expect("stderr");
        written += line.len();
    }
    err.flush().expect("stderr");
}

#[cfg(unix)]
fn ignore_sigterm() {
    // SAFETY: setting a signal's disposition to SIG_IGN is always sound.
    unsafe {
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
    }
}

#[cfg(not(unix))]
fn ignore_sigterm() {}

#[cfg(unix)]
fn close_stdout() {
    // SAFETY: closing fd 1; nothing writes to it afterwards.
    unsafe {
        libc::close(1);
    }
}

#[cfg(not(unix))]
fn close_stdout() {}

fn send(out: &mut impl Write, line: &[u8]) {
    out.write_all(line).expect("stdout");
    out.write_all(b"\n").expect("stdout");
    out.flush().expect("stdout");
}

fn answer(out: &mut impl Write, id: &Value, result: Value) {
    let line = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    send(out, line.as_bytes());
}

/// The process behaviours the flags ask for (see the module docs).
#[derive(Default)]
struct Flags {
    no_read: bool,
    ignore_eof: bool,
    ignore_term: bool,
    flood: usize,
    grandchild: Option<String>,
}

impl Flags {
    /// Reads the flags; `--sleeper` sleeps at once.
    fn parse() -> Flags {
        let mut flags = Flags::default();
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--sleeper" => {
                    if std::env::args().any(|a| a == "--ignore-term") {
                        ignore_sigterm();
                    }
                    sleep_forever()
                }
                "--no-read" => flags.no_read = true,
                "--ignore-eof" => flags.ignore_eof = true,
                "--ignore-term" => flags.ignore_term = true,
                "--stderr-flood" => {
                    flags.flood = args.next().and_then(|n| n.parse().ok()).expect("N")
                }
                "--grandchild" => flags.grandchild = Some(args.next().expect("FILE")),
                other => panic!("unknown flag {other}"),
            }
        }
        flags
    }

    /// What the process does before it reads anything.
    fn start(&self) {
        if self.ignore_term {
            ignore_sigterm();
        }
        if let Some(file) = &self.grandchild {
            start_grandchild(file, self.ignore_term);
        }
        if self.flood > 0 {
            flood_stderr(self.flood);
        }
        if self.no_read {
            eprintln!("not reading stdin");
            sleep_forever();
        }
    }
}

/// Starts this binary again as `--sleeper`, sharing stdio and process
/// group, and writes its pid to `file`.
fn start_grandchild(file: &str, ignore_term: bool) {
    let mut cmd = std::process::Command::new(std::env::current_exe().expect("exe"));
    cmd.arg("--sleeper");
    if ignore_term {
        cmd.arg("--ignore-term");
    }
    let child = cmd.spawn().expect("grandchild");
    std::fs::write(file, child.id().to_string()).expect("pid file");
    eprintln!("grandchild {}", child.id());
    // Never waited for: it is the transport's to kill.
    std::mem::forget(child);
}

fn main() {
    let flags = Flags::parse();
    flags.start();
    serve(&mut std::io::stdout().lock());
    eprintln!("stdin ended");
    if flags.ignore_eof {
        sleep_forever();
    }
}

/// Reads requests until stdin ends, doing what each method asks.
fn serve(out: &mut impl Write) {
    let stdin = std::io::stdin().lock();
    let mut seen: Vec<Value> = Vec::new();
    for line in stdin.split(b'\n') {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_slice::<Value>(&line) else {
            eprintln!("could not parse a line");
            continue;
        };
        let Some(id) = message.get("id").cloned() else {
            seen.push(message);
            continue;
        };
        let method = message["method"].as_str().unwrap_or_default();
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        if misbehave(out, method, &params, &id, &seen) {
            answer(out, &id, json!({ "echo": params }));
        }
    }
}

/// Does what `method` asks (see the module docs); true when the request
/// is still to be answered with its echo.
fn misbehave(
    out: &mut impl Write,
    method: &str,
    params: &Value,
    id: &Value,
    seen: &[Value],
) -> bool {
    let size = params["size"].as_u64().unwrap_or(0) as usize;
    match method {
        "junk/ascii" => send(out, b"Server starting... this is not JSON"),
        "junk/utf8" => send(out, b"\xff\xfe\x80 not UTF-8 \xc3\x28"),
        "junk/json" => send(out, br#"{"hello": "world"}"#),
        "junk/null_id" => send(
            out,
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
        ),
        "big" => {
            let pad = "x".repeat(size + 1);
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"pad":"{pad}"}}}}"#);
            send(out, line.as_bytes());
            return false;
        }
        "big/noid" => {
            let pad = "x".repeat(size + 1);
            let line = format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"pad":"{pad}"}}}}"#
            );
            send(out, line.as_bytes());
        }
        "stderr" => flood_stderr(params["bytes"].as_u64().unwrap_or(0) as usize),
        "die" => {
            eprintln!("{}", params["message"].as_str().unwrap_or("dying"));
            std::process::exit(params["code"].as_i64().unwrap_or(1) as i32);
        }
        "hang" => return false,
        "close_stdout" => {
            close_stdout();
            sleep_forever()
        }
        "env" => {
            let name = params["name"].as_str().unwrap_or_default();
            let value = std::env::var(name).ok();
            answer(out, id, json!({ "value": value }));
            return false;
        }
        "cwd" => {
            let cwd = std::env::current_dir().expect("cwd");
            answer(out, id, json!({ "cwd": cwd }));
            return false;
        }
        "seen" => {
            answer(out, id, json!({ "seen": seen }));
            return false;
        }
        _ => {}
    }
    true
}
