//! A key's history across the masters (`redlock history`): each master's events of the key's
//! turns (`scripts::history`), read a page at a time and merged into one list of turns.
//!
//! **The merge rule.** A turn is a token: tokens are random and never reused, and a waiter
//! keeps its token across its turns, which are one wait. Each master's events are read
//! oldest first, per token, into that master's view of the turn: `taken` opens it (again,
//! after an `undone` partial hold), `undone` closes it as never held, and an end (`end`,
//! `revoked`, `superseded`, `left`) closes it as ended. The views then merge by token, across
//! every master that answered, however many recorded it:
//! - **its end** is the most telling any master recorded: revoked, then lost, then the
//!   command's end (exit or signal), then released, superseded, left. A master that missed the
//!   end (down, partitioned, restarted empty) cannot hide it where one other master has it;
//! - **its start** is the earliest `taken` any master recorded, and who held it the record
//!   that came with it: a master that missed the take does not hide the turn either;
//! - **a turn no master saw end** is still *holding* while K holds its token on a quorum
//!   now, and otherwise *expired*: its holder stopped renewing (killed, frozen, its host
//!   gone), and every master's TTL ran out. Redlock's renewals write no history (they are
//!   the hot path), so when it expired is not known, only that it did;
//! - **a take undone on every master that recorded it** was an attempt that did not win (or
//!   a waiter's partial hold): no turn. One that some master recorded as taken, and none
//!   ended, while the others undid it, is shown by the rule above (a clean-up that did not
//!   reach that master: its TTL ended it there, as *expired*).
//!
//! So one turn appears once, however many masters recorded it, and a master that missed a
//! write neither hides nor duplicates a turn: only a turn that *every* answering master
//! missed is missing, which needs every master that recorded it to be out of reach or to
//! have lost its data.
//!
//! **Bounded.** Each master is read in pages ([`scripts::history::PAGE`] events), newest
//! first, until enough turns are read (twice the limit's events, plus a page: a turn has at
//! most two events on a master, but for a waiter's partial holds) or its history ends; every
//! page is one round, so `history` costs as many round trips as pages, and memory as many
//! events as it read.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value;

use crate::lock::quorum::round::Masters;
use crate::lock::scripts::HISTORY;
use crate::lock::scripts::calls::args::HistoryPage;
use crate::lock::scripts::history::{self, AGE_MS, Page};
use crate::lock::scripts::holder::Holder;
use crate::lock::scripts::keys::Names;
use crate::lock::wire::master::Master;
use crate::lock::wire::node::NodeError;

/// How a turn ended, as the merge tells it (most telling first, see the header).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TurnEnd {
    /// Revoked by `release --force`: by whom (the note says why).
    Revoked { by: Option<Holder> },
    /// Its renewals could not keep a majority: the command was stopped.
    Lost,
    /// The command exited with this code.
    Exited(i32),
    /// The command was killed by this signal.
    Signalled(i32),
    /// Released by a script's `release` (no command of redlock's to tell of).
    Released,
    /// Never ran: a newer waiter evicted it from a superseding line (by whom).
    Superseded { by: Option<Holder> },
    /// Never ran: it took the lock, and found that a higher order (this one, where known) had
    /// taken it while it waited (`--order`).
    Outdated(Option<u64>),
    /// Never ran: it left the line (`gave up`: out of patience; `interrupted`: signalled;
    /// `refused`: the line's policy is not its own; `lost its place`).
    Left(String),
    /// Nobody recorded an end, and K no longer holds it: its holder stopped renewing.
    Expired,
    /// Nobody recorded an end, and K holds it on a quorum now.
    Holding,
}

