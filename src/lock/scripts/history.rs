//! The key's history on one master: a list of the events of its turns, newest first
//! (`keys::history`, KEYS[16], the last of the layout), written by the scripts that take,
//! release, revoke, evict and leave, in the same call, never by a round trip of its own.
//! Merged across the masters by `read::history`.
//!
//! Each entry is one JSON object (stable field names, docs/protocol.md, "History"):
//! `e` the event, `t` the token, `at` when (ms since the Unix epoch, as a string: exact), and
//! per event:
//! - `taken` (ACQUIRE, WAIT's take): `ttl` (ms), `who` (the holder record, a JSON object);
//! - `end` (a real RELEASE): `how`, what the releaser says ended the turn: `exit N`,
//!   `signal N`, `lost` (its renewals could not keep a majority; recorded also where the key
//!   had already expired), `outdated N` (released before its command ran: order N had taken
//!   the lock while it waited), `released` (a script's `release`);
//! - `undone` (the clean-up of a failed attempt or turn: it never held the lock, or no longer
//!   does);
//! - `revoked` (FORCE): `by`, the record of whoever forced (its note the reason);
//! - `superseded` (WAIT_SUPERSEDE): `who`, the evicted waiter's record; `by`, its evictor's;
//! - `left` (LEAVE): `how` (`gave up`, `interrupted`, `refused`, `lost its place`), `who`.
//!
//! **Bounded, never without a TTL, never in the way.** Every write is LPUSH, PEXPIRE by the
//! history's age ([`AGE_MS`]) where it takes (a release, a force, an eviction or a departure
//! only where its LPUSH made the list: the history lives 30 days after the last take), then
//! LTRIM back to its cap once a tenth longer (at its cap, one LTRIM per tenth of the cap in
//! writes, not one per write), each with `pcall`: a history is what the lock tells about
//! itself, so nothing in it may fail the script that
//! takes or releases (an LPUSH onto a key of another type, which another client wrote, or
//! one an ACL refuses, writes nothing; a list whose PEXPIRE is refused is deleted at once:
//! the list never stands without its TTL after the script). A take trims to the
//! run's own cap (`--history N`, [`DEFAULT_CAP`]); every other write to [`MAX_CAP`], so a line
//! of waiters that leave while nobody takes the lock cannot grow it without bound either. A
//! key unused for the age is gone with its history.
//!
//! **No extra work where it is off.** An empty history argument (`--history off`), or none (a
//! client that calls a script with the arguments of an earlier build), writes nothing. A
//! history costs each take two commands and each release one inside the script that already
//! runs, about 10 µs on the master; the contended herd 7.5% more of the masters' CPU
//! (BENCHMARKS.md, "History (issue 52)").

use std::sync::LazyLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::bit;
use crate::lock::wire::lua::Lua;
use crate::lock::wire::node::NodeError;
use crate::lock::wire::resp::Reply;

/// How many turns' events a run keeps by default (`--history N`).
pub const DEFAULT_CAP: u32 = 1000;
/// The most events a key's history holds on a master, whatever a run asked for.
pub const MAX_CAP: u32 = 10_000;
/// How long a history outlives its last write: 30 days.
pub const AGE_MS: u64 = 30 * 24 * 3600 * 1000;

/// Whether a run records its turn, and how many events the key keeps (`--history N|off`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct History {
    /// `None`: off.
    pub cap: Option<u32>,
}

impl Default for History {
    fn default() -> History {
        History {
            cap: Some(DEFAULT_CAP),
        }
    }
}

impl History {
    pub const OFF: History = History { cap: None };

    /// The scripts' history argument, dated now: `<cap> <age ms> <now ms>`, or empty (off).
    pub fn spec(self) -> String {
        match self.cap {
            Some(cap) => format!("{cap} {AGE_MS} {}", now_ms()),
            None => String::new(),
        }
    }
}

/// The time of this machine, in ms since the Unix epoch (what `at` records: the same number
/// on every master, so that the merge finds one event once).
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_millis() as u64
}

/// How a turn ended, as its releaser says it (the RELEASE's `how`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The command exited with this code.
    Exited(i32),
    /// The command was killed by this signal.
    Signalled(i32),
    /// The renewals could not keep a majority: the command was stopped.
    Lost,
    /// Released by a script (`release`), or with no command to speak of.
    Released,
    /// Released before its command ran: a higher order (this one) had taken the lock while
    /// it waited (`--order`).
    Outdated(u64),
}

impl Ending {
    /// The words the history keeps.
    pub fn word(&self) -> String {
        match self {
            Ending::Exited(code) => format!("exit {code}"),
            Ending::Signalled(signal) => format!("signal {signal}"),
            Ending::Lost => "lost".to_string(),
            Ending::Released => "released".to_string(),
            Ending::Outdated(by) => format!("outdated {by}"),
        }
    }
}

/// The Lua every history-writing script shares: `remember(spec, event, token, ttl, how, who,
/// by, is_take)` records one event (`nil` for a field it has not) with `at` from `spec`, as
/// the header says.
/// The entry is put together as text rather than with `cjson.encode`, which would parse
/// nothing but escape every quote of the records it carries (see BENCHMARKS.md, "History"):
/// the records (`who`, `by`) are redlock's own JSON, written in as objects, a value that is
/// not one left out; a token or word that needs escaping is escaped.
pub(in crate::lock) const REMEMBER: &str = r#"
local function quoted(value)
  if string.find(value, '[%c"\\]') then
    return cjson.encode(value)
  end
  return '"' .. value .. '"'
