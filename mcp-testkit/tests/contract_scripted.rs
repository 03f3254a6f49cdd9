//! The scripted transport's wire passes every rule of the contract.
//!
//! `ScriptedTransport` is an `Engine` over an in-memory wire whose far end
//! plays a script; here the far end is the suite's own peer on the very same
//! wire (`memory_harness`), so every rule applies.

use std::sync::Arc;

use mcp_testkit::contract::{
    Harness, Outcome, SuiteConfig, memory_harness, run_contract_suite_with,
};
use mcp_transport::ConnectionHandlers;

#[tokio::test(start_paused = true)]
async fn the_in_memory_engine_passes_every_rule() {
    let wall = std::time::Instant::now();
    let report = run_contract_suite_with(
        |handlers: ConnectionHandlers| async move {
            let (engine, peer) = memory_harness(handlers);
            Harness::new(Arc::new(engine), peer)
        },
        SuiteConfig::default(),
    )
    .await;
    println!("{report}\nwall time: {:?}", wall.elapsed());
    report.assert_all_passed();
    let not_applicable: Vec<_> = report
        .results
        .iter()
        .filter(|r| !matches!(r.outcome, Outcome::Passed))
        .map(|r| r.name)
        .collect();
    assert!(
        not_applicable.is_empty(),
        "not applicable: {not_applicable:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_in_memory_engine_passes_every_rule_on_the_real_clock() {
    let wall = std::time::Instant::now();
    let report = run_contract_suite_with(
        |handlers: ConnectionHandlers| async move {
            let (engine, peer) = memory_harness(handlers);
            Harness::new(Arc::new(engine), peer)
        },
        // The default unit (100 ms): the rules' time bounds are a few units
        // over what they measure, which at 20 ms a busy machine can exceed.
        SuiteConfig::default(),
    )
    .await;
    println!("{report}\nwall time: {:?}", wall.elapsed());
    report.assert_all_passed();
}
