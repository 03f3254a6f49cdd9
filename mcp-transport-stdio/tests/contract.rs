//! The transport contract suite (`mcp-transport-contract`), over an
//! in-memory duplex and over a real child process (its relay binary).

use std::sync::Arc;
use std::time::Duration;

use mcp_transport::ConnectionHandlers;
use mcp_transport_contract::{Harness, LinePeer, rules, run_contract_suite};
use mcp_transport_stdio::StreamTransport;

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn contract_over_a_duplex() {
    let report = run_contract_suite(|handlers: ConnectionHandlers| async move {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(theirs);
        let transport = StreamTransport::builder()
            .name("duplex")
            .build_duplex(ours, handlers);
        Harness::new(Arc::new(transport), LinePeer::new(read, write))
    })
    .await;
    println!("{report}");
    // Every rule runs: the duplex has a peer that can send raw lines.
    report.assert_all_passed();
    assert_eq!(report.ran(), all_rules());
}

fn all_rules() -> Vec<&'static str> {
    rules().iter().map(|r| r.name).collect()
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contract_over_a_child_process() {
    use mcp_transport_contract::RelayServer;
    use mcp_transport_stdio::StdioCommand;

    let relay = Arc::new(RelayServer::bind().await.expect("bind the relay listener"));
    let argv = relay.argv();
    let command = StdioCommand::new(&argv[0])
        .args(&argv[1..])
        .name("relay")
        .close_grace(Duration::from_millis(500))
        .term_grace(Duration::from_millis(500));
    let report = run_contract_suite(move |handlers: ConnectionHandlers| {
        let relay = relay.clone();
        let command = command.clone();
        async move {
            let transport = command.spawn(handlers).expect("start the relay");
            let peer = tokio::time::timeout(Duration::from_secs(30), relay.accept())
                .await
                .expect("the relay connects in time")
                .expect("accept the relay");
            // The child transport reaps the relay and drains its stderr,
            // so `peer_death` requires both in ServerGone.
            Harness::new(Arc::new(transport), peer)
                .reports_exit_status()
                .reports_stderr_tail()
        }
    })
    .await;
    println!("{report}");
    report.assert_all_passed();
    assert_eq!(report.ran(), all_rules());
}
