//! The `bridge_http` target: see `mcp_fuzz_checks::bridge_http`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz_checks::bridge_http(data));
