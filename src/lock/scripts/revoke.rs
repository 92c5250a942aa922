//! Breaking glass (`release --force`): the Lua that revokes whoever holds K without their token,
//! the record it leaves in their place, and the typed reading of both. How the force is
//! decided over the masters and why it never makes two holders: `kinds::revoke`. FORCE itself
//! is in `scripts::force` (it is composed with the slots' Lua, which reads this module).
//!
//! **The revocation record.** On each master it reaches, FORCE replaces the value of `K` (a
//! holder's token) with [`REVOKED_MARKER`], a fixed value that is never a token, and the holder
//! record (`keys::holder`, KEYS[2]) with the revocation record: the holder record of whoever
//! forced (host, pid, user, command, `since_ms` = when), whose `token` is the marker (so it is
//! believed exactly while `K` holds the marker, as every holder record is) and whose `note` is
//! the reason, plus `revoked` (the revoked holders: `[{token, record}]`, `record` the holder
//! record they had, as text, or `null`) and `until_ms` (the master's time at which both keys
//! expire). Both keys are written with `SET ... PX`, the TTL in the same command: no key
//! without a TTL. The TTL is the revoked holder's remaining TTL on that master plus drift
//! (`pttl + pttl · factor + 2` ms), so `K` stays closed there at least as long as the revoked
//! token would have kept it: a newcomer's `SET K x NX`, redlock's or a foreign client's, fails
//! there exactly as it did before the force.
//!
//! **Who opens it early.** Only the revoked holder's own release (RELEASE with its token)
//! finds its token in `revoked` ([`ACKNOWLEDGE`]) and deletes `K` and the record, and
//! RELEASE's hand-off wakes the first waiter, as any release does. It answers
//! `{'acknowledged', record}` (the record as it was) instead of 1, so that the releaser hears
//! who revoked it; [`release_vote`] counts that answer as a release done, exactly as 1, so the
//! round decides as before. Its undo does the same: a
//! partial hold the force caught in a newcomer's failed attempt was never used (without it,
//! the model in tests/queue_model finds the waiters left to a timer). A revoked holder that
//! never says so leaves `K` closed until the TTL.
//!
//! **What a revoked holder hears.** EXTEND compares its token with `K`: the marker is not its
//! token, so nothing is extended; instead of a bare 0 it answers `{'revoked', record}` (see
//! [`extend_vote`], [`revoked_reply`]), and the renewal reads who revoked it from the record,
//! where the record names its token.
//!
//! **A semaphore's slots** are revoked by the same FORCE where K is free and the slots key
//! exists: each live slot is renamed and kept counted under a revocation record of its own,
//! naming its one token, as `scripts::slots` (its `revoke`) describes.

use std::time::Duration;

use serde_json::Value;

use super::holder::Holder;
use super::replies::Vote;
use crate::escape;
use crate::lock::wire::node::NodeError;
use crate::lock::wire::resp::Reply;

/// The value `K` holds while revoked: never a token, so that every holder's compare-and-set
/// fails on it, and every newcomer's `SET NX`.
pub const REVOKED_MARKER: &str = "__redlock:revoked";

/// The marker, as the Lua of FORCE and of the releases that [`ACKNOWLEDGE`] names it.
pub(in crate::lock) const MARKER: &str = "local REVOKED = '__redlock:revoked'\n";

/// The Lua a revoked holder's release runs (see the header): `acknowledges(token)` says
/// whether `token` is the one holder the revocation record in KEYS[2] revoked, so that its
/// release (or its undo: a partial hold the force caught was never used) opens K; read only,
/// the caller deletes `K` and the record. `cross_off(token)` is a reader's: it crosses its
/// token off the readers revoked (the record keeps K's TTL), and the last one opens K (it
/// deletes both). Either says whether it found the token, and whether K opened. A record that
/// is not redlock's (not JSON, no list) names nobody. It needs [`MARKER`] before it.
pub(in crate::lock) const ACKNOWLEDGE: &str = r"
local function acknowledges(token)
  local ok, record = pcall(cjson.decode, redis.call('GET', KEYS[2]) or '')
  if not ok or type(record) ~= 'table' or type(record.revoked) ~= 'table' then
    return false
  end
  local revoked = record.revoked
  return #revoked == 1 and type(revoked[1]) == 'table' and revoked[1].token == token
    and (tonumber(record.unlisted) or 0) == 0
