//! RESP (the Redis protocol), both ways, for every connection redlock opens: writing a command
//! straight into a connection's outgoing buffer ([`encode`]), and reading the replies, and the
//! push messages of a subscribed connection, as they arrive ([`Decoder`]) into a small value of
//! our own ([`Reply`]).
//!
//! The decoder's invariants:
//! 1. **One pass.** Every byte received is looked at once, however a reply is split across
//!    reads: the decoder keeps where it stopped (the line it is in, how far it searched for
//!    that line's end, the arrays still open) and builds the value as its pieces complete. A
//!    reply is never framed first and parsed again afterwards, and nothing is set up per reply:
//!    the hot path's `:1` costs one short scan and no allocation.
//! 2. **Capped.** No reply is accepted, or buffered past the point where it is known to be too
//!    large, beyond [`MAX_REPLY_BYTES`], [`MAX_BULK_BYTES`], [`MAX_ELEMENTS`] and
//!    [`MAX_DEPTH`]. So whatever a master sends, redlock holds at most about one capped reply
//!    per connection, bytes and decoded value together.
//! 3. **Strict.** A byte that cannot start a RESP value fails the connection at once (not once
//!    a line end or the size cap comes), and a TLS record where a reply should be is named as
//!    such: a `redis://` URL pointing at a TLS port.
//! 4. **One value for both protocols.** A connection speaks RESP2 until it sends `HELLO 3`,
//!    which only a waiter's kept connection does, to hear its release notices beside its
//!    replies (see `notices`). RESP3's types are read into the value RESP2 gives for the same
//!    answer, so that no caller tells the protocols apart: null (`_`) and `#f` are
//!    [`Reply::Nil`] (RESP2's `$-1`, as a Lua `false` is there), `#t` is `:1`, a double (`,`)
//!    or a big number (`(`) is the bulk string RESP2 sends, a verbatim string (`=`) its text
//!    without the format, a blob error (`!`) an error, a map (`%`) or a set (`~`) the flat array
//!    RESP2 sends. Only a push (`>`) is a value of its own, [`Reply::Push`]: it answers no
//!    request, except a subscription's confirmation (see `pipe`, "Pushes coalesce").

/// Appends one command (an array of bulk strings) to `out`: `*<n>`, then `$<len>` and the
/// bytes of each argument, every line ending in CRLF.
/// `count` must be the number of `args`: a wrong count would desynchronize the connection.
pub fn encode<'a>(out: &mut Vec<u8>, count: usize, args: impl IntoIterator<Item = &'a [u8]>) {
    out.push(b'*');
    push_decimal(out, count);
    out.extend_from_slice(b"\r\n");
    let mut written = 0;
    for arg in args {
        written += 1;
        out.push(b'$');
        push_decimal(out, arg.len());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
    debug_assert_eq!(written, count, "RESP array count and arguments disagree");
}

fn push_decimal(out: &mut Vec<u8>, mut n: usize) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[start..]);
}

/// The most bytes one reply may take, everything included. Redlock's own requests get small
/// replies: a script's integer or its array of at most a few fields with one holder record (a
/// JSON object of a few KiB at most: its command line is cut, see `holder`), and for `doctor` one
/// INFO (tens of KiB: INFO everything on a busy server with all its command statistics stays under
/// 100 KiB) and CONFIG GET of a few parameters. 1 MiB is ten times the largest of them. A master
/// that sends more is not answering what we asked (or is not a Redis master): it is failed rather
/// than buffered.
pub const MAX_REPLY_BYTES: usize = 1 << 20;

/// The longest bulk string a reply may hold: INFO is the largest one we ask for (see
/// [`MAX_REPLY_BYTES`]); a holder record is far smaller.
pub const MAX_BULK_BYTES: usize = 512 << 10;

/// The most array elements one reply may hold, at all levels together. Our scripts answer
/// with at most four fields; CONFIG GET of every parameter, the largest array a diagnostic
/// might want, has under a thousand. The cap matters beyond the byte cap: an element can be
/// three bytes on the wire (`+\r\n`) but costs a [`Reply`] (32 bytes) once decoded, so
/// this cap bounds a decoded reply's skeleton at 256 KiB.
pub const MAX_ELEMENTS: usize = 8192;

/// The deepest nesting of arrays one reply may have. Our scripts' replies nest one level;
/// the deepest reply of any command a diagnostic might send (ACL GETUSER's selectors) three.
/// Bounded so that what recurses per level (dropping or printing a reply) cannot be driven
/// arbitrarily deep; decoding itself keeps its open arrays on a stack of its own.
pub const MAX_DEPTH: usize = 8;

/// What to tell a user whose `redis://` URL points at a port that speaks TLS.
pub const SPEAKS_TLS: &str = "this port speaks TLS: use rediss:// (and --tls-ca-cert)";

/// Why the bytes a master sent cannot be a reply to us. The connection is unusable after any
/// of them: there is no telling where the next reply would start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BadReply {
    /// More than [`MAX_REPLY_BYTES`] (known from a length field, or received).
    TooLarge,
    /// A bulk string longer than [`MAX_BULK_BYTES`].
    BulkTooLarge(usize),
    /// More than [`MAX_ELEMENTS`] array elements.
    TooManyElements,
    /// Arrays nested more than [`MAX_DEPTH`] deep.
    TooDeep,
    /// A line that starts with no RESP type (the first bytes, for the message).
    NotResp(String),
    /// A length field that is not a number, or is negative other than -1.
    BadLength(String),
    /// A bulk string not followed by CRLF.
    MissingCrlf,
    /// An integer reply that is not a number that fits in 64 bits (its text, for the message).
    NotANumber(String),
    /// A TLS record (an alert or a handshake) where a reply should start: the port speaks TLS.
    Tls,
}

