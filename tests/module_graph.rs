//! No import circle anywhere in the crate: the modules of `src/` (one per file), with an arrow
//! from each to every module whose items it names through `crate::` or `super::` paths, form
//! no cycle.
//!
//! Why a test of our own: the tools that draw a crate's module graph (cargo-modules and the
//! like) build rust-analyzer, minutes of compilation on a clean CI machine for what is a
//! short reading of paths. What it reads, and what it leaves out:
//! - every `use` statement (braces expanded) and every inline `crate::...` / `super::...`
//!   path outside comments; `self::` paths stay in the module's own subtree;
//! - a path names the deepest module it walks through (`lock::kinds::queue::Waiter`, after
//!   `crate::`, names `lock::kinds::queue`); an item re-exported by a `mod.rs` counts as that
//!   module's;
//! - a module naming its own descendants is not an arrow: that is what a `mod.rs` does when it
//!   declares and re-exports its children (the arrow back, from a child to its parent, is
//!   kept);
//! - `impl T` (or `impl Trait for T`) outside the module that defines `T` is an arrow to `T`'s
//!   module, however `T` came into scope: the block adds to `T`, so it belongs with it;
//! - `main.rs` is its own crate (it names the library as `redlock_cli::`), and unit-test files
//!   (`tests.rs`) and inline `mod tests` blocks are left out: they belong to the module they
//!   test.
//!
//! docs/architecture.md's claims about who names whom are checked against the same graph
//! (`claims`).

mod claims;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module's path below the crate root: `["lock", "queue"]`.
pub(crate) type Module = Vec<String>;

