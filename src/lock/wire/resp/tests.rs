//! Unit tests of `resp`.

use super::decode::RESERVED_ELEMENTS;
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

/// The first reply's length, decoded from scratch in one call.
fn reply_len(buf: &[u8]) -> Result<Option<usize>, BadReply> {
    decode(buf).map(|found| found.map(|(len, _)| len))
}

/// The first reply and its length, decoded from scratch in one call.
fn decode(buf: &[u8]) -> Result<Option<(usize, Reply)>, BadReply> {
    Decoder::default().next(buf)
}

/// Decodes `stream` as a pipe would, `step` bytes arriving at a time: the complete
/// replies with their lengths, then the error if one came.
fn decode_in_steps(stream: &[u8], step: usize) -> (Vec<(usize, Reply)>, Option<BadReply>) {
    let mut decoder = Decoder::default();
    let mut start = 0;
    let mut replies = Vec::new();
    for received in (step..stream.len() + step).step_by(step) {
        let received = received.min(stream.len());
        loop {
            match decoder.next(&stream[start..received]) {
                Ok(Some((len, reply))) => {
                    replies.push((len, reply));
                    start += len;
                }
                Ok(None) => break,
                Err(e) => return (replies, Some(e)),
            }
        }
    }
    (replies, None)
}

/// The lengths of the replies [`decode_in_steps`] found, and its error.
fn frame_in_steps(stream: &[u8], step: usize) -> (Vec<usize>, Option<BadReply>) {
    let (replies, error) = decode_in_steps(stream, step);
    (replies.into_iter().map(|(len, _)| len).collect(), error)
}

fn bulk(text: &str) -> Reply {
    Reply::Bulk(text.as_bytes().to_vec())
}

/// Every kind of RESP2 value, alone and nested, with what it decodes to.
fn every_kind() -> Vec<(&'static [u8], Reply)> {
    vec![
        (b"+OK\r\n", Reply::Simple("OK".into())),
        (b"+\r\n", Reply::Simple(String::new())),
        (
            b"-NOSCRIPT No matching script\r\n",
            Reply::Error("NOSCRIPT No matching script".into()),
        ),
        (b":1\r\n", Reply::Int(1)),
        (b":-42\r\n", Reply::Int(-42)),
        (b":9223372036854775807\r\n", Reply::Int(i64::MAX)),
        (b":-9223372036854775808\r\n", Reply::Int(i64::MIN)),
        (b"$5\r\nhello\r\n", bulk("hello")),
        (b"$0\r\n\r\n", bulk("")),
        (
            b"$4\r\n\xff\x00\r\n\r\n",
            Reply::Bulk(vec![0xff, 0, b'\r', b'\n']),
        ),
        (b"$-1\r\n", Reply::Nil),
        (b"*-1\r\n", Reply::Nil),
        (b"*0\r\n", Reply::Array(vec![])),
        (
            b"*4\r\n$3\r\nabc\r\n:1234\r\n$-1\r\n*2\r\n:1\r\n$2\r\n\r\n\r\n",
            Reply::Array(vec![
                bulk("abc"),
                Reply::Int(1234),
                Reply::Nil,
                Reply::Array(vec![Reply::Int(1), bulk("\r\n")]),
            ]),
        ),
        (
            b"*2\r\n*1\r\n*0\r\n+x\r\n",
            Reply::Array(vec![
                Reply::Array(vec![Reply::Array(vec![])]),
                Reply::Simple("x".into()),
            ]),
        ),
        (
            b"*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$0\r\n\r\n",
            Reply::Array(vec![bulk("message"), bulk("c"), bulk("")]),
        ),
        (
            b"*3\r\n-ERR x\r\n*-1\r\n:0\r\n",
            Reply::Array(vec![
                Reply::Error("ERR x".into()),
                Reply::Nil,
                Reply::Int(0),
            ]),
        ),
    ]
}

