//! HTTP servers for the CLI checks: started on a free loopback port,
//! waited for until they listen (with a bound), stopped when dropped.

use std::ffi::OsString;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::Result;

/// How long a server may take to listen.
const LISTEN_LIMIT: Duration = Duration::from_secs(30);

/// A server listening on loopback; killed when dropped.
pub(crate) struct Served {
    child: Child,
    /// Where clients connect.
    pub(crate) url: String,
    /// How long it took to listen.
    pub(crate) started_in: Duration,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `program args…` with `PORT` set to a free port (server-everything
/// reads it; the Python server takes it as an argument, where `{port}`
/// stands in `args`), and waits until it listens; `path` is the URL's.
pub(crate) fn serve(program: &OsString, args: &[OsString], path: &str) -> Result<Served> {
    let port = free_port()?;
    let args: Vec<OsString> = args
        .iter()
        .map(|a| {
            if a == "{port}" {
                port.to_string().into()
            } else {
                a.clone()
            }
        })
        .collect();
    let mut command = Command::new(program);
    command
        .args(&args)
        .env("PORT", port.to_string())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    serve_command(command, port, path)
}

/// A port of 127.0.0.1 that nothing listens on now.
pub(crate) fn free_port() -> Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no free loopback port: {e}"))?
        .port())
}

/// Starts `command`, which is to listen on `port` of 127.0.0.1, and waits
/// until it does; `path` is the URL's.
pub(crate) fn serve_command(mut command: Command, port: u16, path: &str) -> Result<Served> {
    let started = Instant::now();
    let shown = format!("{command:?}");
    let mut child = command
        .spawn()
        .map_err(|e| format!("could not start {shown}: {e}"))?;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("{shown} exited ({status}) before listening"));
        }
        if started.elapsed() > LISTEN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "{shown} not listening on {addr} after {LISTEN_LIMIT:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(Served {
        child,
        url: format!("http://127.0.0.1:{port}{path}"),
        started_in: started.elapsed(),
    })
}
