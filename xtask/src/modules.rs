//! `cargo xtask modules`: no import circle among the files of a crate.
//!
//! File A *names* file B when a path in A that starts with `crate::` or
//! `super::` (in a `use`, inline in code, or inside a macro's tokens)
//! reaches an item that B defines. Re-exports are followed to the file
//! that defines the item: `crate::Secret` names `secret.rs`, not `lib.rs`
//! which only re-exports it. What does not count:
//!
//! - `mod` declarations, and `use` declarations whose path is relative
//!   (`pub use builder::OAuthProviderBuilder;` in `lib.rs`, `use
//!   self::send::insert;` in `transport/mod.rs`): a module naming its own
//!   children is how Rust declares them;
//! - `#[cfg(test)]` items (a test module names what it tests);
//! - the edges of [`ALLOWED`], each with its reason: a type naming its
//!   builder (`OAuthProvider::builder()`), while the builder names the
//!   type it builds, or a file of plain types named back.
//!
//! A circle is a set of files that name one another (transitively); the
//! task prints each as a path of file names, `a.rs → b.rs → a.rs`.
//!
//! It checks `mcp-auth`, `mcp-transport-http` and `mcp-client`, and fails
//! on a circle in any of them.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::Path;

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

use crate::Result;

/// Edges that may close a circle, `(crate directory, from, to, reason)`.
const ALLOWED: &[(&str, &str, &str, &str)] = &[
    (
        "mcp-auth",
        "provider.rs",
        "builder.rs",
        "`OAuthProvider::builder()` returns the builder that builds it",
    ),
    (
        "mcp-client",
        "client.rs",
        "builder.rs",
        "`Client::builder()` returns the builder that builds it",
    ),
    (
        "mcp-transport-http",
        "transport/mod.rs",
        "builder.rs",
        "`HttpTransport::builder()` returns the builder that builds it",
    ),
];

/// The crates checked: `(directory, whether a circle fails the task)`.
const CRATES: &[(&str, bool)] = &[
    ("mcp-auth", true),
    ("mcp-transport-http", true),
    ("mcp-client", true),
    ("mcp-bridge", true),
];

/// The task: checks each crate of [`CRATES`].
pub(crate) fn modules() -> Result {
    eprintln!("\n==> import circles between files");
    let mut failed = Vec::new();
    for &(dir, strict) in CRATES {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .ok_or("xtask has no parent directory")?;
        let files = read_src(&root.join(dir).join("src"))?;
        let allowed: Vec<(&str, &str)> = ALLOWED
            .iter()
            .filter(|a| a.0 == dir)
            .map(|a| (a.1, a.2))
            .collect();
        let found = circles(&files, &allowed)?;
        if found.is_empty() {
            eprintln!("{dir}: no circle");
        }
        for (circle, members) in &found {
            let mut shown = circle.join(" → ");
            if members.len() + 1 > circle.len() {
                let all: Vec<&str> = members.iter().map(String::as_str).collect();
                shown.push_str(&format!(
                    " (of {} files naming one another: {})",
                    all.len(),
                    all.join(", ")
                ));
            }
            if strict {
                eprintln!("{dir}: circle: {shown}");
                failed.push(format!("{dir}: {shown}"));
            } else {
                eprintln!("{dir}: known circle (not yet removed): {shown}");
            }
        }
    }
    if failed.is_empty() {
        eprintln!("<== no import circle in mcp-auth, mcp-transport-http, mcp-client or mcp-bridge");
        Ok(())
    } else {
        Err(format!(
            "import circles between files: {}",
            failed.join("; ")
        ))
    }
}

/// Every `.rs` file under `src`, by its path relative to `src` (`/`-separated).
pub(crate) fn read_src(src: &Path) -> Result<BTreeMap<String, String>> {
    let mut files = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let entries =
            std::fs::read_dir(&dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("reading {}: {e}", path.display()))?;
                let relative = path.strip_prefix(src).map_err(|e| e.to_string())?;
                let name = relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                files.insert(name, text);
            }
        }
    }
    Ok(files)
}

/// A module: the file it is written in, and the names it holds.
#[derive(Default, Debug)]
struct Module {
    file: String,
    /// Child modules, by name.
    children: BTreeSet<String>,
    /// Items it defines (types, functions, traits, constants, ...).
    items: BTreeSet<String>,
    /// Names it imports, each with the absolute path it stands for
    /// (only paths within the crate).
    uses: HashMap<String, Vec<String>>,
    /// Modules it imports everything of (`use x::*`), absolute.
    globs: Vec<Vec<String>>,
}

