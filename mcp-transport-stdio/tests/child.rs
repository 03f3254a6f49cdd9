//! The child-process transport against a real, misbehaving server process
//! (`src/bin/misbehave.rs`). Bounds are generous (real processes on a
//! loaded machine); the figures measured are printed (`--nocapture`).
//!
//! What each bound allows for: what it measures takes milliseconds on an
//! idle machine, and a busy 2-core machine can leave a process unscheduled
//! for a second or more, so "at once" is [`AT_ONCE`] (5 s); that still tells
//! "noticed" from "never noticed" (the requests' own timeouts are 10 s, a
//! hang is forever). Tests whose server must leave on EOF before any signal
//! give it [`EOF_GRACE`] (10 s), not the 300 ms the signal tests use.
#![cfg(unix)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use mcp_protocol::Request;
use mcp_transport::{
    CancellationToken, ConnectionHandlers, Connector, Listener, ListenerStream, RequestOptions,
    Transport, TransportError, TransportEvent,
};
use mcp_transport_stdio::{ChildTransport, EnvPolicy, StdioCommand};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-stdio-misbehave");
const GRACE: Duration = Duration::from_millis(300);
/// How long something that happens "at once" may take on a busy machine.
const AT_ONCE: Duration = Duration::from_secs(5);
/// The grace before SIGTERM for servers that exit on EOF: so long that a
/// busy machine cannot make the signal win the race.
const EOF_GRACE: Duration = Duration::from_secs(10);

fn server() -> StdioCommand {
    StdioCommand::new(BIN)
        .name("misbehave")
        .close_grace(GRACE)
        .term_grace(GRACE)
}

/// The server, with [`EOF_GRACE`] before any signal.
fn patient_server() -> StdioCommand {
    server().close_grace(EOF_GRACE)
}

/// A child whose transport events the test reads.
fn spawn(cmd: &StdioCommand) -> (ChildTransport, ListenerStream<TransportEvent>) {
    let (events, stream) = Listener::bounded("transport events", 1024);
    let handlers = ConnectionHandlers::discard().with_events(events);
    let t = cmd.spawn(handlers).expect("spawn");
    (t, stream)
}

async fn call(
    t: &dyn Transport,
    id: i64,
    method: &str,
    params: Value,
) -> Result<Value, TransportError> {
    let options = RequestOptions::new().timeout(Duration::from_secs(10));
    t.request(Request::new(id, method, Some(params)), options)
        .await
}

async fn next_event(events: &mut ListenerStream<TransportEvent>) -> TransportEvent {
    tokio::time::timeout(AT_ONCE, events.next())
        .await
        .expect("an event in time")
        .expect("the listener is open")
}

fn pid_alive(pid: u32) -> bool {
    // SAFETY: kill with signal 0 only checks for existence.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    if r == 0 {
        return true;
    }
    let err = std::io::Error::last_os_error();
    assert_eq!(err.raw_os_error(), Some(libc::ESRCH), "kill(pid, 0): {err}");
    false
}

