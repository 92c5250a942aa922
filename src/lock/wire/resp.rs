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

/// Decodes the replies in a connection's incoming bytes as they arrive, in one pass (see the
/// module rules), enforcing the caps while a reply arrives: a master is refused as soon as its
/// reply is known to be too large, not once it has all been read.
///
/// Use: call [`Decoder::next`] with the bytes from the start of the current reply, each time
/// more arrived; after it returns `Some((len, reply))`, the next reply starts `len` bytes
/// further on. After an error the decoder, like the connection, is of no further use.
#[derive(Debug, Default)]
pub struct Decoder {
    /// Where the next line starts, from the start of the reply.
    pos: usize,
    /// How far from `pos` the search for that line's CR has already looked.
    searched: usize,
    /// Where the payload of the bulk string whose header was read starts, and where it ends
    /// (its CRLF included), while its bytes are still arriving; and its type byte (`$`, or
    /// RESP3's `=` and `!`).
    bulk: Option<(usize, usize, u8)>,
    /// The arrays that are open, innermost last.
    open: Vec<Open>,
    /// Array elements announced so far in this reply.
    elements: usize,
}

/// An array (or a map, a set, a push) whose elements are still arriving.
#[derive(Debug)]
struct Open {
    /// How many elements are still to come.
    left: usize,
    items: Vec<Reply>,
    /// A push (`>`), not an array.
    push: bool,
}

/// How many elements' room to reserve for an array before they arrive: what our replies need
/// (at most four), never what a master merely announces.
const RESERVED_ELEMENTS: usize = 4;

impl Decoder {
    /// The reply at the start of `buf` and its length once it is complete; `Ok(None)` while
    /// more bytes are needed. `buf` must start where the previous call's `buf` started (or,
    /// after a `Some`, where the reply it returned ended).
    pub fn next(&mut self, buf: &[u8]) -> Result<Option<(usize, Reply)>, BadReply> {
        loop {
            let value = if let Some((start, end, kind)) = self.bulk {
                if buf.len() < end {
                    return Ok(None);
                }
                if &buf[end - 2..end] != b"\r\n" {
                    return Err(BadReply::MissingCrlf);
                }
                self.bulk = None;
                self.pos = end;
                let payload = &buf[start..end - 2];
                match kind {
                    // A verbatim string's first four bytes name its format (`txt:`).
                    b'=' => Reply::Bulk(payload.get(4..).unwrap_or_default().to_vec()),
                    b'!' => Reply::Error(String::from_utf8_lossy(payload).into_owned()),
                    _ => Reply::Bulk(payload.to_vec()),
                }
            } else {
                let Some(&kind) = buf.get(self.pos) else {
                    return Ok(None);
                };
                if !matches!(
                    kind,
                    b'+' | b'-'
                        | b':'
                        | b'$'
                        | b'*'
                        | b'_'
                        | b'#'
                        | b','
                        | b'('
                        | b'='
                        | b'!'
                        | b'%'
                        | b'~'
                        | b'>'
                ) {
                    return self.not_resp(buf);
                }
                let Some(line_end) = self.find_line_end(buf)? else {
                    return Ok(None);
                };
                let line = &buf[self.pos + 1..line_end];
                let after = line_end + 2;
                self.searched = 0;
                self.pos = after;
                match kind {
                    b'+' => Reply::Simple(String::from_utf8_lossy(line).into_owned()),
                    b'-' => Reply::Error(String::from_utf8_lossy(line).into_owned()),
                    b':' => Reply::Int(integer(line)?),
                    b'_' if line.is_empty() => Reply::Nil,
                    b'#' if line == b"t" => Reply::Int(1),
                    b'#' if line == b"f" => Reply::Nil,
                    b'_' | b'#' => return Err(BadReply::NotResp(shown(line, 20))),
                    b',' | b'(' => Reply::Bulk(line.to_vec()),
                    b'$' | b'=' | b'!' => match length(line)? {
                        None => Reply::Nil,
                        Some(len) => {
                            // The whole reply's cap first: a header announcing a terabyte is
                            // refused for its size, whatever else is wrong with it.
                            let end = after.saturating_add(len).saturating_add(2);
                            if end > MAX_REPLY_BYTES {
                                return Err(BadReply::TooLarge);
                            }
                            if len > MAX_BULK_BYTES {
                                return Err(BadReply::BulkTooLarge(len));
                            }
                            self.bulk = Some((after, end, kind));
                            continue;
                        }
                    },
                    _ => match length(line)? {
                        None => Reply::Nil,
                        // A push is a whole message, never an element of something else.
                        Some(_) if kind == b'>' && !self.open.is_empty() => {
                            return Err(BadReply::NotResp("a push inside a reply".into()));
                        }
                        Some(0) if kind == b'>' => Reply::Push(Vec::new()),
                        Some(0) => Reply::Array(Vec::new()),
                        Some(count) => {
                            // A map's entries are a key and a value each, flattened as RESP2
                            // sends them.
                            let count = if kind == b'%' {
                                count.saturating_mul(2)
                            } else {
                                count
                            };
                            self.elements = self.elements.saturating_add(count);
                            if self.elements > MAX_ELEMENTS {
                                return Err(BadReply::TooManyElements);
                            }
                            if self.open.len() == MAX_DEPTH {
                                return Err(BadReply::TooDeep);
                            }
                            self.open.push(Open {
                                left: count,
                                items: Vec::with_capacity(count.min(RESERVED_ELEMENTS)),
                                push: kind == b'>',
                            });
                            // Not a complete value yet: its elements follow.
                            continue;
                        }
                    },
                }
            };
            if let Some(reply) = self.complete(value) {
                let len = self.pos;
                // Ready for the next reply; the stack's room is kept.
                *self = Decoder {
                    open: std::mem::take(&mut self.open),
                    ..Decoder::default()
                };
                return Ok(Some((len, reply)));
            }
        }
    }

