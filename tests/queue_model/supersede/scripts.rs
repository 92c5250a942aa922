//! What the masters run in the superseding line's model (see `supersede`): WAIT_SUPERSEDE,
//! as src/lock/scripts/supersede.rs writes it, the order it compares waiters by, and who
//! its changes wake.

use super::{Answer, Master, Rule, SupersedeModel, SupersedeState, notify};

impl SupersedeModel {
    pub(super) fn clients(&self) -> usize {
        self.waiters.len() + 1
    }

    /// Whether waiter `a` is newer than waiter `b`: (order, ticket, token).
    fn newer(&self, a: usize, b: usize) -> bool {
        let (oa, ta) = self.waiters[a - 1];
        let (ob, tb) = self.waiters[b - 1];
        (oa, ta, a) > (ob, tb, b)
    }

    pub(super) fn newest(&self) -> usize {
        (1..self.clients())
            .max_by(|&a, &b| {
                if self.newer(a, b) {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Less
                }
            })
            .unwrap()
    }

    /// The first place in line (smallest ticket, then token).
    fn first(&self, master: &Master) -> Option<usize> {
        master
            .line
            .iter()
            .copied()
            .min_by_key(|&c| (self.waiters[c - 1].1, c))
    }

    /// Who may take K there: the first place, when K is free or its own.
    fn eligible(&self, master: &Master) -> Option<usize> {
        let first = self.first(master)?;
        (master.k.is_none() || master.k == Some(first)).then_some(first)
    }

    /// Wakes whoever `change` lets in on `master` (never `caller`): `wake_newly`.
    pub(super) fn changing(
        &self,
        state: &mut SupersedeState,
        master: usize,
        caller: usize,
        change: impl FnOnce(&mut Master),
    ) {
        let before = self.eligible(&state.masters[master]);
        change(&mut state.masters[master]);
        let after = self.eligible(&state.masters[master]);
        if let Some(woken) = after
            && after != before
            && woken != caller
        {
            notify(state, woken);
        }
    }

    /// WAIT_SUPERSEDE of `caller` on `master`, in its turn number `turn`: with `join` in the
    /// first turn only (`Line::rejoins`), at every turn under `RejoinAfterFirstTurn`.
    pub(super) fn wait(
        &self,
        state: &mut SupersedeState,
        master: usize,
        caller: usize,
        turn: u8,
    ) -> Answer {
        let m = &state.masters[master];
        if self.rule != Rule::NoMarkCheck && m.marks.iter().any(|&(evicted, _)| evicted == caller) {
            return Answer::Superseded;
        }
        let others: Vec<usize> = m
            .line
            .iter()
            .copied()
            .filter(|&c| c != caller && Some(c) != m.k)
            .collect();
        let newest = others
            .iter()
            .copied()
            .filter(|&c| self.newer(c, caller))
            .reduce(|a, b| if self.newer(a, b) { a } else { b });
        let older: Vec<usize> = match self.rule {
            Rule::ArrivalOrder => {
                let mine = m.line.iter().position(|&c| c == caller);
                others
                    .iter()
                    .copied()
                    .filter(|&c| {
                        let theirs = m.line.iter().position(|&o| o == c);
                        mine.is_none() || theirs < mine
                    })
                    .collect()
            }
            _ => others
                .iter()
                .copied()
                .filter(|&c| !self.newer(c, caller))
                .collect(),
        };
        if let (Some(newest), false) = (newest, self.rule == Rule::ArrivalOrder) {
            self.mark(state, master, (caller, newest), true);
            self.changing(state, master, caller, |m| m.line.retain(|&c| c != caller));
            return Answer::Superseded;
        }
        for victim in older {
            self.mark(state, master, (victim, caller), false);
            self.changing(state, master, caller, |m| m.line.retain(|&c| c != victim));
            notify(state, victim);
        }
        // WAIT's body: without `join`, no place, no take.
        let join = turn == 0 || self.rule == Rule::RejoinAfterFirstTurn;
        let m = &mut state.masters[master];
        let remade = !m.line.contains(&caller);
        if remade {
            if !join {
                return Answer::NoPlace;
            }
            m.line.push(caller);
            // Only the arrival rule reads the order places were made in: sorted otherwise, so
            // that states differing only by it are one.
            if self.rule != Rule::ArrivalOrder {
                m.line.sort_unstable();
            }
        }
        let m = &state.masters[master];
        if self.first(m) == Some(caller) && (m.k.is_none() || m.k == Some(caller)) {
            state.masters[master].k = Some(caller);
            Answer::Taken
        } else if remade && turn > 0 {
            Answer::Remade
        } else {
            Answer::Waiting
        }
    }

    /// Marks `evicted` on `master`, by `by`: another waiter's eviction, or (`evicted` the
    /// caller) a waiter superseding itself, which may hold K there from a partial hold of its
    /// own (its undo is on the way): that is its own going, not a holder evicted.
    fn mark(
        &self,
        state: &mut SupersedeState,
        master: usize,
        (evicted, by): (usize, usize),
        itself: bool,
    ) {
        let m = &mut state.masters[master];
        state.evicted_holder |= m.k == Some(evicted) && !itself;
        state.evicted_newer |= self.newer(evicted, by);
        if !m.marks.iter().any(|&(e, _)| e == evicted) {
            m.marks.push((evicted, by));
            m.marks.sort_unstable();
        }
        state.ever_marked[master] |= 1 << evicted;
    }

    /// On how many masters a mark ever named `client`, whether or not it has expired since.
    pub(super) fn marked(state: &SupersedeState, client: usize) -> usize {
        state
            .ever_marked
            .iter()
            .filter(|&&marked| marked & (1 << client) != 0)
            .count()
    }

    /// On how many masters a mark names `client` now (not expired).
    pub(super) fn marked_now(state: &SupersedeState, client: usize) -> usize {
        state
            .masters
            .iter()
            .filter(|m| m.marks.iter().any(|&(e, _)| e == client))
            .count()
    }
}