/// Every RESP3 type a master may send on a connection that said `HELLO 3`, with what it
/// decodes to: the value RESP2 gives for the same answer (module rule 4), a push its own.
fn every_resp3_kind() -> Vec<(&'static [u8], Reply)> {
    vec![
        (b"_\r\n", Reply::Nil),
        (b"#t\r\n", Reply::Int(1)),
        (b"#f\r\n", Reply::Nil),
        (b",3.25\r\n", bulk("3.25")),
        (b",inf\r\n", bulk("inf")),
        (
            b"(3492890328409238509324850943850943825024385\r\n",
            bulk("3492890328409238509324850943850943825024385"),
        ),
        (b"=15\r\ntxt:Some string\r\n", bulk("Some string")),
        (
            b"!21\r\nSYNTAX invalid syntax\r\n",
            Reply::Error("SYNTAX invalid syntax".into()),
        ),
        (
            b"%2\r\n+server\r\n$5\r\nredis\r\n+proto\r\n:3\r\n",
            Reply::Array(vec![
                Reply::Simple("server".into()),
                bulk("redis"),
                Reply::Simple("proto".into()),
                Reply::Int(3),
            ]),
        ),
        (b"%0\r\n", Reply::Array(vec![])),
        (
            b"~2\r\n:1\r\n_\r\n",
            Reply::Array(vec![Reply::Int(1), Reply::Nil]),
        ),
        (
            b">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$0\r\n\r\n",
            Reply::Push(vec![bulk("message"), bulk("c"), bulk("")]),
        ),
        (
            b">3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n",
            Reply::Push(vec![bulk("subscribe"), bulk("c"), Reply::Int(1)]),
        ),
        (
            b"*2\r\n#f\r\n%1\r\n$1\r\nk\r\n~1\r\n,1.5\r\n",
            Reply::Array(vec![
                Reply::Nil,
                Reply::Array(vec![bulk("k"), Reply::Array(vec![bulk("1.5")])]),
            ]),
        ),
    ]
}

#[test]
fn decodes_every_resp3_type_as_resp2_would_answer() {
    for (reply, value) in every_resp3_kind() {
        let mut stream = reply.to_vec();
        stream.extend_from_slice(b":7\r\n");
        assert_eq!(
            decode(&stream),
            Ok(Some((reply.len(), value.clone()))),
            "{reply:?}"
        );
        for cut in 0..reply.len() {
            assert_eq!(decode(&reply[..cut]), Ok(None), "{reply:?} cut at {cut}");
        }
        // However the bytes arrive, RESP2 and RESP3 replies mixed on one connection.
        let mut mixed = b"$-1\r\n".to_vec();
        mixed.extend_from_slice(reply);
        mixed.extend_from_slice(b":7\r\n");
        for step in [1, 2, 3, 7] {
            let (replies, error) = decode_in_steps(&mixed, step);
            assert_eq!(error, None, "{reply:?} in steps of {step}");
            let values: Vec<Reply> = replies.into_iter().map(|(_, v)| v).collect();
            assert_eq!(
                values,
                [Reply::Nil, value.clone(), Reply::Int(7)],
                "{reply:?}"
            );
        }
    }
}

#[test]
fn rejects_what_resp3_does_not_allow() {
    // A push is a whole message, never an element.
    assert_eq!(
        reply_len(b"*1\r\n>1\r\n:1\r\n"),
        Err(BadReply::NotResp("a push inside a reply".into()))
    );
    assert_eq!(reply_len(b"#x\r\n"), Err(BadReply::NotResp("x".into())));
    assert_eq!(reply_len(b"_1\r\n"), Err(BadReply::NotResp("1".into())));
    // The caps hold for RESP3's length-prefixed strings and maps too: a map's entries are two
    // elements each.
    assert!(matches!(
        reply_len(format!("={}\r\n", MAX_BULK_BYTES + 1).as_bytes()),
        Err(BadReply::BulkTooLarge(_))
    ));
    assert_eq!(
        reply_len(format!("%{}\r\n", MAX_ELEMENTS / 2 + 1).as_bytes()),
        Err(BadReply::TooManyElements)
    );
    // Attributes are never asked for.
    assert!(matches!(reply_len(b"|1\r\n"), Err(BadReply::NotResp(_))));
}

#[test]
fn decodes_every_kind_of_reply() {
    for (reply, value) in every_kind() {
        // Complete, with the next reply's bytes behind it.
        let mut stream = reply.to_vec();
        stream.extend_from_slice(b":7\r\n");
        assert_eq!(decode(&stream), Ok(Some((reply.len(), value))), "{reply:?}");
        // Cut at every byte: incomplete, never an error, a wrong length or a value.
        for cut in 0..reply.len() {
            assert_eq!(decode(&reply[..cut]), Ok(None), "{reply:?} cut at {cut}");
        }
    }
}

/// redis-rs's parser as the reference: every kind decodes to what it parses.
#[test]
fn decodes_like_redis_rs() {
    fn ours(value: redis::Value) -> Reply {
        match value {
            redis::Value::Nil => Reply::Nil,
            redis::Value::Int(n) => Reply::Int(n),
            redis::Value::BulkString(bytes) => Reply::Bulk(bytes),
            redis::Value::Array(items) => Reply::Array(items.into_iter().map(ours).collect()),
            redis::Value::SimpleString(text) => Reply::Simple(text),
            redis::Value::Okay => Reply::Simple("OK".into()),
            redis::Value::ServerError(e) => Reply::Error(
                [e.code(), e.details().unwrap_or_default()]
                    .join(" ")
                    .trim()
                    .to_string(),
            ),
            other => panic!("not RESP2: {other:?}"),
        }
    }
    for (reply, value) in every_kind() {
        let theirs = redis::parse_redis_value(reply).expect("redis-rs parses it");
        assert_eq!(ours(theirs), value, "{reply:?}");
    }
}

