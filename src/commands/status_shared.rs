//! `redlock status` of a lock that readers hold (`--shared`): how many, and each reader, after
//! the lock's own report. The JSON adds to the lock's (documented in docs/shared.md):
//!
//! ```json
//! {"key": "env", "verdict": "held", "shared": true, "token": "__redlock:shared", …,
//!  "readers": [{"token": "shr-…", "masters": 3, "expires_in_ms": 28000, "holder": {…}}],
//!  "reader_count": 1, "readers_shown": 1}
//! ```
//!
//! `reader_count` is how many hold as the masters count them, `readers_shown` how many
//! `readers` lists: a master lists at most 1000 (`status`) or 100 (`list`) of them.

use std::fmt::Write;

use serde_json::{Value, json};

use crate::escape;
use crate::lock::{Holder, Reader};
use crate::plural::counted;

use super::durations::{ms, round};

/// How many characters of a reader's token a line shows (an ellipsis counted): readers'
/// tokens start with a fixed `shr-` prefix.
const READER_TOKEN_SHOWN: usize = 13;

/// `3 readers (--shared)`, for the headline in place of a holder; `count` is how many hold,
/// as the masters count them (see `lock::count_readers`), `readers` those listed.
pub fn who(readers: &[Reader], count: usize) -> String {
    if count > readers.len() {
        return format!(
            "{} (--shared, {} shown)",
            counted(count, "reader"),
            readers.len()
        );
    }
    format!("{} (--shared)", counted(readers.len(), "reader"))
}

/// The readers, one a line, after the masters' lines.
pub fn text(out: &mut String, readers: &[Reader], count: usize, total: usize) {
    if count > readers.len() {
        let _ = writeln!(out, "readers ({} shown of {count}):", readers.len());
    } else {
        let _ = writeln!(out, "readers ({}):", readers.len());
    }
    for reader in readers {
        let who = reader.holder.as_ref().map_or_else(
            || format!("token {}", escape::cut(&reader.token, READER_TOKEN_SHOWN)),
            Holder::describe,
        );
        let _ = writeln!(
            out,
            "  {who}, expires in {} unless renewed ({} of {})",
            round(reader.expires_in),
            reader.masters,
            counted(total, "master")
        );
    }
}

/// The readers in JSON.
pub fn json(readers: &[Reader]) -> Value {
    readers
        .iter()
        .map(|reader| {
            json!({
                "token": reader.token,
                "masters": reader.masters,
                "expires_in_ms": ms(reader.expires_in),
                "holder": reader.holder.as_ref().map(Holder::to_json),
            })
        })
        .collect()
}
