//! The null transport keeps every rule that applies to a transport with
//! nobody at the other end.

use std::sync::Arc;

use mcp_testkit::contract::{Harness, Outcome, run_contract_suite};
use mcp_testkit::null::NullTransport;
use mcp_transport::ConnectionHandlers;

#[tokio::test(start_paused = true)]
async fn the_null_transport_passes_what_applies() {
    let report = run_contract_suite(|handlers: ConnectionHandlers| async move {
        Harness::without_peer(Arc::new(NullTransport::with_handlers(handlers)))
    })
    .await;
    println!("{report}");
    report.assert_all_passed();
    for rule in ["result_normalized", "close"] {
        assert_eq!(report.outcome(rule), Some(&Outcome::Passed), "{rule}");
    }
    assert!(matches!(
        report.outcome("timeout"),
        Some(Outcome::NotApplicable(_))
    ));
}
