//! Test doubles for MCP clients and transports.
//!
//! (Being written: null and scripted transports, the transport contract
//! suite, the fake server.)