pub(crate) fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            source_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a file under `src/` is: `lock/kinds/queue.rs` and `lock/kinds/queue/mod.rs`
/// would both be `lock::kinds::queue`; `lib.rs` is the root.
fn module_of(relative: &Path) -> Module {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let file = parts.pop().unwrap();
    let stem = file.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

/// The text with comments cut away (`//` to the end of the line, but not the `//` of a URL
/// such as `redis://`, which follows a colon).
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|line| {
            let mut cut = line.len();
            for (i, _) in line.match_indices("//") {
                if i == 0 || line.as_bytes()[i - 1] != b':' {
                    cut = i;
                    break;
                }
            }
            &line[..cut]
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A use tree without its `as` renames: `a::{b as c, d}` as `a::{b, d}`.
fn without_renames(tree: &str) -> String {
    let words: Vec<&str> = tree.split_whitespace().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < words.len() {
        if words[i] == "as" {
            // Skip the new name, keep what punctuation follows it.
            let name = words.get(i + 1).copied().unwrap_or("");
            out.push_str(name.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_'));
            i += 2;
        } else {
            out.push_str(words[i]);
            i += 1;
        }
    }
    out
}

/// `a::{b, c::{d, e}}` as `a::b`, `a::c::d`, `a::c::e`.
pub(crate) fn expand(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand(p).into_iter().map(move |q| format!("{prefix}{q}")))
        .collect()
}

/// Every `crate::`/`super::` path the code names: from `use` statements and inline.
fn named_paths(code: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before = rest[..at].chars().last();
        let after = &rest[at + 4..];
        rest = after;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let Some(end) = after.find(';') else { break };
        let statement = &after[..end];
        // "use " in a string or a word ("cannot use {x}") is no statement.
        let path_like = statement
            .chars()
            .all(|c| c.is_alphanumeric() || "_:{},* \n\t".contains(c));
        if path_like && (statement.starts_with("crate") || statement.starts_with("super")) {
            paths.extend(expand(&without_renames(statement)));
        }
    }
    let bytes = code.as_bytes();
    for start in ["crate::", "super::"] {
        for (i, _) in code.match_indices(start) {
            if i > 0
                && (bytes[i - 1].is_ascii_alphanumeric()
                    || bytes[i - 1] == b'_'
                    || bytes[i - 1] == b':')
            {
                continue;
            }
            let end = code[i..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |e| i + e);
            let path = &code[i..end];
            // `super::{...}` is read with its `use` statement.
            if !path.ends_with("::") {
                paths.push(path.to_string());
            }
        }
    }
    paths
}

/// The text before its inline unit tests (`#[cfg(test)] mod tests { ... }`, last in a file by
/// this crate's convention): like `tests.rs` files, they belong to the module they test.
fn without_inline_tests(text: &str) -> &str {
    text.find("#[cfg(test)]\nmod tests {")
        .map_or(text, |at| &text[..at])
}

/// The text without `pub(in path)` restrictions: they say who may see an item, not what it
/// names.
fn without_visibility(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("pub(in ") {
        out.push_str(&rest[..at + 3]);
        rest = &rest[at..];
        rest = rest.find(')').map_or("", |close| &rest[close + 1..]);
    }
    out.push_str(rest);
    out
}

/// The types that `impl` blocks in `code` add to, as written (`Redlock`, or a path to it):
/// the self type of `impl T` and of `impl Trait for T`, without its generics.
fn implemented_types(code: &str) -> Vec<String> {
    let mut types = Vec::new();
    for line in code.lines() {
        let Some(rest) = line.trim_start().strip_prefix("impl") else {
            continue;
        };
        // `impl<'a, T: X>`: the generics, then the header up to its block.
        let rest = match rest.strip_prefix('<') {
            Some(generics) => after_closing_angle(generics),
            None if rest.starts_with(' ') => rest,
            None => continue,
        };
        let header = rest.split('{').next().unwrap_or(rest);
        let header = header.split(" where ").next().unwrap_or(header);
        let self_type = header.rsplit(" for ").next().unwrap_or(header).trim();
        let self_type = self_type.trim_start_matches('&').trim_start_matches("mut ");
        let name: String = self_type
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        if !name.is_empty() {
            types.push(name);
        }
    }
    types
}

/// The text after the `>` that closes an angle bracket already opened.
fn after_closing_angle(text: &str) -> &str {
    let mut depth = 1;
    for (i, c) in text.char_indices() {
        match c {
            '<' => depth += 1,
            '>' if depth == 1 => return &text[i + 1..],
            '>' => depth -= 1,
            _ => {}
        }
    }
    ""
}

/// The path by which `code` names the type `written` (an `impl`'s self type): itself when it
/// is a `crate::` or `super::` path, else the `use` path that brought its last segment into
/// scope; `None` for a type of the module's own (or of no known module: std's, a crate's).
fn path_of_type(written: &str, paths: &[String]) -> Option<String> {
    if written.starts_with("crate::") || written.starts_with("super::") {
        return Some(written.to_string());
    }
    let name = written.rsplit("::").next()?;
    paths
        .iter()
        .find(|p| p.rsplit("::").next() == Some(name))
        .cloned()
}

/// The deepest known module `path` walks through, seen from `from` (a file's module; `parent`
/// is what `super` means there).
fn target(path: &str, parent: &Module, modules: &BTreeSet<Module>) -> Option<Module> {
    let mut segments = path.split("::").filter(|s| !s.is_empty()).peekable();
    let mut at: Module = match segments.peek().copied() {
        Some("crate") => {
            segments.next();
            Vec::new()
        }
        Some("super") => {
            let mut at = parent.clone();
            segments.next();
            while segments.peek() == Some(&"super") {
                segments.next();
                at.pop();
            }
            at
        }
        _ => return None,
    };
    for segment in segments {
        let mut deeper = at.clone();
        deeper.push(segment.to_string());
        if !modules.contains(&deeper) {
            break;
        }
        at = deeper;
    }
    Some(at)
}

/// The crate's module graph: module -> the modules it names.
pub(crate) fn graph() -> BTreeMap<Module, BTreeSet<Module>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    source_files(&src, &mut files);
    files.retain(|f| {
        let name = f.file_name().unwrap();
        name != "main.rs" && name != "tests.rs"
    });
    let modules: BTreeMap<Module, PathBuf> = files
        .iter()
        .map(|f| (module_of(f.strip_prefix(&src).unwrap()), f.clone()))
        .collect();
    let known: BTreeSet<Module> = modules.keys().cloned().collect();
    let mut graph = BTreeMap::new();
    for (module, file) in &modules {
        // `super` in `a/b.rs` is `a`; in `a/b/mod.rs` it is `a` too (the file is `a::b`).
        let mut parent = module.clone();
        parent.pop();
        let text = std::fs::read_to_string(file).unwrap();
        let code = without_visibility(&without_comments(without_inline_tests(&text)));
        let paths = named_paths(&code);
        let implemented = implemented_types(&code)
            .into_iter()
            .filter_map(|t| path_of_type(&t, &paths));
        let arrows: BTreeSet<Module> = paths
            .iter()
            .cloned()
            .chain(implemented)
            .filter_map(|p| target(&p, &parent, &known))
            .filter(|t| t != module && !t.starts_with(module))
            .collect();
        graph.insert(module.clone(), arrows);
    }
    graph
}

