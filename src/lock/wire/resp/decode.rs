//! Reading replies as they arrive: the [`Decoder`] of `resp` (its rules are that module's:
//! one pass, capped, strict, one value for RESP2 and RESP3).

use super::{BadReply, MAX_BULK_BYTES, MAX_DEPTH, MAX_ELEMENTS, MAX_REPLY_BYTES, Reply};

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
    pub(super) open: Vec<Open>,
    /// Array elements announced so far in this reply.
    elements: usize,
}

/// An array (or a map, a set, a push) whose elements are still arriving.
#[derive(Debug)]
pub(super) struct Open {
    /// How many elements are still to come.
    left: usize,
    pub(super) items: Vec<Reply>,
    /// A push (`>`), not an array.
    push: bool,
}

/// How many elements' room to reserve for an array before they arrive: what our replies need
/// (at most four), never what a master merely announces.
pub(super) const RESERVED_ELEMENTS: usize = 4;

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
