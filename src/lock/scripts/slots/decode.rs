//! A semaphore on one master, as READ gives it (see `scripts::scan`): its slots, decoded.

use std::time::Duration;

use crate::lock::scripts::holder::Holder;
use crate::lock::scripts::revoke::Revocation;
use crate::lock::scripts::slots::revoked_slot;
use crate::lock::wire::resp::Reply;

/// One live slot on one master.
#[derive(Clone, Debug, PartialEq)]
pub struct Slot {
    /// Its holder's token (a revoked slot's too, without the prefix it is kept under).
    pub token: String,
    /// How long until it expires there, unless renewed (a revoked slot: until it is freed).
    pub expires_in: Duration,
    /// Its holder's record (a revoked slot's: the one its holder had).
    pub holder: Option<Holder>,
    /// Revoked by `release --force`: by whom, why, and until when (see `revoke`).
    pub revocation: Option<Revocation>,
}

/// What one master has of a semaphore.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Slots {
    /// The limit the holders agreed on, as stored (`None`: no live slot took one).
    pub limit: Option<String>,
    /// The name is in use as a lock on this master.
    pub is_lock: bool,
    /// Places in the key's fair queue (lapsed ones not yet dropped included).
    pub waiting: usize,
    pub slots: Vec<Slot>,
}

/// Live slots from `{member, ms left, record or nil}*` (READ's, see `scripts::scan`):
/// a revoked slot under its renamed member is its holder's token, with the revocation.
pub(in crate::lock) fn slots_of(flat: &[Reply]) -> Vec<Slot> {
    flat.chunks(3)
        .filter_map(|triple| {
            let member = String::from_utf8_lossy(triple.first()?.bulk()?).into_owned();
            let expires_in = triple.get(1).and_then(millis).unwrap_or_default();
            let record = triple.get(2).and_then(Reply::bulk);
            if let Some(token) = revoked_slot(&member) {
                let revocation = record.and_then(Revocation::from_record);
                let holder = revocation
                    .as_ref()
                    .and_then(|r| r.revoked.iter().find(|r| r.token == token))
                    .and_then(|r| r.holder.clone());
                return Some(Slot {
                    token: token.to_string(),
                    expires_in,
                    holder,
                    revocation,
                });
            }
            let holder = record.and_then(|record| Holder::from_record(record, member.as_bytes()));
            Some(Slot {
                token: member,
                expires_in,
                holder,
                revocation: None,
            })
        })
        .collect()
}

/// A number of milliseconds (an integer reply), `None` when negative or not a number.
pub(super) fn millis(value: &Reply) -> Option<Duration> {
    match value {
        Reply::Int(ms) if *ms >= 0 => Some(Duration::from_millis(*ms as u64)),
        _ => None,
    }
}