/// The crate's modules by absolute path (`[]` is the root), and each
/// file's paths that start with `crate` or `super`, made absolute.
#[derive(Default, Debug)]
struct Crate {
    modules: BTreeMap<Vec<String>, Module>,
    named: Vec<(String, Vec<String>)>,
}

/// The circles among `files` (path relative to `src` → source, with
/// `lib.rs` the root), each as a path of file names that ends where it
/// starts, with the whole set of files that name one another; `allowed`
/// edges `(from, to)` are left out. One circle is shown per set: a
/// shortest one through its first file.
fn circles(
    files: &BTreeMap<String, String>,
    allowed: &[(&str, &str)],
) -> Result<Vec<(Vec<String>, BTreeSet<String>)>> {
    let krate = load(files)?;
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, path) in &krate.named {
        let Some(target) = krate.resolve(path, 0) else {
            continue;
        };
        if target != *file && !allowed.contains(&(file.as_str(), target.as_str())) {
            edges.entry(file.clone()).or_default().insert(target);
        }
    }
    let mut found = Vec::new();
    for component in strongly_connected(&edges) {
        if component.len() < 2 {
            continue;
        }
        let first = component.iter().next().expect("not empty").clone();
        found.push((shortest_cycle(&edges, &component, &first), component));
    }
    Ok(found)
}

/// Parses the crate from `lib.rs`, following `mod` declarations.
fn load(files: &BTreeMap<String, String>) -> Result<Crate> {
    let mut krate = Crate::default();
    // (module path, file, directory its child files live in)
    let mut pending = vec![(Vec::new(), "lib.rs".to_owned(), String::new())];
    while let Some((path, file, dir)) = pending.pop() {
        let text = files
            .get(&file)
            .ok_or_else(|| format!("no file {file} for module {}", path.join("::")))?;
        let parsed = syn::parse_file(text).map_err(|e| format!("parsing {file}: {e}"))?;
        let mut reader = Reader {
            krate: &mut krate,
            file: file.clone(),
            module: path.clone(),
            dir: dir.clone(),
            files,
            pending: &mut pending,
        };
        reader.items(&parsed.items);
    }
    Ok(krate)
}

struct Reader<'a> {
    krate: &'a mut Crate,
    file: String,
    module: Vec<String>,
    /// Where the files of this module's children are.
    dir: String,
    files: &'a BTreeMap<String, String>,
    pending: &'a mut Vec<(Vec<String>, String, String)>,
}

pub(crate) fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

