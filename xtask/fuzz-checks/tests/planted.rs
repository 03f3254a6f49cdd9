//! The bugs behind `--cfg fuzz_planted`, one per target: an input written
//! by hand fails the target's check with the bug built in and passes it
//! without; and with the bug built in, the seeds alone still pass, so the
//! fuzzer has to find it (`cargo xtask fuzz --planted`).

use std::panic::{AssertUnwindSafe, catch_unwind};

/// Per target, an input that meets its planted bug.
const INPUTS: &[(&str, &[u8])] = &[
    // The fast path takes a version the general path refuses.
    ("jsonrpc", br#"{"jsonrpc":"2.1","id":1,"result":{}}"#),
    // DEL, sent without encoding.
    ("headers", b"a\x7fb"),
    // An error that ends with a backslash, written `"a\\"`.
    ("www_authenticate", br"a\"),
    // A secret method registered without a secret.
    (
        "oauth",
        br#"{"client_id": "c", "client_secret": "", "token_endpoint_auth_method": "client_secret_post"}"#,
    ),
    // A line that cannot be read, reported with a CRLF file's `\r`.
    ("cassette", b"{\"cassette\":\"x\"}\n{\"conn\":1}\n"),
    // A value that ends with `$`, written `$$`.
    ("mcp_servers", b"a$"),
    // A Host with an empty port, taken for loopback.
    ("bridge_http", b"localhost:\n"),
];

fn check(target: &str) -> mcp_fuzz_checks::Check {
    mcp_fuzz_checks::TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .map(|&(_, check)| check)
        .unwrap_or_else(|| panic!("no target {target}"))
}

fn fails(check: mcp_fuzz_checks::Check, input: &[u8]) -> bool {
    catch_unwind(AssertUnwindSafe(|| check(input))).is_err()
}

#[test]
fn each_input_fails_its_check_only_with_the_bug_built_in() {
    for (target, input) in INPUTS {
        assert_eq!(
            fails(check(target), input),
            cfg!(fuzz_planted),
            "{target}: {:?}",
            String::from_utf8_lossy(input)
        );
    }
}

#[cfg(fuzz_planted)]
#[test]
fn the_seeds_alone_pass_with_the_bugs_built_in() {
    let seeds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds");
    for (target, _) in INPUTS {
        let dir = seeds.join(target);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .flatten()
            .map(|e| e.path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "no seeds for {target}");
        for file in files {
            let input = std::fs::read(&file).expect("a seed reads");
            assert!(!fails(check(target), &input), "{}", file.display());
        }
    }
}
