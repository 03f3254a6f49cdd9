//! The `www_authenticate` target: see `mcp_fuzz_checks::www_authenticate`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz_checks::www_authenticate(data));