impl Reader<'_> {
    fn this(&mut self) -> &mut Module {
        let file = self.file.clone();
        self.krate
            .modules
            .entry(self.module.clone())
            .or_insert_with(|| Module {
                file,
                ..Module::default()
            })
    }

    fn items(&mut self, items: &[syn::Item]) {
        // Children first: a `use` may name one declared below it.
        for item in items {
            if let syn::Item::Mod(m) = item
                && !is_cfg_test(&m.attrs)
            {
                self.this().children.insert(m.ident.to_string());
            }
        }
        for item in items {
            let (attrs, name) = match item {
                syn::Item::Const(i) => (&i.attrs, Some(&i.ident)),
                syn::Item::Enum(i) => (&i.attrs, Some(&i.ident)),
                syn::Item::Fn(i) => (&i.attrs, Some(&i.sig.ident)),
                syn::Item::Static(i) => (&i.attrs, Some(&i.ident)),
                syn::Item::Struct(i) => (&i.attrs, Some(&i.ident)),
                syn::Item::Trait(i) => (&i.attrs, Some(&i.ident)),
                syn::Item::TraitAlias(i) => (&i.attrs, Some(&i.ident)),
                syn::Item::Type(i) => (&i.attrs, Some(&i.ident)),
                syn::Item::Union(i) => (&i.attrs, Some(&i.ident)),
                syn::Item::Macro(i) => (&i.attrs, i.ident.as_ref()),
                syn::Item::Impl(i) => (&i.attrs, None),
                syn::Item::Mod(i) => (&i.attrs, None),
                syn::Item::Use(i) => (&i.attrs, None),
                _ => continue,
            };
            if is_cfg_test(attrs) {
                continue;
            }
            if let Some(name) = name {
                self.this().items.insert(name.to_string());
            }
            match item {
                syn::Item::Mod(m) => self.module_item(m),
                syn::Item::Use(u) => {
                    let mut prefix = Vec::new();
                    self.use_tree(&u.tree, &mut prefix);
                }
                other => {
                    let mut paths = Paths::default();
                    paths.visit_item(other);
                    for path in paths.found {
                        self.named(path);
                    }
                }
            }
        }
    }

    fn module_item(&mut self, m: &syn::ItemMod) {
        let name = m.ident.to_string();
        self.this().children.insert(name.clone());
        let mut child = self.module.clone();
        child.push(name.clone());
        match &m.content {
            Some((_, items)) => {
                let mut inner = Reader {
                    krate: &mut *self.krate,
                    file: self.file.clone(),
                    module: child,
                    dir: format!("{}{name}/", self.dir),
                    files: self.files,
                    pending: &mut *self.pending,
                };
                inner.items(items);
            }
            None => {
                let flat = format!("{}{name}.rs", self.dir);
                let file = if self.files.contains_key(&flat) {
                    flat
                } else {
                    format!("{}{name}/mod.rs", self.dir)
                };
                self.pending
                    .push((child, file, format!("{}{name}/", self.dir)));
            }
        }
    }

    /// Records the imports of a `use` tree; `prefix` is the path so far.
    fn use_tree(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix);
                prefix.pop();
            }
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(tree, prefix);
                }
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                self.import(prefix, &name, &name);
            }
            syn::UseTree::Rename(r) => {
                self.import(prefix, &r.ident.to_string(), &r.rename.to_string());
            }
            syn::UseTree::Glob(_) => {
                if let Some(absolute) = self.absolute(prefix, true) {
                    if matches!(prefix.first().map(String::as_str), Some("crate" | "super")) {
                        self.named(prefix.clone());
                    }
                    self.this().globs.push(absolute);
                }
            }
        }
    }

    fn import(&mut self, prefix: &[String], name: &str, alias: &str) {
        let mut path = prefix.to_vec();
        if name != "self" {
            path.push(name.to_owned());
        }
        let alias = if alias == "self" {
            prefix.last().cloned().unwrap_or_default()
        } else {
            alias.to_owned()
        };
        if let Some(absolute) = self.absolute(&path, true) {
            if matches!(path.first().map(String::as_str), Some("crate" | "super")) {
                self.named(path);
            }
            self.this().uses.insert(alias, absolute);
        }
    }

    /// A path made absolute from this module, if it is within the crate.
    /// `relative`: a first segment that is a child module of this one
    /// counts too (as in a `use`).
    fn absolute(&mut self, path: &[String], relative: bool) -> Option<Vec<String>> {
        let mut out = self.module.clone();
        let mut rest = path;
        match path.first().map(String::as_str)? {
            "crate" => {
                out.clear();
                rest = &path[1..];
            }
            "self" => rest = &path[1..],
            "super" => {
                while rest.first().map(String::as_str) == Some("super") {
                    out.pop()?;
                    rest = &rest[1..];
                }
            }
            first if relative && self.this().children.contains(first) => {}
            _ => return None,
        }
        out.extend(rest.iter().cloned());
        Some(out)
    }

    /// A `crate::` or `super::` path written in this file.
    fn named(&mut self, path: Vec<String>) {
        if let Some(absolute) = self.absolute(&path, false) {
            self.krate.named.push((self.file.clone(), absolute));
        }
    }
}

