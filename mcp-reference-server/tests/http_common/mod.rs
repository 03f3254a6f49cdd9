//! A raw HTTP/1.1 client for the HTTP fake's tests: it writes requests by
//! hand and reads heads and (chunked or sized) bodies as they come, so that
//! streams, drips and bodies that never end can be looked at as they are.

#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{Instant, timeout};

/// How long any single wait may take.
pub const WAIT: Duration = Duration::from_secs(5);

/// A response being read.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    socket: TcpStream,
    raw: Vec<u8>,
    chunked: bool,
    length: Option<usize>,
    /// The decoded body so far.
    pub body: Vec<u8>,
    pub ended: bool,
    /// How many reads brought body bytes.
    pub reads: usize,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON (`Null` if it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The `data:` of every SSE event so far, as JSON where it is.
    pub fn events(&self) -> Vec<Value> {
        self.text()
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str(d).ok())
            .collect()
    }

    /// Reads once more (at most `within`); false when nothing came.
    pub async fn read_more(&mut self, within: Duration) -> bool {
        if self.ended {
            return false;
        }
        let mut buf = [0u8; 16 * 1024];
        match timeout(within, self.socket.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                self.ended = true;
                true
            }
            Ok(Ok(n)) => {
                self.raw.extend_from_slice(&buf[..n]);
                self.decode();
                self.reads += 1;
                true
            }
            Err(_) => false,
        }
    }

    /// Reads until the body holds `needle` (panics after [`WAIT`]).
    pub async fn until(&mut self, needle: &str) {
        let start = Instant::now();
        while !self.text().contains(needle) {
            assert!(
                start.elapsed() < WAIT && !self.ended,
                "never got {needle:?}; got {:?}",
                self.text()
            );
            self.read_more(WAIT).await;
        }
    }

    /// Reads until the body ends (panics after [`WAIT`]).
    pub async fn read_to_end(&mut self) {
        let start = Instant::now();
        while !self.ended {
            assert!(
                start.elapsed() < WAIT,
                "the body never ended: {:?}",
                self.text()
            );
            self.read_more(WAIT).await;
        }
    }

    fn decode(&mut self) {
        if !self.chunked {
            self.body.append(&mut self.raw);
            if self.length.is_some_and(|l| self.body.len() >= l) {
                self.ended = true;
            }
            return;
        }
        loop {
            let Some(eol) = find(&self.raw, b"\r\n") else {
                return;
            };
            let size = std::str::from_utf8(&self.raw[..eol])
                .ok()
                .and_then(|s| usize::from_str_radix(s.trim(), 16).ok())
                .unwrap_or(0);
            if size == 0 {
                self.ended = true;
                return;
            }
            if self.raw.len() < eol + 2 + size + 2 {
                return;
            }
            self.body
                .extend_from_slice(&self.raw[eol + 2..eol + 2 + size]);
            self.raw.drain(..eol + 2 + size + 2);
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Sends a request; returns once its head came, or `None` if none came
/// within `within`.
pub async fn send_within(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
    within: Duration,
) -> Option<Reply> {
    let mut socket = TcpStream::connect(addr).await.expect("connect");
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (n, v) in headers {
        request.push_str(&format!("{n}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    socket.write_all(request.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    let deadline = Instant::now() + within;
    let end = loop {
        if let Some(end) = find(&raw, b"\r\n\r\n") {
            break end;
        }
        let mut buf = [0u8; 4096];
        let n = match tokio::time::timeout_at(deadline, socket.read(&mut buf)).await {
            Ok(Ok(n)) => n,
            _ => return None,
        };
        if n == 0 {
            return None;
        }
        raw.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let rest = raw[end + 4..].to_vec();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let get = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let chunked = get("transfer-encoding").is_some_and(|v| v.contains("chunked"));
    let length = get("content-length").and_then(|v| v.parse().ok());
    let mut reply = Reply {
        status,
        headers,
        socket,
        raw: rest,
        chunked,
        length,
        body: Vec::new(),
        ended: length == Some(0),
        reads: 0,
    };
    reply.decode();
    Some(reply)
}

/// Sends a request and waits for its head (panics after [`WAIT`]).
pub async fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Reply {
    send_within(addr, method, path, headers, body, WAIT)
        .await
        .unwrap_or_else(|| panic!("no response head to {method} {path}"))
}

/// The headers of a JSON POST.
pub const POST: [(&str, &str); 2] = [
    ("content-type", "application/json"),
    ("accept", "application/json, text/event-stream"),
];

/// A POST of `body` with the usual headers and `extra`.
pub async fn post(addr: SocketAddr, extra: &[(&str, &str)], body: &Value) -> Reply {
    let mut headers = POST.to_vec();
    headers.extend_from_slice(extra);
    send(addr, "POST", "/mcp", &headers, &body.to_string()).await
}

/// `initialize` for `version`, read to its answer.
pub async fn initialize(addr: SocketAddr, version: &str) -> Reply {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {"roots": {}, "sampling": {}},
        "clientInfo": {"name": "raw", "version": "0"}}});
    let mut reply = post(addr, &[], &body).await;
    reply.until("\"result\"").await;
    reply
}

/// A legacy session: `initialize`, then `notifications/initialized`.
/// Returns the session id.
pub async fn session(addr: SocketAddr, version: &str) -> String {
    let reply = initialize(addr, version).await;
    let id = reply
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let initialized = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let done = post(addr, &[("mcp-session-id", &id)], &initialized).await;
    assert_eq!(done.status, 202);
    id
}

/// A request body.
pub fn request(id: i64, method: &str, params: Value) -> Value {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}
