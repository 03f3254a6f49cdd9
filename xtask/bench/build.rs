//! Takes the rmcp side of `docs/coming-from-rmcp.md` (its `rust,ignore`
//! blocks) into the build, so that the page compiles against the rmcp the
//! benchmarks use.

use std::path::Path;

fn main() {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/coming-from-rmcp.md");
    println!("cargo::rerun-if-changed={}", page.display());
    let text = std::fs::read_to_string(&page).expect("docs/coming-from-rmcp.md");
    let mut code = String::new();
    let mut inside = false;
    for line in text.lines() {
        match (inside, line.trim_end()) {
            (false, "```rust,ignore") => inside = true,
            (true, "```") => {
                inside = false;
                code.push('\n');
            }
            (true, line) => {
                code.push_str(line);
                code.push('\n');
            }
            _ => {}
        }
    }
    assert!(!code.is_empty(), "no rmcp block in {}", page.display());
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).join("coming_from_rmcp.rs");
    std::fs::write(out, code).unwrap();
}
