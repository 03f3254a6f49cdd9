//! The `engine` target: see `mcp_fuzz_checks::engine`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz_checks::engine(data));
