//! A supervised client over real server processes: a server killed with
//! SIGKILL in the middle of calls is started again and the same client goes
//! on; one that dies at once every time spends the budget.

use std::time::Duration;

use mcp_client::{Client, ErrorKind, RestartPolicy, ServerEvent, Watch};
use mcp_reference_server::binaries::server_path;
use mcp_transport_stdio::StdioCommand;
use serde_json::json;

const BOUND: Duration = Duration::from_secs(20);

/// The variable that marks a test's servers: each test gives its own
/// name, so that its servers are told apart from those of tests running
/// beside it in the same process (plain `cargo test`), and the process id
/// from those of other runs.
const MARKER: &str = "MCP_SUPERVISION_TEST";

/// The marker's value for the test `name`.
fn mark(name: &str) -> String {
    format!("{}-{name}", std::process::id())
}

/// The pids of the live processes running `binary` that carry `marker`
/// (zombies, whose environment reads empty, are not counted).
fn servers_marked(binary: &std::path::Path, marker: &str) -> Vec<i32> {
    let needle = format!("{MARKER}={}", mark(marker));
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        let marked = environ
            .split(|b| *b == 0)
            .any(|var| var == needle.as_bytes());
        let exe = std::fs::read_link(entry.path().join("exe")).ok();
        if marked && exe.as_deref() == Some(binary) {
            found.push(pid);
        }
    }
    found
}

/// The test's servers now running.
fn servers(marker: &str) -> Vec<i32> {
    servers_marked(&server_path(), marker)
}

fn kill_server(marker: &str) -> i32 {
    let pids = servers(marker);
    assert_eq!(pids.len(), 1, "one server runs: {pids:?}");
    // SAFETY: signalling a process this test started.
    assert_eq!(unsafe { libc::kill(pids[0], libc::SIGKILL) }, 0);
    pids[0]
}

