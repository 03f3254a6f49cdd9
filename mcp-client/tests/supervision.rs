//! A supervised client over real server processes: a server killed with
//! SIGKILL in the middle of calls is started again and the same client goes
//! on; one that dies at once every time spends the budget.

use std::time::Duration;

use mcp_client::{Client, ErrorKind, RestartPolicy, ServerEvent, Watch};
use mcp_testkit::binaries::server_path;
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
    use mcp_testkit::fake::FakeConfig;
    use mcp_testkit::fake::http::{HttpFake, HttpOptions};
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
    assert!(listed.tools.iter().any(|t| t.name == "echo"));
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
