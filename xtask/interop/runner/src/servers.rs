//! The HTTP servers: each started once per server and wire on a free
//! loopback port, waited for until it listens, its output kept (the cancel
//! check reads the Python server's stderr), and stopped after its columns.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::model::{Kind, Target, Wire};

/// How long a server may take to listen: Node and the Python SDK start in
/// about a second; a cold disk may take several.
const LISTEN_LIMIT: Duration = Duration::from_secs(30);

/// The last lines a server wrote, shared with the columns that use it.
pub(crate) type Tail = Arc<Mutex<VecDeque<String>>>;

/// A server listening on loopback; stopped when dropped.
pub(crate) struct Running {
    child: Option<Child>,
    /// Where the client connects.
    pub(crate) url: String,
    /// The server's last 40 lines of stdout and stderr.
    pub(crate) output: Tail,
    /// How long it took to listen.
    pub(crate) started_in: Duration,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Starts `target` (an HTTP wire) and waits until it listens, or returns
/// at once the URL of one given with `--url`.
pub(crate) fn start(target: &Target) -> Result<Running, String> {
    let output = Tail::default();
    if let Some(url) = &target.url {
        return Ok(Running {
            child: None,
            url: url.clone(),
            output,
            started_in: Duration::ZERO,
        });
    }
    let port = free_port()?;
    let (args, path): (Vec<OsString>, &str) = match (target.kind, target.wire) {
        (Kind::Python, Wire::Http) => (
            vec!["streamable-http".into(), port.to_string().into()],
            "/mcp",
        ),
        (Kind::Python, Wire::HttpStateless) => (
            vec![
                "streamable-http".into(),
                port.to_string().into(),
                "--stateless".into(),
            ],
            "/mcp",
        ),
        (Kind::Python, Wire::Sse) => (vec!["sse".into(), port.to_string().into()], "/sse"),
        (Kind::Everything, Wire::Http) => (vec!["streamableHttp".into()], "/mcp"),
        (Kind::Everything, Wire::Sse) => (vec!["sse".into()], "/sse"),
        (kind, wire) => {
            return Err(format!("{} has no {} server", kind.label(), wire.label()));
        }
    };
    let started = Instant::now();
    let mut child = Command::new(&target.program)
        .args(&target.args)
        .args(&args)
        // server-everything reads its port from the environment.
        .env("PORT", port.to_string())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start {:?}: {e}", target.program))?;
    keep(child.stdout.take(), &output);
    keep(child.stderr.take(), &output);
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    loop {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            break;
        }
        let tail = || {
            output
                .lock()
                .unwrap()
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join(" | ")
        };
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!(
                "the server exited ({status}) before listening: {}",
                tail()
            ));
        }
        if started.elapsed() > LISTEN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "not listening on {addr} after {LISTEN_LIMIT:?}: {}",
                tail()
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(Running {
        child: Some(child),
        url: format!("http://127.0.0.1:{port}{path}"),
        output,
        started_in: started.elapsed(),
    })
}

/// A port nobody listens on now (the kernel's pick; the small window
/// before the server binds it is acceptable on loopback).
fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .map_err(|e| format!("no free loopback port: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("no free loopback port: {e}"))
}

/// Keeps the last 40 lines of `pipe` in `tail`, on a thread of its own.
fn keep(pipe: Option<impl Read + Send + 'static>, tail: &Tail) {
    let Some(pipe) = pipe else { return };
    let tail = tail.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            let mut tail = tail.lock().unwrap();
            if tail.len() == 40 {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    });
}