/// The paths in an item that start with `crate` or `super`, including
/// those inside macro invocations.
#[derive(Default)]
struct Paths {
    found: Vec<Vec<String>>,
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if path.leading_colon.is_none()
            && matches!(
                segments.first().map(String::as_str),
                Some("crate" | "super")
            )
        {
            self.found.push(segments);
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {
        // Nested modules are read as modules of their own.
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        // A `use` inside a function body.
        fn walk(tree: &syn::UseTree, prefix: &mut Vec<String>, found: &mut Vec<Vec<String>>) {
            match tree {
                syn::UseTree::Path(p) => {
                    prefix.push(p.ident.to_string());
                    walk(&p.tree, prefix, found);
                    prefix.pop();
                }
                syn::UseTree::Group(g) => {
                    for tree in &g.items {
                        walk(tree, prefix, found);
                    }
                }
                syn::UseTree::Name(syn::UseName { ident })
                | syn::UseTree::Rename(syn::UseRename { ident, .. }) => {
                    let mut path = prefix.clone();
                    path.push(ident.to_string());
                    found.push(path);
                }
                syn::UseTree::Glob(_) => found.push(prefix.clone()),
            }
        }
        let mut found = Vec::new();
        walk(&item.tree, &mut Vec::new(), &mut found);
        self.found.extend(
            found
                .into_iter()
                .filter(|p| matches!(p.first().map(String::as_str), Some("crate" | "super"))),
        );
    }

    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {
        // Doc comments and attributes name nothing at run time.
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }
}

impl Paths {
    /// `crate :: a :: b` or `super :: a` sequences in a token stream.
    fn tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                TokenTree::Group(g) => {
                    self.tokens(g.stream());
                    i += 1;
                }
                TokenTree::Ident(id) if id == "crate" || id == "super" => {
                    let previous_colon = i > 0
                        && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == ':');
                    let mut segments = vec![id.to_string()];
                    let mut j = i + 1;
                    while let (
                        Some(TokenTree::Punct(a)),
                        Some(TokenTree::Punct(b)),
                        Some(TokenTree::Ident(next)),
                    ) = (tokens.get(j), tokens.get(j + 1), tokens.get(j + 2))
                    {
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        segments.push(next.to_string());
                        j += 3;
                    }
                    if !previous_colon && segments.len() > 1 {
                        self.found.push(segments);
                    }
                    i = j;
                }
                _ => i += 1,
            }
        }
    }
}

impl Crate {
    /// The file that defines what an absolute path names (following
    /// imports and re-exports), or `None` for a module it does not know.
    fn resolve(&self, path: &[String], depth: usize) -> Option<String> {
        if depth > 32 {
            return None;
        }
        let mut module = Vec::new();
        for (i, segment) in path.iter().enumerate() {
            let current = self.modules.get(&module)?;
            if current.children.contains(segment) {
                module.push(segment.clone());
                continue;
            }
            if current.items.contains(segment) {
                return Some(current.file.clone());
            }
            if let Some(target) = current.uses.get(segment) {
                let mut next = target.clone();
                next.extend(path[i + 1..].iter().cloned());
                return self.resolve(&next, depth + 1);
            }
            for glob in &current.globs {
                let mut next = glob.clone();
                next.extend(path[i..].iter().cloned());
                if let Some(file) = self.resolve(&next, depth + 1) {
                    return Some(file);
                }
            }
            // A name it cannot place (made by a macro): the module's file.
            return Some(current.file.clone());
        }
        // The path names a module: the file it is written in.
        self.modules.get(&module).map(|m| m.file.clone())
    }
}

/// Tarjan's strongly connected components.
fn strongly_connected(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: HashMap<&'a str, usize>,
        low: HashMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, node: &'a str) {
        let n = s.index.len();
        s.index.insert(node, n);
        s.low.insert(node, n);
        s.stack.push(node);
        s.on_stack.insert(node);
        if let Some(targets) = s.edges.get(node) {
            for target in targets {
                let target = target.as_str();
                if !s.index.contains_key(target) {
                    visit(s, target);
                    let low = s.low[node].min(s.low[target]);
                    s.low.insert(node, low);
                } else if s.on_stack.contains(target) {
                    let low = s.low[node].min(s.index[target]);
                    s.low.insert(node, low);
                }
            }
        }
        if s.low[node] == s.index[node] {
            let mut component = BTreeSet::new();
            while let Some(top) = s.stack.pop() {
                s.on_stack.remove(top);
                component.insert(top.to_owned());
                if top == node {
                    break;
                }
            }
            s.out.push(component);
        }
    }
    let mut s = State {
        edges,
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for node in edges.keys() {
        if !s.index.contains_key(node.as_str()) {
            visit(&mut s, node);
        }
    }
    s.out.sort();
    s.out
}

