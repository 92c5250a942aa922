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

/// A script's source and its SHA1, for EVALSHA with an EVAL fallback.
pub struct Lua {
    pub code: &'static str,
    pub sha: String,
    /// This script's bit in a connection's mask of loaded scripts.
    pub bit: u32,
}

impl Lua {
    fn new(code: &'static str, bit: u32) -> Lua {
        let sha = redis::Script::new(code).get_hash().to_string();
        Lua { code, sha, bit }
    }
}

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

/// Releases the lock if it is still ours: compare-and-delete, holder record included, and
/// announces it to waiters on the release channel when asked to (a real release; not the clean-up
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
    redis.call('PUBLISH', ARGV[2], '')
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