/// Waits until the client has seen its connection end, so that the next
/// call finds it down (rather than racing the death on the wire, when it
/// could only say the call may have run).
async fn until_down(client: &Client) {
    tokio::time::timeout(BOUND, async {
        while client.is_alive() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the end of the connection is seen");
}

/// The reference server, marked as the test's by `marker`.
fn server(marker: &str, args: &[&str]) -> StdioCommand {
    StdioCommand::new(server_path())
        .env(MARKER, mark(marker))
        .args(args)
        .name("reference")
        .close_grace(Duration::from_millis(500))
}

fn quick() -> RestartPolicy {
    RestartPolicy::new().backoff(Duration::from_millis(20), Duration::from_millis(200))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_is_started_again_and_only_harmless_calls_are_resent() {
    // Reads are answered 1.5 s late, so one is in flight when the kill
    // comes; so is a slow tool call, which may have acted.
    let client = Client::builder()
        .supervise(quick())
        .connect(server(
            "killed",
            &[
                "--era",
                "legacy",
                "--knob",
                "answer-late=1500:resources/read",
            ],
        ))
        .await
        .unwrap();
    let mut events = client.events();
    let first = client
        .call_tool("echo", json!({"text": "before"}))
        .await
        .unwrap();
    assert!(!first.is_error());

    let reading = tokio::spawn({
        let client = client.clone();
        async move { client.read_resource("fake://text/hello").await }
    });
    let acting = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .call_tool("slow", json!({"steps": 1, "delayMs": 5000}))
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let killed = kill_server("killed");

    let acted = tokio::time::timeout(BOUND, acting).await.unwrap().unwrap();
    let error = acted.expect_err("a call that may have acted is not sent again");
    assert!(error.may_have_run(), "{error:?}");
    let read = tokio::time::timeout(BOUND, reading).await.unwrap().unwrap();
    let read = read.expect("a read is sent again on the new server");
    assert_eq!(read.contents.len(), 1);

    let after = client
        .call_tool("echo", json!({"text": "after"}))
        .await
        .expect("the next call reaches the new server");
    assert!(!after.is_error());
    let now = servers("killed");
    assert_eq!(now.len(), 1);
    assert_ne!(now[0], killed, "a new process serves");

    let restarted = tokio::time::timeout(BOUND, async {
        loop {
            match events.recv().await {
                Some(ServerEvent::Restarted(attempt)) => return attempt,
                Some(_) => {}
                None => panic!("the event stream ended"),
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(restarted.attempt, 1);
    assert_eq!(restarted.failure, None);
    let gone = restarted.gone.expect("the dead server's details");
    assert_eq!(gone.exit.and_then(|e| e.signal), Some(libc::SIGKILL));
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_is_opened_again_after_a_restart() {
    let client = Client::builder()
        .supervise(quick())
        .connect(server("listen", &["--era", "modern"]))
        .await
        .unwrap();
    let mut changes = client.subscribe(Watch::new().tools()).await.unwrap();
    kill_server("listen");
    until_down(&client).await;
    // The next call restarts the server (and the listen goes out again).
    client
        .call_tool("echo", json!({"text": "wake"}))
        .await
        .unwrap();
    let changed = tokio::time::timeout(BOUND, async {
        loop {
            // Until the listen is back, a change may go unseen: add tools
            // until one is announced.
            client
                .call_tool("add_tool", json!({"name": "late"}))
                .await
                .unwrap();
            if let Ok(Some(event)) =
                tokio::time::timeout(Duration::from_millis(500), changes.recv()).await
            {
                return event;
            }
        }
    })
    .await
    .expect("a change after the restart arrives");
    assert_eq!(changed, ServerEvent::ToolsListChanged);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_at_once_every_time_spends_the_budget() {
    // The first start serves; every later one exits at once.
    let flag = std::env::temp_dir().join(format!("mcp-supervision-{}", std::process::id()));
    let _ = std::fs::remove_file(&flag);
    let script = format!(
        "if [ -e '{flag}' ]; then echo 'cannot start' >&2; exit 3; fi; touch '{flag}'; exec '{server}' --era legacy",
        flag = flag.display(),
        server = server_path().display()
    );
    let client = Client::builder()
        .supervise(quick().max_restarts(3, Duration::from_secs(60)))
        .connect(
            StdioCommand::new("sh")
                .env(MARKER, mark("dies-at-once"))
                .args(["-c", &script])
                .close_grace(Duration::from_millis(200)),
        )
        .await
        .unwrap();
    kill_server("dies-at-once");
    until_down(&client).await;
    let error = tokio::time::timeout(BOUND, client.call_tool("echo", json!({"text": "x"})))
        .await
        .unwrap()
        .expect_err("the server never comes back");
    let ErrorKind::RestartsExhausted { attempts } = error.kind() else {
        panic!("{error:?}");
    };
    assert_eq!(attempts.len(), 3, "{attempts:?}");
    for (i, attempt) in attempts.iter().enumerate() {
        assert_eq!(attempt.attempt as usize, i + 1);
        assert!(attempt.failure.is_some(), "{attempt:?}");
    }
    let exit = attempts[2].gone.as_ref().and_then(|g| g.exit.as_ref());
    assert_eq!(exit.and_then(|e| e.code), Some(3), "{attempts:?}");
    // Later calls fail the same way, at once.
    let again = client.list_tools().await.expect_err("still down");
    assert!(matches!(again.kind(), ErrorKind::RestartsExhausted { .. }));
    let _ = std::fs::remove_file(&flag);
    client.close().await;
}

/// Over HTTP: the server goes away and comes back on the same address a
/// moment later; the supervised client connects again. A list (harmless
/// to send twice) is the call in the gap: its pooled connection may break
/// mid-request, and a refused connection sent nothing.
#[cfg(feature = "http")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_that_comes_back_is_connected_again() {
    use mcp_reference_server::FakeConfig;
    use mcp_reference_server::http::{HttpFake, HttpOptions};
    use std::future::IntoFuture;

    let server = HttpFake::start(FakeConfig::modern()).await.unwrap();
    let addr = server.addr();
    let client = Client::builder()
        .supervise(quick().max_restarts(20, Duration::from_secs(60)))
        .connect(mcp_client::HttpTransportBuilder::new(server.url()))
        .await
        .unwrap();
    let mut events = client.events();
    client
        .call_tool("echo", json!({"text": "one"}))
        .await
        .unwrap();
    drop(server);
    let back = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        HttpFake::start_on(FakeConfig::modern(), HttpOptions::new(), addr)
            .await
            .unwrap()
    });
    let listed = tokio::time::timeout(
        BOUND,
        client
            .list_tools()
            .options(&mcp_client::CallOptions::new().bypass_cache())
            .into_future(),
    )
    .await
    .unwrap()
    .expect("the list reaches the server once it is back");
    assert!(listed.items.iter().any(|t| t.name == "echo"));
    let _server = back.await.unwrap();
    let result = client
        .call_tool("echo", json!({"text": "two"}))
        .await
        .unwrap();
    assert!(
        serde_json::to_string(&result.content)
            .unwrap()
            .contains("two")
    );
    let mut attempts = Vec::new();
    while let Ok(Some(ServerEvent::Restarted(a))) =
        tokio::time::timeout(Duration::from_millis(100), events.recv()).await
    {
        attempts.push(a);
    }
    assert!(!attempts.is_empty(), "the restart was told");
    assert_eq!(attempts.last().unwrap().failure, None, "{attempts:?}");
    // Each reconnect opens at once (no round trip in the modern era), so
    // only a backoff that goes on doubling across restarts keeps the
    // attempts few: 20, 40, 80, 160 ms and 200 ms on cover the 400 ms
    // gap in about six, where a backoff that started over would use the
    // whole budget of 20.
    assert!(
        attempts.len() <= 10,
        "{} restarts: {attempts:?}",
        attempts.len()
    );
    client.close().await;
}

/// Waits until `marker`'s servers are exactly `count`.
async fn until_servers(marker: &str, count: usize) -> Vec<i32> {
    tokio::time::timeout(BOUND, async {
        loop {
            let now = servers(marker);
            if now.len() == count {
                return now;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{count} servers never ran: {:?}", servers(marker)))
}

/// `close` while a restart waits out its backoff: the wait ends at once,
/// no server is started after it, and the call that met the end of the
/// connection is not sent again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_during_a_restart_wait_starts_nothing_and_resends_nothing() {
    let client = Client::builder()
        // A backoff far longer than the test waits for anything.
        .supervise(RestartPolicy::new().backoff(Duration::from_secs(60), Duration::from_secs(60)))
        .connect(server("close-waiting", &["--era", "legacy"]))
        .await
        .unwrap();
    kill_server("close-waiting");
    until_down(&client).await;
    let listing = tokio::spawn({
        let client = client.clone();
        async move { client.list_tools().await }
    });
    // Time for the call to meet the dead connection and begin the
    // restart's wait of a minute (a close before that would stop the
    // restart before it began, which proves less).
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!listing.is_finished(), "the call waits for the restart");
    tokio::time::timeout(BOUND, client.close())
        .await
        .expect("close ends the waiting restart at once");
    let listed = tokio::time::timeout(BOUND, listing)
        .await
        .expect("the waiting call ends with close")
        .unwrap();
    let error = listed.expect_err("nothing is sent after close");
    assert!(
        matches!(
            error.transport_error(),
            Some(mcp_transport::TransportError::Closed)
        ),
        "{error:?}"
    );
    assert_eq!(
        servers("close-waiting"),
        Vec::<i32>::new(),
        "no server runs"
    );
}

/// `close` while a restart is connecting (the new server started, its
/// `initialize` not yet answered): once `close` returns, no server runs,
/// and the call that met the end of the connection is not sent again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_during_a_reconnect_leaves_no_server_running() {
    let client = Client::builder()
        .supervise(quick())
        .connect(server(
            "close-connecting",
            &["--era", "legacy", "--knob", "answer-late=1500:initialize"],
        ))
        .await
        .unwrap();
    kill_server("close-connecting");
    until_down(&client).await;
    until_servers("close-connecting", 0).await;
    let listing = tokio::spawn({
        let client = client.clone();
        async move { client.list_tools().await }
    });
    // The restart has started a new server, which answers its
    // `initialize` only 1.5 s later.
    until_servers("close-connecting", 1).await;
    client.close().await;
    assert_eq!(
        servers("close-connecting"),
        Vec::<i32>::new(),
        "a server runs after close"
    );
    let listed = tokio::time::timeout(BOUND, listing)
        .await
        .expect("the waiting call ends with close")
        .unwrap();
    let error = listed.expect_err("the call is not sent again after close");
    assert!(
        matches!(
            error.transport_error(),
            Some(mcp_transport::TransportError::Closed)
        ),
        "{error:?}"
    );
    assert_eq!(servers("close-connecting"), Vec::<i32>::new());
}

/// A loopback front for an HTTP server, which a test can turn away
/// (connections refused), make answer every request with 503 and
/// `Retry-After`, or point at a server.
#[cfg(feature = "http")]
mod front {
    use std::net::SocketAddr;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpSocket, TcpStream};
    use tokio::task::{JoinHandle, JoinSet};

    /// What the front does with a connection.
    #[derive(Clone, Copy, Debug)]
    pub(super) enum Mode {
        /// Relays it to this server.
        Forward(SocketAddr),
        /// Answers each request with 503 and `Retry-After: SECS`.
        Busy(u64),
    }

    pub(super) struct Front {
        addr: SocketAddr,
        mode: Arc<Mutex<Mode>>,
        /// The accept loop, which holds the listening socket.
        accept: Mutex<Option<JoinHandle<()>>>,
        /// While connections are refused: the address, bound and not
        /// listening, so that no other test's server takes it meanwhile.
        held: Mutex<Option<TcpSocket>>,
        /// Every connection's task.
        tasks: Arc<Mutex<JoinSet<()>>>,
        busy_answers: Arc<AtomicUsize>,
    }

    impl Front {
        pub(super) async fn start(mode: Mode) -> Front {
            let socket = bound(SocketAddr::from(([127, 0, 0, 1], 0)));
            let addr = socket.local_addr().unwrap();
            let front = Front {
                addr,
                mode: Arc::new(Mutex::new(mode)),
                accept: Mutex::new(None),
                held: Mutex::new(None),
                tasks: Arc::default(),
                busy_answers: Arc::default(),
            };
            front.serve(socket.listen(1024).unwrap());
            front
        }

        pub(super) fn url(&self) -> String {
            format!("http://{}/mcp", self.addr)
        }

        /// How many 503s it has sent.
        pub(super) fn busy_answers(&self) -> usize {
            self.busy_answers.load(Ordering::SeqCst)
        }

        /// Closes the listening socket and every connection: connecting
        /// is refused until `reopen`.
        pub(super) async fn refuse(&self) {
            let accept = self.accept.lock().unwrap().take();
            if let Some(accept) = accept {
                accept.abort();
                // Until the listening socket is gone.
                let _ = accept.await;
            }
            self.close_connections().await;
            *self.held.lock().unwrap() = Some(bound(self.addr));
        }

        /// Listens again on the same address.
        pub(super) async fn reopen(&self, mode: Mode) {
            self.set_mode(mode).await;
            let socket = self.held.lock().unwrap().take().expect("refused");
            self.serve(socket.listen(1024).unwrap());
        }

        /// Changes what new connections get; open ones are closed.
        pub(super) async fn set_mode(&self, mode: Mode) {
            *self.mode.lock().unwrap() = mode;
            self.close_connections().await;
        }

        /// Closes every open connection, and waits until they are closed
        /// (a request on one must not reach the old mode's server).
        async fn close_connections(&self) {
            let mut open = std::mem::take(&mut *self.tasks.lock().unwrap());
            open.abort_all();
            while open.join_next().await.is_some() {}
        }

        fn serve(&self, listener: TcpListener) {
            let mode = self.mode.clone();
            let tasks = self.tasks.clone();
            let busy = self.busy_answers.clone();
            let accept = tokio::spawn(async move {
                loop {
                    let Ok((stream, _)) = listener.accept().await else {
                        return;
                    };
                    let mode = *mode.lock().unwrap();
                    let busy = busy.clone();
                    tasks.lock().unwrap().spawn(connection(stream, mode, busy));
                }
            });
            *self.accept.lock().unwrap() = Some(accept);
        }
    }

    impl Drop for Front {
        fn drop(&mut self) {
            if let Some(accept) = self.accept.lock().unwrap().take() {
                accept.abort();
            }
            self.tasks.lock().unwrap().abort_all();
        }
    }

    /// A socket bound to `addr` (the address reused: the front's closed
    /// connections leave it in `TIME_WAIT`).
    fn bound(addr: SocketAddr) -> TcpSocket {
        let socket = TcpSocket::new_v4().unwrap();
        socket.set_reuseaddr(true).unwrap();
        socket.bind(addr).unwrap();
        socket
    }

    async fn connection(mut stream: TcpStream, mode: Mode, busy: Arc<AtomicUsize>) {
        match mode {
            Mode::Forward(server) => {
                if let Ok(mut upstream) = TcpStream::connect(server).await {
                    let _ = tokio::io::copy_bidirectional(&mut stream, &mut upstream).await;
                }
            }
            Mode::Busy(secs) => {
                // One request (read whole, so that closing sends no
                // reset), one answer, and the connection closed.
                if read_request(&mut stream).await.is_none() {
                    return;
                }
                let body = "down for maintenance";
                let answer = format!(
                    "HTTP/1.1 503 Service Unavailable\r\nRetry-After: {secs}\r\n\
                     Content-Type: text/plain\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{body}",
                    body.len()
                );
                if stream.write_all(answer.as_bytes()).await.is_ok() {
                    busy.fetch_add(1, Ordering::SeqCst);
                }
                let _ = stream.shutdown().await;
            }
        }
    }

    /// Reads a request's head and its `Content-Length` body.
    async fn read_request(stream: &mut TcpStream) -> Option<()> {
        let mut read = Vec::new();
        let mut buf = [0u8; 4096];
        let head_end = loop {
            if let Some(at) = read.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            let n = stream.read(&mut buf).await.ok()?;
            if n == 0 {
                return None;
            }
            read.extend_from_slice(&buf[..n]);
        };
        let head = String::from_utf8_lossy(&read[..head_end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        let mut body = read.len() - head_end;
        while body < length {
            let n = stream.read(&mut buf).await.ok()?;
            if n == 0 {
                return None;
            }
            body += n;
        }
        Some(())
    }
}

/// A maintenance window, as a supervised client of `config`'s era meets
/// it: the server goes away (connections refused for 1.5 s), then its
/// front answers every request with 503 and `Retry-After: 2` for 6 s,
/// then a new server (new sessions) serves. A call made at once waits it
/// out and succeeds; a call with a short timeout fails within it, saying
/// when the server asked to be retried; the same client goes on.
#[cfg(feature = "http")]
async fn maintenance_window(config: fn() -> mcp_reference_server::FakeConfig) {
    use front::{Front, Mode};
    use mcp_client::CallOptions;
    use mcp_reference_server::http::HttpFake;
    use std::future::IntoFuture;
    use tokio::time::Instant;

    let first = HttpFake::start(config()).await.unwrap();
    let front = std::sync::Arc::new(Front::start(Mode::Forward(first.addr())).await);
    let client = Client::builder()
        .supervise(RestartPolicy::new())
        .connect(mcp_client::HttpTransportBuilder::new(front.url()))
        .await
        .unwrap();
    let before = client
        .call_tool("echo", json!({"text": "before"}))
        .await
        .unwrap();
    assert!(!before.is_error());
    let mut events = client.events();

    front.refuse().await;
    drop(first);
    let began = Instant::now();
    let window = tokio::spawn({
        let front = front.clone();
        async move {
            tokio::time::sleep_until(began + Duration::from_millis(1500)).await;
            front.reopen(Mode::Busy(2)).await;
            tokio::time::sleep_until(began + Duration::from_millis(7500)).await;
            let second = HttpFake::start(config()).await.unwrap();
            front.set_mode(Mode::Forward(second.addr())).await;
            second
        }
    });

    // A harmless call, made as the server goes away.
    let during = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .list_tools()
                .options(&CallOptions::new().bypass_cache())
                .into_future()
                .await
        }
    });
    // In the 503s (once a restart has met one): a call whose timeout ends
    // well before the server is back fails within it, saying when to
    // retry.
    tokio::time::timeout(BOUND, async {
        loop {
            match events.recv().await {
                Some(ServerEvent::Restarted(a))
                    if a.cause.contains("503")
                        || a.failure.as_deref().is_some_and(|f| f.contains("503")) =>
                {
                    return;
                }
                Some(_) => {}
                None => panic!("the event stream ended"),
            }
        }
    })
    .await
    .unwrap_or_else(|_| {
        let (ended, front_failed) = (during.is_finished(), window.is_finished());
        panic!(
            "no restart met the 503s (the call in the window ended: {ended}, \
             the front failed: {front_failed})"
        )
    });
    let asked = Instant::now();
    let short = client
        .list_tools()
        .options(
            &CallOptions::new()
                .bypass_cache()
                .timeout(Duration::from_secs(1)),
        )
        .into_future()
        .await
        .expect_err("the server is not back within a second");
    let waited = asked.elapsed();
    let ErrorKind::Restarting { retry_after, cause } = short.kind() else {
        panic!("{short:?}");
    };
    let retry_after =
        retry_after.unwrap_or_else(|| panic!("the server asked for a delay: {short}"));
    assert!(retry_after <= Duration::from_secs(2), "{short}");
    assert!(cause.contains("503"), "{short}");
    assert!(short.is_timeout());
    // The server is back only 5.5 s or more after the short call began.
    assert!(
        waited < Duration::from_secs(4),
        "waited {waited:?}: {short}"
    );

    let during = tokio::time::timeout(Duration::from_secs(40), during)
        .await
        .expect("the call made in the window ends")
        .unwrap()
        .expect("the call made in the window succeeds once the server is back");
    assert!(during.items.iter().any(|t| t.name == "echo"));
    assert!(began.elapsed() >= Duration::from_millis(7500));
    let _second = window.await.unwrap();
    for text in ["after", "later"] {
        let result = client
            .call_tool("echo", json!({ "text": text }))
            .await
            .expect("the same client works again");
        assert!(
            serde_json::to_string(&result.content)
                .unwrap()
                .contains(text)
        );
    }
    client.close().await;
}

#[cfg(feature = "http")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_client_waits_out_a_maintenance_window() {
    maintenance_window(mcp_reference_server::FakeConfig::modern).await;
}

#[cfg(feature = "http")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_client_waits_out_a_maintenance_window() {
    maintenance_window(mcp_reference_server::FakeConfig::legacy).await;
}

/// A server that asks to be retried in an hour: the restart waits at most
/// the policy's maximum (60 s by default), a call gives up at its own
/// timeout saying so, and `close` ends the waiting restart at once.
#[cfg(feature = "http")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_ends_a_restart_that_waits_for_retry_after() {
    use front::{Front, Mode};
    use mcp_client::CallOptions;
    use mcp_reference_server::{FakeConfig, http::HttpFake};
    use std::future::IntoFuture;

    let server = HttpFake::start(FakeConfig::legacy()).await.unwrap();
    let front = Front::start(Mode::Forward(server.addr())).await;
    let client = Client::builder()
        .supervise(RestartPolicy::new())
        .connect(mcp_client::HttpTransportBuilder::new(front.url()))
        .await
        .unwrap();
    client.list_tools().await.unwrap();
    front.set_mode(Mode::Busy(3600)).await;

    let short = client
        .list_tools()
        .options(
            &CallOptions::new()
                .bypass_cache()
                .timeout(Duration::from_secs(1)),
        )
        .into_future();
    let short = tokio::time::timeout(BOUND, short)
        .await
        .expect("a call waits no longer than its own timeout")
        .expect_err("the server asks for an hour");
    let ErrorKind::Restarting { retry_after, .. } = short.kind() else {
        panic!("{short:?}");
    };
    let retry_after = retry_after.expect("the server asked for a delay");
    assert!(
        retry_after <= Duration::from_secs(60) && retry_after > Duration::from_secs(30),
        "an hour, cut to the policy's 60 s: {short}"
    );

    // A harmless call, which waits for the restart (a tool call met by the
    // 503 would fail at once, not sent again).
    let waiting = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .list_tools()
                .options(&CallOptions::new().bypass_cache())
                .into_future()
                .await
        }
    });
    tokio::time::timeout(BOUND, async {
        while front.busy_answers() < 2 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the call meets the 503");
    tokio::time::timeout(BOUND, client.close())
        .await
        .expect("close returns");
    let error = tokio::time::timeout(BOUND, waiting)
        .await
        .expect("close ends the waiting restart at once")
        .unwrap()
        .expect_err("closed");
    assert!(
        matches!(
            error.transport_error(),
            Some(mcp_transport::TransportError::Closed)
        ),
        "{error:?}"
    );
}

/// An outage longer than the calls' timeouts: each call's restart is
/// dropped at its deadline, mid-wait. The wait is a point in time the next
/// restart goes on from, so once the server can start again a call with
/// the same short timeout reconnects (a wait started over, and longer, at
/// each call would never end within one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_shorter_than_the_backoff_reconnect_once_the_server_is_back() {
    use mcp_client::CallOptions;
    use std::future::IntoFuture;

    // While the flag exists, the server exits at once (an outage).
    let flag = std::env::temp_dir().join(format!("mcp-supervision-outage-{}", std::process::id()));
    let _ = std::fs::remove_file(&flag);
    let script = format!(
        "if [ -e '{flag}' ]; then echo 'down' >&2; exit 3; fi; exec '{server}' --era legacy",
        flag = flag.display(),
        server = server_path().display()
    );
    let client = Client::builder()
        .supervise(
            RestartPolicy::new()
                // The backoff soon outgrows the calls' timeout of 1 s.
                .backoff(Duration::from_millis(50), Duration::from_secs(3))
                .max_restarts(10_000, Duration::from_secs(60)),
        )
        .connect(
            StdioCommand::new("sh")
                .env(MARKER, mark("outage"))
                .args(["-c", &script])
                .close_grace(Duration::from_millis(200)),
        )
        .await
        .unwrap();
    std::fs::write(&flag, b"").unwrap();
    kill_server("outage");
    until_down(&client).await;
    let short = || {
        client
            .list_tools()
            .options(
                &CallOptions::new()
                    .bypass_cache()
                    .timeout(Duration::from_secs(1)),
            )
            .into_future()
    };
    // 6 s of outage: the delays reach the 3 s cap.
    for _ in 0..6 {
        let during = tokio::time::timeout(BOUND, short()).await.unwrap();
        assert!(during.is_err(), "the server is down: {during:?}");
    }
    std::fs::remove_file(&flag).unwrap();
    let mut last = None;
    for _ in 0..20 {
        match tokio::time::timeout(BOUND, short()).await.unwrap() {
            Ok(listed) => {
                assert!(listed.items.iter().any(|t| t.name == "echo"));
                client.close().await;
                return;
            }
            Err(e) => last = Some(e),
        }
    }
    client.close().await;
    panic!(
        "20 calls of 1 s after the server was back, none reconnected: {}",
        last.unwrap()
    );
}

