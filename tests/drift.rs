//! Drift: every path and module that the comments (in `src/`, `tests/`, `benches/`) and the
//! docs (README.md, BENCHMARKS.md, docs/) name exists, so that a move or a rename cannot leave
//! a reader sent to something that is gone (issue 36 counted 35 such references in 21 files).
//! CHANGELOG.md is history and is not read, nor this file, which quotes stale references.
//!
//! What counts as a reference, chosen so that the test does not cry wolf:
//! - **a path** `src/...`, `tests/...` or `benches/...` (not inside another path, as in
//!   `core/src/...`) naming a `.rs` file or a folder; a file of another kind (`src/timeout.c`
//!   of coreutils) is another project's, and a part in capitals (`tests/THEME.rs`) a
//!   placeholder;
//! - **a module path** `a::b::c` whose first part starts in lower case: each part before the
//!   last, and the last when it is in lower case, must be a module, an item the module declares
//!   or imports (a function, a Lua `function` in its scripts), or lie inside an inline `mod`;
//!   the walk stops at the first part in capitals (a type: `Redlock::take`). It starts at
//!   `crate`, `super` or `redlock_cli`, or else at the file's own module or any module of that
//!   name (`queue::wait_in_line`). Paths into std, a dependency, or a primitive (`usize::MAX`)
//!   are not ours; one-letter parts are placeholders (`a::b`), and a `cargo test` line holds
//!   test filters, not paths;
//! - **a method path** `Type::method` (a part in capitals, then one in lower case, wherever
//!   it stands in a longer path): when the type is one the crate declares (a struct, enum,
//!   trait or type alias of that name, in any module), the method must be a `fn` of one of
//!   its `impl` blocks, of a trait of ours it implements, or of the trait itself, or a field
//!   of the struct; a type we do not declare (`Instant::now`), or one in a path into std or a
//!   dependency (`std::process::Command::spawn`, where we have a `Command` too), is not ours;
//! - **a module name** in backticks, a snake_case word with an underscore (`queue_scripts`): it
//!   must be a module, or a name the code uses (in code or its strings, the Lua included), or
//!   one of [`OUTSIDE`], names from outside the crate that no code of ours spells.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::module_graph::{expand, source_files};
use crate::common::manual;

/// Snake_case names that comments and docs quote from outside the crate: C functions, Redis
/// INFO fields, a `getrusage` field, a method clap derives, a GitLab CI keyword.
const OUTSIDE: [&str; 10] = [
    "augment_args",
    "close_range",
    "cluster_slots_assigned",
    "epoll_ctl",
    "failed_calls",
    "inet_aton",
    "posix_spawn",
    "rejected_calls",
    "resource_group",
    "ru_maxrss",
];

/// What module paths in comments start with that is not ours (the dependencies in Cargo.toml
/// are read from it): std and the modules of std named by their last part (`io::Error`), and
/// primitives (`usize::MAX`).
const NOT_OURS: [&str; 30] = [
    "std",
    "core",
    "alloc",
    "io",
    "fmt",
    "mem",
    "process",
    "thread",
    "time",
    "fs",
    "env",
    "ptr",
    "sync",
    "mpsc",
    "atomic",
    "os",
    "net",
    "path",
    "ffi",
    "collections",
    "iter",
    "str",
    "char",
    "usize",
    "u8",
    "u16",
    "u32",
    "u64",
    "i32",
    "i64",
];

/// A module: its tree (`src`, `tests`, `benches`), then its path (`src`, `lock`, `kinds`).
type Module = Vec<String>;

struct Crate {
    /// Every module, with its code (comments cut).
    modules: BTreeMap<Module, String>,
    /// Every type the crate declares, by name (in any module): its methods and fields.
    types: BTreeMap<String, BTreeSet<String>>,
    /// Every word of code (strings included) in every module.
    words: BTreeSet<String>,
    /// What is not ours: std, the dependencies.
    outside: BTreeSet<String>,
}

/// The comment of a line of Rust, if it has one: from a `//` outside a string (an even number
/// of quotes before it) that is not a URL's (after a colon).
fn comment(line: &str) -> Option<&str> {
    let bytes = line.as_bytes();
    let mut quotes = 0;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'"' if i == 0 || bytes[i - 1] != b'\\' => quotes += 1,
            b'/' if bytes.get(i + 1) == Some(&b'/')
                && quotes % 2 == 0
                && (i == 0 || bytes[i - 1] != b':') =>
            {
                return Some(&line[i..]);
            }
            _ => {}
        }
    }
    None
}

