//! `list --problems` on a shared lock's readers (`--shared`): its readers and reader records
//! keys without a TTL or of the wrong type, shares scored past any TTL redlock gives, and live
//! shares under a lock key that does not hold the readers' marker.

use super::{Kind, quote, wrong_type};
use crate::escape;
use crate::lock::{LockRead, Marker, Ttl, keys};

/// The findings about a shared lock's readers keys (see the module header).
pub(super) fn readers_in_lock(
    key: &str,
    read: &LockRead,
    push: &mut impl FnMut(Kind, String, String, String),
) {
    let shown = escape::quoted(key);
    let readers = keys::readers(key);
    let pairs = [
        ("readers", readers.clone(), read.readers.ttl),
        (
            "reader records",
            keys::reader_holders(key),
            read.readers.holders_ttl,
        ),
    ];
    for (what, name, ttl) in pairs {
        if ttl == Some(Ttl::Forever) {
            push(
                Kind::NoTtl,
                name.clone(),
                format!("{what} key of shared lock {shown} without a TTL: it never expires"),
                format!(
                    "once no reader holds lock {shown} (redlock status --key {}), delete it on \
                     that master: DEL {}",
                    quote(key),
                    quote(&name)
                ),
            );
        }
    }
    let kinds = [
        (
            "readers",
            readers.clone(),
            &read.readers.wrong_type,
            "a sorted set",
        ),
        (
            "reader records",
            keys::reader_holders(key),
            &read.readers.holders_wrong_type,
            "a hash",
        ),
    ];
    for (what, name, wrong, wanted) in kinds {
        if let Some(kind) = wrong {
            let whose = format!("{what} key of shared lock {shown}");
            let fails = format!("readers of {shown} fail on this master");
            wrong_type(push, name, (&whose, kind, wanted), &fails);
        }
    }
    if read.readers.foreign > 0 {
        let horizon = read.now_ms + crate::lock::scripts::LONGEST_TTL_MS;
        push(
            Kind::Malformed,
            readers.clone(),
            format!(
                "{} in the readers key of shared lock {shown} scored past any TTL redlock gives \
                 (written by something other than redlock): not shares, and K is never kept for them",
                crate::plural::counted(read.readers.foreign as usize, "entry")
            ),
            format!(
                "none needed: the next reader's script drops them; to remove them now, on that \
                 master: ZREMRANGEBYSCORE {} ({horizon} +inf",
                quote(&readers)
            ),
        );
    }
    let marked = read.token.as_deref().and_then(Marker::of) == Some(Marker::Readers);
    if read.readers.live > 0 && !marked {
        push(
            Kind::StaleReaders,
            readers.clone(),
            format!(
                "{} of shared lock {shown} while its lock key does not hold the readers' marker \
                 (deleted or replaced by something other than redlock): redlock's writers are \
                 still refused on this master, but another Redlock client's SET NX is not kept \
                 out there",
                crate::plural::counted(read.readers.live as usize, "live reader")
            ),
            format!(
                "find what deleted or wrote {}; the shares expire by themselves; to remove them \
                 now, on that master: DEL {}",
                quote(key),
                quote(&readers)
            ),
        );
    }
}
