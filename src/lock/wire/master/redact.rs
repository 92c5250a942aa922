//! Showing a server URL without its secrets, whether it parses or not (see `master`'s
//! invariant): the rule, and the pieces it hid, so that a parser's words that show one of them
//! are dropped.

/// How a server URL is shown in every message, whether it parses or not: whatever may be a
/// secret replaced by `***`, control characters escaped (so that the message stays one line).
///
/// The rule is structural, so that it holds for URLs no parser accepts (those are exactly the
/// ones an error message shows), and it hides too much rather than too little:
/// - userinfo: everything between the scheme, in whatever shape it is written (`redis://`,
///   `redis:/`, `redis//`, `redis:`, `//`, or none), and the last `@`;
/// - with no `@`: a port that is not a number, any port after an empty host, and after a
///   scheme written without slashes anything that is not a number (`redis://user:password`,
///   `redis://:password`, `user:password`: the `@host` forgotten);
/// - query parameters: every value but `db` and `protocol` (`?pass=` is how redis-rs takes
///   a password for a unix socket; `?password=` and the like are hidden as well).
///
/// Valid URLs are shown rebuilt from their parsed parts instead (see `display_of`), which
/// never include the password either.
pub fn redact_url(url: &str) -> String {
    escape_controls(&redaction(url).0)
}

/// Replaces every double-quoted piece of `text` by its [`redact_url`] form: for messages of
/// other parsers (the config file's) that quote the value they reject, which may be a URL.
pub fn redact_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pieces = text.split('"');
    out.push_str(pieces.next().unwrap_or_default());
    let mut quoted = true;
    for piece in pieces {
        out.push('"');
        if quoted {
            out.push_str(&redact_url(piece));
        } else {
            out.push_str(piece);
        }
        quoted = !quoted;
    }
    out
}

/// The URL with its secrets replaced by `***`, and the pieces it hid.
pub(super) fn redaction(url: &str) -> (String, Vec<&str>) {
    let mut hidden = Vec::new();
    let start = scheme_end(url);
    let (scheme, rest) = url.split_at(start);
    let mut out = scheme.to_string();
    let (rest, had_userinfo) = match rest.rfind('@') {
        Some(at) => {
            if at > 0 {
                hidden.push(&rest[..at]);
                out.push_str("***");
            }
            out.push('@');
            (&rest[at + 1..], true)
        }
        None => (rest, false),
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    if had_userinfo {
        out.push_str(authority);
    } else {
        let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let (host, port) = split_port(authority);
        match port {
            Some(port) if !numeric(port) || host.is_empty() => {
                hidden.push(port);
                out.push_str(host);
                out.push_str(":***");
            }
            None if scheme.ends_with(':') && !authority.is_empty() && !numeric(authority) => {
                hidden.push(authority);
                out.push_str("***");
            }
            _ => out.push_str(authority),
        }
    }
    let (before_fragment, fragment) = tail.split_at(tail.find('#').unwrap_or(tail.len()));
    match before_fragment.split_once('?') {
        Some((path, query)) => {
            out.push_str(path);
            out.push('?');
            let params: Vec<String> = query
                .split('&')
                .map(|param| match param.split_once('=') {
                    Some((name, _)) if name == "db" || name == "protocol" => param.to_string(),
                    Some((name, value)) => {
                        hidden.push(value);
                        format!("{name}=***")
                    }
                    None if param.is_empty() => String::new(),
                    None => {
                        hidden.push(param);
                        "***".to_string()
                    }
                })
                .collect();
            out.push_str(&params.join("&"));
        }
        None => out.push_str(before_fragment),
    }
    out.push_str(fragment);
    (out, hidden)
}

/// Where the part after the scheme starts: after `word:` and any slashes, after `word//`, after
/// leading slashes, or at 0.
fn scheme_end(url: &str) -> usize {
    let word = url
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_alphabetic() || (i > 0 && (c.is_ascii_digit() || "+.-".contains(c))))
        })
        .map_or(0, |(i, _)| i);
    let mut end = match url[word..].chars().next() {
        Some(':') if word > 0 => word + 1,
        Some('/') if word > 0 => word,
        _ => 0,
    };
    end += url[end..].bytes().take_while(|&b| b == b'/').count();
    end
}

/// `host` and `port` of `host:port` or `[v6]:port`; no port when there is no colon after the
/// host.
fn split_port(authority: &str) -> (&str, Option<&str>) {
    let host_end = match authority.strip_prefix('[') {
        Some(inner) => inner.find(']').map_or(authority.len(), |i| i + 2),
        None => authority.find(':').unwrap_or(authority.len()),
    };
    let (host, rest) = authority.split_at(host_end);
    (host, rest.strip_prefix(':'))
}

/// `text` with control characters (a newline, an escape sequence) written as escapes.
fn escape_controls(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Whether `message` (from a parser) shows any of the `hidden` pieces of a URL, as written or
/// percent-decoded.
pub(super) fn shows_any(message: &str, hidden: &[&str]) -> bool {
    hidden
        .iter()
        .filter(|piece| !piece.is_empty())
        .any(|piece| message.contains(piece) || message.contains(&percent_decoded(piece)))
}

/// `%XX` escapes decoded, lossily (only for comparing).
pub(super) fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