fn code_of(text: &str) -> String {
    let lines = text.lines().map(|l| match comment(l) {
        Some(c) => &l[..l.len() - c.len()],
        None => l,
    });
    lines.collect::<Vec<_>>().join("\n")
}

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// The module of `relative` in `tree`: the folder `queue_model` when its `mod.rs`.
fn module_of(tree: &str, relative: &Path) -> Module {
    let mut module = vec![tree.to_string()];
    module.extend(relative.iter().map(|p| p.to_string_lossy().into_owned()));
    let file = module.pop().unwrap();
    let stem = file.trim_end_matches(".rs");
    if !["mod", "lib", "main"].contains(&stem) {
        module.push(stem.to_string());
    }
    module
}

/// The dependencies' names as code spells them (`serde_json`), from Cargo.toml.
fn dependencies(manifest: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut inside = false;
    for line in manifest.lines() {
        if line.starts_with('[') {
            inside = line.trim_end().ends_with("dependencies]");
        } else if inside && let Some((name, _)) = line.split_once(['=', '.']) {
            names.push(name.trim().replace('-', "_"));
        }
    }
    names
}

impl Crate {
    fn read(root: &Path) -> (Crate, Vec<(PathBuf, Module, String)>) {
        let mut modules = BTreeMap::new();
        let mut files = Vec::new();
        for tree in ["src", "tests", "benches"] {
            let mut found = Vec::new();
            source_files(&root.join(tree), &mut found);
            for file in found {
                let relative = file.strip_prefix(root.join(tree)).unwrap();
                let module = module_of(tree, relative);
                let text = std::fs::read_to_string(&file).unwrap();
                let code = code_of(&text);
                // `main.rs` is the root too; `lib.rs` holds the modules.
                if !file.ends_with("src/main.rs") {
                    modules.insert(module.clone(), code);
                }
                let shown = file.strip_prefix(root).unwrap().to_path_buf();
                files.push((shown, module, text));
            }
        }
        // This file quotes stale names on purpose, to test the reader.
        let here = module_of("tests", Path::new("drift.rs"));
        let words = modules
            .iter()
            .filter(|(module, _)| **module != here)
            .flat_map(|(_, code)| words(code).map(str::to_string))
            .collect();
        let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
        let outside = NOT_OURS
            .iter()
            .map(|s| s.to_string())
            .chain(dependencies(&manifest))
            .collect();
        let types = types(modules.values().map(String::as_str));
        let krate = Crate {
            modules,
            types,
            words,
            outside,
        };
        (krate, files)
    }

    /// The `use` names of `module`: the name each brings into scope -> its path.
    fn imports(&self, module: &Module) -> Vec<(String, String)> {
        let code = self.modules.get(module).map_or("", String::as_str);
        let mut imports = Vec::new();
        for statement in code.split(';') {
            let statement = statement.trim_start();
            let statement = statement.strip_prefix("pub").map_or(statement, |s| {
                s.trim_start_matches(|c: char| c != ' ' && c != '\n')
                    .trim_start()
            });
            let Some(tree) = statement.strip_prefix("use ") else {
                continue;
            };
            // "use " in a string or a sentence is no statement.
            if !tree
                .chars()
                .all(|c| c.is_alphanumeric() || "_:{},* \n\t".contains(c))
            {
                continue;
            }
            let tree = tree.replace(" as ", "@");
            for path in expand(&tree) {
                let (path, name) = match path.split_once('@') {
                    Some((path, name)) => (path.to_string(), name.to_string()),
                    None => (path.clone(), path.rsplit("::").next().unwrap().to_string()),
                };
                imports.push((name, path));
            }
        }
        imports
    }

