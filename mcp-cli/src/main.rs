//! The `mcp` command (being written).

fn main() {}