end
local function cross_off(token)
  local ok, record = pcall(cjson.decode, redis.call('GET', KEYS[2]) or '')
  if not ok or type(record) ~= 'table' or type(record.revoked) ~= 'table' then
    return false, false
  end
  local left, found = {}, false
  for _, revoked in ipairs(record.revoked) do
    if type(revoked) == 'table' and revoked.token == token then
      found = true
    else
      left[#left + 1] = revoked
    end
  end
  if not found then
    return false, false
  end
  if #left == 0 and (tonumber(record.unlisted) or 0) == 0 then
    redis.call('DEL', KEYS[1], KEYS[2])
    return true, true
  end
  record.revoked = left
  local ms = redis.call('PTTL', KEYS[1])
  if ms > 0 then
    redis.call('SET', KEYS[2], cjson.encode(record), 'PX', ms)
  end
  return true, false
end
";

/// Who revoked a lock, why, and whom: a revocation record, as a master shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Revocation {
    /// Whoever forced (host, pid, user, command, `since_ms` = when); its note is the reason.
    pub by: Holder,
    /// The holders it revoked that have not said yet that they stopped.
    pub revoked: Vec<Revoked>,
    /// The master's time (ms since the epoch) at which `K` opens again by itself.
    pub until_ms: Option<u64>,
}

/// One revoked holder: its token and the record it had (`None`: none, or not redlock's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Revoked {
    pub token: String,
    pub holder: Option<Holder>,
}

impl Revocation {
    /// Reads a revocation record; `None` for anything that is not one.
    pub fn from_record(text: &[u8]) -> Option<Revocation> {
        let by = Holder::from_record(text, REVOKED_MARKER.as_bytes())?;
        let value: Value = serde_json::from_slice(text).ok()?;
        let revoked = value
            .get("revoked")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(|entry| {
                        let token = entry.get("token")?.as_str()?.to_string();
                        let holder =
                            entry
                                .get("record")
                                .and_then(Value::as_str)
                                .and_then(|record| {
                                    Holder::from_record(record.as_bytes(), token.as_bytes())
                                });
                        Some(Revoked { token, holder })
                    })
                    .collect()
            })
            .unwrap_or_default();
        let until_ms = value
            .get("until_ms")
            .and_then(Value::as_f64)
            .map(|ms| ms as u64);
        Some(Revocation {
            by,
            revoked,
            until_ms,
        })
    }

    /// Whether it revoked the holder of `token`.
    pub fn names(&self, token: &str) -> bool {
        self.revoked.iter().any(|r| r.token == token)
    }

    /// The reason given, if any.
    pub fn reason(&self) -> Option<&str> {
        self.by.note.as_deref()
    }

    /// `user ops on ops-1 (pid 4412) at 2026-11-28T17:30:02Z, reason "runner hung"`, on one line,
    /// escaped (the record may have been written by anyone).
    pub fn describe(&self) -> String {
        let at = std::time::UNIX_EPOCH + Duration::from_millis(self.by.since_ms);
        let reason = match self.reason() {
            Some(reason) => format!("reason {}", escape::quoted(reason)),
            None => "no reason given".to_string(),
        };
        format!(
            "user {} on {} (pid {}) at {}, {reason}",
            escape::visible(&self.by.user),
            escape::visible(&self.by.host),
            self.by.pid,
            humantime::format_rfc3339_seconds(at)
        )
    }
}

/// The revocation record `record`, where `token` (the value of K) is the marker.
pub(in crate::lock) fn revocation_in(
    token: Option<&[u8]>,
    record: Option<&[u8]>,
) -> Option<Revocation> {
    (token? == REVOKED_MARKER.as_bytes()).then_some(())?;
    Revocation::from_record(record?)
}

/// What one master's FORCE answer says.
#[derive(Debug, PartialEq)]
pub(in crate::lock) enum ForceAnswer {
    /// Revoked here now: the holders (tokens and the records they named), how long K stays
    /// closed.
    Forced {
        revoked: Vec<Revoked>,
        closed_for: Duration,
    },
    /// Revoked already (by this force sent again, or an earlier one).
    Already {
        revocation: Option<Revocation>,
        closed_for: Option<Duration>,
    },
    /// Nobody holds K here (nor a slot of it).
    Free,
}

