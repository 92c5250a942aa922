//! What a watcher says, as a pure function of what it said before and what it reads now: the
//! lines of `status --watch`, as typed [`Change`]s (the command words them).
//!
//! [`Reported`] is everything said so far: the state's class (free, held, split, unknown), the
//! holders named, and the masters said to be down. [`Reported::update`] compares one
//! [`Observation`] with it, returns the changes in the order they are said, and records them,
//! so that a state already said is never said again (see `watch`, "Never twice").
//!
//! A forced release (`release --force`) is one more way for a holder to go: while the key is
//! closed by a revocation record on a quorum, `key::state` judges it [`Seen::Revoked`] (the
//! record's marker is nobody's hold), and a holder gone into that state is said `Revoked`,
//! beside `Released` and `Expired`. When the key opens again, the next state is said as any
//! state after `Split` or `Unknown` is: a holder `Taken`, or `Current`.

use std::time::Instant;

use crate::lock::read::key::state::{HolderSeen, Seen};
use crate::lock::scripts::revoke::Revocation;
use crate::lock::wire::master::Master;
use crate::lock::wire::node::NodeError;

/// One read of the key on every master.
#[derive(Clone, Debug)]
pub struct Observation {
    pub seen: Seen,
    /// Every master, with why it did not answer (`None`: it answered).
    pub masters: Vec<(Master, Option<NodeError>)>,
    /// When the read started: a TTL read then runs out no earlier than this plus the TTL.
    pub at: Instant,
    /// When its last answer came (or the node timeout ended it): a master answered at some
    /// time between `at` and this.
    pub done: Instant,
}

/// One line of the watch.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// The state when the watch starts, and again when it is known after `Unknown` or `Split`
    /// without any holder having changed.
    Current,
    /// This holder now holds the key.
    Taken(HolderSeen),
    /// This holder no longer holds it, before its TTL ran out, or with a release announced.
    Released(HolderSeen),
    /// This holder no longer holds it, and its TTL had run out: it stopped renewing (killed,
    /// or cut off) and nobody released it.
    Expired(HolderSeen),
    /// This holder no longer holds it on a quorum, but some master still has it (the key is
    /// split): it lost its majority.
    Lost(HolderSeen),
    /// This holder was revoked by `release --force` (the record says who, when and why).
    Revoked(HolderSeen, Revocation),
    /// No quorum holds the key or is free (see [`Seen::Split`]).
    Split,
    /// Too many masters did not answer: who holds it cannot be told until they do.
    Unknown,
    /// This master (as shown: its URL, any password redacted) stopped answering; said once
    /// per outage.
    Down { master: String, error: NodeError },
    /// This master answers again.
    Up { master: String },
}

/// What the watch has said so far.
#[derive(Debug, Default)]
pub struct Reported {
    /// The class of the last state said (`None`: nothing said yet).
    class: Option<Class>,
    /// The holders named, each with the earliest its TTL can run out.
    holders: Vec<(HolderSeen, Option<Instant>)>,
    /// The masters said to be down, as shown.
    down: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Free,
    Held,
    Split,
    Unknown,
    Revoked,
}

impl Reported {
    /// The changes from what was said to `now`, in the order to say them, and records them.
    /// `announced`: a release notice arrived since the last read (so a holder that is gone
    /// was released, whatever its TTL said).
    pub fn update(&mut self, now: &Observation, announced: bool) -> Vec<Change> {
        let mut changes = Vec::new();
        let class = match &now.seen {
            Seen::Free => Class::Free,
            Seen::Held(_) => Class::Held,
            Seen::Split => Class::Split,
            Seen::Unknown => Class::Unknown,
            Seen::Revoked(_) => Class::Revoked,
        };
        match self.class {
            None => changes.push(Change::Current),
            // Who held it is not known: the holders said stay said until it is.
            Some(_) if class == Class::Unknown => {}
            Some(_) if class == Class::Split => {
                changes.extend(self.holders.drain(..).map(|(h, _)| Change::Lost(h)));
            }
            Some(before) => {
                let held = match &now.seen {
                    Seen::Held(holders) => holders.as_slice(),
                    _ => &[],
                };
                for (gone, runs_out) in &self.holders {
                    if held.iter().any(|h| h.token == gone.token) {
                        continue;
                    }
                    // Gone by its TTL only if a master could have answered after the earliest
                    // the TTL ran out; before that, only a release (or a DEL) removed it.
                    let ran_out = runs_out.is_some_and(|at| now.done >= at);
                    changes.push(if let Seen::Revoked(revocation) = &now.seen {
                        Change::Revoked(gone.clone(), revocation.clone())
                    } else if ran_out && !announced {
                        Change::Expired(gone.clone())
                    } else {
                        Change::Released(gone.clone())
                    });
                }
                for new in held {
                    if !self.holders.iter().any(|(h, _)| h.token == new.token) {
                        changes.push(Change::Taken(new.clone()));
                    }
                }
                // A state that says no holder by itself is said as it is: known again after
                // `Unknown` or `Split`, opened after a revocation, or revoked with no holder
                // seen before (taken and forced between two reads).
                let plain = class != before
                    && (matches!(before, Class::Unknown | Class::Split | Class::Revoked)
                        || class == Class::Revoked);
                if changes.is_empty() && plain {
                    changes.push(Change::Current);
                }
            }
        }
        if class != Class::Unknown {
            self.holders = match &now.seen {
                Seen::Held(holders) => holders
                    .iter()
                    .map(|h| (h.clone(), h.expires_in.map(|ttl| now.at + ttl)))
                    .collect(),
                _ => Vec::new(),
            };
        }
        if self.class.is_some() && self.class != Some(class) {
            match class {
                Class::Split => changes.push(Change::Split),
                Class::Unknown => changes.push(Change::Unknown),
                Class::Free | Class::Held | Class::Revoked => {}
            }
        }
        self.class = Some(class);
        self.masters(now, &mut changes);
        changes
    }

    /// The earliest time a holder named can run out: the watch reads then, so that an expiry
    /// (which publishes nothing) is seen when it happens.
    pub fn first_expiry(&self) -> Option<Instant> {
        self.holders.iter().filter_map(|(_, at)| *at).min()
    }

    /// Masters that went down or came back since the last read, each said once.
    fn masters(&mut self, now: &Observation, changes: &mut Vec<Change>) {
        for (master, error) in &now.masters {
            let master = master.to_string();
            let said = self.down.iter().position(|m| *m == master);
            match (error, said) {
                (Some(error), None) => {
                    self.down.push(master.clone());
                    changes.push(Change::Down {
                        master,
                        error: error.clone(),
                    });
                }
                (None, Some(at)) => {
                    self.down.remove(at);
                    changes.push(Change::Up { master });
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests;
