//! Test doubles for MCP clients and transports.
//!
//! - [`null`]: a transport that answers everything with an empty result.
//! - [`scripted`]: a transport that plays a script of expected requests and
//!   canned answers, and records everything sent.
//! - [`contract`]: the transport contract suite (the
//!   `mcp-steady-transport-contract` crate, re-exported): run any
//!   [`mcp_transport::Transport`] through every rule of the contract. The
//!   scripted and cassette transports are engines over its in-memory wire.
//! - [`cassette`]: a recorded exchange (JSON Lines from
//!   [`mcp_transport::record`] or `mcp --record`) replayed as a server,
//!   requests matched by method and params, with a diff for one it lacks.
//!
//! The reference server (a server of either era, in process, over stdio and
//! HTTP, behind OAuth) is the `mcp-steady-reference-server` crate.
//!
//! The null transport has no peer, so most rules of the contract suite
//! cannot run on it: they are named in the report, not passed.
//!
//! ```
//! use std::sync::Arc;
//!
//! use mcp_testkit::contract::{Harness, Outcome, run_contract_suite};
//! use mcp_testkit::null::NullTransport;
//! use mcp_transport::ConnectionHandlers;
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let report = run_contract_suite(|handlers: ConnectionHandlers| async move {
//!     Harness::without_peer(Arc::new(NullTransport::with_handlers(handlers)))
//! })
//! .await;
//! // Without a peer, most rules cannot run: they are named, not passed.
//! assert!(report.ran_count() < report.results.len());
//! assert!(matches!(report.outcome("close"), Some(Outcome::PassedInPart(_))));
//! report.assert_all_passed_except(&report.incomplete());
//! # }
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(doctest, doc = include_str!("../README.md"))]

pub mod cassette;
/// The transport contract suite, from `mcp-steady-transport-contract`.
pub use mcp_transport_contract as contract;
pub mod null;
pub mod scripted;