/// The state letter in /proc/<pid>/stat, and the parent pid.
fn proc_state(pid: u32) -> Option<(char, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

/// A direct child must be gone and reaped at once.
fn assert_reaped(pid: u32) {
    assert!(!pid_alive(pid), "the server {pid} is still there");
    assert!(proc_state(pid).is_none(), "the server {pid} left a zombie");
}

/// A direct child must be reaped soon (by the transport's task or its
/// reaper thread, not by whoever dropped it): gone from /proc, no zombie.
/// Returns how long that took.
async fn wait_reaped(pid: u32) -> Duration {
    let start = Instant::now();
    while proc_state(pid).is_some() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the server {pid} was never reaped (state {:?})",
            proc_state(pid)
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(!pid_alive(pid));
    start.elapsed()
}

/// A grandchild must be dead at once (gone, or a zombie that is not ours
/// to reap), and gone entirely once PID 1 has reaped it. Returns how long
/// the latter took.
async fn assert_grandchild_gone(pid: u32) -> Duration {
    let start = Instant::now();
    let me = std::process::id();
    loop {
        match proc_state(pid) {
            None => break,
            Some(('Z', ppid)) => {
                assert_ne!(ppid, me, "a zombie grandchild of ours");
            }
            Some((state, _)) => assert!(
                start.elapsed() < AT_ONCE,
                "the grandchild {pid} still runs (state {state})"
            ),
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "the grandchild {pid} was never reaped"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!pid_alive(pid));
    start.elapsed()
}

async fn read_pid_file(path: &std::path::Path) -> u32 {
    let start = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        assert!(start.elapsed() < AT_ONCE, "no pid file");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn temp_file(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-stdio-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn echoes_and_closes_on_eof() {
    let (t, _events) = spawn(&patient_server());
    let pid = t.pid().unwrap();
    let r = call(&t, 1, "tools/list", json!({"a": 1})).await.unwrap();
    assert_eq!(r["echo"], json!({"a": 1}));
    assert_eq!(r["resultType"], "complete");
    let start = Instant::now();
    t.close().await;
    let took = start.elapsed();
    println!("close of a well-behaved server (exits on EOF): {took:?}");
    assert!(took < EOF_GRACE, "it exits on EOF, before any signal");
    assert_eq!(t.exit_status().and_then(|e| e.code), Some(0));
    assert!(!t.is_alive());
    assert!(t.stderr_tail().contains("stdin ended"));
    assert_reaped(pid);
    // Idempotent, and later requests fail with Closed.
    t.close().await;
    assert_eq!(
        call(&t, 2, "x", json!({})).await,
        Err(TransportError::Closed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_flooding_stderr_is_answered() {
    let bytes = Arc::new(AtomicUsize::new(0));
    let counted = bytes.clone();
    let cmd = server()
        .arg("--stderr-flood")
        .arg((2 << 20).to_string())
        .on_stderr(move |line| {
            counted.fetch_add(line.len() + 1, Ordering::Relaxed);
        });
    let (t, _events) = spawn(&cmd);
    let start = Instant::now();
    // 2 MiB written before the server reads anything: an undrained pipe
    // (64 KiB) would block it forever.
    let r = call(&t, 1, "echo", json!({"n": 1})).await.unwrap();
    println!(
        "answered after a 2 MiB stderr flood at start-up in {:?}",
        start.elapsed()
    );
    assert_eq!(r["echo"]["n"], 1);
    // And 1 MiB more in the middle of a request.
    let start = Instant::now();
    let r = call(&t, 2, "stderr", json!({"bytes": 1 << 20}))
        .await
        .unwrap();
    println!(
        "answered after a 1 MiB stderr flood before the answer in {:?}",
        start.elapsed()
    );
    assert_eq!(r["echo"]["bytes"], 1 << 20);
    // The callback runs on a thread of its own, a little behind.
    let start = Instant::now();
    while bytes.load(Ordering::Relaxed) < 3 << 20 {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the callback missed lines"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let tail = t.stderr_tail();
    assert!(tail.len() <= 64 * 1024, "the tail is bounded");
    assert!(tail.lines().count() <= 50, "the tail is bounded");
    assert!(tail.contains("noise on stderr"));
    t.close().await;
}

/// A stderr callback that blocks (a user logging to a full pipe, a lock
/// held elsewhere) must not stop the drain: the server writes more than a
/// pipe holds to stderr before it answers, and is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_stderr_callback_does_not_stop_the_drain() {
    let gate = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
    let lines = Arc::new(AtomicUsize::new(0));
    let (g, counted) = (gate.clone(), lines.clone());
    let cmd = server().on_stderr(move |_line| {
        counted.fetch_add(1, Ordering::Relaxed);
        let (open, turn) = &*g;
        let mut open = open.lock().unwrap();
        while !*open {
            open = turn.wait(open).unwrap();
        }
    });
    let (t, _events) = spawn(&cmd);
    // Were the callback run on the drain, the runtime itself could stall
    // (a worker blocked for good): a thread of our own lets it go after a
    // while, so that such a fault shows as a slow answer, not a hang.
    let watchdog = gate.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(8));
        *watchdog.0.lock().unwrap() = true;
        watchdog.1.notify_all();
    });
    let start = Instant::now();
    let options = RequestOptions::new().timeout(Duration::from_secs(30));
    let r = t
        .request(
            Request::new(1, "stderr", Some(json!({"bytes": 2 << 20}))),
            options,
        )
        .await;
    let took = start.elapsed();
    println!("answered after 2 MiB of stderr, the callback blocked, in {took:?}");
    let seen = lines.load(Ordering::Relaxed);
    // Let the callback go before judging, so that nothing stays blocked.
    *gate.0.lock().unwrap() = true;
    gate.1.notify_all();
    assert_eq!(r.expect("answered")["echo"]["bytes"], 2 << 20);
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert!(seen >= 1, "the callback was called");
    assert!(t.stderr_tail().contains("noise on stderr"));
    t.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn junk_on_stdout_costs_only_its_line() {
    let (t, mut events) = spawn(&server());
    for (id, method) in [
        (1, "junk/ascii"),
        (2, "junk/utf8"),
        (3, "junk/json"),
        (4, "junk/null_id"),
    ] {
        let r = call(&t, id, method, json!({"id": id})).await;
        assert_eq!(r.unwrap()["echo"]["id"], id, "{method}");
    }
    match next_event(&mut events).await {
        TransportEvent::Noise { line, .. } => assert!(line.starts_with("Server starting")),
        other => panic!("{other:?}"),
    }
    let utf8 = next_event(&mut events).await;
    assert!(matches!(utf8, TransportEvent::Noise { .. }), "{utf8:?}");
    let malformed = next_event(&mut events).await;
    assert!(
        matches!(malformed, TransportEvent::Malformed { .. }),
        "{malformed:?}"
    );
    match next_event(&mut events).await {
        TransportEvent::NullIdError { error } => assert_eq!(error.code, -32700),
        other => panic!("{other:?}"),
    }
    assert_eq!(call(&t, 5, "echo", json!(5)).await.unwrap()["echo"], 5);
    assert!(t.is_alive());
    t.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_limit_lines_are_skipped_and_fail_their_request() {
    const LIMIT: usize = 4096;
    let (t, mut events) = spawn(&server().max_message_size(LIMIT));
    // A line over the limit with no id: skipped, the request succeeds.
    let r = call(&t, 1, "big/noid", json!({"size": LIMIT * 4})).await;
    assert_eq!(r.unwrap()["echo"]["size"], LIMIT * 4);
    match next_event(&mut events).await {
        TransportEvent::TooLarge { id, limit, .. } => assert_eq!((id, limit), (None, LIMIT)),
        other => panic!("{other:?}"),
    }

    // An answer over the limit: its request fails with MessageTooLarge.
    let start = Instant::now();
    let r = call(&t, 2, "big", json!({"size": 1 << 20})).await;
    match r {
        Err(TransportError::MessageTooLarge { size, limit }) => {
            assert_eq!(limit, LIMIT);
            assert!(size > LIMIT);
        }
        other => panic!("expected MessageTooLarge, got {other:?}"),
    }
    println!(
        "a 1 MiB answer over a 4 KiB limit failed its request in {:?}",
        start.elapsed()
    );
    match next_event(&mut events).await {
        TransportEvent::TooLarge { id, request, .. } => {
            assert_eq!((id, request), (Some(2.into()), false));
        }
        other => panic!("{other:?}"),
    }
    // Reading resumed after the discarded megabyte.
    assert_eq!(call(&t, 3, "echo", json!(3)).await.unwrap()["echo"], 3);
    // A line just under the limit still passes.
    let r = call(&t, 4, "echo", json!("y".repeat(LIMIT - 100))).await;
    assert!(r.is_ok());
    t.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_dying_mid_request_fails_every_pending_request() {
    let (t, _events) = spawn(&server());
    let pid = t.pid().unwrap();
    let t: Arc<dyn Transport> = Arc::new(t);
    let hanging = t.request(Request::new(1, "hang", None), RequestOptions::new());
    // Make sure the hang is on the wire and read before the death.
    assert!(call(&*t, 2, "echo", json!(2)).await.is_ok());
    let start = Instant::now();
    let dying = call(
        &*t,
        3,
        "die",
        json!({"code": 3, "message": "fatal: out of cheese"}),
    )
    .await;
    let took = start.elapsed();
    let hanging = hanging.await;
    println!("a request whose server exits (code 3) mid-request failed in {took:?}");
    assert!(took < AT_ONCE, "took {took:?}");
    for r in [dying, hanging] {
        match r {
            Err(TransportError::ServerGone(info)) => {
                assert_eq!(info.reason, "the server exited");
                assert_eq!(info.exit.and_then(|e| e.code), Some(3), "{info}");
                let tail = info.stderr_tail.as_deref().unwrap_or_default();
                assert!(tail.ends_with("fatal: out of cheese"), "tail: {tail:?}");
            }
            other => panic!("expected ServerGone, got {other:?}"),
        }
    }
    assert!(!t.is_alive());
    assert!(matches!(
        call(&*t, 4, "echo", json!(4)).await,
        Err(TransportError::ServerGone(_))
    ));
    assert_reaped(pid);
    t.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_by_a_signal_is_noticed_at_once() {
    let (t, _events) = spawn(&server());
    let pid = t.pid().unwrap();
    let pending = t.request(Request::new(1, "hang", None), RequestOptions::new());
    assert!(call(&t, 2, "echo", json!(2)).await.is_ok());
    let start = Instant::now();
    // SAFETY: signalling our own child.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) }, 0);
    let r = pending.await;
    let took = start.elapsed();
    println!("a pending request failed {took:?} after its server was SIGKILLed");
    assert!(took < AT_ONCE, "took {took:?}");
    match r {
        Err(TransportError::ServerGone(info)) => {
            assert_eq!(info.exit.and_then(|e| e.signal), Some(libc::SIGKILL));
            assert!(info.to_string().contains("killed by signal 9"), "{info}");
        }
        other => panic!("expected ServerGone, got {other:?}"),
    }
    assert!(!t.is_alive());
    t.close().await;
    assert_reaped(pid);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_closing_its_stdout_is_gone_though_it_runs() {
    let (t, _events) = spawn(&server());
    let pid = t.pid().unwrap();
    let pending = t.request(Request::new(1, "hang", None), RequestOptions::new());
    let start = Instant::now();
    let r = call(&t, 2, "close_stdout", json!({})).await;
    let took = start.elapsed();
    println!("a request whose server closed its stdout (and runs on) failed in {took:?}");
    assert!(took < AT_ONCE, "took {took:?}");
    for r in [r, pending.await] {
        match r {
            Err(TransportError::ServerGone(info)) => {
                assert_eq!(info.reason, "the server closed its stdout");
                assert_eq!(info.exit, None);
            }
            other => panic!("expected ServerGone, got {other:?}"),
        }
    }
    assert!(!t.is_alive());
    assert!(pid_alive(pid), "it still runs");
    let start = Instant::now();
    t.close().await;
    println!("closing it took {:?}", start.elapsed());
    assert_eq!(t.exit_status().and_then(|e| e.signal), Some(libc::SIGTERM));
    assert_reaped(pid);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_reads_stdin_never_hangs_us() {
    let (t, _events) = spawn(&server().arg("--no-read"));
    let pid = t.pid().unwrap();
    // Fill the pipe (64 KiB) so that the writer blocks for good.
    let big = json!("z".repeat(256 * 1024));
    let stuck: Vec<_> = (0..4)
        .map(|i| {
            t.request(
                Request::new(100 + i, "echo", Some(big.clone())),
                RequestOptions::new(),
            )
        })
        .collect();
    let start = Instant::now();
    let r = t
        .request(
            Request::new(1, "echo", None),
            RequestOptions::new().timeout(Duration::from_millis(300)),
        )
        .await;
    let took = start.elapsed();
    println!("a request to a server that never reads timed out after {took:?} (timeout 300 ms)");
    assert!(matches!(r, Err(TransportError::Timeout { .. })), "{r:?}");
    assert!(took < Duration::from_millis(300) + AT_ONCE, "took {took:?}");
    let start = Instant::now();
    t.close().await;
    let took = start.elapsed();
    println!("close of a server that never reads took {took:?} (grace {GRACE:?}, then SIGTERM)");
    // EOF cannot reach it; SIGTERM does.
    assert!(took < 2 * GRACE + AT_ONCE, "took {took:?}");
    assert_eq!(t.exit_status().and_then(|e| e.signal), Some(libc::SIGTERM));
    for f in stuck {
        assert_eq!(f.await, Err(TransportError::Closed));
    }
    assert_reaped(pid);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_kills_a_server_ignoring_eof_and_sigterm_with_its_grandchild() {
    let pid_file = temp_file("close-grandchild");
    let cmd = server()
        .args(["--ignore-eof", "--ignore-term", "--grandchild"])
        .arg(&pid_file);
    let (t, _events) = spawn(&cmd);
    let pid = t.pid().unwrap();
    let grandchild = read_pid_file(&pid_file).await;
    assert!(pid_alive(grandchild));
    assert!(call(&t, 1, "echo", json!(1)).await.is_ok());
    let start = Instant::now();
    t.close().await;
    let took = start.elapsed();
    println!(
        "close of a server ignoring EOF and SIGTERM took {took:?} (graces {GRACE:?} + {GRACE:?})"
    );
    assert!(took >= 2 * GRACE, "SIGKILL came early: {took:?}");
    assert!(took < 2 * GRACE + AT_ONCE, "took {took:?}");
    assert_eq!(t.exit_status().and_then(|e| e.signal), Some(libc::SIGKILL));
    assert_reaped(pid);
    let reaped = assert_grandchild_gone(grandchild).await;
    println!("the grandchild was reaped by PID 1 {reaped:?} after close returned");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grandchild_outliving_its_parent_is_killed() {
    // The server exits on EOF at once, but its grandchild would run on
    // (like the real server behind a wrapper that died).
    let pid_file = temp_file("orphan-grandchild");
    let (t, _events) = spawn(&patient_server().arg("--grandchild").arg(&pid_file));
    let pid = t.pid().unwrap();
    let grandchild = read_pid_file(&pid_file).await;
    assert!(call(&t, 1, "echo", json!(1)).await.is_ok());
    let start = Instant::now();
    t.close().await;
    let took = start.elapsed();
    println!("close of a server exiting on EOF, leaving a grandchild, took {took:?}");
    assert!(took < EOF_GRACE, "no signal was needed for the server");
    assert_eq!(t.exit_status().and_then(|e| e.code), Some(0));
    assert_reaped(pid);
    assert_grandchild_gone(grandchild).await;

    // The same when the server dies on its own.
    let pid_file = temp_file("orphan-grandchild-2");
    let (t, _events) = spawn(&server().arg("--grandchild").arg(&pid_file));
    let grandchild = read_pid_file(&pid_file).await;
    let r = call(&t, 1, "die", json!({"code": 1, "message": "bye"})).await;
    assert!(matches!(r, Err(TransportError::ServerGone(_))));
    assert_grandchild_gone(grandchild).await;
    drop(t);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drop_without_close_kills_the_group() {
    let pid_file = temp_file("drop-grandchild");
    let cmd = server()
        .args(["--ignore-eof", "--ignore-term", "--grandchild"])
        .arg(&pid_file);
    let (t, _events) = spawn(&cmd);
    let pid = t.pid().unwrap();
    let grandchild = read_pid_file(&pid_file).await;
    assert!(call(&t, 1, "echo", json!(1)).await.is_ok());
    let pending = t.request(Request::new(2, "hang", None), RequestOptions::new());
    let start = Instant::now();
    drop(t);
    let took = start.elapsed();
    println!("drop (SIGKILL to the group) took {took:?}");
    assert!(took < AT_ONCE, "took {took:?}");
    assert_eq!(pending.await, Err(TransportError::Closed));
    let reaped = wait_reaped(pid).await;
    println!("the server was reaped {reaped:?} after drop returned");
    let reaped = assert_grandchild_gone(grandchild).await;
    println!("the grandchild was reaped by PID 1 {reaped:?} after drop returned");
}

/// Drop runs on whatever thread drops the transport; on a current-thread
/// runtime that is the runtime's only thread. It must not wait there for
/// the server to die: it signals, returns, and the runtime reaps.
#[tokio::test(flavor = "current_thread")]
async fn drop_on_a_runtime_thread_does_not_wait_for_the_server() {
    let (t, _events) = spawn(&server().args(["--ignore-eof", "--ignore-term"]));
    let pid = t.pid().unwrap();
    assert!(call(&t, 1, "echo", json!(1)).await.is_ok());
    let start = Instant::now();
    drop(t);
    let took = start.elapsed();
    // Nothing else ran on this thread since drop began, and drop itself
    // must not have waited for the child: it is still there to reap
    // (killed, or a zombie), whatever the machine's speed.
    let state = proc_state(pid);
    println!("drop took {took:?}; right after it the server was {state:?}");
    assert!(
        state.is_some(),
        "drop waited on the runtime's thread until the server was reaped"
    );
    assert!(took < Duration::from_millis(500), "drop took {took:?}");
    let reaped = wait_reaped(pid).await;
    println!("the runtime reaped the server {reaped:?} after drop returned");
}

/// A runtime that shuts down with the transport's tasks still running
/// leaves the reaping to a thread: no zombie either.
#[test]
fn a_runtime_shut_down_under_a_live_transport_leaves_no_zombie() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (t, pid) = rt.block_on(async {
        let (t, _events) = spawn(&server().arg("--ignore-eof"));
        let pid = t.pid().unwrap();
        assert!(call(&t, 1, "echo", json!(1)).await.is_ok());
        (t, pid)
    });
    drop(rt);
    drop(t);
    let start = Instant::now();
    while proc_state(pid).is_some() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the server {pid} was never reaped (state {:?})",
            proc_state(pid)
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    println!(
        "reaped {:?} after the runtime and transport were dropped",
        start.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drop_outside_any_task_still_kills() {
    let (t, _events) = spawn(&server().arg("--ignore-term"));
    let pid = t.pid().unwrap();
    assert!(call(&t, 1, "echo", json!(1)).await.is_ok());
    // Dropped on a plain thread, no runtime context at all.
    std::thread::spawn(move || drop(t)).join().unwrap();
    wait_reaped(pid).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_sends_notifications_cancelled() {
    let (t, _events) = spawn(&server());
    let token = CancellationToken::new();
    let pending = t.request(
        Request::new("req-7", "hang", None),
        RequestOptions::new().cancellation(token.clone()),
    );
    assert!(call(&t, 1, "echo", json!(1)).await.is_ok());
    token.cancel();
    assert_eq!(pending.await, Err(TransportError::Cancelled));
    // Dropping a future is a cancel too, once the server has the request
    // (the echo behind it is answered only after the server read it; a
    // request dropped before it left the queue is only taken out of it).
    let dropped = t.request(Request::new(8, "hang", None), RequestOptions::new());
    assert!(call(&t, 3, "echo", json!(3)).await.is_ok());
    drop(dropped);
    let seen = call(&t, 2, "seen", json!({})).await.unwrap();
    let seen = seen["seen"].as_array().unwrap();
    let cancelled: Vec<&Value> = seen
        .iter()
        .filter(|n| n["method"] == "notifications/cancelled")
        .map(|n| &n["params"]["requestId"])
        .collect();
    assert_eq!(cancelled, [&json!("req-7"), &json!(8)]);
    t.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connector_starts_the_command_again() {
    let cmd = server();
    let connector: Arc<dyn Connector> = Arc::new(cmd);
    let first = connector
        .connect(ConnectionHandlers::discard())
        .await
        .unwrap();
    // The first one dies on its first request, like an rmcp server on the
    // era probe.
    let r = call(
        &*first,
        1,
        "die",
        json!({"code": 1, "message": "unknown method"}),
    )
    .await;
    assert!(matches!(r, Err(TransportError::ServerGone(_))));
    let second = connector
        .connect(ConnectionHandlers::discard())
        .await
        .unwrap();
    assert_eq!(
        call(&*second, 1, "echo", json!(1)).await.unwrap()["echo"],
        1
    );
    second.close().await;

    let missing: Arc<dyn Connector> = Arc::new(StdioCommand::new("/nonexistent/mcp-server"));
    match missing.connect(ConnectionHandlers::discard()).await {
        Err(TransportError::ServerGone(info)) => {
            assert!(info.reason.contains("could not start"), "{info}");
        }
        other => panic!("expected ServerGone, got {:?}", other.map(|_| ())),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn environment_and_working_directory() {
    let value = async |cmd: StdioCommand, name: &str| {
        let (t, _e) = spawn(&cmd);
        let v = call(&t, 1, "env", json!({"name": name})).await.unwrap()["value"].clone();
        t.close().await;
        v
    };
    // Some variable of ours that the minimal policy does not pass on.
    let (secret, secret_value) = std::env::vars()
        .find(|(k, _)| !mcp_transport_stdio::MINIMAL_ENV_VARS.contains(&k.as_str()))
        .expect("the test runs with some environment");
    assert_eq!(value(server(), &secret).await, json!(secret_value));
    assert_eq!(
        value(server().env_policy(EnvPolicy::Minimal), &secret).await,
        Value::Null
    );
    if let Ok(path) = std::env::var("PATH") {
        assert_eq!(
            value(server().env_policy(EnvPolicy::Minimal), "PATH").await,
            json!(path)
        );
    }
    let empty = server()
        .env_policy(EnvPolicy::Empty)
        .env("MCP_TEST_VAR", "42");
    assert_eq!(value(empty.clone(), "MCP_TEST_VAR").await, json!("42"));
    assert_eq!(value(empty, "PATH").await, Value::Null);
    let allow = server().env_policy(EnvPolicy::AllowList(vec![secret.clone()]));
    assert_eq!(value(allow, &secret).await, json!(secret_value));

    let dir = std::env::temp_dir().canonicalize().unwrap();
    let (t, _e) = spawn(&server().current_dir(&dir));
    let cwd = call(&t, 1, "cwd", json!({})).await.unwrap();
    assert_eq!(cwd["cwd"], json!(dir));
    t.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawn_failure_is_an_io_error() {
    let err = StdioCommand::new("/nonexistent/mcp-server")
        .spawn(ConnectionHandlers::discard())
        .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_concurrent_requests_are_correlated() {
    let (t, _events) = spawn(&server());
    let t = Arc::new(t);
    let futures: Vec<_> = (0..200)
        .map(|i| {
            let t = t.clone();
            tokio::spawn(async move { call(&*t, i, "echo", json!(i)).await })
        })
        .collect();
    for (i, f) in futures.into_iter().enumerate() {
        assert_eq!(f.await.unwrap().unwrap()["echo"], i);
    }
    t.close().await;
}
