//! Redis's glob, as `SCAN MATCH` and `KEYS` apply it, for `list --pattern`.
//!
//! The server filters with `MATCH __redlock:*GLOB`: every name of a lock whose key matches GLOB
//! matches that (the `*` takes the `{tag}:kind:` part), but so do some others (`a*` matches the
//! end of `xa`'s names). So the lock key read back from each name is matched again here, by the
//! same rules: `*` any run of bytes, `?` one byte, `[abc]`, `[^abc]`, `[a-z]` a set, `\x` the
//! byte x. Ranges compare bytes unsigned (Redis compares C `char`s, signed on most platforms:
//! the two differ only for ranges that mix ASCII with bytes above 127).

/// Whether `text` matches `pattern`.
pub fn matches(pattern: &[u8], text: &[u8]) -> bool {
    let mut gave_up = false;
    match_from(pattern, text, &mut gave_up)
}

/// `gave_up`: a `*` further out already tried every suffix and failed, so a shorter match for an
/// earlier `*` cannot succeed either (Redis's `skipLongerMatches`, which keeps patterns such as
/// `*a*a*a*b` from taking exponential time).
fn match_from(mut pattern: &[u8], mut text: &[u8], gave_up: &mut bool) -> bool {
    while let (Some(&p), Some(&c)) = (pattern.first(), text.first()) {
        // Each arm leaves `pattern` after what it consumed.
        match p {
            b'*' => {
                while pattern.get(1) == Some(&b'*') {
                    pattern = &pattern[1..];
                }
                if pattern.len() == 1 {
                    return true;
                }
                while !text.is_empty() {
                    if match_from(&pattern[1..], text, gave_up) {
                        return true;
                    }
                    if *gave_up {
                        return false;
                    }
                    text = &text[1..];
                }
                *gave_up = true;
                return false;
            }
            b'?' => pattern = &pattern[1..],
            b'[' => {
                let (matched, rest) = set(&pattern[1..], c);
                if !matched {
                    return false;
                }
                pattern = rest;
            }
            b'\\' if pattern.len() >= 2 => {
                if pattern[1] != c {
                    return false;
                }
                pattern = &pattern[2..];
            }
            _ => {
                if p != c {
                    return false;
                }
                pattern = &pattern[1..];
            }
        }
        text = &text[1..];
        if text.is_empty() {
            while pattern.first() == Some(&b'*') {
                pattern = &pattern[1..];
            }
            break;
        }
    }
    pattern.is_empty() && text.is_empty()
}

/// Matches byte `c` against the set that starts at `pattern` (just after `[`). Returns whether
/// it matched, and the pattern after the set's closing `]` (an unclosed set ends with the
/// pattern, as in Redis).
fn set(mut pattern: &[u8], c: u8) -> (bool, &[u8]) {
    let negated = pattern.first() == Some(&b'^');
    if negated {
        pattern = &pattern[1..];
    }
    let mut matched = false;
    loop {
        match pattern {
            [] => break,
            [b']', rest @ ..] => {
                pattern = rest;
                break;
            }
            [b'\\', escaped, rest @ ..] => {
                matched |= *escaped == c;
                pattern = rest;
            }
            [start, b'-', end, rest @ ..] => {
                let (low, high) = if start <= end {
                    (*start, *end)
                } else {
                    (*end, *start)
                };
                matched |= (low..=high).contains(&c);
                pattern = rest;
            }
            [single, rest @ ..] => {
                matched |= *single == c;
                pattern = rest;
            }
        }
    }
    (matched != negated, pattern)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, text: &str) -> bool {
        matches(pattern.as_bytes(), text.as_bytes())
    }

    #[test]
    fn as_redis_matches() {
        // Cases from Redis's own tests of stringmatchlen and KEYS, and the docs of KEYS.
        for (pattern, text) in [
            ("h?llo", "hello"),
            ("h?llo", "hallo"),
            ("h*llo", "hllo"),
            ("h*llo", "heeeello"),
            ("h[ae]llo", "hello"),
            ("h[^e]llo", "hallo"),
            ("h[a-b]llo", "hbllo"),
            ("h[b-a]llo", "hallo"),
            ("*", "anything"),
            ("deploy-*", "deploy-prod"),
            ("*prod", "deploy-prod"),
            ("a\\*b", "a*b"),
            ("a[\\]]b", "a]b"),
            ("{u1}*", "{u1}.job"),
            ("*a*a*a*b", "aaaaaaaaab"),
            ("a[bc", "ac"),
            ("a[^", "ab"),
            ("a[\\", "a\\"),
            ("**x", "x"),
        ] {
            assert!(m(pattern, text), "{pattern:?} should match {text:?}");
        }
        for (pattern, text) in [
            ("h?llo", "hllo"),
            ("h[ae]llo", "hillo"),
            ("h[^e]llo", "hello"),
            ("h[a-b]llo", "hcllo"),
            ("a*", "xa"),
            ("a\\*b", "axb"),
            ("deploy", "deploy-prod"),
            ("deploy-prod", "deploy"),
            ("", "x"),
            ("a[", "a["),
            ("a[", "a"),
            ("x", ""),
            ("*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac"),
        ] {
            assert!(!m(pattern, text), "{pattern:?} should not match {text:?}");
        }
    }
}
