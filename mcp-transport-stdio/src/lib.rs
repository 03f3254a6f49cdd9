//! MCP over newline-delimited JSON (being written).