/// `close` while a call's restart waits out its backoff in a future that
/// is alive but no longer polled (the other branch of a `select!` won):
/// `close` returns at once, and once the future is dropped no server runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_returns_while_a_restart_waits_in_a_future_nobody_polls() {
    use mcp_client::CallOptions;
    use std::future::IntoFuture;

    let client = Client::builder()
        .supervise(RestartPolicy::new().backoff(Duration::from_secs(60), Duration::from_secs(60)))
        .connect(server("unpolled-waiting", &["--era", "legacy"]))
        .await
        .unwrap();
    kill_server("unpolled-waiting");
    until_down(&client).await;
    let options = CallOptions::new().bypass_cache();
    let mut call = Box::pin(client.list_tools().options(&options).into_future());
    // Polled until its restart waits (a minute), then left alone.
    let polled = tokio::time::timeout(Duration::from_millis(500), &mut call).await;
    assert!(
        polled.is_err(),
        "the call waits for the restart: {polled:?}"
    );
    tokio::time::timeout(Duration::from_secs(10), client.close())
        .await
        .expect("close returns though the restart's future is not polled");
    drop(call);
    assert_eq!(
        servers("unpolled-waiting"),
        Vec::<i32>::new(),
        "no server runs"
    );
    let after = tokio::time::timeout(BOUND, client.list_tools().options(&options).into_future())
        .await
        .expect("a call after close ends at once")
        .expect_err("closed");
    // It meets the closed connection, not the restart the future holds.
    assert!(
        matches!(
            after.transport_error(),
            Some(mcp_transport::TransportError::Closed)
        ),
        "{after:?}"
    );
}

