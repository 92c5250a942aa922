//! `list --problems` on a semaphore's keys (`--limit`): its slots, limit and slot records keys
//! without a TTL (redlock gives each its longest slot's, so something else wrote them), and
//! a slots or records key of a type the slots' scripts cannot use. Before `list` read
//! semaphores, these keys were strays and only their TTL was looked at; it still is.

use super::{Kind, quote, wrong_type};
use crate::escape;
use crate::lock::{LockRead, Ttl, keys};

pub(super) fn slots_in_lock(
    key: &str,
    read: &LockRead,
    push: &mut impl FnMut(Kind, String, String, String),
) {
    let Some(slots) = &read.slots else {
        return;
    };
    let shown = escape::quoted(key);
    let ttls = [
        ("slots", keys::slots(key), slots.ttl),
        ("limit", keys::limit(key), slots.limit_ttl),
        ("slot records", keys::slot_holders(key), slots.holders_ttl),
    ];
    for (what, name, ttl) in ttls {
        if ttl == Some(Ttl::Forever) {
            push(
                Kind::NoTtl,
                name.clone(),
                format!("{what} key of semaphore {shown} without a TTL: it never expires"),
                format!(
                    "once no slot of semaphore {shown} is held (redlock status --key {}), \
                     delete it on that master: DEL {}",
                    quote(key),
                    quote(&name)
                ),
            );
        }
    }
    let kinds = [
        ("slots", keys::slots(key), &slots.wrong_type, "a sorted set"),
        (
            "slot records",
            keys::slot_holders(key),
            &slots.holders_wrong_type,
            "a hash",
        ),
    ];
    for (what, name, wrong, wanted) in kinds {
        if let Some(kind) = wrong {
            let whose = format!("{what} key of semaphore {shown}");
            let fails = format!("the slots of {shown} fail on this master");
            wrong_type(push, name, (&whose, kind, wanted), &fails);
        }
    }
}
