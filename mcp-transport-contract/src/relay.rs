//! The relay: a real child process whose stdio is played by the suite.

use std::ffi::OsString;
use std::io;
use std::net::SocketAddr;

use futures::future::BoxFuture;
use mcp_protocol::Message;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

use super::{LinePeer, Peer};

/// The exit code a peer's server dies with when it can choose
/// ([`Peer::die`]).
pub const DIE_CODE: i32 = 3;

/// What a peer's server writes to its stderr before it dies, when it can.
pub const DIE_STDERR: &str = "last words";

/// Listens for the relay binary (`mcp-transport-contract-relay`), which a
/// process-based transport starts as its server.
///
/// The relay connects to this listener and relays: its stdin lines to the
/// socket, the socket's lines to its stdout. So the transport under test
/// runs a real child process, and the suite plays that process's stdio
/// through the [`RelayPeer`] that [`accept`](Self::accept) returns.
///
/// ```no_run
/// # async fn demo() -> std::io::Result<()> {
/// use mcp_transport_contract::RelayServer;
///
/// let relay = RelayServer::bind().await?;
/// let argv = relay.argv(); // [relay binary, "--connect", "127.0.0.1:PORT"]
/// let child = tokio::process::Command::new(&argv[0]).args(&argv[1..]).spawn()?;
/// let peer = relay.accept().await?;
/// # drop((child, peer)); Ok(()) }
/// ```
#[derive(Debug)]
pub struct RelayServer {
    listener: TcpListener,
    addr: SocketAddr,
}

impl RelayServer {
    /// Listens on `127.0.0.1` on a free port.
    pub async fn bind() -> io::Result<RelayServer> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        Ok(RelayServer { listener, addr })
    }

    /// The address the relay connects to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The command line that starts a relay connecting here:
    /// `[relay binary, "--connect", "127.0.0.1:PORT"]`. The binary is found
    /// (or built) by [`crate::binaries::relay_path`].
    pub fn argv(&self) -> Vec<OsString> {
        vec![
            crate::binaries::relay_path().into_os_string(),
            "--connect".into(),
            self.addr.to_string().into(),
        ]
    }

    /// The same command line as a [`std::process::Command`].
    pub fn command(&self) -> std::process::Command {
        let argv = self.argv();
        let mut command = std::process::Command::new(&argv[0]);
        command.args(&argv[1..]);
        command
    }

    /// Waits for the next relay to connect and returns the peer playing
    /// its stdio.
    pub async fn accept(&self) -> io::Result<RelayPeer> {
        let (stream, _) = self.listener.accept().await?;
        stream.set_nodelay(true)?;
        let (read, write) = stream.into_split();
        Ok(RelayPeer {
            line: LinePeer::new(read, write),
        })
    }
}

/// The suite's end of a relay process: what the transport writes to the
/// relay's stdin arrives here; what is sent here comes out of its stdout.
#[derive(Debug)]
pub struct RelayPeer {
    line: LinePeer<OwnedReadHalf, OwnedWriteHalf>,
}

impl RelayPeer {
    /// Makes the relay write `stderr` to its stderr and exit with `code`.
    pub async fn die_with(&mut self, code: i32, stderr: &str) {
        let control = json!({ "$relay": "die", "code": code, "stderr": stderr });
        self.line.send_line(control.to_string().as_bytes()).await;
    }

    /// The line peer underneath.
    pub fn line_peer(&mut self) -> &mut LinePeer<OwnedReadHalf, OwnedWriteHalf> {
        &mut self.line
    }
}

impl Peer for RelayPeer {
    fn recv(&mut self) -> BoxFuture<'_, Option<Message>> {
        self.line.recv()
    }

    fn send(&mut self, message: Message) -> BoxFuture<'_, ()> {
        self.line.send(message)
    }

    fn send_raw(&mut self, line: Vec<u8>) -> BoxFuture<'_, ()> {
        self.line.send_raw(line)
    }

    /// The relay writes [`DIE_STDERR`] to its stderr and exits with
    /// [`DIE_CODE`].
    fn die(&mut self) -> BoxFuture<'_, ()> {
        Box::pin(self.die_with(DIE_CODE, DIE_STDERR))
    }
}
