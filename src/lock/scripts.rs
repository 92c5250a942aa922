//! The Lua scripts each master runs, and the keys they touch.
//!
//! The keys they touch are named in [`super::keys`] (documented in README.md, "Key layout"):
//! - `K` holds the lock token, a random string, with the lock's TTL. Any Redlock client that
//!   contends with `SET K <token> NX PX <ttl>` on the same masters interoperates with us.
//! - the holder record holds a small JSON record of who holds the lock (host, pid, user,
//!   command, since, and the token it holds it with). It is written, extended and deleted in
//!   the same script as `K`, so it never outlives a lock of ours. It can outlive it when
//!   something else deletes or replaces `K`: that is why it names the token, and is believed
//!   only while `K` still holds that token.
//! - the fencing counter (`--fence`): a number, without TTL.
//!
//! All keys of one script are in the lock's cluster hash slot (see `keys`).
//!
//! Every script checks the token before touching anything, so a client can only ever extend or
//! delete its own lock, and nothing here re-creates a key that expired: a failed extension never
//! resurrects or deletes a lock.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Value;

use super::holder::Holder;
pub use super::lua::Lua;
use super::node::NodeError;
use super::outcome::MasterState;
use super::quorum::Vote;

/// Takes the lock: `SET K token NX PX ttl`, then the holder record with the same TTL.
/// KEYS: lock, holder. ARGV: token, ttl in ms, holder record (may be empty).
/// Returns 1 when the lock was taken, or was already taken with this very token (the same
/// request sent again after a connection failed; tokens are never reused); otherwise {holder
/// record or nil, PTTL of the lock, the token in the lock}, so that a refusal also says who is
/// in the way, at no extra round trip.
pub static ACQUIRE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(
        r"
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if ARGV[3] ~= '' then
    redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[2])
  end
  return 1
end
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] then
  return 1
end
return {redis.call('GET', KEYS[2]), redis.call('PTTL', KEYS[1]), current}
",
        1,
    )
});

/// How an ACQUIRE answer counts: taken, refused (held by another), or an error.
pub(super) fn acquire_vote(answer: &Result<Value, NodeError>) -> Vote {
    match answer {
        Ok(Value::Int(1)) => Vote::Yes,
        Ok(Value::Array(_)) | Ok(Value::Int(0)) => Vote::No,
        Ok(_) | Err(_) => Vote::Error,
    }
}

/// What one master's refusal to ACQUIRE says about the lock.
pub(super) struct Refusal {
    /// The holder, when its record belongs to the token in the lock.
    pub holder: Option<Holder>,
    /// The lock's remaining TTL there (`None`: no TTL).
    pub expires_in: Option<Duration>,
}

/// Decodes a refusal (`{record, PTTL, token}`); `None` for any other answer.
pub(super) fn refusal(reply: &Value) -> Option<Refusal> {
    let Value::Array(fields) = reply else {
        return None;
    };
    let holder = match (fields.first().and_then(bulk), fields.get(2).and_then(bulk)) {
        (Some(record), Some(token)) => Holder::from_record(record, token),
        _ => None,
    };
    Some(Refusal {
        holder,
        expires_in: fields.get(1).and_then(ttl),
    })
}

/// Extends the lock if it is still ours: compare-and-pexpire, never re-creating a missing key.
/// KEYS: lock, holder. ARGV: token, ttl in ms.
/// Returns 1 when extended, 0 when the key is missing or holds another token.
pub static EXTEND: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(
        r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
",
        2,
    )
});

/// How a 1-or-0 answer (EXTEND, RELEASE, FENCE_PROPOSE) counts: done, refused, or an error.
pub(super) fn binary_vote(answer: &Result<Value, NodeError>) -> Vote {
    match answer {
        Ok(Value::Int(1)) => Vote::Yes,
        Ok(Value::Int(0)) => Vote::No,
        Ok(_) | Err(_) => Vote::Error,
    }
}

/// Releases the lock if it is still ours: compare-and-delete, holder record included, and
/// announces it to waiters on the release channel when asked to (with `pcall`: the notice is
/// best effort, and an ACL that denies PUBLISH must not turn a done release into an error) (a real release; not the clean-up
/// of a failed attempt, which would only wake contenders for nothing).
/// KEYS: lock, holder. ARGV: token, channel to announce on (empty: none).
/// Returns 1 when deleted, 0 when the key is missing or holds another token.
pub static RELEASE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(
        r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[2])
  redis.call('DEL', KEYS[1])
  if ARGV[2] ~= '' then
    redis.pcall('PUBLISH', ARGV[2], '')
  end
  return 1