/// A shortest path from `start` back to it, within `component`.
fn shortest_cycle(
    edges: &BTreeMap<String, BTreeSet<String>>,
    component: &BTreeSet<String>,
    start: &str,
) -> Vec<String> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for next in edges.get(node).into_iter().flatten() {
            if !component.contains(next) {
                continue;
            }
            if next == start {
                let mut cycle = vec![start.to_owned()];
                let mut at = node;
                while at != start {
                    cycle.push(at.to_owned());
                    at = came_from[at];
                }
                cycle.push(start.to_owned());
                cycle.reverse();
                return cycle;
            }
            let next = next.as_str();
            if !came_from.contains_key(next) {
                came_from.insert(next, node);
                queue.push_back(next);
            }
        }
    }
    component.iter().cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> BTreeMap<String, String> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn found(list: &[(&str, &str)]) -> Vec<String> {
        circles(&files(list), &[])
            .unwrap()
            .into_iter()
            .map(|(c, _)| c.join(" → "))
            .collect()
    }

    #[test]
    fn a_use_each_way_is_a_circle() {
        let crate_ = [
            ("lib.rs", "mod a; mod b;"),
            ("a.rs", "use crate::b::B; pub struct A;"),
            ("b.rs", "pub struct B; fn f() { super::a::A; }"),
        ];
        assert_eq!(found(&crate_), ["a.rs → b.rs → a.rs"]);
    }

    #[test]
    fn a_circle_over_three_files_is_shown_whole() {
        let crate_ = [
            ("lib.rs", "mod a; mod b; mod c;"),
            ("a.rs", "pub struct A; pub fn a() { crate::b::b() }"),
            ("b.rs", "pub fn b() { crate::c::c() }"),
            ("c.rs", "pub fn c() -> crate::a::A { todo!() }"),
        ];
        assert_eq!(found(&crate_), ["a.rs → b.rs → c.rs → a.rs"]);
    }

    #[test]
    fn one_way_is_no_circle_and_mod_declarations_do_not_count() {
        let crate_ = [
            ("lib.rs", "mod a; mod b; pub use a::A; pub struct Error;"),
            ("a.rs", "use crate::b::B; use crate::Error; pub struct A;"),
            ("b.rs", "pub struct B(crate::Error);"),
        ];
        assert!(found(&crate_).is_empty());
    }

    #[test]
    fn re_exports_lead_to_the_file_that_defines_the_item() {
        // `crate::A` is `a.rs`'s, re-exported by `lib.rs`.
        let crate_ = [
            ("lib.rs", "mod a; mod b; pub use a::A; pub use b::*;"),
            ("a.rs", "pub struct A(crate::B);"),
            ("b.rs", "pub struct B; impl B { fn f(_: crate::A) {} }"),
        ];
        assert_eq!(found(&crate_), ["a.rs → b.rs → a.rs"]);
    }

    #[test]
    fn paths_inside_macros_and_nested_directories_count() {
        let crate_ = [
            ("lib.rs", "mod t; mod u;"),
            ("t/mod.rs", "mod inner; pub(crate) struct Shared;"),
            ("t/inner.rs", "use super::Shared; pub fn go() {}"),
            (
                "u.rs",
                "fn f() { format!(\"{:?}\", crate::t::inner::go()); }",
            ),
        ];
        // `t/mod.rs` naming nothing back, there is no circle yet.
        assert!(found(&crate_).is_empty());
        let mut circular = crate_;
        circular[1] = (
            "t/mod.rs",
            "mod inner; pub(crate) struct Shared(crate::u::U);",
        );
        circular[3] = (
            "u.rs",
            "pub struct U; fn f() { assert!(crate::t::inner::go() == ()); }",
        );
        assert_eq!(
            found(&circular),
            ["t/inner.rs → t/mod.rs → u.rs → t/inner.rs"]
        );
    }

    #[test]
    fn test_modules_and_allowed_edges_are_left_out() {
        let crate_ = [
            ("lib.rs", "mod a; mod b;"),
            (
                "a.rs",
                "pub struct A; impl A { pub fn builder() -> crate::b::B { todo!() } }",
            ),
            (
                "b.rs",
                "pub struct B; #[cfg(test)] mod tests { use crate::a::A; }",
            ),
        ];
        assert!(found(&crate_).is_empty());
        let mut built = crate_;
        built[2] = (
            "b.rs",
            "pub struct B; impl B { fn build(self) -> crate::a::A { todo!() } }",
        );
        assert_eq!(found(&built), ["a.rs → b.rs → a.rs"]);
        assert!(
            circles(&files(&built), &[("a.rs", "b.rs")])
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_glob_of_the_parent_names_the_parent() {
        let crate_ = [
            ("lib.rs", "mod p;"),
            ("p/mod.rs", "mod c; pub fn top() { crate::p::c::f() }"),
            ("p/c.rs", "use super::*; pub fn f() {}"),
        ];
        assert_eq!(found(&crate_), ["p/c.rs → p/mod.rs → p/c.rs"]);
    }
}
