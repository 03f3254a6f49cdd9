//! The `mcp_servers` target: see `mcp_fuzz_checks::mcp_servers`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz_checks::mcp_servers(data));