    /// Why a value cannot start with the byte at `pos`: a TLS record (a content type of 21,
    /// alert, or 22, handshake, then major version 3), or anything else that is not RESP.
    fn not_resp(&self, buf: &[u8]) -> Result<Option<(usize, Reply)>, BadReply> {
        if matches!(buf[self.pos], 0x15 | 0x16) {
            match buf.get(self.pos + 1) {
                None => return Ok(None),
                Some(0x03) => return Err(BadReply::Tls),
                Some(_) => {}
            }
        }
        let rest = &buf[self.pos..];
        let line = &rest[..rest.iter().position(|b| *b == b'\r').unwrap_or(rest.len())];
        Err(BadReply::NotResp(shown(line, 20)))
    }

    /// The offset of the CR that ends the line at `pos`, searching only bytes not searched
    /// before; `None` until the line and its LF are there.
    fn find_line_end(&mut self, buf: &[u8]) -> Result<Option<usize>, BadReply> {
        loop {
            let from = self.pos + self.searched;
            let Some(cr) = buf
                .get(from..)
                .and_then(|rest| rest.iter().position(|b| *b == b'\r'))
                .map(|i| from + i)
            else {
                self.searched = buf.len().saturating_sub(self.pos);
                // Everything received belongs to this unfinished reply.
                return if buf.len() > MAX_REPLY_BYTES {
                    Err(BadReply::TooLarge)
                } else {
                    Ok(None)
                };
            };
            if cr + 2 > MAX_REPLY_BYTES {
                return Err(BadReply::TooLarge);
            }
            match buf.get(cr + 1) {
                None => {
                    // The LF may be in the next read; look at this CR again then.
                    self.searched = cr - self.pos;
                    return Ok(None);
                }
                Some(b'\n') => return Ok(Some(cr)),
                // A lone CR (Redis never sends one in a line): part of the line.
                Some(_) => self.searched = cr + 1 - self.pos,
            }
        }
    }

    /// Adds one complete value to the array it belongs to, closing the arrays it completes.
    /// The whole reply when that value was its last.
    fn complete(&mut self, mut value: Reply) -> Option<Reply> {
        while let Some(open) = self.open.last_mut() {
            open.items.push(value);
            open.left -= 1;
            if open.left > 0 {
                return None;
            }
            // That array is complete: one value of the array around it.
            let done = self.open.pop().expect("the array just completed");
            value = if done.push {
                Reply::Push(done.items)
            } else {
                Reply::Array(done.items)
            };
        }
        Some(value)
    }
}

/// The value of an integer reply's line (after the `:`).
fn integer(line: &[u8]) -> Result<i64, BadReply> {
    std::str::from_utf8(line)
        .ok()
        .and_then(|digits| digits.parse().ok())
        .ok_or_else(|| BadReply::NotANumber(shown(line, 24)))
}

/// A length field: `None` for -1 (a nil bulk string or array), else the count. A count too
/// large for `usize` is taken as `usize::MAX`: it is refused by the caps all the same.
fn length(field: &[u8]) -> Result<Option<usize>, BadReply> {
    if field == b"-1" {
        return Ok(None);
    }
    if field.is_empty() || field.len() > 64 || !field.iter().all(u8::is_ascii_digit) {
        return Err(BadReply::BadLength(shown(field, 24)));
    }
    Ok(Some(field.iter().fold(0usize, |n, d| {
        n.saturating_mul(10).saturating_add(usize::from(d - b'0'))
    })))
}

/// The first `chars` characters of `bytes`, for a message.
fn shown(bytes: &[u8], chars: usize) -> String {
    String::from_utf8_lossy(bytes).chars().take(chars).collect()
}

#[cfg(test)]
mod tests;
