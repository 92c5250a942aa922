//! The two small pieces of RESP (the Redis protocol) that the pipe needs and redis-rs does not
//! offer on its own: writing a command straight into a connection's outgoing buffer, and
//! finding where one complete reply ends in the incoming bytes. Turning a reply into a
//! [`redis::Value`] is left to redis-rs (`redis::parse_redis_value`), except for the integer
//! replies of the hot path (acquire, extend, release), read here: redis-rs's parser sets up
//! an 8 KiB buffer per call, which cost more than the rest of a request together.
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

/// The length of the first complete reply at the start of `buf`: `Ok(None)` while more bytes
/// are needed, `Err` when the bytes are not RESP2 at all (the connection is then unusable).
pub fn reply_len(buf: &[u8]) -> Result<Option<usize>, String> {
    let mut pos = 0usize;
    // Values still to skip: the reply itself, plus the elements of every array header seen.
    let mut remaining = 1usize;
    while remaining > 0 {
        let Some(line_len) = buf[pos..].windows(2).position(|w| w == b"\r\n") else {
            return Ok(None);
        };
        let line = &buf[pos..pos + line_len];
        let after = pos + line_len + 2;
        remaining -= 1;
        match line.first() {
            Some(b'+' | b'-' | b':') => pos = after,
            Some(b'$') => match length(&line[1..])? {
                None => pos = after,
                Some(len) => {
                    let end = after
                        .checked_add(len)
                        .and_then(|e| e.checked_add(2))
                        .ok_or("bulk string length out of range")?;
                    if buf.len() < end {
                        return Ok(None);
                    }
                    if &buf[end - 2..end] != b"\r\n" {
                        return Err("bulk string not followed by CRLF".into());
                    }
                    pos = end;
                }
            },
            Some(b'*') => {
                if let Some(elements) = length(&line[1..])? {
                    remaining = remaining
                        .checked_add(elements)
                        .ok_or("array length out of range")?;
                }
                pos = after;
            }
            _ => {
                let shown: String = String::from_utf8_lossy(line).chars().take(20).collect();
                return Err(format!("not a RESP2 reply: {shown:?}"));
            }
        }
    }
    Ok(Some(pos))
}

/// The value of a complete integer reply (`:<n>` CRLF); `None` for any other reply.
pub fn integer(frame: &[u8]) -> Option<i64> {
    let digits = frame.strip_prefix(b":")?.strip_suffix(b"\r\n")?;
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// A length field: `None` for -1 (a nil bulk string or array), else the count.
fn length(field: &[u8]) -> Result<Option<usize>, String> {
    if field == b"-1" {
        return Ok(None);
    }
    std::str::from_utf8(field)
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .map(Some)
        .ok_or_else(|| format!("bad length {:?}", String::from_utf8_lossy(field)))
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

    #[test]
    fn finds_the_end_of_every_kind_of_reply() {
        let replies: [&[u8]; 9] = [
            b"+OK\r\n",
            b"-NOSCRIPT No matching script\r\n",
            b":1\r\n",
            b":-42\r\n",
            b"$5\r\nhello\r\n",
            b"$0\r\n\r\n",
            b"$-1\r\n",
            b"*-1\r\n",
            b"*4\r\n$3\r\nabc\r\n:1234\r\n$-1\r\n*2\r\n:1\r\n$2\r\n\r\n\r\n",
        ];
        for reply in replies {
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
    }

    #[test]
    fn rejects_what_is_not_resp2() {
        assert!(reply_len(b"HTTP/1.1 400 Bad Request\r\n").is_err());
        assert!(reply_len(b"$abc\r\n").is_err());
        assert!(reply_len(b"$3\r\nabcXY").is_err());
        assert!(reply_len(b"$18446744073709551615\r\n").is_err());
        assert!(reply_len(b"*-5\r\n").is_err());
    }
}