    /// What `name` is in `module`: `Some(Some(m))` a module, `Some(None)` an item (or
    /// whatever an inline `mod` holds: `Err`), `None` nothing.
    fn part(&self, module: &Module, name: &str) -> Option<Result<Option<Module>, ()>> {
        let mut child = module.clone();
        child.push(name.to_string());
        if self.modules.contains_key(&child) {
            return Some(Ok(Some(child)));
        }
        if let Some((_, path)) = self.imports(module).into_iter().find(|(n, _)| n == name) {
            return Some(Ok(self.resolve(module, &path)));
        }
        let code = self.modules.get(module).map_or("", String::as_str);
        let declares = [
            "fn",
            "static",
            "const",
            "struct",
            "enum",
            "type",
            "trait",
            "macro_rules",
            "function",
        ];
        let mut previous = "";
        for word in words(code) {
            if word == name && previous == "mod" {
                return Some(Err(()));
            }
            if word == name && declares.contains(&previous) {
                return Some(Ok(None));
            }
            previous = word;
        }
        None
    }

    /// The module a `use` path names from `module` (`None`: an item, or not ours).
    fn resolve(&self, module: &Module, path: &str) -> Option<Module> {
        let mut parts = path.split("::");
        let mut at = match parts.next()? {
            "crate" => module[..1].to_vec(),
            "redlock_cli" => vec!["src".to_string()],
            "self" => module.clone(),
            "super" => module[..module.len() - 1].to_vec(),
            first => {
                let mut child = module.clone();
                child.push(first.to_string());
                child
            }
        };
        for part in parts {
            if part == "super" {
                at.pop();
                continue;
            }
            at.push(part.to_string());
        }
        self.modules.contains_key(&at).then_some(at)
    }

    /// Whether `parts` walk from `at` through what exists.
    fn walks(&self, mut at: Module, parts: &[&str]) -> bool {
        for (i, part) in parts.iter().enumerate() {
            if part.starts_with(|c: char| c.is_uppercase()) {
                return true;
            }
            match self.part(&at, part) {
                None => return false,
                Some(Err(())) => return true,
                Some(Ok(Some(module))) => at = module,
                Some(Ok(None)) => {
                    let next = parts.get(i + 1);
                    return next.is_none_or(|n| n.starts_with(|c: char| c.is_uppercase()));
                }
            }
        }
        true
    }

    /// Whether the module path `path`, named in `from`'s comments, exists (or is not ours).
    fn has_path(&self, from: Option<&Module>, path: &str) -> bool {
        let parts: Vec<&str> = path.split("::").collect();
        let (first, rest) = (parts[0], &parts[1..]);
        if first.len() == 1 || self.outside.contains(first) {
            return true;
        }
        let root = |tree: &str| vec![tree.to_string()];
        match (first, from) {
            ("crate", Some(from)) => self.walks(from[..1].to_vec(), rest),
            ("crate", None) | ("redlock_cli", _) => self.walks(root("src"), rest),
            ("super", Some(from)) => {
                let mut at = from[..from.len() - 1].to_vec();
                let supers = rest.iter().take_while(|p| **p == "super").count();
                at.truncate(at.len().saturating_sub(supers));
                self.walks(at, &rest[supers..])
            }
            ("self", Some(from)) => self.walks(from.clone(), rest),
            _ => {
                let own = from.is_some_and(|m| self.walks(m.clone(), &parts));
                own || self
                    .modules
                    .keys()
                    .filter(|m| m.last().map(String::as_str) == Some(first))
                    .any(|m| self.walks(m.clone(), rest))
            }
        }
    }

    /// Whether `Type::method`, named in a comment or a doc in a path that starts with
    /// `first`, exists (or is not ours).
    fn has_method(&self, first: &str, ty: &str, method: &str) -> bool {
        self.outside.contains(first)
            || self
                .types
                .get(ty)
                .is_none_or(|members| members.contains(method))
    }

    fn has_name(&self, name: &str) -> bool {
        let module = self.modules.keys().any(|m| m.iter().any(|p| p == name));
        module || self.words.contains(name) || OUTSIDE.contains(&name)
    }
}

/// The first identifier of `text` (after `&`, `dyn`, `mut` and a path), without generics.
fn type_name(text: &str) -> Option<&str> {
    let text = text.trim_start_matches(['&', ' ', '(']);
    let text = text
        .strip_prefix("dyn ")
        .or_else(|| text.strip_prefix("mut "))
        .unwrap_or(text);
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(text.len());
    let name = text[..end].rsplit("::").next()?;
    name.starts_with(|c: char| c.is_uppercase()).then_some(name)
}

