//! The `bridge_lines` target: see `mcp_fuzz_checks::bridge_lines`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz_checks::bridge_lines(data));
