//! The two small pieces of RESP (the Redis protocol) that the pipe needs and redis-rs does not
//! offer on its own: writing a command straight into a connection's outgoing buffer, and
//! finding where one complete reply ends in the incoming bytes ([`Framer`]). Turning a reply
//! into a [`redis::Value`] is left to redis-rs (`redis::parse_redis_value`), except for the
//! integer replies of the hot path (acquire, extend, release), read here: redis-rs's parser
//! sets up an 8 KiB buffer per call, which cost more than the rest of a request together.
//!
//! The framer's invariants: every byte received is scanned once, however the reply is split
//! across reads (framing is linear in the bytes received); and no reply is accepted, or
//! buffered past the point where it is known to be too large, beyond [`MAX_REPLY_BYTES`],
//! [`MAX_BULK_BYTES`], [`MAX_ELEMENTS`] and [`MAX_DEPTH`]. So whatever a master sends, redlock
//! holds at most about one capped reply per connection, and redis-rs only ever parses a
//! complete reply within the caps.
//!
//! Only RESP2 is spoken: redlock never sends HELLO, so a master answers in RESP2.

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
/// JSON object of a few KiB at most: its command line is cut, see `holder`), and for `doctor` one INFO (tens of KiB: INFO everything on a
/// busy server with all its command statistics stays under 100 KiB) and CONFIG GET of a few
/// parameters. 1 MiB is ten times the largest of them. A master that sends more is not
/// answering what we asked (or is not a Redis master): it is failed rather than buffered.
pub const MAX_REPLY_BYTES: usize = 1 << 20;

/// The longest bulk string a reply may hold: INFO is the largest one we ask for (see
/// [`MAX_REPLY_BYTES`]); a holder record is far smaller.
pub const MAX_BULK_BYTES: usize = 512 << 10;

/// The most array elements one reply may hold, at all levels together. Our scripts answer
/// with at most four fields; CONFIG GET of every parameter, the largest array a diagnostic
/// might want, has under a thousand. The cap matters beyond the byte cap: an element can be
/// three bytes on the wire (`+\r\n`) but costs tens of bytes once parsed.
pub const MAX_ELEMENTS: usize = 8192;

/// The deepest nesting of arrays one reply may have. Our scripts' replies nest one level;
/// the deepest reply of any command a diagnostic might send (ACL GETUSER's selectors) three.
/// Bounded so that parsing, which recurses per level, cannot be driven arbitrarily deep.
pub const MAX_DEPTH: usize = 8;

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
    /// A line that starts with no RESP2 type (the first bytes, for the message).
    NotResp(String),
    /// A length field that is not a number, or is negative other than -1.
    BadLength(String),
    /// A bulk string not followed by CRLF.
    MissingCrlf,
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
            BadReply::NotResp(start) => write!(f, "not RESP2 (starts with {start:?})"),
            BadReply::BadLength(field) => write!(f, "bad length {field:?}"),
            BadReply::MissingCrlf => f.write_str("string not followed by CRLF"),
        }
    }
}

/// Finds where each reply ends in a connection's incoming bytes, in time linear in the bytes
/// received: what has been scanned is never scanned again, however the reply is split
/// across reads. It also enforces the caps above while the reply arrives, so that a master
/// is refused as soon as its reply is known to be too large, not once it has all been read.
///
/// Use: call [`Framer::next`] with the bytes from the start of the current reply, each time
/// more arrived; after it returns `Some(len)`, the next reply starts `len` bytes further on.
/// After an error the framer, like the connection, is of no further use.
#[derive(Debug, Default)]
pub struct Framer {
    /// Where the next line starts, from the start of the reply.
    pos: usize,
    /// How far from `pos` the search for that line's CR has already looked.
    searched: usize,
    /// Where the bulk string whose header was read ends (its CRLF included), while its bytes
    /// are still arriving.
    bulk_end: Option<usize>,
    /// Elements still to come in each array that is open, innermost last.
    open: Vec<usize>,
    /// Array elements announced so far in this reply.
    elements: usize,
}

