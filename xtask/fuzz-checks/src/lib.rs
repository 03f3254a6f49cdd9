//! What each fuzz target asserts, beyond "no panic", as plain functions of
//! the input's bytes: the libFuzzer targets of `fuzz/` are one-line calls
//! of these, and `tests/replay.rs` feeds them every committed corpus and
//! regression input on the stable toolchain, so a fixed crash stays fixed
//! without nightly.
//!
//! Each check panics when what must hold does not. [`TARGETS`] names them
//! as the fuzz targets (and their folders under `fuzz/corpus/` and
//! `fuzz/regressions/`) are named.

mod bridge_http;
mod bridge_lines;
mod cassette;
mod engine;
mod framing;
mod headers;
mod jsonrpc;
mod oauth;
mod servers;
mod sse;
mod www_authenticate;

pub use bridge_http::bridge_http;
pub use bridge_lines::bridge_lines;
pub use cassette::cassette;
pub use engine::engine;
pub use framing::framing;
pub use headers::headers;
pub use jsonrpc::jsonrpc;
pub use oauth::oauth;
pub use servers::mcp_servers;
pub use sse::sse;
pub use www_authenticate::www_authenticate;

/// A check: the input's bytes in, a panic when a property fails.
pub type Check = fn(&[u8]);

/// Every target, by name.
pub const TARGETS: &[(&str, Check)] = &[
    ("framing", framing),
    ("jsonrpc", jsonrpc),
    ("sse", sse),
    ("headers", headers),
    ("www_authenticate", www_authenticate),
    ("oauth", oauth),
    ("cassette", cassette),
    ("mcp_servers", mcp_servers),
    ("engine", engine),
    ("bridge_http", bridge_http),
    ("bridge_lines", bridge_lines),
];

/// Splits `input` into chunks of 1 to 16 bytes, their sizes drawn from
/// `seed`: the bytes a reader might get from one read after another.
pub(crate) fn chunks<'a>(input: &'a [u8], seed: &[u8]) -> Vec<&'a [u8]> {
    let mut state = seed
        .iter()
        .fold(0x9e37_79b9_u32, |s, &b| s.rotate_left(5) ^ u32::from(b));
    let mut out = Vec::new();
    let mut rest = input;
    while !rest.is_empty() {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let size = ((state >> 16) % 16 + 1) as usize;
        let (chunk, tail) = rest.split_at(size.min(rest.len()));
        out.push(chunk);
        rest = tail;
    }
    out
}

/// Splits an input into a few header bytes (fewer when it is short) and
/// the rest.
pub(crate) fn take(input: &[u8], n: usize) -> (&[u8], &[u8]) {
    input.split_at(n.min(input.len()))
}