/// `close` while a call's restart has started a new server (its
/// `initialize` not yet answered) in a future that is no longer polled:
/// `close` returns at once and closes that server itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_ends_a_server_a_restart_opened_in_a_future_nobody_polls() {
    use mcp_client::CallOptions;
    use std::future::IntoFuture;

    let client = Client::builder()
        .supervise(quick())
        .connect(server(
            "unpolled-connecting",
            &["--era", "legacy", "--knob", "answer-late=3000:initialize"],
        ))
        .await
        .unwrap();
    kill_server("unpolled-connecting");
    until_down(&client).await;
    until_servers("unpolled-connecting", 0).await;
    let options = CallOptions::new().bypass_cache();
    let mut call = Box::pin(client.list_tools().options(&options).into_future());
    // Polled until the restart has started a new server, then left alone.
    tokio::select! {
        ended = &mut call => panic!("the call waits for the new server: {ended:?}"),
        _ = until_servers("unpolled-connecting", 1) => {}
    }
    tokio::time::timeout(Duration::from_secs(10), client.close())
        .await
        .expect("close returns though the restart's future is not polled");
    assert_eq!(
        servers("unpolled-connecting"),
        Vec::<i32>::new(),
        "a server runs after close"
    );
    drop(call);
    assert_eq!(servers("unpolled-connecting"), Vec::<i32>::new());
}