impl Framer {
    /// The length of the reply at the start of `buf` once it is complete; `Ok(None)` while
    /// more bytes are needed. `buf` must start where the previous call's `buf` started (or,
    /// after a `Some`, where the reply it found ended).
    pub fn next(&mut self, buf: &[u8]) -> Result<Option<usize>, BadReply> {
        loop {
            if let Some(end) = self.bulk_end {
                if buf.len() < end {
                    return Ok(None);
                }
                if &buf[end - 2..end] != b"\r\n" {
                    return Err(BadReply::MissingCrlf);
                }
                self.bulk_end = None;
                self.pos = end;
                if let Some(len) = self.value_done() {
                    return Ok(Some(len));
                }
                continue;
            }
            let Some(line_end) = self.find_line_end(buf)? else {
                return Ok(None);
            };
            let line = &buf[self.pos..line_end];
            let after = line_end + 2;
            self.searched = 0;
            match line.first() {
                Some(b'+' | b'-' | b':') => self.pos = after,
                Some(b'$') => match length(&line[1..])? {
                    None => self.pos = after,
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
                        self.pos = after;
                        self.bulk_end = Some(end);
                        continue;
                    }
                },
                Some(b'*') => {
                    self.pos = after;
                    match length(&line[1..])? {
                        None | Some(0) => {}
                        Some(count) => {
                            self.elements = self.elements.saturating_add(count);
                            if self.elements > MAX_ELEMENTS {
                                return Err(BadReply::TooManyElements);
                            }
                            if self.open.len() == MAX_DEPTH {
                                return Err(BadReply::TooDeep);
                            }
                            self.open.push(count);
                            // Not a complete value yet: its elements follow.
                            continue;
                        }
                    }
                }
                _ => {
                    let shown: String = String::from_utf8_lossy(line).chars().take(20).collect();
                    return Err(BadReply::NotResp(shown));
                }
            }
            if let Some(len) = self.value_done() {
                return Ok(Some(len));
            }
        }
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

    /// Counts one complete value at `pos`, closing the arrays it completes. The reply's
    /// length when that was its last value (and the framer is ready for the next reply).
    fn value_done(&mut self) -> Option<usize> {
        while let Some(left) = self.open.last_mut() {
            *left -= 1;
            if *left > 0 {
                return None;
            }
            // That array is complete: one value of the array around it.
            self.open.pop();
        }
        let len = self.pos;
        *self = Framer {
            open: std::mem::take(&mut self.open),
            ..Framer::default()
        };
        Some(len)
    }
}