/// `text` without the generics it starts with (`<'a, T: X<Y>> rest` -> ` rest`).
fn after_generics(text: &str) -> &str {
    if !text.starts_with('<') {
        return text;
    }
    let mut depth = 0;
    for (i, c) in text.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => {
                depth -= 1;
                if depth == 0 {
                    return &text[i + 1..];
                }
            }
            _ => {}
        }
    }
    ""
}

/// The name a line declares as a member of the block it is in: a `fn` (with any of the
/// qualifiers before it) or a field (`pub name: T`).
fn member(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    if let Some(after) = rest.strip_prefix("pub") {
        rest = match after.strip_prefix('(') {
            Some(scoped) => scoped.split_once(')')?.1,
            None => after,
        }
        .trim_start();
    }
    for qualifier in ["const ", "async ", "unsafe ", "extern \"C\" "] {
        rest = rest.strip_prefix(qualifier).unwrap_or(rest);
    }
    let (word, field) = match rest.strip_prefix("fn ") {
        Some(after) => (after, false),
        None => (rest, true),
    };
    let end = word
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(word.len());
    let (name, next) = word.split_at(end);
    let fits = if field {
        next.starts_with(':') && !next.starts_with("::")
    } else {
        next.starts_with(['(', '<'])
    };
    (fits && !name.is_empty()).then_some(name)
}

/// Every type declared in `codes` (formatted by rustfmt: a block ends at a `}` as indented as
/// the line that opened it), with the methods of its `impl` blocks and its trait's, the
/// methods of the traits of ours it implements, and its fields.
fn types<'a>(codes: impl Iterator<Item = &'a str>) -> BTreeMap<String, BTreeSet<String>> {
    let mut members: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut implements: Vec<(String, String)> = Vec::new();
    for code in codes {
        let lines: Vec<&str> = code.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let trimmed = line.trim_start();
            let indent = &line[..line.len() - trimmed.len()];
            let mut declaration = trimmed;
            if let Some(after) = declaration.strip_prefix("pub") {
                declaration = match after.strip_prefix('(') {
                    Some(scoped) => scoped.split_once(')').map_or("", |(_, r)| r),
                    None => after,
                }
                .trim_start();
            }
            let owner = if let Some(header) = trimmed.strip_prefix("impl") {
                let header = after_generics(header).trim_start();
                let header = header.split(" where").next().unwrap_or(header);
                match header.split_once(" for ") {
                    Some((tr, ty)) => {
                        let (tr, ty) = (type_name(tr), type_name(ty));
                        if let (Some(tr), Some(ty)) = (tr, ty) {
                            implements.push((tr.to_string(), ty.to_string()));
                        }
                        ty
                    }
                    None => type_name(header),
                }
            } else {
                ["struct ", "enum ", "trait ", "type ", "union "]
                    .iter()
                    .find_map(|kind| declaration.strip_prefix(kind))
                    .and_then(type_name)
            };
            let Some(owner) = owner else {
                continue;
            };
            let entry = members.entry(owner.to_string()).or_default();
            // A one-line declaration (`struct Unit;`, `type A = B;`) has no members.
            if !line.trim_end().ends_with('{')
                && !lines.get(i + 1).is_some_and(|next| {
                    next.trim_start().starts_with("where") || next.trim() == "{"
                })
            {
                continue;
            }
            let inner = format!("{indent}    ");
            let end = format!("{indent}}}");
            for body in &lines[i + 1..] {
                if body.starts_with(&end) {
                    break;
                }
                let own_line = body.starts_with(&inner) && !body[inner.len()..].starts_with(' ');
                if let Some(name) = own_line.then(|| member(body)).flatten() {
                    entry.insert(name.to_string());
                }
            }
        }
    }
    for (tr, ty) in implements {
        let inherited = members.get(&tr).cloned().unwrap_or_default();
        members.entry(ty).or_default().extend(inherited);
    }
    members
}

/// The method paths in `text`: each `Type::method` (a part in capitals, then one in lower
/// case), wherever it stands in a longer path, with that path's first part.
fn method_paths(text: &str) -> Vec<(&str, &str, &str)> {
    let is_part = |c: char| c.is_alphanumeric() || c == '_';
    let mut found = Vec::new();
    for (at, _) in text.match_indices("::") {
        let start = text[..at].rfind(|c: char| !is_part(c)).map_or(0, |i| i + 1);
        let rest = &text[at + 2..];
        let end = rest.find(|c: char| !is_part(c)).unwrap_or(rest.len());
        let (ty, method) = (&text[start..at], &rest[..end]);
        if ty.starts_with(|c: char| c.is_uppercase())
            && method.starts_with(|c: char| c.is_lowercase() || c == '_')
        {
            let path_start = text[..at]
                .rfind(|c: char| !(is_part(c) || c == ':'))
                .map_or(0, |i| i + 1);
            let first = text[path_start..at].split("::").next().unwrap_or(ty);
            found.push((first, ty, method));
        }
    }
    found
}

