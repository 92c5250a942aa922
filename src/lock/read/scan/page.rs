//! One page of `list`'s scan when its names are too long for a reply at the smallest SCAN
//! count (see the header of `scan`): the bounds of PAGE (`scripts::scan`, the script that
//! sends back every name up to [`WHOLE_NAME`] bytes whole and only the start and length of any
//! other), and the reading of a page's reply, SCAN's or PAGE's.

use crate::lock::wire::resp::{BadReply, Reply};

/// The longest name PAGE sends back whole: above every name redlock writes (see the module
/// header), below the transport's cap on one string.
pub(super) const WHOLE_NAME: usize = 320 << 10;

/// The most bytes of names one PAGE reply holds whole: below the transport's cap on a
/// reply, with room for the rest of it.
pub(super) const PAGE_BUDGET: usize = 960 << 10;

/// Whether a bad reply was one over the size caps (rather than garbage).
pub(super) fn is_over_caps(why: &str) -> bool {
    let one_string = BadReply::BulkTooLarge(0).to_string();
    let one_string = one_string.split(" 0 ").next().unwrap_or_default();
    [BadReply::TooLarge, BadReply::TooManyElements]
        .iter()
        .any(|cap| why == cap.to_string())
        || why.starts_with(one_string)
}

/// A page of names: the next cursor, the names, and (from PAGE) the start and length of
/// each name too long to send whole.
pub(super) type Page = (Vec<u8>, Vec<Vec<u8>>, Vec<(Vec<u8>, usize)>);

/// A SCAN reply, `[next cursor, [name, ...]]`, or PAGE's, which adds `[start, length, ...]`.
pub(super) fn scan_reply(reply: &Reply) -> Option<Page> {
    let Reply::Array(parts) = reply else {
        return None;
    };
    let (cursor, names, long) = match parts.as_slice() {
        [cursor, Reply::Array(names)] => (cursor, names, &[][..]),
        [cursor, Reply::Array(names), Reply::Array(long)] => (cursor, names, long.as_slice()),
        _ => return None,
    };
    let cursor = cursor.bulk()?.to_vec();
    let names = names
        .iter()
        .map(|n| n.bulk().map(<[u8]>::to_vec))
        .collect::<Option<Vec<_>>>()?;
    let long = long
        .chunks(2)
        .map(|pair| match pair {
            [start, Reply::Int(len)] => Some((start.bulk()?.to_vec(), usize::try_from(*len).ok()?)),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some((cursor, names, long))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_replies() {
        let reply = Reply::Array(vec![
            Reply::Bulk(b"17".to_vec()),
            Reply::Array(vec![Reply::Bulk(b"a".to_vec()), Reply::Bulk(b"b".to_vec())]),
        ]);
        assert_eq!(
            scan_reply(&reply),
            Some((b"17".to_vec(), vec![b"a".to_vec(), b"b".to_vec()], vec![]))
        );
        let page = Reply::Array(vec![
            Reply::Bulk(b"0".to_vec()),
            Reply::Array(vec![]),
            Reply::Array(vec![
                Reply::Bulk(b"__redlock:{x".to_vec()),
                Reply::Int(1 << 20),
            ]),
        ]);
        assert_eq!(
            scan_reply(&page),
            Some((
                b"0".to_vec(),
                vec![],
                vec![(b"__redlock:{x".to_vec(), 1 << 20)]
            ))
        );
        assert_eq!(scan_reply(&Reply::Array(vec![])), None);
        assert_eq!(scan_reply(&Reply::Int(0)), None);
        let odd = Reply::Array(vec![
            Reply::Bulk(b"0".to_vec()),
            Reply::Array(vec![Reply::Int(1)]),
        ]);
        assert_eq!(scan_reply(&odd), None);
    }

    #[test]
    fn over_caps_is_told_from_garbage() {
        assert!(is_over_caps(&BadReply::TooLarge.to_string()));
        assert!(is_over_caps(&BadReply::BulkTooLarge(600_000).to_string()));
        assert!(!is_over_caps("not RESP"));
    }
}
