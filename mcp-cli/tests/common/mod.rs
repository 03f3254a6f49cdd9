//! What several of these test binaries share.

use std::process::{Command, Stdio};
use std::time::Duration;

/// `mcp-reference-server --http 0`, killed when dropped.
pub(crate) struct HttpServer {
    child: std::process::Child,
    /// The server's endpoint.
    pub(crate) url: String,
}

impl HttpServer {
    /// Starts the server of `era` on a free loopback port.
    pub(crate) fn start(era: &str) -> HttpServer {
        use std::io::{BufRead, BufReader};
        let mut child = Command::new(mcp_reference_server::binaries::server_path())
            .args(["--http", "0", "--era", era])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the reference server starts");
        let out = child.stdout.take().expect("its stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(out).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(Duration::from_secs(10)).unwrap_or_default();
        let mut server = HttpServer {
            child,
            url: String::new(),
        };
        server.url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("no URL on the server's first line: {line:?}"))
            .to_owned();
        server
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