/// Decodes FORCE's answer; `None` for anything else.
pub(in crate::lock) fn force_answer(reply: &Reply) -> Option<ForceAnswer> {
    let Reply::Array(fields) = reply else {
        return None;
    };
    let int = |i: usize| match fields.get(i) {
        Some(Reply::Int(ms)) if *ms >= 0 => Some(Duration::from_millis(*ms as u64)),
        _ => None,
    };
    match fields.first().and_then(Reply::bulk)? {
        b"forced" => {
            let Some(Reply::Array(pairs)) = fields.get(1) else {
                return None;
            };
            let revoked = pairs
                .chunks(2)
                .map(|pair| {
                    let token = pair.first().and_then(Reply::text)?;
                    let holder = pair
                        .get(1)
                        .and_then(Reply::bulk)
                        .and_then(|record| Holder::from_record(record, token.as_bytes()));
                    Some(Revoked { token, holder })
                })
                .collect::<Option<Vec<Revoked>>>()?;
            Some(ForceAnswer::Forced {
                revoked,
                closed_for: int(2)?,
            })
        }
        b"revoked" => Some(ForceAnswer::Already {
            revocation: fields
                .get(1)
                .and_then(Reply::bulk)
                .and_then(Revocation::from_record),
            closed_for: int(2),
        }),
        b"free" => Some(ForceAnswer::Free),
        _ => None,
    }
}

/// How a FORCE answer counts: revoked (now or before) is a yes, nothing to revoke a no.
pub(in crate::lock) fn force_vote(answer: &Result<Reply, NodeError>) -> Vote {
    match answer.as_ref().map(force_answer) {
        Ok(Some(ForceAnswer::Forced { .. } | ForceAnswer::Already { .. })) => Vote::Yes,
        Ok(Some(ForceAnswer::Free)) => Vote::No,
        Ok(None) | Err(_) => Vote::Error,
    }
}

/// How an EXTEND answer counts: 1 extended; 0, or the revocation that took the token's place
/// (`{'revoked', record}`), refused.
pub(in crate::lock) fn extend_vote(answer: &Result<Reply, NodeError>) -> Vote {
    match answer {
        Ok(Reply::Int(1)) => Vote::Yes,
        Ok(Reply::Int(0)) => Vote::No,
        Ok(reply) if revoked_reply(reply).is_some() => Vote::No,
        Ok(_) | Err(_) => Vote::Error,
    }
}

/// The revocation an EXTEND answer reports (`{'revoked', record}`), whoever it names.
pub(in crate::lock) fn revoked_reply(reply: &Reply) -> Option<Option<Revocation>> {
    tagged_record(reply, b"revoked")
}

/// How a release's answer counts (RELEASE, READ_RELEASE, RELEASE_SLOT): 1 deleted, and
/// `{'acknowledged', record}` (a revoked holder's release that said it stopped, so that what
/// the revocation kept closed for it opened) are both done; 0 refused.
pub(in crate::lock) fn release_vote(answer: &Result<Reply, NodeError>) -> Vote {
    match answer {
        Ok(Reply::Int(1)) => Vote::Yes,
        Ok(Reply::Int(0)) => Vote::No,
        Ok(reply) if acknowledged_reply(reply).is_some() => Vote::Yes,
        Ok(_) | Err(_) => Vote::Error,
    }
}

/// The revocation a release answer acknowledged (`{'acknowledged', record}`: the record as it
/// was before the release), whoever it names.
pub(in crate::lock) fn acknowledged_reply(reply: &Reply) -> Option<Option<Revocation>> {
    tagged_record(reply, b"acknowledged")
}

/// `{tag, record}`: the record read as a revocation (`None` inside when it is not one).
fn tagged_record(reply: &Reply, tag: &[u8]) -> Option<Option<Revocation>> {
    let Reply::Array(fields) = reply else {
        return None;
    };
    if fields.first().and_then(Reply::bulk) != Some(tag) {
        return None;
    }
    Some(
        fields
            .get(1)
            .and_then(Reply::bulk)
            .and_then(Revocation::from_record),
    )
}

#[cfg(test)]
mod tests;