impl TurnEnd {
    /// How telling an end is: the merge keeps the highest (see the header).
    fn rank(&self) -> u8 {
        match self {
            TurnEnd::Revoked { .. } => 7,
            TurnEnd::Lost => 6,
            TurnEnd::Exited(_) | TurnEnd::Signalled(_) => 5,
            TurnEnd::Released => 4,
            TurnEnd::Superseded { .. } | TurnEnd::Outdated(_) => 3,
            TurnEnd::Left(_) => 2,
            TurnEnd::Expired | TurnEnd::Holding => 0,
        }
    }

    /// The word `--json` and the metrics give it (docs/protocol.md, "History").
    pub fn word(&self) -> &'static str {
        match self {
            TurnEnd::Revoked { .. } => "revoked",
            TurnEnd::Lost => "lost",
            TurnEnd::Exited(_) | TurnEnd::Signalled(_) | TurnEnd::Released => "released",
            TurnEnd::Superseded { .. } => "superseded",
            TurnEnd::Outdated(_) => "outdated",
            TurnEnd::Left(how) => match how.as_str() {
                "gave up" => "gave_up",
                "interrupted" => "interrupted",
                "refused" => "refused",
                "lost its place" => "lost_place",
                _ => "left",
            },
            TurnEnd::Expired => "expired",
            TurnEnd::Holding => "holding",
        }
    }

    /// Whether the turn held the lock (ran its command), as opposed to one that only waited.
    pub fn held(&self) -> bool {
        !matches!(
            self,
            TurnEnd::Superseded { .. } | TurnEnd::Left(_) | TurnEnd::Outdated(_)
        )
    }
}

/// One turn of the key, merged across the masters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Turn {
    pub token: String,
    /// Who took it (or waited), from the record of its take (or of its wait).
    pub holder: Option<Holder>,
    /// When it was taken (or, for a turn that never ran, when it left the line), in ms since
    /// the Unix epoch, by the clock of the redlock that wrote it.
    pub started_ms: Option<u64>,
    /// When its end was recorded (`None`: expired, holding, or an end without a time).
    pub ended_ms: Option<u64>,
    pub end: TurnEnd,
    /// The TTL it was taken with, in ms.
    pub ttl_ms: Option<u64>,
    /// On how many masters its take was recorded.
    pub masters: usize,
}

impl Turn {
    /// How long it held the lock, where both ends are known.
    pub fn held_for(&self) -> Option<Duration> {
        let (start, end) = (self.started_ms?, self.ended_ms?);
        Some(Duration::from_millis(end.saturating_sub(start)))
    }

    /// The time the turn is ordered by: its start, or its end for one that never started.
    fn when(&self) -> u64 {
        self.started_ms.or(self.ended_ms).unwrap_or(0)
    }
}

/// One event, as a master stored it.
#[derive(Clone, Debug, PartialEq)]
struct Event {
    kind: String,
    token: String,
    at_ms: Option<u64>,
    ttl_ms: Option<u64>,
    who: Option<Holder>,
    by: Option<Holder>,
    how: String,
}

impl Event {
    /// An entry's event; `None` for one that is not redlock's (another writer's JSON, or
    /// none): skipped, never fatal.
    fn parse(entry: &[u8]) -> Option<Event> {
        let value: Value = serde_json::from_slice(entry).ok()?;
        let text = |field: &str| value.get(field).and_then(Value::as_str);
        let number = |field: &str| text(field).and_then(|t| t.parse::<u64>().ok());
        // A record is an object (or, as text, one written by an earlier build of this one).
        let record = |field: &str| match value.get(field)? {
            Value::String(text) => Holder::from_json(text.as_bytes()),
            object @ Value::Object(_) => Holder::from_json(object.to_string().as_bytes()),
            _ => None,
        };
        Some(Event {
            kind: text("e")?.to_string(),
            token: text("t")?.to_string(),
            at_ms: number("at"),
            ttl_ms: number("ttl"),
            who: record("who"),
            by: record("by"),
            how: text("how").unwrap_or_default().to_string(),
        })
    }

