//! What must be written once, in `mcp-protocol`, is not written again:
//! the reference server spells no method name, `_meta` key or error code of its
//! own (its tests may keep literal JSON messages as an independent oracle),
//! no crate of the workspace hand-writes base64, and newline framing is
//! `mcp_protocol::framing`'s splitter wherever messages are read.
//!
//! The names are read from `mcp-protocol`'s sources, so a constant added
//! there is checked here too.

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// Every `pub const NAME: <ty> = <value>;` of a source file, as
/// (name, value as written).
fn constants(file: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(file).unwrap();
    // Join continued declarations (`=\n    "…";`) into one line.
    let text = text.replace("=\n    ", "= ");
    text.lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("pub const ")?;
            let (name, rest) = rest.split_once(':')?;
            let (_, value) = rest.split_once('=')?;
            let value = value.trim().strip_suffix(';')?.trim();
            Some((name.trim().to_owned(), value.to_owned()))
        })
        .collect()
}

/// The code of a Rust source, without its comments and its `#[cfg(test)]`
/// module (tests may keep literal messages as an oracle).
fn code_lines(file: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start() == "#[cfg(test)]" {
            break;
        }
        let code = match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        };
        out.push((i + 1, code.to_owned()));
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !name.starts_with('.') && !name.starts_with("target") {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_fake_server_has_no_table_of_its_own() {
    let protocol = workspace().join("mcp-protocol/src");
    let mut names: Vec<(String, String)> = Vec::new();
    for (name, value) in constants(&protocol.join("methods.rs")) {
        names.push((format!("methods::{name}"), value));
    }
    for (name, value) in constants(&protocol.join("meta.rs")) {
        // Only string keys; `progressToken` is also an ordinary params
        // member (of notifications/progress), so it is left out.
        if value.starts_with('"') && name != "PROGRESS_TOKEN" {
            names.push((format!("meta::{name}"), value));
        }
    }
    for (name, value) in constants(&protocol.join("error_codes.rs")) {
        if value.starts_with('-') {
            names.push((format!("error_codes::{name}"), value));
        }
    }
    assert!(names.len() > 40, "read too few constants: {names:?}");

    let mut files = Vec::new();
    let src = workspace().join("mcp-reference-server/src");
    rust_files(&src, &mut files);
    // The server, not its binary's command line (whose help names codes).
    files.retain(|f| !f.starts_with(src.join("bin")));
    assert!(!files.is_empty());
    let mut found = Vec::new();
    for file in &files {
        for (line, code) in code_lines(file) {
            for (name, value) in &names {
                let hit = if value.starts_with('"') {
                    code.contains(value.as_str())
                } else {
                    // A code: the number, not part of a longer one.
                    code.match_indices(value.as_str()).any(|(at, _)| {
                        !code[at + value.len()..].starts_with(|c: char| c.is_ascii_digit())
                    })
                };
                if hit {
                    found.push(format!(
                        "{}:{line}: {value} (use mcp_protocol::{name})",
                        file.strip_prefix(workspace()).unwrap().display()
                    ));
                }
            }
        }
    }
    assert!(found.is_empty(), "written again:\n{}", found.join("\n"));
}

#[test]
fn no_hand_written_base64() {
    // Spelled in two halves so that this file does not match itself.
    let alphabet = ["ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz"].concat();
    let decoder = ["b'+' =>", " 62"].concat();
    let mut files = Vec::new();
    rust_files(&workspace(), &mut files);
    assert!(files.len() > 50, "found too few sources");
    let found: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            text.contains(&alphabet) || text.contains(&decoder)
        })
        .map(|f| f.strip_prefix(workspace()).unwrap().display().to_string())
        .collect();
    assert!(
        found.is_empty(),
        "base64 comes from the base64 crate, but these write their own: {found:?}"
    );
}

#[test]
fn messages_are_split_into_lines_by_one_splitter() {
    let root = workspace();
    let mut files = Vec::new();
    for dir in [
        "mcp-testkit/src",
        "mcp-transport-contract/src",
        "mcp-reference-server/src",
        "mcp-transport-stdio/src",
        "xtask/bench/src",
    ] {
        rust_files(&root.join(dir), &mut files);
    }
    // Not message framing: stderr is free-form text, cut (not skipped)
    // into pieces; the misbehaving server is a test oracle of its own.
    let exempt = [
        "mcp-transport-stdio/src/stderr.rs",
        "mcp-transport-stdio/src/bin/misbehave.rs",
    ];
    let patterns = ["read_until(", "split(b'\\n')", "== b'\\n')"];
    let mut found = Vec::new();
    for file in &files {
        let name = file.strip_prefix(&root).unwrap().display().to_string();
        if exempt.contains(&name.as_str()) {
            continue;
        }
        for (line, code) in code_lines(file) {
            for pattern in patterns {
                if code.contains(pattern) {
                    found.push(format!("{name}:{line}: {}", code.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "lines split by hand instead of with mcp_protocol::framing:\n{}",
        found.join("\n")
    );
}
