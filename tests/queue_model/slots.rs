//! A semaphore's slot scripts on one master (src/lock/scripts/slots.rs: ACQUIRE_SLOT,
//! WAIT_SLOT, RELEASE_SLOT, LEAVE_SLOT; today's and the fix's), over the same queue; with a
//! forcer, FORCE's `revoke_slots`, EXTEND_SLOT and RELEASE_SLOT's `acknowledge_slot`
//! (src/lock/scripts/slots/revoke.rs). Slots do not expire in the model but by a dead
//! holder's `Expire` (see the header), so `prune` is not needed; the limit key and the
//! records change no decision. A revoked slot is its own bit (`revoked_slots`), counted as
//! the renamed member is.

use super::master::{Answer, Master, Place, Ran, Request, Token, answered};
use super::protocol::{Force, Rules};

impl Master {
    pub(crate) fn run_slot(
        &mut self,
        from: Token,
        request: Request,
        rules: Rules,
        limit: usize,
    ) -> Ran {
        let fixed = rules.wakes_whoever_it_lets_in();
        let eligible = move |m: &Master| m.eligible_slots(limit);
        match request {
            Request::Acquire => self.acquire_slot(from, limit, fixed),
            Request::Wait { ticket } => self.wait_slot(from, ticket, limit),
            Request::Release { announce, reseat } if fixed => {
                self.letting_in(from, eligible, |m| {
                    m.release_slot_fixed(from, announce, reseat)
                })
            }
            Request::Leave if fixed => self.letting_in(from, eligible, |m| m.leave_fixed(from)),
            Request::Release { announce, .. } => self.release_slot_today(from, announce, limit),
            Request::Leave => self.leave_today(from),
            Request::Force => self.revoke_slots(rules.force),
            Request::Extend => self.extend_slot(from),
            Request::Subscribe => unreachable!("SUBSCRIBE runs in `Master::run`"),
        }
    }

    /// How many slots are taken here: every live member of the slots key, a revoked slot's
    /// renamed one included.
    pub fn slots_taken(&self) -> usize {
        (self.slots | self.revoked_slots).count_ones() as usize
    }

    /// FORCE on a slots key (`revoke_slots`): every live slot renamed, still counted; nothing
    /// freed. The known-bad rule frees them at once.
    fn revoke_slots(&mut self, force: Force) -> Ran {
        if force != Force::FreeAtOnce {
            self.revoked_slots |= self.slots;
        }
        self.slots = 0;
        answered(Answer::Forced)
    }

    /// EXTEND_SLOT: only the caller's own slot; its revoked one says so (`revoked_answer`).
    fn extend_slot(&self, from: Token) -> Ran {
        answered(Answer::Renewed {
            extended: self.slots & (1 << from) != 0,
            revoked: self.revoked_slots & (1 << from) != 0,
            stale: false,
        })
    }

    /// The fix's `eligible_slots` (a bit per token): the first L - slots live waiters.
    fn eligible_slots(&self, limit: usize) -> u8 {
        let room = limit.saturating_sub(self.slots_taken());
        let first = self.queue.iter().take(room);
        first.fold(0, |bits, place| bits | 1 << place.token)
    }

    fn take_slot(&mut self, from: Token) {
        self.slots |= 1 << from;
    }

    /// A newcomer takes a free slot only when the live waiters leave one for it.
    fn acquire_slot(&mut self, from: Token, limit: usize, fixed: bool) -> Ran {
        if self.slots & (1 << from) != 0 {
            return answered(Answer::Taken);
        }
        let waiting = self.queue.iter().count();
        if self.slots_taken() + waiting < limit {
            self.take_slot(from);
            if fixed {
                // Every answer draws the waiting newcomer a ticket, a slot given too.
                self.counter += 1;
                return answered(Answer::TakenWithTicket {
                    ticket: self.counter,
                });
            }
            return answered(Answer::Taken);
        }
        self.counter += 1;
        answered(Answer::Refused {
            ticket: self.counter,
        })
    }

    /// A waiter takes a slot when its position leaves room (slots taken + position < L), and
    /// gives up its place here when it does.
    fn wait_slot(&mut self, from: Token, ticket: u8, limit: usize) -> Ran {
        self.place(from, ticket);
        let taken = self.slots_taken();
        let position = self.position(from).expect("placed");
        if self.slots & (1 << from) != 0 || taken + position < limit {
            self.take_slot(from);
            self.drop_place(from);
            return answered(Answer::Taken);
        }
        answered(Answer::Waiting {
            // `place.position < room`, with room = L (`take_slot`).
            first: position < limit,
            held: taken > 0,
        })
    }

    /// The fix's RELEASE_SLOT (writes only; `letting_in` wakes): a waiter's undo puts back the
    /// place its turn gave up where it removes a slot.
    fn release_slot_fixed(&mut self, from: Token, announce: bool, reseat: Option<u8>) -> Ran {
        // `acknowledge_slot`: a revoked holder's release (or undo) frees its renamed slot.
        let removed = (self.slots | self.revoked_slots) & (1 << from) != 0;
        self.slots &= !(1 << from);
        self.revoked_slots &= !(1 << from);
        match reseat {
            _ if announce => self.drop_place(from),
            Some(ticket) if removed => self.queue.insert(Place {
                ticket,
                token: from,
            }),
            _ => {}
        }
        Ran {
            released: removed,
            ..Ran::default()
        }
    }

    /// Today's RELEASE_SLOT: a clean-up publishes nothing; a release publishes only where it
    /// removed a slot, to the first waiters the free slots leave room for.
    fn release_slot_today(&mut self, from: Token, announce: bool, limit: usize) -> Ran {
        let removed = self.slots & (1 << from) != 0;
        self.slots &= !(1 << from);
        let mut ran = Ran {
            released: removed,
            ..Ran::default()
        };
        if announce {
            self.drop_place(from);
            if removed {
                ran.woke = self.eligible_slots(limit);
            }
        }
        ran
    }
}