/// The strongly connected components with more than one module (Tarjan's algorithm).
fn circles(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct State<'a> {
        graph: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on_stack: BTreeSet<&'a Module>,
        found: Vec<Vec<Module>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a Module) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let Some((w, _)) = s.graph.get_key_value(w) else {
                continue;
            };
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v) {
            visit(&mut state, v);
        }
    }
    state.found
}

#[test]
fn no_import_circle_in_the_crate() {
    let graph = graph();
    assert!(graph.len() > 50, "too few modules read: {}", graph.len());
    let found: Vec<String> = circles(&graph)
        .iter()
        .map(|c| {
            let names: Vec<String> = c.iter().map(|m| m.join("::")).collect();
            format!("  {}", names.join(" <-> "))
        })
        .collect();
    assert!(
        found.is_empty(),
        "import circles (each module names another of its circle through crate:: or super::):\n{}",
        found.join("\n")
    );
}

/// The layers of `lock/`, lowest first (see `src/lock/mod.rs`): each may name only the layers
/// before it, and none names `lock` itself, the public surface built on top of them all.
const LOCK_LAYERS: [&str; 5] = ["wire", "scripts", "quorum", "read", "kinds"];

/// The layer of a module under `lock/`, as its rank in [`LOCK_LAYERS`]; `None` for `lock`
/// itself and for modules outside it.
fn lock_layer(module: &Module) -> Option<Result<usize, String>> {
    if module.first().map(String::as_str) != Some("lock") || module.len() < 2 {
        return None;
    }
    Some(
        LOCK_LAYERS
            .iter()
            .position(|l| *l == module[1])
            .ok_or_else(|| module.join("::")),
    )
}

#[test]
fn the_layers_of_lock_name_only_the_layers_below_them() {
    let graph = graph();
    let mut wrong = Vec::new();
    for (from, tos) in &graph {
        let Some(from_layer) = lock_layer(from) else {
            continue;
        };
        let from_layer = from_layer.unwrap_or_else(|m| panic!("{m} is in no layer of lock/"));
        for to in tos {
            let up = match lock_layer(to) {
                // `lock` itself: the API, above every layer.
                None => to.as_slice() == ["lock"],
                Some(to_layer) => to_layer.is_ok_and(|l| l > from_layer),
            };
            if up {
                wrong.push(format!("  {} -> {}", from.join("::"), to.join("::")));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "a layer of lock/ names one above it (order: {}):\n{}",
        LOCK_LAYERS.join(" < "),
        wrong.join("\n")
    );
}

#[test]
fn the_reader_sees_use_statements_and_inline_paths() {
    let code = "use super::{a::X, b::{self, Y}};\npub(crate) use crate::c::d;\nfn f() { crate::e::f(); }\n// use crate::g;\nlet u = \"redis://h\"; super::h::i();";
    let mut paths = named_paths(&without_comments(code));
    paths.sort();
    assert_eq!(
        paths,
        [
            "crate::c::d",
            "crate::c::d",
            "crate::e::f",
            "super::a::X",
            "super::b::Y",
            "super::b::self",
            "super::h::i"
        ]
    );
    let modules: BTreeSet<Module> = [
        vec!["lock".to_string()],
        vec!["lock".into(), "queue".into()],
    ]
    .into_iter()
    .collect();
    let parent = vec!["lock".to_string()];
    assert_eq!(
        target("super::queue::Waiter", &parent, &modules),
        Some(vec!["lock".to_string(), "queue".to_string()])
    );
    assert_eq!(
        target("crate::lock::Cancel", &parent, &modules),
        Some(vec!["lock".to_string()])
    );
    let impls = "impl Redlock {\nimpl<'a> Turns<'a> {\n    impl fmt::Display for super::x::Wakeup {\n\
                 impl<T: A<B>> Tr for &Y<T> where T: C {\nfn implied() {}";
    assert_eq!(
        implemented_types(impls),
        ["Redlock", "Turns", "super::x::Wakeup", "Y"]
    );
    let paths = ["super::client::Redlock".to_string()];
    assert_eq!(
        path_of_type("Redlock", &paths).as_deref(),
        Some("super::client::Redlock")
    );
    assert_eq!(path_of_type("Turns", &paths), None);
}