#[test]
fn decodes_the_same_however_the_bytes_arrive() {
    let kinds = every_kind();
    let stream: Vec<u8> = kinds.iter().flat_map(|(reply, _)| reply.to_vec()).collect();
    let expected: Vec<(usize, Reply)> = kinds
        .into_iter()
        .map(|(reply, value)| (reply.len(), value))
        .collect();
    for step in [1, 2, 3, 5, 7, 64, stream.len()] {
        assert_eq!(
            decode_in_steps(&stream, step),
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
    let (replies, error) = decode_in_steps(&long, 1);
    assert_eq!(error, None);
    assert_eq!(
        replies,
        vec![
            (10_003, Reply::Simple("a".repeat(10_000))),
            (10_010, Reply::Bulk(vec![b'b'; 10_000]))
        ]
    );
}

#[test]
fn a_trace_shows_strings_as_text() {
    let reply = Reply::Array(vec![bulk("t2"), Reply::Int(5000), Reply::Nil]);
    assert_eq!(
        format!("{reply:?}"),
        r#"Array([Bulk("t2"), Int(5000), Nil])"#
    );
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
fn integers_must_be_64_bit_numbers() {
    for bad in [
        b":x\r\n".as_slice(),
        b":\r\n",
        b":1.5\r\n",
        b":9223372036854775808\r\n",
    ] {
        assert!(
            matches!(decode(bad), Err(BadReply::NotANumber(_))),
            "{bad:?}"
        );
    }
    assert_eq!(
        BadReply::NotANumber("x".into()).to_string(),
        "bad integer \"x\""
    );
}

#[test]
fn a_tls_record_is_named() {
    // What a TLS server may answer to plaintext: an alert (protocol version), or its
    // handshake.
    assert_eq!(
        decode(&[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46]),
        Err(BadReply::Tls)
    );
    assert_eq!(decode(&[0x16, 0x03, 0x01]), Err(BadReply::Tls));
    assert_eq!(decode(&[0x15]), Ok(None), "one byte does not tell yet");
    assert!(matches!(decode(&[0x15, b'x']), Err(BadReply::NotResp(_))));
    assert_eq!(
        BadReply::Tls.to_string(),
        "this port speaks TLS: use rediss:// (and --tls-ca-cert)"
    );
}

#[test]
fn memory_of_a_decoded_reply_is_bounded_by_the_caps() {
    // What the element cap's bound on a decoded reply's skeleton assumes.
    assert_eq!(std::mem::size_of::<Reply>(), 32);
    // Announced sizes reserve nothing: a header alone costs no room.
    let mut decoder = Decoder::default();
    assert_eq!(decoder.next(b"*8000\r\n"), Ok(None));
    assert!(decoder.open[0].items.capacity() <= RESERVED_ELEMENTS);
}

#[test]
fn a_bulk_string_may_contain_crlf() {
    let reply = b"$2\r\n\r\n\r\n";
    assert_eq!(reply_len(reply), Ok(Some(reply.len())));
    assert_eq!(frame_in_steps(reply, 1), (vec![reply.len()], None));
}

#[test]
fn rejects_what_is_not_resp2() {
    // At its first byte, without waiting for a line end that may never come.
    assert_eq!(
        reply_len(b"HTTP/1.1 400"),
        Err(BadReply::NotResp("HTTP/1.1 400".into()))
    );
    assert_eq!(
        reply_len(b"*2\r\n:1\r\n?"),
        Err(BadReply::NotResp("?".into()))
    );
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

#[test]
fn replies_read_as_redis_cli_shows_them_on_one_line() {
    let reply = Reply::Array(vec![
        Reply::Nil,
        Reply::Int(-1),
        Reply::Bulk(b"tok\x1b[2J".to_vec()),
        Reply::Simple("OK".into()),
        Reply::Error("ERR no".into()),
        Reply::Array(vec![]),
    ]);
    assert_eq!(
        reply.to_string(),
        r#"[(nil), (integer) -1, "tok\u{1b}[2J", OK, (error) ERR no, []]"#
    );
    // A megabyte reply is cut, and says how much more there was.
    let long = Reply::Array(vec![Reply::Bulk(vec![b'x'; 1 << 20]); 100]);
    let shown = long.to_string();
    assert!(shown.len() < 1000, "{}", shown.len());
    assert!(shown.ends_with(" more]"), "{shown}");
}
