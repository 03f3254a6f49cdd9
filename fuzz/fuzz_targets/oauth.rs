//! The `oauth` target: see `mcp_fuzz_checks::oauth`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz_checks::oauth(data));
