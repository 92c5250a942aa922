//! Messages a person reads are made of string literals in src/: none may carry a run of three
//! or more spaces or a raw line break, which is what a literal continued on the next line
//! without a trailing `\` produces ("so a resource              cannot refuse"). Column
//! alignment is done with format widths (`{:<13}`), never with spaces in a literal.
//!
//! Raw strings (`r"..."`: Lua scripts, shell completions) and doc comments are not messages
//! and are not read.

use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, TokenStream, TokenTree};

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The text of a string literal's source (`"..."`, quotes included) with each
/// backslash-newline continuation (and the indentation after it) removed, as the compiler
/// removes it; other escapes are kept as written. `None` for any other literal.
fn continued(literal: &str) -> Option<String> {
    let body = literal.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\n') => while chars.next_if(|c| c.is_whitespace()).is_some() {},
            Some(escaped) => {
                out.push('\\');
                out.push(escaped);
            }
            None => out.push('\\'),
        }
    }
    Some(out)
}

/// Whether a literal (as [`continued`] gives it) has a raw line break, or a run of three
/// spaces after the start of one of its lines (indentation after a `\n` escape is layout).
fn spaced_out(text: &str) -> bool {
    text.contains('\n')
        || text
            .split("\\n")
            .any(|line| line.trim_start_matches(' ').contains("   "))
}

/// Every string literal in `tokens` outside doc attributes, with its line.
fn literals(tokens: TokenStream, found: &mut Vec<(usize, String)>) {
    let mut tokens = tokens.into_iter().peekable();
    while let Some(token) = tokens.next() {
        match token {
            TokenTree::Punct(p) if p.as_char() == '#' => {
                // `#[doc = "..."]` (a doc comment) or `#![doc = ...]`: not a message.
                if let Some(TokenTree::Punct(bang)) = tokens.peek()
                    && bang.as_char() == '!'
                {
                    tokens.next();
                }
                if let Some(TokenTree::Group(group)) = tokens.peek()
                    && group.delimiter() == Delimiter::Bracket
                    && group.stream().to_string().starts_with("doc")
                {
                    tokens.next();
                }
            }
            TokenTree::Group(group) => literals(group.stream(), found),
            TokenTree::Literal(literal) => {
                let text = literal.to_string();
                if let Some(text) = continued(&text) {
                    found.push((literal.span().start().line, text));
                }
            }
            _ => {}
        }
    }
}

#[test]
fn no_message_carries_a_run_of_spaces_or_a_raw_line_break() {
    let mut files = Vec::new();
    rust_files(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src")),
        &mut files,
    );
    assert!(files.len() > 50, "{files:?}");
    let mut offending = Vec::new();
    for file in files {
        let source = std::fs::read_to_string(&file).unwrap();
        let tokens: TokenStream = source
            .parse()
            .unwrap_or_else(|e| panic!("{}: {e:?}", file.display()));
        let mut found = Vec::new();
        literals(tokens, &mut found);
        for (line, text) in found {
            if spaced_out(&text) {
                offending.push(format!("{}:{line}: {text}", file.display()));
            }
        }
    }
    assert!(offending.is_empty(), "\n{}", offending.join("\n"));
}

#[test]
fn the_check_sees_what_it_is_for() {
    let source = "fn f() { let _ = \"so a resource\n             cannot refuse\"; \
                  let _ = \"fine, \\\n   continued\"; let _ = r\"  raw   \"; }\n\
                  /// doc   comment\nfn g() {}";
    let mut found = Vec::new();
    literals(source.parse().unwrap(), &mut found);
    let texts: Vec<&str> = found.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(
        texts,
        [
            "so a resource\n             cannot refuse",
            "fine, continued"
        ]
    );
    assert!(spaced_out(texts[0]));
    assert!(!spaced_out(texts[1]));
    assert!(spaced_out("a resource              cannot"));
    assert!(!spaced_out(r"lines:\n    indented\n  too"));
}
