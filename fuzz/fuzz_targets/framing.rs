//! The `framing` target: see `mcp_fuzz_checks::framing`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz_checks::framing(data));
