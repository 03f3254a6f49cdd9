//! The scripted transport's wire passes every rule of the contract.
//!
//! `ScriptedTransport` is an `Engine` over an in-memory wire whose far end
//! plays a script; here the far end is the suite's own peer on the very same
//! wire (`memory_harness`), so every rule applies.

use std::sync::Arc;

use mcp_testkit::contract::{
    Harness, Outcome, SuiteConfig, memory_harness, rules, run_contract_suite_with,
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
    assert_eq!(report.ran_count(), rules().len());
}

#[tokio::test(start_paused = true)]
async fn a_skipped_rule_must_be_named_and_is_not_passed() {
    let report = run_contract_suite_with(
        |handlers: ConnectionHandlers| async move {
            let (engine, peer) = memory_harness(handlers);
            Harness::new(Arc::new(engine), peer)
        },
        SuiteConfig::default().skip("thousand_concurrent"),
    )
    .await;
    assert!(matches!(
        report.outcome("thousand_concurrent"),
        Some(Outcome::NotApplicable(_))
    ));
    assert_eq!(report.ran_count(), rules().len() - 1);
    assert!(!report.all_passed());
    report.assert_all_passed_except(&["thousand_concurrent"]);
    let refused = |expected: &'static [&'static str]| {
        let report = report.clone();
        std::panic::catch_unwind(move || report.assert_all_passed_except(expected)).is_err()
    };
    assert!(refused(&[]), "a skipped rule that is not named");
    assert!(
        refused(&["thousand_concurrent", "ordering"]),
        "a named rule that ran and passed"
    );
    assert!(
        refused(&["thousand_concurrent", "no_such_rule"]),
        "a name the suite does not know"
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
    assert_eq!(report.ran_count(), rules().len());
}
