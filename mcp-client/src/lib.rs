//! A Model Context Protocol client for every revision from 2024-11-05 to
//! 2026-07-28.
//!
//! **Being written.** This crate will hold the era probe, both handshakes,
//! version negotiation, the typed API, multi round-trip requests and
//! caching; it exports nothing yet.
