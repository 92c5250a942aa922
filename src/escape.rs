//! How text that redlock did not write reaches a terminal or a JSON reader: every byte a master
//! sent (tokens, holder records, waiter tokens and their commands, lock keys found by `list`,
//! addresses, servers' error text) goes through this module on its way out.
//!
//! The problem: any client of a master can write anything into a lock key, a holder record or
//! a queue. Printed raw, `ESC [2J` clears the operator's screen, other escape sequences
//! retitle the terminal or fake earlier output, a newline fakes a line of the report, and
//! Unicode's bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE) make a command line read
//! as something it is not.
//!
//! The rule, one predicate ([`must_escape`]) for every output:
//! - **text** ([`visible`], [`cut`], [`quoted`]) writes such a character as a visible escape
//!   (`\n`, `\u{1b}`, `\u{202e}`), so a line stays one line and shows what is there;
//! - **JSON** ([`json`], [`write_json`]) writes it as a `\uXXXX` escape (a surrogate pair
//!   above U+FFFF): the document stays valid, a reader that decodes it gets the exact text,
//!   and a person who prints it with `cat` sees no raw control.
//!
//! What counts: every control character (C0, DEL, C1: `char::is_control`), and the invisible
//! format characters that reorder or hide text: the bidirectional marks, embeddings, overrides
//! and isolates, zero-width characters, the line and paragraph separators, the byte-order
//! mark, interlinear annotations and the tag characters.
//!
//! Cuts (a token shortened to 8 characters, a command to 60) are made on characters of the
//! original text, before escaping, so that a cut never splits an escape or a character.

use std::borrow::Cow;
use std::io;

use serde::Serialize;

/// Whether `c` must not reach a terminal raw.
pub fn must_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}' // soft hyphen (invisible)
            | '\u{061C}' // Arabic letter mark
            | '\u{180E}' // Mongolian vowel separator
            | '\u{200B}'..='\u{200F}' // zero-width space, (non-)joiner, LRM, RLM
            | '\u{2028}'..='\u{202E}' // line/paragraph separators, embeddings, overrides
            | '\u{2060}'..='\u{2064}' // word joiner, invisible operators
            | '\u{2066}'..='\u{206F}' // isolates and deprecated format controls
            | '\u{FEFF}' // byte-order mark
            | '\u{FFF9}'..='\u{FFFB}' // interlinear annotations
            | '\u{E0000}'..='\u{E007F}' // tag characters
        )
}

/// `text` with every character of [`must_escape`] written as a visible escape (`\n`,
/// `\u{1b}`); borrowed when there is none.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(must_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if must_escape(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` escaped, cut to at most `max` of its characters (the last one an ellipsis) when it
/// has more. The cut is made before escaping: it never splits an escape or a character.
pub fn cut(text: &str, max: usize) -> String {
    if text.chars().nth(max).is_none() {
        return visible(text).into_owned();
    }
    let end = text
        .char_indices()
        .nth(max.saturating_sub(1))
        .map_or(text.len(), |(i, _)| i);
    format!("{}…", visible(&text[..end]))
}

/// `text` in double quotes, as `{:?}` quotes a string: `"` and `\` escaped with a backslash,
/// and every character of [`must_escape`] as in [`visible`]. For lock keys a master named.
pub fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if must_escape(c) => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `value` as compact JSON, with every character of [`must_escape`] as a `\u` escape.
pub fn json(value: &impl Serialize) -> String {
    let mut out = Vec::new();
    write_json(&mut out, value).expect("JSON of a value redlock builds");
    String::from_utf8(out).expect("JSON is UTF-8")
}

/// Writes `value` as compact JSON to `writer`, as [`json`] does.
pub fn write_json<W: io::Write>(writer: W, value: &impl Serialize) -> io::Result<()> {
    let mut serializer = serde_json::Serializer::with_formatter(writer, Escaping);
    value.serialize(&mut serializer).map_err(io::Error::from)
}

/// serde_json's compact output, but with [`must_escape`] characters written as `\u` escapes
/// (serde_json escapes only those below U+0020).
struct Escaping;

impl serde_json::ser::Formatter for Escaping {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if must_escape(c) {
                writer.write_all(&fragment.as_bytes()[start..i])?;
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    write!(writer, "\\u{unit:04x}")?;
                }
                start = i + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json as value;

    const HOSTILE: &str =
        "a\u{1b}[2J\r\n\u{7f}\u{9b}31m\u{202e}b\u{2066}\u{200e}\u{feff}\u{e0041}z";

    #[test]
    fn text_shows_every_control_as_an_escape() {
        let shown = visible(HOSTILE);
        assert_eq!(
            shown,
            r"a\u{1b}[2J\r\n\u{7f}\u{9b}31m\u{202e}b\u{2066}\u{200e}\u{feff}\u{e0041}z"
        );
        assert!(!shown.chars().any(must_escape));
        // Ordinary text is untouched, and not copied.
        assert!(matches!(visible("déploy ✓ 'x' \"y\" \\"), Cow::Borrowed(_)));
    }

    #[test]
    fn cuts_are_made_before_escaping() {
        assert_eq!(cut("abc", 9), "abc");
        assert_eq!(cut("abcdefghi", 9), "abcdefghi");
        assert_eq!(cut("abcdefghij", 9), "abcdefgh…");
        // The escape of the 8th character is whole, and nothing after it is shown.
        assert_eq!(cut("abcdefg\u{1b}[2J", 9), r"abcdefg\u{1b}…");
        assert_eq!(cut("éééééééééé", 9), "éééééééé…");
    }

    #[test]
    fn quoted_reads_as_debug_for_ordinary_keys() {
        for key in ["deploy", "a\"b\\c", "tab\there", "x\u{202e}y"] {
            assert_eq!(quoted(key), format!("{key:?}"), "{key}");
        }
    }

    #[test]
    fn json_stays_valid_and_carries_no_raw_control() {
        let doc = value!({"token": HOSTILE, HOSTILE: [HOSTILE]});
        let text = json(&doc);
        assert!(!text.chars().any(must_escape), "{text}");
        assert!(
            text.contains(r"\u001b[2J\r\n\u007f\u009b31m\u202eb\u2066\u200e\ufeff\udb40\udc41z")
        );
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, doc);
        // Everything else is serde_json's compact form.
        let plain = value!({"b": [1, "x"], "a": null});
        assert_eq!(json(&plain), plain.to_string());
    }
}
