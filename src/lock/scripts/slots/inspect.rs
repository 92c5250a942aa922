//! Reading a semaphore on one master for `status` and `list`: INSPECT_SLOTS and its decoding.

use std::sync::LazyLock;
use std::time::Duration;

use crate::lock::scripts::bit;
use crate::lock::scripts::holder::Holder;
use crate::lock::scripts::revoke::Revocation;
use crate::lock::scripts::slots::revoked_slot;
use crate::lock::wire::lua::Lua;
use crate::lock::wire::node::NodeError;
use crate::lock::wire::resp::Reply;

/// Reads a semaphore on one master, writing nothing. Returns {limit or nil, 1 if K exists (in
/// use as a lock), places in the queue, then for each live slot: token, ms left, record or
/// nil}. A slot scored past the master's time plus `LONGEST_TTL_MS` (the literal below) is not
/// redlock's, and not a slot (see `scripts`).
pub static INSPECT_SLOTS: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(
        r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {redis.call('GET', KEYS[8]), redis.call('EXISTS', KEYS[1]), redis.call('ZCARD', KEYS[3])}
local last = string.format('%d', now + 31622400000)
local live = redis.call('ZRANGEBYSCORE', KEYS[7], string.format('(%d', now), last, 'WITHSCORES')
for i = 1, #live, 2 do
  out[#out + 1] = live[i]
  out[#out + 1] = tonumber(live[i + 1]) - now
  out[#out + 1] = redis.call('HGET', KEYS[11], live[i])
end
return out
",
        bit(&INSPECT_SLOTS),
    )
});

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

/// Decodes one master's INSPECT_SLOTS answer.
pub(in crate::lock) fn inspected_slots(reply: Reply) -> Result<Slots, NodeError> {
    let Reply::Array(fields) = reply else {
        return Err(NodeError::BadReply(format!("unexpected reply {reply}")));
    };
    Ok(Slots {
        limit: fields.first().and_then(Reply::text),
        is_lock: matches!(fields.get(1), Some(Reply::Int(1))),
        waiting: match fields.get(2) {
            Some(Reply::Int(n)) => usize::try_from(*n).unwrap_or(0),
            _ => 0,
        },
        slots: slots_of(fields.get(3..).unwrap_or_default()),
    })
}

/// Live slots from `{member, ms left, record or nil}*` (INSPECT_SLOTS's, and `list`'s READ's):
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
