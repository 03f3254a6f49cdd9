//! The `cassette` target: see `mcp_fuzz_checks::cassette`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz_checks::cassette(data));
