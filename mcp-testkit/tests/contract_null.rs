//! The null transport keeps every rule that applies to a transport with
//! nobody at the other end, and the report says exactly which those are.

use std::sync::Arc;

use mcp_testkit::contract::{Harness, Outcome, rules, run_contract_suite};
use mcp_testkit::null::NullTransport;
use mcp_transport::ConnectionHandlers;

/// The rules whose peerless part runs for a transport without a peer.
const IN_PART: [&str; 6] = [
    "result_normalized",
    "timeout",
    "hard_maximum",
    "cancel_by_token",
    "no_wire_cancel",
    "close",
];

#[tokio::test(start_paused = true)]
async fn the_null_transport_passes_what_applies() {
    let report = run_contract_suite(|handlers: ConnectionHandlers| async move {
        Harness::without_peer(Arc::new(NullTransport::with_handlers(handlers)))
    })
    .await;
    println!("{report}");
    let not_run: Vec<&str> = rules()
        .iter()
        .map(|r| r.name)
        .filter(|n| !IN_PART.contains(n))
        .collect();
    let mut incomplete: Vec<&str> = IN_PART.to_vec();
    incomplete.extend(&not_run);
    report.assert_all_passed_except(&incomplete);
    assert_eq!(report.ran(), IN_PART, "the rules that ran");
    for rule in IN_PART {
        assert!(
            matches!(report.outcome(rule), Some(Outcome::PassedInPart(_))),
            "{rule}: {:?}",
            report.outcome(rule)
        );
    }
    for rule in not_run {
        assert!(
            matches!(report.outcome(rule), Some(Outcome::NotApplicable(_))),
            "{rule}: {:?}",
            report.outcome(rule)
        );
    }
}

#[tokio::test(start_paused = true)]
#[should_panic(expected = "did not run, and was not named")]
async fn rules_that_did_not_run_must_be_named() {
    let report = run_contract_suite(|handlers: ConnectionHandlers| async move {
        Harness::without_peer(Arc::new(NullTransport::with_handlers(handlers)))
    })
    .await;
    report.assert_all_passed_except(&IN_PART);
}

#[tokio::test(start_paused = true)]
#[should_panic(expected = "ran only in part, and was not named")]
async fn rules_that_ran_in_part_must_be_named() {
    let report = run_contract_suite(|handlers: ConnectionHandlers| async move {
        Harness::without_peer(Arc::new(NullTransport::with_handlers(handlers)))
    })
    .await;
    let not_run: Vec<&str> = rules()
        .iter()
        .map(|r| r.name)
        .filter(|n| !IN_PART.contains(n))
        .collect();
    report.assert_all_passed_except(&not_run);
}

#[tokio::test(start_paused = true)]
#[should_panic(expected = "did not run, and was not named")]
async fn assert_all_passed_refuses_a_peerless_run() {
    let report = run_contract_suite(|handlers: ConnectionHandlers| async move {
        Harness::without_peer(Arc::new(NullTransport::with_handlers(handlers)))
    })
    .await;
    report.assert_all_passed();
}

/// A peerless transport that ignores its options and its own closing:
/// it answers whatever the token says, waits forever when given a limit,
/// and keeps answering after close.
struct CarelessNull;

impl mcp_transport::Transport for CarelessNull {
    fn request(
        &self,
        _request: mcp_protocol::Request,
        options: mcp_transport::RequestOptions,
    ) -> mcp_transport::ResponseFuture {
        if options.timeout.is_some() {
            return Box::pin(std::future::pending());
        }
        Box::pin(std::future::ready(Ok(
            serde_json::json!({ "resultType": "complete" }),
        )))
    }
    fn notify(
        &self,
        _notification: mcp_protocol::Notification,
    ) -> Result<(), mcp_transport::TransportError> {
        Ok(())
    }
    fn close(&self) -> futures::future::BoxFuture<'static, ()> {
        Box::pin(std::future::ready(()))
    }
    fn is_alive(&self) -> bool {
        true
    }
}

#[tokio::test(start_paused = true)]
async fn the_peerless_parts_fail_on_a_transport_that_breaks_them() {
    let report = run_contract_suite(|_handlers: ConnectionHandlers| async move {
        Harness::without_peer(Arc::new(CarelessNull))
    })
    .await;
    println!("{report}");
    let failed: Vec<&str> = report.failures().iter().map(|r| r.name).collect();
    assert_eq!(
        failed,
        [
            "timeout",
            "hard_maximum",
            "cancel_by_token",
            "no_wire_cancel",
            "close"
        ]
    );
    assert!(matches!(
        report.outcome("result_normalized"),
        Some(Outcome::PassedInPart(_))
    ));
}
