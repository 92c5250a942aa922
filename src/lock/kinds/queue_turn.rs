//! One turn of a waiter in the fair queue (see `queue`): WAIT (or a slot's WAIT_SLOT) on every
//! master at once, and what the answers say: the lock taken, or where the waiter stands.

use std::time::{Duration, Instant};

use super::held::{Kind, Lock};
use super::waiter::{Waiter, keep, lease};
use super::wakeup::Wakeup;
use crate::lock::quorum::outcome::{AttemptFailure, Conflict};
use crate::lock::quorum::round::{Masters, Until};
use crate::lock::quorum::tally::Decision;
use crate::lock::quorum::tally::Loss;
use crate::lock::scripts::holder::Holder;
use crate::lock::scripts::queue::{Turn, WAIT, turn, wait_vote};
use crate::lock::scripts::shared::READ_WAIT;
use crate::lock::wire::lua::Lua;
use crate::lock::wire::node::NodeError;
use crate::lock::wire::resp::Reply;

/// What one turn found.
pub(in crate::lock) struct Polled {
    pub outcome: Result<Lock, AttemptFailure>,
    /// Some master gave us the lock although the turn failed: undo it.
    pub partial: bool,
    /// Masters that have our place (or gave us the lock).
    pub placed: usize,
    /// Of those, the masters where this very turn made the place (it had lapsed there).
    pub remade: usize,
    /// Masters that answered that they have no place for us.
    pub placeless: usize,
    /// Some master names us first (for a slot: in a position the free slots leave room for).
    pub first: bool,
    /// A master found the key in use otherwise (a slot's turn only).
    pub conflict: Option<Conflict>,
    /// Some master refused because the lock is held by a token without a holder record: a
    /// client outside the queue, whose release announces nothing (see `wakeup`).
    pub outsider: bool,
}

/// The arguments of a waiter's WAIT, built once.
pub(in crate::lock) struct Turns<'a> {
    pub waiter: &'a Waiter<'a>,
    pub ttl_ms: Vec<u8>,
    pub record: String,
    pub ticket: String,
    pub waiting_record: String,
    pub lease_ms: String,
    pub keep_ms: String,
}

