//! The engine check over scripts drawn from a fixed seed, on stable: a
//! quick pass over many shapes of server behaviour in every test run, on
//! top of the committed corpus the replay test feeds it.

use std::time::Instant;

/// A small xorshift generator: the same scripts every run.
fn bytes(state: &mut u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|_| {
            *state ^= *state << 13;
            *state ^= *state >> 7;
            *state ^= *state << 17;
            (*state >> 24) as u8
        })
        .collect()
}

#[test]
fn the_engine_holds_under_random_scripts() {
    let start = Instant::now();
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    for n in 0..std::env::var("N").map_or(2_000, |n| n.parse().unwrap()) {
        let len = 8 + n % 300;
        let input = bytes(&mut state, len);
        let outcome = std::panic::catch_unwind(|| mcp_fuzz_checks::engine(&input));
        assert!(outcome.is_ok(), "script {n} failed: {input:?}");
    }
    eprintln!("2000 scripts in {:.1?}", start.elapsed());
}
