//! The `sse` target: see `mcp_fuzz_checks::sse`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz_checks::sse(data));