impl<'a> Turns<'a> {
    pub(in crate::lock) fn new(waiter: &'a Waiter<'a>) -> Turns<'a> {
        let record = waiter
            .holder
            .map(|h| h.record(&waiter.token))
            .unwrap_or_default();
        // The same record, dated from when the wait began.
        let waiting_record = waiter
            .holder
            .map(|h| {
                Holder {
                    since_ms: crate::lock::scripts::holder::unix_millis(
                        std::time::SystemTime::now(),
                    ),
                    ..h.clone()
                }
                .record(&waiter.token)
            })
            .unwrap_or_default();
        Turns {
            waiter,
            ttl_ms: waiter.timing.ttl_ms(),
            record,
            ticket: waiter.ticket.to_string(),
            waiting_record,
            lease_ms: lease(&waiter.timing).as_millis().to_string(),
            keep_ms: keep(&waiter.timing).as_millis().to_string(),
        }
    }

    /// One turn on every master; `cause`: what started it (see `wakeup`).
    pub(in crate::lock) async fn take(
        &self,
        masters: &Masters,
        join: bool,
        cause: Wakeup,
    ) -> Polled {
        let waiter = self.waiter;
        if let Kind::Slot { limit } = waiter.kind {
            return self.take_slot(masters, join, limit, cause).await;
        }
        let names = waiter.names;
        let lock_keys = names.lock_keys(waiter.key);
        let reader_keys = names.reader_keys(waiter.key);
        // A reader's turn is the lock's, with its own rule for who may enter (see `shared`).
        let (script, keys): (&Lua, &[&str]) = match waiter.kind {
            Kind::Reader => (&READ_WAIT, &reader_keys),
            _ => (&WAIT, &lock_keys),
        };
        let args: [&[u8]; 8] = [
            waiter.token.as_bytes(),
            &self.ttl_ms,
            self.record.as_bytes(),
            self.ticket.as_bytes(),
            self.waiting_record.as_bytes(),
            self.lease_ms.as_bytes(),
            self.keep_ms.as_bytes(),
            if join { b"1" } else { b"" },
        ];
        let request = (script, keys, &args[..]);
        self.turn(masters, (masters.quorum(), 1), request, turn, cause)
            .await
    }

    /// One turn (`request`: the script, keys and arguments of WAIT or a slot's WAIT_SLOT, each
    /// answer read by `decode`), decided by `quorum`; a waiter whose position is below `room`
    /// somewhere may take it at its next turn (1 for the lock; L for a slot). `cause` is what
    /// started it, said when it takes the lock.
    pub(in crate::lock) async fn turn(
        &self,
        masters: &Masters,
        (quorum, room): (usize, usize),
        (script, keys, args): (&Lua, &[&str], &[&[u8]]),
        decode: fn(&Result<Reply, NodeError>) -> Option<Turn>,
        cause: Wakeup,
    ) -> Polled {
        let waiter = self.waiter;
        let start = Instant::now();
        let round = masters
            .round_with(
                quorum,
                start + waiter.timing.node_timeout,
                // Not `Decided`: a turn that fails must hear every master, or undo what one it
                // did not hear from may have given it (no partial holds). A lost turn is not
                // urgent; a won one still returns at quorum.
                Until::WonOrAllAnswered,
                wait_vote,
                |node| node.eval(script, keys, args),
            )
            .await;
        let elapsed = start.elapsed();
        masters.trace("turn", waiter.key, &round, elapsed);
        let mut polled = Polled {
            outcome: Err(AttemptFailure::TooSlow { elapsed }),
            // Anything but a refusal from every master may have left the key with us.
            partial: round.tally.no() < masters.nodes.len(),
            placed: 0,
            placeless: 0,
            remade: 0,
            first: false,
            conflict: None,
            outsider: false,
        };
        let mut held = Held::default();
        for answer in round.answers.iter().flatten() {
            match decode(answer) {
                Some(Turn::Taken) => polled.placed += 1,
                Some(Turn::NoPlace) => polled.placeless += 1,
                Some(Turn::Conflict(conflict)) => polled.conflict = Some(conflict),
                Some(Turn::Waiting(place)) => {
                    polled.placed += 1;
                    polled.remade += usize::from(!place.placed_before);
                    polled.first |= place.position < room;
                    held.place = held.place.max(place.position + 1);
                    held.waiters = held.waiters.max(place.waiters);
                    held.free &= place.refusal.free;
                    held.shared |= place.refusal.shared;
                    // Readers announce their releases like holders of the lock: not outsiders.
                    polled.outsider |= waiter.kind.limit().is_none()
                        && !place.refusal.free
                        && !place.refusal.shared
                        && place.refusal.holder.is_none();
                    held.holder = held.holder.take().or(place.refusal.holder);
                    if let Some(ttl) = place.refusal.expires_in {
                        held.expires_in = Some(held.expires_in.map_or(ttl, |t| t.max(ttl)));
                    }
                }
                None => {}
            }
        }
        polled.outcome = match round.tally.decision() {
            Decision::Won if elapsed + waiter.timing.drift() < waiter.timing.ttl => {
                log::info!(
                    event = "acquired", key = waiter.key, outcome = "turn", cause = cause.label(),
                    elapsed_ms = elapsed.as_micros() as f64 / 1000.0,
                    confirmed = round.tally.yes(), masters = masters.nodes.len();
                    "acquired {:?} in turn (started by {cause}) in {elapsed:.1?}", waiter.key
                );
                polled.partial = false;
                let mut refusals = round.failures(masters);
                refusals.retain(|f| f.cause().is_configuration());
                Ok(Lock {
                    kind: waiter.kind,
                    key: waiter.key.to_string(),
                    token: waiter.token.clone(),
                    timing: waiter.timing,
                    validity_end: waiter.timing.validity_end(start),
                    refusals,
                    woken_by: None,
                })
            }
            Decision::Won => Err(AttemptFailure::TooSlow { elapsed }),
            Decision::Lost(Loss::Refused) => Err(match waiter.kind {
                Kind::Lock | Kind::Reader => AttemptFailure::Held {
                    holder: held.holder.map(Box::new),
                    expires_in: held.expires_in,
                    free: held.free,
                    shared: held.shared,
                    waiters: held.waiters,
                    place: (held.place > 0).then_some(held.place),
                },
                Kind::Slot { limit } => AttemptFailure::Full {
                    limit,
                    holders: Vec::new(),
                    frees_in: held.expires_in,
                    waiters: held.waiters,
                    place: (held.place > 0).then_some(held.place),
                },
            }),
            Decision::Lost(Loss::Unreachable) | Decision::Undecided => {
                Err(AttemptFailure::Unreachable {
                    needed: quorum,
                    failures: round.failures(masters),
                })
            }
        };
        polled
    }
}

/// What the masters that refused a turn said, merged.
struct Held {
    holder: Option<Holder>,
    expires_in: Option<Duration>,
    free: bool,
    shared: bool,
    waiters: usize,
    place: usize,
}

impl Default for Held {
    fn default() -> Held {
        Held {
            holder: None,
            expires_in: None,
            free: true,
            shared: false,
            waiters: 0,
            place: 0,
        }
    }
}
