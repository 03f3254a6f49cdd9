//! The `headers` target: see `mcp_fuzz_checks::headers`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz_checks::headers(data));
