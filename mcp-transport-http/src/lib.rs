//! Streamable HTTP for MCP clients, on hyper: the 2026-07-28 POST-only
//! transport with its `Mcp-*` headers, the legacy Streamable HTTP of
//! 2025-03-26 to 2025-11-25 (sessions, the GET stream, SSE resumption), and
//! the 2024-11-05 HTTP+SSE fallback.
//!
//! **Not implemented yet.** This crate holds its place in the workspace; it
//! exports nothing. Use `mcp-transport-stdio` for servers started as child
//! processes.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(doctest, doc = include_str!("../README.md"))]
