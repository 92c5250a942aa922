//! Who holds a lock, judged from every master's state: a pure function, like the quorum.

use std::collections::HashMap;
use std::time::Duration;

use super::outcome::{Inspection, MasterState};
use super::tally::majority;
use crate::lock::scripts::holder::Holder;

/// The lock's state across all masters.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// A majority holds the same token.
    Held {
        token: String,
        /// The holder record, if the holder left one.
        holder: Option<Holder>,
        /// The shortest remaining TTL among the majority that holds it: after that, fewer than
        /// a majority may still have it.
        expires_in: Option<Duration>,
        /// How many masters hold this token.
        masters: usize,
    },
    /// A majority has no key: the lock can be taken.
    Free,
    /// Every master answered, and neither one token nor "free" has a majority (partial holds,
    /// for example while contenders race or just after a master restarted).
    Split,
    /// Too many masters are unreachable to tell.
    Unknown,
}

/// Judges the states of all masters.
pub fn judge(states: &[MasterState]) -> Verdict {
    let needed = majority(states.len());
    let mut by_token: HashMap<&str, Vec<&MasterState>> = HashMap::new();
    let mut free = 0;
    let mut unreachable = 0;
    for state in states {
        match state {
            MasterState::Free => free += 1,
            MasterState::Unreachable(_) => unreachable += 1,
            MasterState::Held { token, .. } => by_token.entry(token).or_default().push(state),
        }
    }
    if let Some((token, holders)) = by_token.iter().find(|(_, h)| h.len() >= needed) {
        let mut holder = None;
        let mut expires_in: Option<Duration> = None;
        for state in holders {
            if let MasterState::Held {
                ttl,
                holder: record,
                ..
            } = state
            {
                holder = holder.or_else(|| record.clone());
                if let Some(ttl) = ttl {
                    expires_in = Some(expires_in.map_or(*ttl, |e| e.min(*ttl)));
                }
            }
        }
        return Verdict::Held {
            token: token.to_string(),
            holder,
            expires_in,
            masters: holders.len(),
        };
    }
    if free >= needed {
        return Verdict::Free;
    }
    let largest = by_token.values().map(Vec::len).max().unwrap_or(0);
    if largest + unreachable >= needed || free + unreachable >= needed {
        // The masters we could not hear from might tip it either way.
        Verdict::Unknown
    } else {
        Verdict::Split
    }
}

/// One waiter of the fair queue as the masters show it together.
#[derive(Clone, Debug, PartialEq)]
pub struct InLine {
    pub token: String,
    pub ticket: u64,
    /// Who it is, `since_ms` being when it started waiting (if it left a record).
    pub holder: Option<Holder>,
    /// On how many masters its place is live.
    pub masters: usize,
}

/// The fair queue across all masters: every waiter with a live place on some master (the
/// holder's own place left aside), in the order every master serves them (ticket, then token).
pub fn line(masters: &[Inspection]) -> Vec<InLine> {
    let mut by_token: HashMap<&str, InLine> = HashMap::new();
    for (master, waiter) in masters
        .iter()
        .flat_map(|m| m.queue.iter().map(move |w| (m, w)))
    {
        // A lapsed place, or the holder's own: a waiter keeps its place while it holds the
        // lock, until its release gives it up.
        let holds =
            matches!(&master.state, MasterState::Held { token, .. } if *token == waiter.token);
        if waiter.lapses_in.is_none() || holds {
            continue;
        }
        let entry = by_token
            .entry(waiter.token.as_str())
            .or_insert_with(|| InLine {
                token: waiter.token.clone(),
                ticket: waiter.ticket,
                holder: None,
                masters: 0,
            });
        entry.masters += 1;
        entry.ticket = entry.ticket.max(waiter.ticket);
        if entry.holder.is_none() {
            entry.holder = waiter.holder.clone();
        }
    }
    let mut line: Vec<InLine> = by_token.into_values().collect();
    line.sort_by(|a, b| (a.ticket, &a.token).cmp(&(b.ticket, &b.token)));
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::wire::node::NodeError;

    fn held(token: &str, ttl_ms: u64) -> MasterState {
        MasterState::Held {
            token: token.into(),
            ttl: Some(Duration::from_millis(ttl_ms)),
            holder: None,
        }
    }

    fn down() -> MasterState {
        MasterState::Unreachable(NodeError::Timeout)
    }

    #[test]
    fn a_majority_with_one_token_holds_it_until_the_shortest_ttl() {
        let verdict = judge(&[held("a", 900), held("a", 1000), down()]);
        assert_eq!(
            verdict,
            Verdict::Held {
                token: "a".into(),
                holder: None,
                expires_in: Some(Duration::from_millis(900)),
                masters: 2
            }
        );
    }

    #[test]
    fn free_split_and_unknown() {
        use MasterState::Free;
        assert_eq!(judge(&[Free, Free, held("a", 5)]), Verdict::Free);
        assert_eq!(judge(&[Free, held("b", 5), held("a", 5)]), Verdict::Split);
        assert_eq!(judge(&[Free, held("a", 5), down()]), Verdict::Unknown);
        assert_eq!(judge(&[down(), down(), Free]), Verdict::Unknown);
        assert_eq!(
            judge(&[Free, held("a", 5), held("a", 5), Free]),
            Verdict::Split
        );
        assert_eq!(judge(&[Free]), Verdict::Free);
        assert_eq!(judge(&[down()]), Verdict::Unknown);
    }

    #[test]
    fn the_line_is_in_ticket_order_without_lapsed_places() {
        use crate::lock::scripts::replies::QueuedWaiter;
        use crate::lock::wire::master::Master;
        let waiter = |token: &str, ticket: u64, live: bool| QueuedWaiter {
            token: token.into(),
            ticket,
            lapses_in: live.then_some(Duration::from_secs(2)),
            holder: None,
        };
        let master = |queue: Vec<QueuedWaiter>| Inspection {
            master: Master::parse("redis://127.0.0.1:1").unwrap(),
            state: MasterState::Free,
            fence: None,
            fence_problem: None,
            waiting: queue.len(),
            queue,
            order: None,
            policy: None,
            revocation: None,
        };
        let masters = [
            master(vec![waiter("b", 7, true), waiter("dead", 8, false)]),
            master(vec![
                waiter("c", 7, true),
                waiter("b", 7, true),
                waiter("a", 9, true),
            ]),
            master(vec![]),
        ];
        let line = line(&masters);
        let order: Vec<(&str, usize)> =
            line.iter().map(|w| (w.token.as_str(), w.masters)).collect();
        // Equal tickets are served by token, as Redis orders equal scores.
        assert_eq!(order, [("b", 2), ("c", 1), ("a", 1)]);
    }
}
