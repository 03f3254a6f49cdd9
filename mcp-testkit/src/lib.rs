//! Test doubles for MCP clients and transports.
//!
//! - [`null`]: a transport that answers everything with an empty result.
//! - [`scripted`]: a transport that plays a script of expected requests and
//!   canned answers, and records everything sent.
//! - [`contract`]: the transport contract suite: run any [`mcp_transport::Transport`]
//!   through every rule of the contract.
//! - [`cassette`]: a recorded exchange (JSON Lines from
//!   [`mcp_transport::record`] or `mcp --record`) replayed as a server,
//!   requests matched by method and params, with a diff for one it lacks.
//! - [`binaries`]: the path of this crate's relay binary, for tests in
//!   other crates.
//!
//! The reference server (a server of either era, in process, over stdio and
//! HTTP, behind OAuth) is the `mcp-steady-reference-server` crate.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(doctest, doc = include_str!("../README.md"))]

pub mod binaries;
pub mod cassette;
pub mod contract;
pub mod null;
pub mod scripted;
