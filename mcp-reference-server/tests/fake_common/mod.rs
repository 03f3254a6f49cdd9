//! Shared by the fake server's tests: a raw JSON-RPC line wire to
//! `serve_lines` over an in-memory pipe. No client is involved: the tests
//! write the very lines a client would and read the server's answers.

#![allow(dead_code, unreachable_pub)]

use std::time::Duration;

use mcp_reference_server::{Ending, FakeConfig, serve_lines};
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};
use tokio::task::JoinHandle;

/// The modern revision.
pub const MODERN: &str = "2026-07-28";

/// A modern `_meta` with these client capabilities.
pub fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "0"},
    })
}

/// Modern params: `extra` plus a `_meta` with these capabilities.
pub fn modern_params(mut extra: Value, caps: Value) -> Value {
    extra["_meta"] = meta(caps);
    extra
}

/// One connection to `serve_lines`, driven by hand.
pub struct Wire {
    writer: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    /// The server's task; yields how serving ended.
    pub server: JoinHandle<std::io::Result<Ending>>,
    /// Messages read while waiting for a specific answer.
    pub seen: Vec<Value>,
}

impl Wire {
    /// Starts a server with `config`.
    pub fn start(config: FakeConfig) -> Wire {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server);
        let server = tokio::spawn(serve_lines(config, server_read, server_write));
        let (read, writer) = tokio::io::split(client);
        Wire {
            writer,
            lines: BufReader::new(read).lines(),
            server,
            seen: Vec::new(),
        }
    }

    /// Writes one message as a line.
    pub async fn send(&mut self, message: Value) {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.writer.write_all(&line).await.unwrap();
    }

    /// Writes raw bytes.
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).await.unwrap();
    }

    /// Writes raw bytes, giving up after `ms`; whether all were written
    /// (the pipe holds 64 KiB: more is written only as the server reads).
    pub async fn send_raw_within(&mut self, bytes: &[u8], ms: u64) -> bool {
        tokio::time::timeout(Duration::from_millis(ms), self.writer.write_all(bytes))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// Closes the client's side of the input.
    pub async fn close(&mut self) {
        self.writer.shutdown().await.unwrap();
    }

    /// The next message within `ms`, or `None` (silence or end of output).
    pub async fn next_within(&mut self, ms: u64) -> Option<Value> {
        match tokio::time::timeout(Duration::from_millis(ms), self.lines.next_line()).await {
            Ok(Ok(Some(line))) => Some(serde_json::from_str(&line).expect("the server wrote JSON")),
            _ => None,
        }
    }

    /// The next message; panics after 5 s.
    pub async fn next(&mut self) -> Value {
        self.next_within(5000)
            .await
            .expect("the server sent nothing within 5 s")
    }

    /// Sends a request and returns its answer's envelope; anything read
    /// before it goes to [`Wire::seen`].
    pub async fn call(&mut self, id: Value, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.answer_to(&id).await
    }

    /// Reads until the answer to `id`.
    pub async fn answer_to(&mut self, id: &Value) -> Value {
        loop {
            let message = self.next().await;
            if message.get("method").is_none() && message["id"] == *id {
                return message;
            }
            self.seen.push(message);
        }
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// The legacy handshake at `version`; returns the initialize result.
    pub async fn handshake(&mut self, version: &str, caps: Value) -> Value {
        let params = json!({
            "protocolVersion": version,
            "capabilities": caps,
            "clientInfo": {"name": "raw-test", "version": "0"},
        });
        let answer = self.call(json!(0), "initialize", params).await;
        self.notify("notifications/initialized", json!({})).await;
        answer["result"].clone()
    }

    /// Asserts nothing arrives within `ms`.
    pub async fn assert_silent(&mut self, ms: u64) {
        if let Some(m) = self.next_within(ms).await {
            panic!("expected silence, got {m}");
        }
    }

    /// The messages in [`Wire::seen`] with this method, taken out.
    pub fn take_seen(&mut self, method: &str) -> Vec<Value> {
        let (taken, kept) = std::mem::take(&mut self.seen)
            .into_iter()
            .partition(|m| m["method"] == method);
        self.seen = kept;
        taken
    }
}

/// The error code of an answer envelope.
pub fn code(answer: &Value) -> i64 {
    answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected an error, got {answer}"))
}

/// The text of a tool result's first content item.
pub fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("expected text content, got {answer}"))
}
