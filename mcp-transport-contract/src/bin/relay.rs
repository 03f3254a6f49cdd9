//! `mcp-transport-contract-relay --connect HOST:PORT`: a child process
//! whose stdio is played by a test over TCP.
//!
//! It connects to the address, then relays its stdin lines to the socket
//! and the socket's lines to its stdout. A control line from the socket,
//! `{"$relay":"die","code":3,"stderr":"last words"}`, makes it write the
//! stderr text and exit with that code, so a process-based transport meets
//! a real process dying. EOF on stdin, or the socket closing, ends it with
//! code 0.

use std::io::{BufWriter, Read, Write};
use std::net::TcpStream;
use std::process::exit;

use mcp_protocol::framing::{LineSplitter, Split};

fn usage() -> ! {
    eprintln!("usage: mcp-transport-contract-relay --connect HOST:PORT");
    exit(2)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let addr = match (args.next().as_deref(), args.next()) {
        (Some("--connect"), Some(addr)) => addr,
        _ => usage(),
    };
    let stream = match TcpStream::connect(&addr) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mcp-transport-contract-relay: cannot connect to {addr}: {e}");
            exit(1)
        }
    };
    let _ = stream.set_nodelay(true);
    let mut to_socket = match stream.try_clone() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mcp-transport-contract-relay: {e}");
            exit(1)
        }
    };

    // stdin -> socket, on a thread of its own; EOF on stdin ends the relay.
    std::thread::spawn(move || {
        each_line(std::io::stdin().lock(), |raw, _| {
            to_socket.write_all(raw).is_ok()
        });
        let _ = to_socket.flush();
        let _ = to_socket.shutdown(std::net::Shutdown::Write);
        exit(0)
    });

    // socket -> stdout, with control lines.
    let stdout = std::io::stdout();
    let mut stdout = BufWriter::new(stdout.lock());
    each_line(stream, |raw, line| {
        if let Some((code, stderr)) = control(line) {
            let _ = stdout.flush();
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(stderr.as_bytes());
            if !stderr.ends_with('\n') {
                let _ = err.write_all(b"\n");
            }
            let _ = err.flush();
            exit(code)
        }
        stdout.write_all(raw).is_ok() && stdout.flush().is_ok()
    });
    let _ = stdout.flush();
    exit(0)
}

/// Reads `input` to its end (or an error), handing each line to `each` as
/// its raw bytes (newline included, so what is relayed is byte for byte
/// what came) and its content; stops when `each` returns false. The lines
/// are found by mcp-protocol's splitter, with no limit: the relay passes
/// everything through, over-long lines included.
fn each_line(mut input: impl Read, mut each: impl FnMut(&[u8], &[u8]) -> bool) {
    let mut splitter = LineSplitter::new(usize::MAX);
    let mut buf = Vec::new();
    let mut chunk = vec![0; 64 * 1024];
    loop {
        let mut start = 0;
        while let Split::Line { len, consumed } = splitter.split(&buf[start..]) {
            let raw = &buf[start..start + consumed];
            if !each(raw, &raw[..len]) {
                return;
            }
            start += consumed;
        }
        buf.drain(..start);
        match input.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    // A last line without its newline is relayed as it is.
    if let Some(Split::Line { len, consumed }) = splitter.finish(&buf) {
        let raw = &buf[..consumed];
        each(raw, &raw[..len]);
    }
}

/// A `{"$relay":"die",...}` line: the exit code and the stderr text.
fn control(line: &[u8]) -> Option<(i32, String)> {
    let text = line.trim_ascii();
    if !text.starts_with(b"{") || !text.windows(8).any(|w| w == b"\"$relay\"") {
        return None;
    }
    let value: serde_json::Value = serde_json::from_slice(text).ok()?;
    let obj = value.as_object()?;
    if obj.contains_key("jsonrpc") || obj.get("$relay")?.as_str()? != "die" {
        return None;
    }
    let code = obj.get("code").and_then(|c| c.as_i64()).unwrap_or(1) as i32;
    let stderr = obj
        .get("stderr")
        .and_then(|s| s.as_str())
        .unwrap_or_default()
        .to_owned();
    Some((code, stderr))
}