/// The value of a complete integer reply (`:<n>` CRLF); `None` for any other reply.
pub fn integer(frame: &[u8]) -> Option<i64> {
    let digits = frame.strip_prefix(b":")?.strip_suffix(b"\r\n")?;
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// A length field: `None` for -1 (a nil bulk string or array), else the count. A count too
/// large for `usize` is taken as `usize::MAX`: it is refused by the caps all the same.
fn length(field: &[u8]) -> Result<Option<usize>, BadReply> {
    if field == b"-1" {
        return Ok(None);
    }
    let bad = || BadReply::BadLength(String::from_utf8_lossy(field).chars().take(24).collect());
    if field.is_empty() || field.len() > 64 || !field.iter().all(u8::is_ascii_digit) {
        return Err(bad());
    }
    Ok(Some(field.iter().fold(0usize, |n, d| {
        n.saturating_mul(10).saturating_add(usize::from(d - b'0'))
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_like_redis_rs() {
        let args: [&[u8]; 5] = [b"EVALSHA", b"0123456789", b"2", b"", &[b'x'; 1234]];
        let mut out = b"previous".to_vec();
        encode(&mut out, args.len(), args);
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg("0123456789").arg(2).arg("").arg(&[b'x'; 1234][..]);
        assert_eq!(&out[8..], cmd.get_packed_command().as_slice());
        assert_eq!(&out[..8], b"previous");
    }

    /// The first reply's length, framed from scratch in one call.
    fn reply_len(buf: &[u8]) -> Result<Option<usize>, BadReply> {
        Framer::default().next(buf)
    }

    /// Frames `stream` as a pipe would, `step` bytes arriving at a time: the lengths of the
    /// complete replies, then the error if one came.
    fn frame_in_steps(stream: &[u8], step: usize) -> (Vec<usize>, Option<BadReply>) {
        let mut framer = Framer::default();
        let mut start = 0;
        let mut lengths = Vec::new();
        for received in (step..stream.len() + step).step_by(step) {
            let received = received.min(stream.len());
            loop {
                match framer.next(&stream[start..received]) {
                    Ok(Some(len)) => {
                        lengths.push(len);
                        start += len;
                    }
                    Ok(None) => break,
                    Err(e) => return (lengths, Some(e)),
                }
            }
        }
        (lengths, None)
    }

    const EVERY_KIND: [&[u8]; 11] = [
        b"+OK\r\n",
        b"-NOSCRIPT No matching script\r\n",
        b":1\r\n",
        b":-42\r\n",
        b"$5\r\nhello\r\n",
        b"$0\r\n\r\n",
        b"$-1\r\n",
        b"*-1\r\n",
        b"*0\r\n",
        b"*4\r\n$3\r\nabc\r\n:1234\r\n$-1\r\n*2\r\n:1\r\n$2\r\n\r\n\r\n",
        b"*2\r\n*1\r\n*0\r\n+x\r\n",
    ];

    #[test]
    fn finds_the_end_of_every_kind_of_reply() {
        for reply in EVERY_KIND {
            // Complete, with the next reply's bytes behind it.
            let mut stream = reply.to_vec();
            stream.extend_from_slice(b":7\r\n");
            assert_eq!(reply_len(&stream), Ok(Some(reply.len())), "{reply:?}");
            // Every proper prefix is incomplete, never an error or a wrong length.
            for cut in 0..reply.len() {
                assert_eq!(reply_len(&reply[..cut]), Ok(None), "{reply:?} cut at {cut}");
            }
            // And redis-rs parses exactly that frame.
            assert!(redis::parse_redis_value(&stream[..reply.len()]).is_ok());
        }
    }

    #[test]
    fn resumes_where_it_stopped_however_the_bytes_arrive() {
        let stream: Vec<u8> = EVERY_KIND.concat();
        let expected: Vec<usize> = EVERY_KIND.iter().map(|r| r.len()).collect();
        for step in [1, 2, 3, 5, 7, 64, stream.len()] {
            assert_eq!(
                frame_in_steps(&stream, step),
                (expected.clone(), None),
                "step {step}"
            );
        }
        // A long line and a long string, a byte at a time (the CR and LF split apart too).
        let mut long = b"+".to_vec();
        long.extend(std::iter::repeat_n(b'a', 10_000));
        long.extend_from_slice(b"\r\n$10000\r\n");
        long.extend(std::iter::repeat_n(b'b', 10_000));
        long.extend_from_slice(b"\r\n");
        assert_eq!(frame_in_steps(&long, 1), (vec![10_003, 10_010], None));
    }

    #[test]
    fn a_lone_cr_is_part_of_a_line() {
        assert_eq!(reply_len(b"-ERR a\rb\r\n"), Ok(Some(10)));
        assert_eq!(frame_in_steps(b"-ERR a\rb\r\n", 1), (vec![10], None));
    }

    /// A bulk string reply of exactly `len` bytes, header and CRLFs included.
    fn bulk_reply(len: usize) -> Vec<u8> {
        let body = (1..20)
            .map(|digits| len - 5 - digits)
            .find(|body| body.to_string().len() == len - 5 - body)
            .expect("a body length");
        let mut reply = format!("${body}\r\n").into_bytes();
        reply.resize(reply.len() + body, b'x');
        reply.extend_from_slice(b"\r\n");
        assert_eq!(reply.len(), len);
        reply
    }

    /// An array reply of exactly `len` bytes: three bulk strings, each under the bulk cap.
    fn array_reply(len: usize) -> Vec<u8> {
        let mut reply = b"*3\r\n".to_vec();
        let third = (len - reply.len()) / 3;
        reply.extend(bulk_reply(third));
        reply.extend(bulk_reply(third));
        reply.extend(bulk_reply(len - reply.len()));
        reply
    }

    #[test]
    fn a_reply_may_take_up_to_max_reply_bytes() {
        let at_cap = array_reply(MAX_REPLY_BYTES);
        assert_eq!(frame_in_steps(&at_cap, 4096), (vec![MAX_REPLY_BYTES], None));
        assert!(redis::parse_redis_value(&at_cap).is_ok());
        // One byte more: refused as soon as the last string's header says so.
        let over = array_reply(MAX_REPLY_BYTES + 1);
        let last = 4 + 2 * ((MAX_REPLY_BYTES + 1 - 4) / 3);
        let header_end = last + over[last..].iter().position(|b| *b == b'\n').unwrap() + 1;
        assert_eq!(reply_len(&over[..header_end - 1]), Ok(None));
        assert_eq!(reply_len(&over[..header_end]), Err(BadReply::TooLarge));
        assert_eq!(
            frame_in_steps(&over, 4096),
            (vec![], Some(BadReply::TooLarge))
        );
        assert_eq!(
            BadReply::TooLarge.to_string(),
            "reply larger than 1048576 bytes"
        );
    }

    #[test]
    fn an_endless_reply_is_refused_as_soon_as_it_passes_the_cap() {
        // The oversized header alone is enough.
        assert_eq!(reply_len(b"$999999999999\r\n"), Err(BadReply::TooLarge));
        assert_eq!(
            reply_len(b"$99999999999999999999999999\r\n"),
            Err(BadReply::TooLarge)
        );
        // A line with no end: refused once it passes the cap, not before.
        let mut line = vec![b'+'; MAX_REPLY_BYTES];
        assert_eq!(reply_len(&line), Ok(None));
        line.push(b'+');
        assert_eq!(reply_len(&line), Err(BadReply::TooLarge));
        // A line whose CRLF would end past the cap.
        let mut line = vec![b'+'; MAX_REPLY_BYTES - 1];
        line.push(b'\r');
        assert_eq!(reply_len(&line), Err(BadReply::TooLarge));
        line.pop();
        line.pop();
        line.extend_from_slice(b"\r\n");
        assert_eq!(reply_len(&line), Ok(Some(MAX_REPLY_BYTES)));
    }

    #[test]
    fn bulk_strings_are_capped() {
        let header = |len: usize| format!("${len}\r\n").into_bytes();
        assert_eq!(reply_len(&header(MAX_BULK_BYTES)), Ok(None));
        assert_eq!(
            reply_len(&header(MAX_BULK_BYTES + 1)),
            Err(BadReply::BulkTooLarge(MAX_BULK_BYTES + 1))
        );
        assert_eq!(
            BadReply::BulkTooLarge(MAX_BULK_BYTES + 1).to_string(),
            "reply holds a string of 524289 bytes, larger than 524288"
        );
    }

    #[test]
    fn array_elements_are_capped_across_all_levels() {
        let flat = |n: usize| {
            let mut reply = format!("*{n}\r\n").into_bytes();
            reply.extend(b":1\r\n".repeat(n));
            reply
        };
        let just_under = flat(MAX_ELEMENTS);
        assert_eq!(reply_len(&just_under), Ok(Some(just_under.len())));
        assert!(redis::parse_redis_value(&just_under).is_ok());
        assert_eq!(
            reply_len(&flat(MAX_ELEMENTS + 1)),
            Err(BadReply::TooManyElements)
        );
        // Split over two arrays: counted together (the outer array's two elements too).
        let half = MAX_ELEMENTS / 2 - 1;
        let mut nested = b"*2\r\n".to_vec();
        nested.extend(flat(half));
        nested.extend(flat(half));
        assert_eq!(reply_len(&nested), Ok(Some(nested.len())));
        let mut nested = b"*2\r\n".to_vec();
        nested.extend(flat(half));
        nested.extend(flat(half + 1));
        assert_eq!(reply_len(&nested), Err(BadReply::TooManyElements));
        // Counted per reply: the next one starts from zero.
        let mut two = flat(MAX_ELEMENTS);
        two.extend(flat(MAX_ELEMENTS));
        assert_eq!(frame_in_steps(&two, 4096).0.len(), 2);
    }

    #[test]
    fn nesting_is_capped() {
        let nested = |depth: usize| {
            let mut reply = b"*1\r\n".repeat(depth);
            reply.extend_from_slice(b":1\r\n");
            reply
        };
        let deepest = nested(MAX_DEPTH);
        assert_eq!(reply_len(&deepest), Ok(Some(deepest.len())));
        assert!(redis::parse_redis_value(&deepest).is_ok());
        assert_eq!(reply_len(&nested(MAX_DEPTH + 1)), Err(BadReply::TooDeep));
        // The endless `*1\r\n*1\r\n...`: refused after MAX_DEPTH of them, however long.
        let endless = b"*1\r\n".repeat(100_000);
        assert_eq!(frame_in_steps(&endless, 4096).1, Some(BadReply::TooDeep));
        // Empty and nil arrays open nothing.
        let mut flat = b"*1\r\n".repeat(MAX_DEPTH - 1);
        flat.extend_from_slice(b"*3\r\n*0\r\n*-1\r\n:1\r\n");
        assert_eq!(reply_len(&flat), Ok(Some(flat.len())));
    }

    #[test]
    fn reads_integer_replies_like_redis_rs() {
        for frame in [
            b":1\r\n".as_slice(),
            b":0\r\n",
            b":-42\r\n",
            b":9223372036854775807\r\n",
        ] {
            let ours = integer(frame).map(redis::Value::Int);
            assert_eq!(ours, redis::parse_redis_value(frame).ok(), "{frame:?}");
        }
        for other in [b"+1\r\n".as_slice(), b"$1\r\n1\r\n", b":x\r\n", b":1"] {
            assert_eq!(integer(other), None, "{other:?}");
        }
    }

    #[test]
    fn a_bulk_string_may_contain_crlf() {
        let reply = b"$2\r\n\r\n\r\n";
        assert_eq!(reply_len(reply), Ok(Some(reply.len())));
        assert_eq!(frame_in_steps(reply, 1), (vec![reply.len()], None));
    }

    #[test]
    fn rejects_what_is_not_resp2() {
        assert_eq!(
            reply_len(b"HTTP/1.1 400 Bad Request\r\n"),
            Err(BadReply::NotResp("HTTP/1.1 400 Bad Req".into()))
        );
        assert_eq!(reply_len(b"\r\n"), Err(BadReply::NotResp(String::new())));
        assert!(matches!(
            reply_len(b"$abc\r\n"),
            Err(BadReply::BadLength(_))
        ));
        assert!(matches!(reply_len(b"$\r\n"), Err(BadReply::BadLength(_))));
        assert!(matches!(reply_len(b"$+3\r\n"), Err(BadReply::BadLength(_))));
        assert!(matches!(reply_len(b"*-5\r\n"), Err(BadReply::BadLength(_))));
        assert_eq!(reply_len(b"$3\r\nabcXY"), Err(BadReply::MissingCrlf));
        assert_eq!(
            reply_len(b"$18446744073709551615\r\n"),
            Err(BadReply::TooLarge)
        );
        assert_eq!(
            reply_len(b"*18446744073709551615\r\n"),
            Err(BadReply::TooManyElements)
        );
    }
}