end
return 0
",
        4,
    )
});

/// Reads the lock's state on one master in one round trip. KEYS: lock, holder, fencing
/// counter. Returns {token or nil, PTTL of the lock, holder record or nil, counter or nil}.
pub static INSPECT: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(
        r"
return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1]), redis.call('GET', KEYS[2]),
        redis.call('GET', KEYS[3])}
",
        8,
    )
});

/// Decodes one master's INSPECT answer (or its absence): the lock's state there, and the
/// fencing counter where a grant was ever made.
pub(super) fn inspected(answer: Option<Result<Value, NodeError>>) -> (MasterState, Option<u64>) {
    let fields = match answer {
        None => return (MasterState::Unreachable(NodeError::Timeout), None),
        Some(Err(e)) => return (MasterState::Unreachable(e), None),
        Some(Ok(Value::Array(fields))) => fields,
        Some(Ok(other)) => {
            let error = NodeError::BadReply(format!("unexpected reply {other:?}"));
            return (MasterState::Unreachable(error), None);
        }
    };
    let fence = match fields.get(3) {
        None | Some(Value::Nil) => None,
        Some(value) => counter(value),
    };
    let Some(token) = fields.first().and_then(bulk) else {
        return (MasterState::Free, fence);
    };
    let state = MasterState::Held {
        token: String::from_utf8_lossy(token).into_owned(),
        ttl: fields.get(1).and_then(ttl),
        holder: fields
            .get(2)
            .and_then(bulk)
            .and_then(|record| Holder::from_record(record, token)),
    };
    (state, fence)
}

/// Fencing: sets the counter to the proposed number only if that is greater than what the
/// master has (a missing counter counts as 0). KEYS: counter. ARGV: proposed number.
/// Returns 1 when set, 0 when the master already had that number or more. Lua numbers are
/// doubles: exact up to 2^53, far beyond any count of grants.
pub static FENCE_PROPOSE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(
        r"
local current = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
if tonumber(ARGV[1]) > current then
  redis.call('SET', KEYS[1], ARGV[1])
  return 1
end
return 0
",
        16,
    )
});

/// A fencing counter as stored: missing is 0; `None` for anything that is not a number.
pub(super) fn counter(value: &Value) -> Option<u64> {
    match value {
        Value::Nil => Some(0),
        Value::BulkString(bytes) => std::str::from_utf8(bytes).ok()?.trim().parse().ok(),
        Value::Int(n) => u64::try_from(*n).ok(),
        _ => None,
    }
}

fn bulk(value: &Value) -> Option<&[u8]> {
    match value {
        Value::BulkString(bytes) => Some(bytes),
        _ => None,
    }
}

/// A PTTL answer: `None` for a key without TTL (-1) or missing (-2).
fn ttl(value: &Value) -> Option<Duration> {
    match value {
        Value::Int(ms) if *ms >= 0 => Some(Duration::from_millis(*ms as u64)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn votes_map_script_answers() {
        assert_eq!(acquire_vote(&Ok(Value::Int(1))), Vote::Yes);
        assert_eq!(acquire_vote(&Ok(Value::Array(vec![]))), Vote::No);
        assert_eq!(acquire_vote(&Err(NodeError::Timeout)), Vote::Error);
        assert_eq!(binary_vote(&Ok(Value::Int(0))), Vote::No);
        assert_eq!(binary_vote(&Ok(Value::Okay)), Vote::Error);
    }

    #[test]
    fn counters_parse_and_missing_is_zero() {
        assert_eq!(counter(&Value::Nil), Some(0));
        assert_eq!(counter(&Value::BulkString(b"42".to_vec())), Some(42));
        assert_eq!(counter(&Value::BulkString(b"x".to_vec())), None);
    }

    #[test]
    fn an_inspection_shows_a_record_only_for_the_token_in_the_key() {
        let holder = Holder::this_process(&["job".into()]);
        let reply = |record: &str| {
            Value::Array(vec![
                Value::BulkString(b"t2".to_vec()),
                Value::Int(5_000),
                Value::BulkString(record.as_bytes().to_vec()),
                Value::BulkString(b"7".to_vec()),
            ])
        };
        let (state, fence) = inspected(Some(Ok(reply(&holder.record("t1")))));
        assert_eq!(fence, Some(7));
        assert!(
            matches!(state, MasterState::Held { holder: None, .. }),
            "{state:?}"
        );
        let (state, _) = inspected(Some(Ok(reply(&holder.record("t2")))));
        assert!(
            matches!(
                state,
                MasterState::Held {
                    holder: Some(_),
                    ..
                }
            ),
            "{state:?}"
        );
    }
}
