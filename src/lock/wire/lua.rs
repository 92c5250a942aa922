//! A Lua script as the transport runs it: its source, its SHA1 for EVALSHA, and its bit in a
//! connection's mask of scripts already loaded there. The scripts themselves are in `scripts`.
//!
//! The SHA1 comes from `sha1_smol`: a small, dependency-free implementation (the one redis-rs
//! itself uses for scripts), computed once per script per process. Writing SHA1 ourselves
//! would be code to get right for no gain; taking redis-rs's `Script` for it would keep a
//! redis-rs feature only for one hash.
//!
//! **What goes on the wire is the script, not its commentary.** A connection's first use of a
//! script sends its body (EVAL; see `node`), and the master hashes and reads every byte of it,
//! once per connection, so once per section per master (BENCHMARKS.md, "The masters' CPU per
//! section"). So the source is sent as [`compact`] makes it (no indentation, no comment or
//! blank lines: the Lua means the same), and a script [`Lua::composed`] from the shared
//! functions takes only those its body calls ([`used`]). Both are done once per script per
//! process, as the script is built; the SHA1 is the compact body's, the one the master names
//! it by.

/// A script's source and its SHA1, for EVALSHA with an EVAL fallback.
pub struct Lua {
    /// What is sent: the source, compacted.
    pub code: &'static str,
    /// Lower-case hex, as Redis names a cached script.
    pub sha: String,
    /// This script's bit in a connection's mask of loaded scripts.
    pub bit: u32,
}

impl Lua {
    pub(in crate::lock) fn new(code: &str, bit: u32) -> Lua {
        // Leaked once per script per process: scripts live as long as the process anyway, and
        // the transport wants `&'static str` sources.
        let code: &'static str = compact(code).leak();
        let sha = sha1_smol::Sha1::from(code).digest().to_string();
        Lua { code, sha, bit }
    }

    /// A script made of `parts`: the first a library of shared definitions (each a top-level
    /// `local function NAME` or `local NAME =`, as `queue_lua::FUNCTIONS`), of which only those
    /// the rest uses are kept, then the script's own parts, in order.
    pub(in crate::lock) fn composed(parts: &[&str], bit: u32) -> Lua {
        let (library, own) = parts.split_first().expect("a script has a body");
        let own = compact(&own.concat());
        Lua::new(&format!("{}\n{own}", used(library, &own)), bit)
    }
}

/// `code` without indentation, comment lines or blank lines. Sound for redlock's Lua, which
/// has no long strings (`[[ ]]`) and no comment after code on a line: a test checks both.
pub(in crate::lock) fn compact(code: &str) -> String {
    code.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("--"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The definitions of `library` that `body` (compacted) uses, directly or through another
/// definition it uses, in the library's order (a Lua local is visible only after it).
fn used(library: &str, body: &str) -> String {
    let definitions = definitions(library);
    let mut wanted = vec![false; definitions.len()];
    let mut reading = vec![body.to_string()];
    while let Some(text) = reading.pop() {
        for (i, (name, definition)) in definitions.iter().enumerate() {
            if !wanted[i] && mentions(&text, name) {
                wanted[i] = true;
                reading.push(definition.clone());
            }
        }
    }
    definitions
        .into_iter()
        .zip(wanted)
        .filter_map(|((_, definition), wanted)| wanted.then_some(definition))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Each top-level definition of `library` (its source, not compacted): its name, and its
/// lines, compacted, up to the next one. A definition starts at a line that starts with
/// `local ` at the margin; the lines inside one are indented (rustfmt leaves a string's lines
/// as they are written).
fn definitions(library: &str) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    for line in library.lines() {
        if let Some(rest) = line.strip_prefix("local ") {
            let rest = rest.strip_prefix("function ").unwrap_or(rest);
            let name = rest
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .unwrap_or_default();
            found.push((name.to_string(), String::new()));
        }
        if let Some((_, text)) = found.last_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    found
        .into_iter()
        .map(|(name, text)| (name, compact(&text)))
        .collect()
}

/// Whether `text` names `name` as a whole word.
fn mentions(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(at, _)| {
        let word = |c: char| c.is_alphanumeric() || c == '_';
        let before = text[..at].chars().next_back().is_none_or(|c| !word(c));
        let after = text[at + name.len()..]
            .chars()
            .next()
            .is_none_or(|c| !word(c));
        before && after
    })
}

#[cfg(test)]
mod tests;