    /// The end this event records, if it is one.
    fn end(&self) -> Option<TurnEnd> {
        Some(match self.kind.as_str() {
            "revoked" => TurnEnd::Revoked {
                by: self.by.clone(),
            },
            "superseded" => TurnEnd::Superseded {
                by: self.by.clone(),
            },
            "left" => TurnEnd::Left(self.how.clone()),
            "end" => {
                let how = self.how.as_str();
                if how == "lost" {
                    TurnEnd::Lost
                } else if let Some(order) = how.strip_prefix("outdated") {
                    TurnEnd::Outdated(order.trim().parse().ok())
                } else if let Some(code) = how.strip_prefix("exit ") {
                    TurnEnd::Exited(code.parse().ok()?)
                } else if let Some(signal) = how.strip_prefix("signal ") {
                    TurnEnd::Signalled(signal.parse().ok()?)
                } else {
                    TurnEnd::Released
                }
            }
            _ => return None,
        })
    }
}

/// One master's view of one token's turn (see the header).
#[derive(Clone, Debug, Default)]
struct View {
    taken_ms: Option<u64>,
    ttl_ms: Option<u64>,
    holder: Option<Holder>,
    /// Open: taken, and neither undone nor ended since.
    open: bool,
    ever_taken: bool,
    end: Option<(TurnEnd, Option<u64>)>,
}

/// What one master answered for the history: its events (newest first) and what K holds.
pub(in crate::lock) struct MasterHistory {
    pub events: Vec<Vec<u8>>,
    pub current: Option<String>,
}

/// Merges the masters' histories into turns, newest first (see the header); `quorum` masters
/// holding a token in K now make its unended turn "holding". Events older than the history's
/// age (by `now_ms`) are left out, as the masters would have trimmed them.
pub(in crate::lock) fn merge(masters: &[MasterHistory], quorum: usize, now_ms: u64) -> Vec<Turn> {
    let oldest = now_ms.saturating_sub(AGE_MS);
    let mut turns: HashMap<String, (Turn, usize, bool)> = HashMap::new();
    for master in masters {
        let mut views: HashMap<String, View> = HashMap::new();
        for event in master.events.iter().rev().filter_map(|e| Event::parse(e)) {
            if event.at_ms.is_some_and(|at| at < oldest) {
                continue;
            }
            let view = views.entry(event.token.clone()).or_default();
            match event.kind.as_str() {
                "taken" => {
                    view.open = true;
                    view.ever_taken = true;
                    view.taken_ms = view.taken_ms.or(event.at_ms);
                    view.ttl_ms = event.ttl_ms.or(view.ttl_ms);
                    view.holder = event.who.clone().or(view.holder.take());
                }
                "undone" => view.open = false,
                _ => {
                    if let Some(end) = event.end() {
                        view.open = false;
                        if matches!(end, TurnEnd::Superseded { .. } | TurnEnd::Left(_)) {
                            view.holder = view.holder.take().or(event.who.clone());
                        }
                        let better = view.end.as_ref().is_none_or(|(e, _)| end.rank() > e.rank());
                        if better {
                            view.end = Some((end, event.at_ms));
                        }
                    }
                }
            }
        }
        for (token, view) in views {
            let entry = turns.entry(token.clone()).or_insert_with(|| {
                let turn = Turn {
                    token,
                    holder: None,
                    started_ms: None,
                    ended_ms: None,
                    end: TurnEnd::Expired,
                    ttl_ms: None,
                    masters: 0,
                };
                (turn, 0, false)
            });
            let (turn, open_somewhere, ended_somewhere) =
                (&mut entry.0, &mut entry.1, &mut entry.2);
            if view.ever_taken {
                turn.masters += 1;
            }
            turn.started_ms = match (turn.started_ms, view.taken_ms) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            turn.ttl_ms = turn.ttl_ms.or(view.ttl_ms);
            turn.holder = turn.holder.take().or(view.holder);
            if view.open {
                *open_somewhere += 1;
            }
            if let Some((end, at)) = view.end {
                if !*ended_somewhere || end.rank() > turn.end.rank() {
                    turn.end = end;
                    turn.ended_ms = at;
                }
                *ended_somewhere = true;
            }
        }
    }
    let holding = |token: &str| {
        masters
            .iter()
            .filter(|m| m.current.as_deref() == Some(token))
            .count()
            >= quorum
    };
    let mut merged: Vec<Turn> = turns
        .into_values()
        .filter_map(|(mut turn, open, ended)| {
            if ended {
                return Some(turn);
            }
            // Undone wherever it was taken: an attempt that did not win.
            if open == 0 {
                return None;
            }
            turn.end = if holding(&turn.token) {
                TurnEnd::Holding
            } else {
                TurnEnd::Expired
            };
            Some(turn)
        })
        .collect();
    merged.sort_by(|a, b| b.when().cmp(&a.when()).then(a.token.cmp(&b.token)));
    merged
}

