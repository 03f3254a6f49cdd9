//! `cargo xtask sizes`: how long the library's functions and files are.
//!
//! A function is counted from its `fn` line to its closing brace, in the
//! `src/` of each library crate of [`CRATES`]; binaries (`src/bin/`,
//! `main.rs`) and `#[cfg(test)]` items are left out. The task prints the
//! longest functions and the files over [`FILE_LINES`] lines, and fails
//! when more than [`MAX_OVER`] functions are over [`FN_LINES`] lines or any
//! is over [`FN_HARD_LINES`], functions of [`EXEMPT`] aside (each a table of
//! data, with its reason).

use std::path::Path;

use syn::visit::Visit;

use crate::Result;

/// The library crates measured (a directory that does not exist is skipped).
const CRATES: &[&str] = &[
    "mcp-protocol",
    "mcp-transport",
    "mcp-transport-stdio",
    "mcp-transport-http",
    "mcp-auth",
    "mcp-client",
    "mcp-bridge",
    "mcp-testkit",
    "mcp-reference-server",
];

/// A function longer than this is a long one.
const FN_LINES: usize = 80;
/// How many long functions the library may have.
const MAX_OVER: usize = 6;
/// No function is longer than this.
const FN_HARD_LINES: usize = 120;
/// A file longer than this is listed.
const FILE_LINES: usize = 500;

/// Functions that are only a table of data, `(crate directory, file under
/// src/, function name, reason)`: not counted against the limits.
const EXEMPT: &[(&str, &str, &str, &str)] = &[(
    "mcp-reference-server",
    "content.rs",
    "default",
    "the reference server's tools, prompts and resources, as data",
)];

/// One function: where it is and how long.
struct Function {
    place: String,
    name: String,
    lines: usize,
}

/// The task; `--report` prints without failing.
pub(crate) fn sizes(args: &[String]) -> Result {
    let report_only = args.iter().any(|a| a == "--report");
    eprintln!("\n==> function and file sizes");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("xtask has no parent directory")?;
    let mut functions = Vec::new();
    let mut long_files = Vec::new();
    for dir in CRATES {
        let src = root.join(dir).join("src");
        if !src.is_dir() {
            continue;
        }
        for (file, text) in crate::modules::read_src(&src)? {
            if file.starts_with("bin/") || file == "main.rs" {
                continue;
            }
            let lines = text.lines().count();
            if lines > FILE_LINES {
                long_files.push((format!("{dir}/src/{file}"), lines));
            }
            let parsed = syn::parse_file(&text).map_err(|e| format!("{dir}/src/{file}: {e}"))?;
            let mut finder = Finder {
                place: format!("{dir}/src/{file}"),
                found: Vec::new(),
            };
            finder.visit_file(&parsed);
            functions.extend(finder.found.into_iter().filter(|f| {
                !EXEMPT
                    .iter()
                    .any(|e| f.place == format!("{}/src/{}", e.0, e.1) && f.name == e.2)
            }));
        }
    }
    functions.sort_by_key(|f| std::cmp::Reverse(f.lines));
    long_files.sort_by_key(|f| std::cmp::Reverse(f.1));
    let over: Vec<&Function> = functions.iter().filter(|f| f.lines > FN_LINES).collect();
    eprintln!(
        "{} functions, {} over {FN_LINES} lines (at most {MAX_OVER} allowed, none over {FN_HARD_LINES}); the longest:",
        functions.len(),
        over.len()
    );
    for f in functions.iter().take(over.len().max(10)) {
        eprintln!("  {:>4}  {} `{}`", f.lines, f.place, f.name);
    }
    for (name, reason) in EXEMPT.iter().map(|e| (e.2, e.3)) {
        eprintln!("  exempt: `{name}` ({reason})");
    }
    eprintln!("{} files over {FILE_LINES} lines:", long_files.len());
    for (file, lines) in &long_files {
        eprintln!("  {lines:>4}  {file}");
    }
    let too_long = functions.iter().filter(|f| f.lines > FN_HARD_LINES).count();
    if report_only || (over.len() <= MAX_OVER && too_long == 0) {
        eprintln!("<== sizes");
        Ok(())
    } else {
        Err(format!(
            "{} functions over {FN_LINES} lines (at most {MAX_OVER}), {too_long} over {FN_HARD_LINES} (none)",
            over.len()
        ))
    }
}

/// Collects every function with a body, leaving out `#[cfg(test)]` items.
struct Finder {
    place: String,
    found: Vec<Function>,
}

impl Finder {
    fn note(&mut self, name: &syn::Ident, start: proc_macro2::Span, block: &syn::Block) {
        let first = start.start().line;
        let last = block.brace_token.span.close().end().line;
        self.found.push(Function {
            place: self.place.clone(),
            name: name.to_string(),
            lines: last + 1 - first,
        });
    }
}

impl<'ast> Visit<'ast> for Finder {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !crate::modules::is_cfg_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if !crate::modules::is_cfg_test(&i.attrs) {
            syn::visit::visit_item_impl(self, i);
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if crate::modules::is_cfg_test(&f.attrs) {
            return;
        }
        self.note(&f.sig.ident, f.sig.fn_token.span, &f.block);
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if crate::modules::is_cfg_test(&f.attrs) {
            return;
        }
        self.note(&f.sig.ident, f.sig.fn_token.span, &f.block);
        syn::visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.note(&f.sig.ident, f.sig.fn_token.span, block);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}
