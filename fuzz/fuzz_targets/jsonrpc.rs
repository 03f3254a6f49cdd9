//! The `jsonrpc` target: see `mcp_fuzz_checks::jsonrpc`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz_checks::jsonrpc(data));