/// The `src/`, `tests/` and `benches/` paths in `text` that name our files or folders.
fn paths(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    for tree in ["src/", "tests/", "benches/"] {
        for (at, _) in text.match_indices(tree) {
            let before = text[..at].chars().last();
            if before.is_some_and(|c| c.is_alphanumeric() || "_./-".contains(c)) {
                continue;
            }
            let rest = &text[at..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || "_/.-".contains(c)))
                .unwrap_or(rest.len());
            let path = rest[..end].trim_end_matches(['.', '-']);
            let last = path.trim_end_matches('/').rsplit('/').next().unwrap();
            let placeholder = path.split('/').any(|p| {
                let p = p.trim_end_matches(".rs");
                p.len() > 1 && p.chars().all(|c| c.is_ascii_uppercase())
            });
            if (path.ends_with(".rs") || !last.contains('.')) && !placeholder {
                found.push(path);
            }
        }
    }
    found
}

/// The module paths in `text`: `a::b` and longer, starting in lower case.
fn module_paths(text: &str) -> Vec<&str> {
    let is_part = |c: char| c.is_alphanumeric() || c == '_';
    let mut found = Vec::new();
    let mut rest = text;
    let mut offset = 0;
    while let Some(at) = rest.find("::") {
        let absolute = offset + at;
        let start = text[..absolute]
            .rfind(|c: char| !is_part(c))
            .map_or(0, |i| i + 1);
        let mut end = absolute;
        while text[end..].starts_with("::") && text[end + 2..].starts_with(is_part) {
            end += 2;
            end += text[end..]
                .find(|c: char| !is_part(c))
                .unwrap_or(text.len() - end);
        }
        let before = text[..start].chars().last();
        let path = &text[start..end];
        // An IPv6 address (`fe80::1`) has a part that starts with a digit, or is hex.
        let address = path.split("::").any(|part| {
            part.starts_with(|c: char| c.is_ascii_digit())
                || (part.chars().all(|c| c.is_ascii_hexdigit()) && part.contains(char::is_numeric))
        });
        if end > absolute
            && start < absolute
            && path.starts_with(|c: char| c.is_lowercase() || c == '_')
            && before.is_none_or(|c| c != ':')
            && !address
        {
            found.push(path);
        }
        offset = end.max(absolute + 2);
        rest = &text[offset..];
    }
    found
}

