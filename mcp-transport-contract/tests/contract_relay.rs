//! The engine over a real child process: the relay binary, driven by a
//! minimal line pump (what the stdio transport does, without its
//! refinements). This proves the relay and `RelayServer` work; the stdio
//! crate runs the same suite with its real transport.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::Inbound;
use mcp_protocol::framing::encode_line;
use mcp_transport::{ConnectionHandlers, Engine, ExitInfo, GoneInfo, RequestOptions, Transport};
use mcp_transport_contract::{
    DIE_CODE, DIE_STDERR, Harness, Peer, RelayServer, SuiteConfig, run_contract_suite_with,
};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

/// Starts a relay and pumps its stdio through an engine.
async fn connect(handlers: ConnectionHandlers) -> Harness {
    let relay = RelayServer::bind().await.expect("bind");
    let mut command = Command::from(relay.command());
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().expect("spawn the relay");
    let peer = tokio::time::timeout(Duration::from_secs(30), relay.accept())
        .await
        .expect("the relay did not connect")
        .expect("accept");

    let (engine, mut outbound) = Engine::new(handlers);
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();

    let shutdown = engine.shutdown_token();
    tokio::spawn(async move {
        loop {
            let item = tokio::select! {
                item = outbound.recv() => item,
                _ = shutdown.cancelled() => None,
            };
            let Some(item) = item else { break };
            let line = encode_line(&item.into_message());
            if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
                break;
            }
        }
        // Dropping stdin ends the relay (EOF on its stdin).
    });
    let stderr_task = tokio::spawn(async move {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text).await;
        text
    });
    let reader = engine.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(stdout).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            match Inbound::parse(line.as_bytes()) {
                Ok(inbound) => reader.receive_inbound(inbound),
                Err(error) => reader.receive_malformed(error),
            }
        }
        let status = child.wait().await.ok();
        let tail = stderr_task.await.unwrap_or_default();
        let mut info = GoneInfo::new("the relay's stdout closed").with_stderr_tail(tail);
        if let Some(code) = status.and_then(|s| s.code()) {
            info = info.with_exit(ExitInfo::code(code));
        }
        reader.peer_gone(info);
    });
    // The pump reads the relay's exit status and stderr itself.
    Harness::new(Arc::new(engine), peer)
        .reports_exit_status()
        .reports_stderr_tail()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_over_a_real_process_passes_every_rule() {
    let wall = std::time::Instant::now();
    let report = run_contract_suite_with(connect, SuiteConfig::default()).await;
    println!("{report}\nwall time: {:?}", wall.elapsed());
    report.assert_all_passed();
    assert_eq!(report.ran_count(), mcp_transport_contract::rules().len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_relay_dies_with_the_code_and_stderr_asked_for() {
    let harness = connect(ConnectionHandlers::discard()).await;
    let transport = harness.transport;
    let mut peer = harness.peer.unwrap();
    let pending = transport.request(
        mcp_protocol::Request::new(1, "tools/list", None),
        RequestOptions::new(),
    );
    assert!(peer.recv().await.is_some());
    peer.die().await;
    let error = tokio::time::timeout(Duration::from_secs(30), pending)
        .await
        .expect("the death was not noticed")
        .unwrap_err();
    let mcp_transport::TransportError::ServerGone(info) = error else {
        panic!("expected ServerGone, got {error:?}");
    };
    assert_eq!(info.exit.and_then(|e| e.code), Some(DIE_CODE));
    assert_eq!(info.stderr_tail.as_deref().map(str::trim), Some(DIE_STDERR));
    assert!(!transport.is_alive());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_relay_exits_zero_at_the_end_of_its_stdin() {
    let relay = RelayServer::bind().await.unwrap();
    let mut child = Command::from(relay.command())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut peer = relay.accept().await.unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n")
        .await
        .unwrap();
    let got = peer.recv().await.unwrap();
    assert_eq!(got.method(), Some("n"));
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
}