/// What `history` read: the turns, newest first, and each master with why it did not answer
/// (`None`: it answered).
#[derive(Clone, Debug)]
pub struct KeyHistory {
    pub turns: Vec<Turn>,
    pub masters: Vec<(Master, Option<NodeError>)>,
    /// Whether there are older turns than those shown: more than the limit were read, or some
    /// master's history holds more than was read.
    pub more: bool,
}

impl KeyHistory {
    /// How many masters answered.
    pub fn answered(&self) -> usize {
        self.masters.iter().filter(|(_, e)| e.is_none()).count()
    }
}

/// Reads `key`'s history on every master, a page at a time, until `limit` turns' events are
/// in or the history ends, and merges it (see the header).
pub(in crate::lock) async fn read_history(
    masters: &Masters,
    key: &str,
    limit: usize,
    node_timeout: Duration,
) -> KeyHistory {
    let names = Names::of(key);
    let layout = names.keys(key);
    let want = limit.saturating_mul(2).saturating_add(history::PAGE);
    let want = want.min(history::MAX_CAP as usize);
    let n = masters.nodes.len();
    let mut events: Vec<Vec<Vec<u8>>> = vec![Vec::new(); n];
    let mut current: Vec<Option<String>> = vec![None; n];
    let mut errors: Vec<Option<NodeError>> = vec![None; n];
    let mut done = vec![false; n];
    let mut more = false;
    let mut first = 0usize;
    while first < want && done.iter().any(|d| !d) {
        let count = history::PAGE.min(want - first);
        let args = HistoryPage {
            first: first.to_string(),
            count: count.to_string(),
        };
        let answers = masters
            .read_everywhere("history", key, &HISTORY, &layout, &args, node_timeout)
            .await;
        for (i, (_, answer)) in answers.into_iter().enumerate() {
            if done[i] {
                continue;
            }
            match answer.and_then(|reply| history::page(&reply)) {
                Ok(Page {
                    entries,
                    current: now,
                    length,
                    ..
                }) => {
                    if first == 0 {
                        current[i] = now;
                    }
                    let read = entries.len();
                    events[i].extend(entries);
                    if read < count || first + read >= length {
                        done[i] = true;
                    } else if first + read >= want {
                        more = true;
                    }
                }
                Err(error) => {
                    errors[i] = Some(error);
                    done[i] = true;
                }
            }
        }
        first += count;
    }
    let answered: Vec<MasterHistory> = (0..n)
        .filter(|i| errors[*i].is_none())
        .map(|i| MasterHistory {
            events: std::mem::take(&mut events[i]),
            current: current[i].take(),
        })
        .collect();
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut turns = merge(&answered, masters.quorum(), now_ms);
    more |= turns.len() > limit;
    turns.truncate(limit);
    KeyHistory {
        turns,
        masters: masters
            .nodes
            .iter()
            .zip(errors)
            .map(|(node, error)| (node.master.clone(), error))
            .collect(),
        more,
    }
}

#[cfg(test)]
mod tests;
