//! Every committed input of every fuzz target, through the target's check
//! on the stable toolchain: the seeds written by hand
//! (`fuzz/seeds/<target>/`), the corpora the fuzzer grew from them
//! (`fuzz/corpus/<target>/`) and the inputs of crashes found and fixed
//! (`fuzz/regressions/<target>/`).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// `fuzz/` at the workspace's root.
fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

#[test]
fn every_committed_input_passes_its_check() {
    let fuzz = fuzz_dir();
    let start = Instant::now();
    let mut failures = Vec::new();
    for (target, check) in mcp_fuzz_checks::TARGETS {
        let seeds = files(&fuzz.join("seeds").join(target));
        let corpus = files(&fuzz.join("corpus").join(target));
        let regressions = files(&fuzz.join("regressions").join(target));
        assert!(!seeds.is_empty(), "no seeds for {target}");
        for file in seeds.iter().chain(&corpus).chain(&regressions) {
            let input = std::fs::read(file).expect("a committed input reads");
            if catch_unwind(AssertUnwindSafe(|| check(&input))).is_err() {
                failures.push(file.display().to_string());
            }
        }
        eprintln!(
            "{target}: {} seeds, {} corpus and {} regression inputs",
            seeds.len(),
            corpus.len(),
            regressions.len()
        );
    }
    eprintln!("replayed in {:.1?}", start.elapsed());
    assert!(failures.is_empty(), "failing inputs: {failures:#?}");
}

/// Targets and their folders agree: no folder of a target that is gone.
#[test]
fn every_folder_is_a_target() {
    let fuzz = fuzz_dir();
    for kind in ["seeds", "corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(fuzz.join(kind)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            assert!(
                mcp_fuzz_checks::TARGETS.iter().any(|(t, _)| *t == name),
                "fuzz/{kind}/{name} is no target's"
            );
        }
    }
}