impl std::fmt::Display for BadReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadReply::TooLarge => write!(f, "reply larger than {MAX_REPLY_BYTES} bytes"),
            BadReply::BulkTooLarge(len) => write!(
                f,
                "reply holds a string of {len} bytes, larger than {MAX_BULK_BYTES}"
            ),
            BadReply::TooManyElements => {
                write!(f, "reply holds more than {MAX_ELEMENTS} array elements")
            }
            BadReply::TooDeep => write!(f, "reply nested deeper than {MAX_DEPTH} arrays"),
            BadReply::NotResp(start) => write!(f, "not RESP (starts with {start:?})"),
            BadReply::BadLength(field) => write!(f, "bad length {field:?}"),
            BadReply::MissingCrlf => f.write_str("string not followed by CRLF"),
            BadReply::NotANumber(text) => write!(f, "bad integer {text:?}"),
            BadReply::Tls => f.write_str(SPEAKS_TLS),
        }
    }
}

/// One reply (or push message) as the master sent it.
///
/// RESP2's two spellings of nothing (`$-1` and `*-1`) are one [`Reply::Nil`]: no caller tells
/// them apart (a Lua `false` becomes `$-1`, and nothing of ours answers `*-1`). Simple strings
/// and errors are text; a master that puts invalid UTF-8 in one gets it shown lossily.
#[derive(Clone, PartialEq, Eq)]
pub enum Reply {
    /// `+...`: a status, such as `OK`.
    Simple(String),
    /// `-...`: an error reply, as the master wrote it (`NOSCRIPT No matching script...`).
    Error(String),
    /// `:...`
    Int(i64),
    /// `$...`: a binary-safe string.
    Bulk(Vec<u8>),
    /// `*...`: its elements.
    Array(Vec<Reply>),
    /// `$-1` or `*-1` (RESP3: `_`, and `#f`).
    Nil,
    /// `>...`: a RESP3 push (a pub/sub message or a subscription's confirmation), its elements.
    Push(Vec<Reply>),
}

impl Reply {
    /// The bytes of a bulk string; `None` for anything else.
    pub fn bulk(&self) -> Option<&[u8]> {
        match self {
            Reply::Bulk(bytes) => Some(bytes),
            _ => None,
        }
    }

    /// A bulk or simple string as text (lossily); `None` for anything else.
    pub fn text(&self) -> Option<String> {
        match self {
            Reply::Bulk(bytes) => Some(String::from_utf8_lossy(bytes).into_owned()),
            Reply::Simple(text) => Some(text.clone()),
            _ => None,
        }
    }
}

/// A reply as a person reads it in a message or a `-vv` trace, in redis-cli's words on one
/// line: `"t1"`, `(integer) 1`, `(nil)`, `(error) ERR ...`, `["a", (integer) 2]`. Strings are
/// quoted and escaped (see `crate::escape`), and a long reply is cut: a master may send
/// megabytes.
impl std::fmt::Display for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = String::new();
        self.show(&mut out);
        f.write_str(&out)
    }
}

/// How much of a reply [`Reply`]'s `Display` shows, in bytes (give or take one element).
const SHOWN_REPLY: usize = 300;

impl Reply {
    fn show(&self, out: &mut String) {
        use std::fmt::Write;
        match self {
            Reply::Simple(text) => out.push_str(&crate::escape::cut(text, SHOWN_REPLY)),
            Reply::Error(text) => {
                let _ = write!(out, "(error) {}", crate::escape::cut(text, SHOWN_REPLY));
            }
            Reply::Int(n) => {
                let _ = write!(out, "(integer) {n}");
            }
            Reply::Nil => out.push_str("(nil)"),
            Reply::Bulk(bytes) => {
                let text = String::from_utf8_lossy(bytes);
                match text.char_indices().nth(SHOWN_REPLY / 3) {
                    None => out.push_str(&crate::escape::quoted(&text)),
                    Some((end, _)) => {
                        out.push_str(&crate::escape::quoted(&text[..end]));
                        out.push('…');
                    }
                }
            }
            Reply::Array(items) | Reply::Push(items) => {
                if matches!(self, Reply::Push(_)) {
                    out.push_str("(push) ");
                }
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if out.len() > SHOWN_REPLY {
                        let _ = write!(out, "… {} more", items.len() - i);
                        break;
                    }
                    if i > 0 {
                        out.push_str(", ");
                    }
                    item.show(out);
                }
                out.push(']');
            }
        }
    }
}

/// Bulk strings shown as text (`Bulk("t1")`), so that a failed test reads like the master's
/// answer rather than a list of byte values.
impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reply::Simple(text) => write!(f, "Simple({text:?})"),
            Reply::Error(text) => write!(f, "Error({text:?})"),
            Reply::Int(n) => write!(f, "Int({n})"),
            Reply::Bulk(bytes) => write!(f, "Bulk({:?})", String::from_utf8_lossy(bytes)),
            Reply::Array(items) => f.debug_tuple("Array").field(items).finish(),
            Reply::Push(items) => f.debug_tuple("Push").field(items).finish(),
            Reply::Nil => f.write_str("Nil"),
        }
    }
}

mod decode;
pub use decode::Decoder;

#[cfg(test)]
mod tests;