end
local function remember(spec, event, token, ttl, how, who, by, is_take)
  if not spec or spec == '' then
    return
  end
  local cap, age, at = string.match(spec, '^(%d+) (%d+) (%d+)$')
  if not cap then
    return
  end
  local length = redis.pcall('LPUSH', KEYS[16], '{"e":"' .. event .. '","t":' .. quoted(token)
    .. ',"at":"' .. at .. '"' .. (ttl and (',"ttl":' .. quoted(ttl)) or '')
    .. (how and (',"how":' .. quoted(how)) or '')
    .. ((who and string.byte(who) == 123) and (',"who":' .. who) or '')
    .. ((by and string.byte(by) == 123) and (',"by":' .. by) or '') .. '}')
  if type(length) ~= 'number' then
    return
  end
  if (is_take or length == 1) and type(redis.pcall('PEXPIRE', KEYS[16], age)) ~= 'number' then
    redis.pcall('DEL', KEYS[16])
    return
  end
  local limit = MAX_HISTORY
  if is_take then
    limit = math.min(tonumber(cap), MAX_HISTORY)
  end
  if length > limit + math.floor(limit / 10) then
    redis.pcall('LTRIM', KEYS[16], 0, limit - 1)
  end
end
"#;

/// [`REMEMBER`] with its ceiling, as the scripts compose it.
pub(in crate::lock) static REMEMBER_LUA: LazyLock<String> =
    LazyLock::new(|| format!("local MAX_HISTORY = {MAX_CAP}\n{REMEMBER}"));

/// How many events one HISTORY call returns at most: a page, so that a long history is read
/// in bounded replies (entries are a few hundred bytes; the reply cap is a megabyte).
pub const PAGE: usize = 200;

/// Reads a page of the key's history on this master (read-only).
/// KEYS: the whole layout. ARGV: the first entry (0: the newest), how many.
/// Returns `{entries, K's value or nil, K's PTTL, the history's length}`, or
/// `{'foreign', type}` where the history key holds something other than a list.
pub static HISTORY: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(
        r"
local kind = redis.call('TYPE', KEYS[16]).ok
if kind ~= 'list' and kind ~= 'none' then
  return {'foreign', kind}
end
local first = tonumber(ARGV[1])
local entries = redis.call('LRANGE', KEYS[16], first, first + tonumber(ARGV[2]) - 1)
local current = redis.pcall('GET', KEYS[1])
if type(current) ~= 'string' then
  current = false
end
return {entries, current, redis.call('PTTL', KEYS[1]), redis.call('LLEN', KEYS[16])}
",
        bit(&HISTORY),
    )
});

/// One master's page of history, as HISTORY answered.
#[derive(Clone, Debug, PartialEq)]
pub struct Page {
    /// The entries, newest first, each as stored (JSON text; decoded by `read::history`).
    pub entries: Vec<Vec<u8>>,
    /// The token K holds there now, and for how long (`None`: free, or no TTL).
    pub current: Option<String>,
    pub current_ttl: Option<Duration>,
    /// How many entries the history holds there.
    pub length: usize,
}

/// Decodes a HISTORY answer: the page, or an error naming what the key holds instead.
pub(in crate::lock) fn page(reply: &Reply) -> Result<Page, NodeError> {
    let bad = |what: &str| NodeError::BadReply(format!("HISTORY answered {what}"));
    let Reply::Array(fields) = reply else {
        return Err(bad("no list"));
    };
    if fields.first().and_then(Reply::bulk) == Some(b"foreign".as_slice()) {
        let kind = fields.get(1).and_then(Reply::text).unwrap_or_default();
        return Err(NodeError::Server(format!(
            "its history key holds a {kind}, not a list: something other than redlock wrote it"
        )));
    }
    let [Reply::Array(entries), current, ttl, Reply::Int(length)] = fields.as_slice() else {
        return Err(bad("an unexpected shape"));
    };
    Ok(Page {
        entries: entries
            .iter()
            .filter_map(|entry| entry.bulk().map(<[u8]>::to_vec))
            .collect(),
        current: current.text(),
        current_ttl: match ttl {
            Reply::Int(ms) if *ms >= 0 => Some(Duration::from_millis(*ms as u64)),
            _ => None,
        },
        length: usize::try_from(*length).unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_is_cap_age_and_now_and_empty_when_off() {
        let spec = History { cap: Some(7) }.spec();
        let parts: Vec<&str> = spec.split(' ').collect();
        assert_eq!(parts[..2], ["7", &AGE_MS.to_string()]);
        assert!(parts[2].parse::<u64>().unwrap() > 1_700_000_000_000);
        assert_eq!(History::OFF.spec(), "");
    }

    #[test]
    fn endings_are_worded_as_the_history_keeps_them() {
        assert_eq!(Ending::Exited(3).word(), "exit 3");
        assert_eq!(Ending::Signalled(9).word(), "signal 9");
        assert_eq!(Ending::Lost.word(), "lost");
        assert_eq!(Ending::Released.word(), "released");
        assert_eq!(Ending::Outdated(9).word(), "outdated 9");
    }

    #[test]
    fn a_foreign_history_is_named() {
        let reply = Reply::Array(vec![
            Reply::Bulk(b"foreign".to_vec()),
            Reply::Bulk(b"hash".to_vec()),
        ]);
        let error = page(&reply).unwrap_err();
        assert!(error.to_string().contains("holds a hash"), "{error}");
    }
}
