//! Test doubles for MCP clients and transports.
//!
//! - [`null`]: a transport that answers everything with an empty result.
//! - [`scripted`]: a transport that plays a script of expected requests and
//!   canned answers, and records everything sent.
//! - [`contract`]: the transport contract suite: run any [`mcp_transport::Transport`]
//!   through every rule of the contract.
//! - [`fake`]: a fake MCP server of either era, in process or over bytes;
//!   [`fake::http`] (feature `http`, on by default) serves it over HTTP on
//!   loopback: legacy Streamable HTTP with sessions and resumable streams,
//!   modern Streamable HTTP with its header checks, and the 2024-11-05
//!   HTTP+SSE transport, with misbehaviour knobs ([`fake::http::HttpKnob`]:
//!   502 pages, silent heads, dripped or oversized or endless bodies, wrong
//!   `Content-Type`, cross-origin redirects, dropped and empty resumed
//!   streams, server-everything's 400s, expiring sessions).
//!   [`fake::http::ProtectedHttpFake`] (feature `oauth`, on by default)
//!   puts it behind an OAuth authorization server of its own: metadata,
//!   registration, an authorization approved at once, PKCE, tokens that
//!   expire.
//! - [`cassette`]: a recorded exchange (JSON Lines from
//!   [`mcp_transport::record`] or `mcp --record`) replayed as a server,
//!   requests matched by method and params, with a diff for one it lacks.
//! - [`binaries`]: paths of this crate's helper binaries (the relay and the
//!   reference server) for tests in other crates.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(doctest, doc = include_str!("../README.md"))]

pub mod binaries;
pub mod cassette;
pub mod contract;
pub mod fake;
pub mod null;
pub mod scripted;
