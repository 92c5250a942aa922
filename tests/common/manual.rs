//! The manual as the tests read it: README.md (the front page) and the pages of docs/. Tests
//! that check what the manual says or shows read it through here, so a text that moves from
//! one page to another is still found.

use std::path::{Path, PathBuf};

/// One page of the manual: its path from the repository's root, and its text.
pub struct Page {
    pub path: PathBuf,
    pub text: String,
}

impl Page {
    /// The section that starts at the heading `heading` (without its `#`s), up to the next
    /// heading of the same level or above.
    pub fn section(&self, heading: &str) -> &str {
        let mut start = None;
        let mut offset = 0;
        for line in self.text.split_inclusive('\n') {
            if let Some((level, title)) = heading_of(line) {
                match start {
                    None if title == heading => start = Some((offset, level)),
                    Some((from, open)) if level <= open => return &self.text[from..offset],
                    _ => {}
                }
            }
            offset += line.len();
        }
        let (from, _) =
            start.unwrap_or_else(|| panic!("{} has no heading {heading:?}", self.path.display()));
        &self.text[from..]
    }
}

/// The repository's root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md, then every page of docs/ in name order.
pub fn pages() -> Vec<Page> {
    let mut paths = vec![PathBuf::from("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|entry| PathBuf::from("docs").join(entry.unwrap().file_name()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    paths.extend(docs);
    paths.into_iter().map(page).collect()
}

/// The page at `path` (from the repository's root).
pub fn page(path: impl AsRef<Path>) -> Page {
    let path = path.as_ref().to_path_buf();
    let text = std::fs::read_to_string(root().join(&path))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Page { path, text }
}

/// A line's heading level and title, if it is an ATX heading (`## Title`). Lines in fenced
/// code blocks are the caller's to skip: see [`prose_lines`].
pub fn heading_of(line: &str) -> Option<(usize, &str)> {
    let line = line.trim_end();
    let level = line.chars().take_while(|&c| c == '#').count();
    let title = line[level..].strip_prefix(' ')?;
    (1..=6).contains(&level).then_some((level, title.trim()))
}

/// The lines of `text` outside fenced code blocks, with their line numbers (from 1).
pub fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            lines.push((number + 1, line));
        }
    }
    lines
}

/// The code blocks of `text`: each one's language (empty when none is given) and lines.
pub fn code_blocks(text: &str) -> Vec<(String, Vec<&str>)> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, Vec<&str>)> = None;
    for line in text.lines() {
        match (line.trim_start().strip_prefix("```"), open.take()) {
            (Some(language), None) => open = Some((language.trim().to_string(), Vec::new())),
            (Some(_), Some(block)) => blocks.push(block),
            (None, Some((language, mut lines))) => {
                lines.push(line);
                open = Some((language, lines));
            }
            (None, None) => {}
        }
    }
    blocks
}