/// A tool call met by a 503 (which a gateway may send after forwarding
/// it) is not sent again, even when the server is back by then: it fails
/// saying the server asked to retry later, and after when. The connection
/// is restarted for the next call, which succeeds.
#[cfg(feature = "http")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_met_by_a_503_is_not_sent_again() {
    use front::{Front, Mode};
    use mcp_client::CallOptions;
    use mcp_reference_server::{FakeConfig, http::HttpFake};
    use mcp_transport::TransportError;
    use std::future::IntoFuture;

    let server = HttpFake::start(FakeConfig::modern()).await.unwrap();
    let front = std::sync::Arc::new(Front::start(Mode::Forward(server.addr())).await);
    let client = Client::builder()
        .supervise(quick())
        .connect(mcp_client::HttpTransportBuilder::new(front.url()))
        .await
        .unwrap();
    client
        .call_tool("echo", json!({"text": "before"}))
        .await
        .unwrap();
    let mut events = client.events();
    front.set_mode(Mode::Busy(1)).await;
    // The client's pool learns on a task of its own that the front closed
    // its kept-alive connection; a call sent before that meets the closed
    // connection (a lost answer, not the 503 this test is about).
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The server is back as soon as the call met the 503: a call sent
    // again would run.
    let back = tokio::spawn({
        let front = front.clone();
        let addr = server.addr();
        async move {
            while front.busy_answers() < 1 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            front.set_mode(Mode::Forward(addr)).await;
        }
    });
    let acted = tokio::time::timeout(BOUND, client.call_tool("echo", json!({"text": "once"})))
        .await
        .expect("the call ends");
    let error = acted.expect_err("a tool call met by a 503 is not sent again");
    assert!(error.may_have_run(), "{error:?}");
    let Some(TransportError::RetryLater {
        status: 503,
        retry_after,
        ..
    }) = error.transport_error()
    else {
        panic!("{error:?}");
    };
    assert_eq!(*retry_after, Some(Duration::from_secs(1)), "{error}");
    assert!(error.to_string().contains("retry later"), "{error}");
    tokio::time::timeout(BOUND, back).await.unwrap().unwrap();

    let listed = tokio::time::timeout(
        BOUND,
        client
            .list_tools()
            .options(&CallOptions::new().bypass_cache())
            .into_future(),
    )
    .await
    .unwrap()
    .expect("the next call reaches the server");
    assert!(listed.items.iter().any(|t| t.name == "echo"));
    let restarted = tokio::time::timeout(BOUND, async {
        loop {
            match events.recv().await {
                Some(ServerEvent::Restarted(attempt)) => return attempt,
                Some(_) => {}
                None => panic!("the event stream ended"),
            }
        }
    })
    .await
    .expect("the connection was restarted for the next call");
    assert!(restarted.cause.contains("503"), "{restarted:?}");
    client
        .call_tool("echo", json!({"text": "after"}))
        .await
        .expect("the same client goes on");
    client.close().await;
}