/// The snake_case names with an underscore that `text` quotes in backticks.
fn quoted_names(text: &str) -> Vec<&str> {
    let spans = text.split('`').skip(1).step_by(2);
    spans
        .filter(|s| {
            s.contains('_')
                && s.starts_with(|c: char| c.is_ascii_lowercase())
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
        .collect()
}

/// A file to read: its path, its module (for Rust), its numbered lines (a Rust file's
/// comments).
type Text = (PathBuf, Option<Module>, Vec<(usize, String)>);

/// Every stale reference (`file:line: what`), and how many references were checked.
fn stale(root: &Path) -> (Vec<String>, usize) {
    let (krate, files) = Crate::read(root);
    let mut texts: Vec<Text> = Vec::new();
    for (file, module, text) in files {
        // This file quotes stale references on purpose.
        if file == Path::new("tests/drift.rs") {
            continue;
        }
        let lines = text.lines().enumerate();
        let comments = lines.filter_map(|(n, l)| Some((n + 1, comment(l)?.to_string())));
        texts.push((file, Some(module), comments.collect()));
    }
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| PathBuf::from("docs").join(e.unwrap().file_name()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    for page in ["README.md", "BENCHMARKS.md"]
        .map(PathBuf::from)
        .into_iter()
        .chain(pages)
    {
        let text = std::fs::read_to_string(root.join(&page)).unwrap();
        let lines = text.lines().enumerate();
        let lines = lines.map(|(n, l)| (n + 1, l.to_string())).collect();
        texts.push((page, None, lines));
    }
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (file, module, lines) in &texts {
        let mut say =
            |n: usize, what: String| wrong.push(format!("{}:{n}: {what}", file.display()));
        for (n, line) in lines {
            for path in paths(line) {
                checked += 1;
                if !root.join(path).exists() {
                    say(*n, format!("no file {path}"));
                }
            }
            if !line.contains("cargo test") {
                for path in module_paths(line) {
                    checked += 1;
                    if !krate.has_path(module.as_ref(), path) {
                        say(*n, format!("no module path {path}"));
                    }
                }
                for (first, ty, method) in method_paths(line) {
                    checked += 1;
                    if !krate.has_method(first, ty, method) {
                        say(*n, format!("no method {ty}::{method}"));
                    }
                }
            }
            for name in quoted_names(line) {
                checked += 1;
                if !krate.has_name(name) {
                    say(*n, format!("no module or name `{name}`"));
                }
            }
        }
    }
    (wrong, checked)
}

#[test]
fn every_path_and_module_the_comments_and_docs_name_exists() {
    let root = std::env::var_os("DRIFT_ROOT").map(PathBuf::from);
    let (wrong, checked) = stale(root.as_deref().unwrap_or(manual::root()));
    assert!(checked > 300, "too few references read: {checked}");
    assert!(
        wrong.is_empty(),
        "{} references to what does not exist: moved or renamed (say where it is now), or named \
         from outside the crate (add it to OUTSIDE or NOT_OURS in tests/drift.rs):\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn the_reader_finds_references_and_passes_over_what_is_not_ours() {
    let line = "(see core/src/x.c, src/lock/kinds/queue.rs, `tests/THEME.rs`, src/timeout.c, \
                tests/queue_model/).";
    assert_eq!(
        paths(line),
        ["src/lock/kinds/queue.rs", "tests/queue_model/"]
    );
    let line = "`crate::lock::Redlock::take`, queue::wait_in_line(), Redlock::take, `a::b`; \
                [fe80::1], ::1, fe80::abc";
    assert_eq!(
        module_paths(line),
        ["crate::lock::Redlock::take", "queue::wait_in_line", "a::b"]
    );
    assert_eq!(
        quoted_names("see `queue_scripts`, `--no-wait`, `Kind::Slot`, `first_live`"),
        ["queue_scripts", "first_live"]
    );
    assert_eq!(comment("let u = \"a // b\"; // why"), Some("// why"));
    assert_eq!(comment("let u = \"redis://h\";"), None);
    let (krate, _) = Crate::read(manual::root());
    let queue = ["src", "lock", "kinds", "queue"].map(String::from).to_vec();
    for (path, exists) in [
        ("crate::lock::kinds::queue", true),
        ("lock::kinds::queue::wait_in_line", true),
        ("queue::wait_in_line", true),
        ("super::client::Redlock", true),
        ("redlock_cli::lock::keys::fence", true),
        ("lock::keys", true),
        ("std::io::Error", true),
        ("queue_scripts::FUNCTIONS", false),
        ("lock::scan", false),
        ("crate::lock::round", false),
        ("super::client::gone_away", false),
    ] {
        assert_eq!(krate.has_path(Some(&queue), path), exists, "{path}");
    }
    assert!(krate.has_name("first_live"));
    assert!(!krate.has_name("queue_scripts"));
    let line = "`Redlock::acquire`, crate::lock::Names::of(k), `std::process::Command::spawn`, \
                Kind::Slot, Redlock::MAX";
    assert_eq!(
        method_paths(line),
        [
            ("Redlock", "Redlock", "acquire"),
            ("crate", "Names", "of"),
            ("std", "Command", "spawn")
        ]
    );
    for (first, ty, method, exists) in [
        ("Redlock", "Redlock", "acquire", true),
        ("Names", "Names", "of", true),
        // A trait's method, for a type that implements it; a field.
        ("Exclusive", "Exclusive", "outsiders", true),
        ("Request", "Request", "key", true),
        // Not ours.
        ("Instant", "Instant", "now", true),
        ("std", "Command", "spawn", true),
        ("Redlock", "Redlock", "take", false),
        ("Command", "Command", "spawn", false),
    ] {
        assert_eq!(
            krate.has_method(first, ty, method),
            exists,
            "{ty}::{method}"
        );
    }
}
