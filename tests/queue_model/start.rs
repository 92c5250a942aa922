//! Where runs start.

use super::client::{Client, Own, Phase};
use super::master::{Answer, Master, Place, Token};
use super::protocol::{Kind, Rules, Sleep};
use super::system::State;
use crate::model_kit::MASTERS;

#[derive(Clone, Copy, Debug)]
pub enum Start {
    /// Nothing stored anywhere; `newcomers` clients, each wanting the lock once.
    Empty { newcomers: usize },
    /// A hand-off about to happen: client 0 holds the lock on every master (taken by
    /// ACQUIRE; for slots, clients 0..L each hold a slot everywhere); then `waiters` clients
    /// placed on every master in that order, asleep (the first on its backoff, the others on
    /// their heartbeat) and subscribed on any of the sets `listen_on` may draw; then
    /// `joining` clients refused by every master, each with its ticket, about to subscribe and
    /// place themselves; then `newcomers` that have not arrived yet.
    /// Reachable from `Empty`: the holder arrives alone, then each other in turn, each round
    /// answered by every master before the next arrives.
    HandOff {
        waiters: usize,
        joining: usize,
        newcomers: usize,
    },
    /// What a lost undo leaves (issue 47, item 4; the lock only): client 0 holds the lock on
    /// masters 0 and 1 (master 2 was not heard before its round won); on master 2, K holds
    /// the marker of an earlier force naming client 1, whose turn took K there for a moment
    /// and whose undo never arrived (a connection broken under it). Client 1 is placed on
    /// every master, first, asleep on its backoff, subscribed on any set `listen_on` may draw.
    /// Reachable from `Empty` only with a request lost from a live client, a fault the model
    /// does not otherwise explore: the run starts after it.
    StaleMarker,
}

/// The states a run may start in (one per choice of subscriptions).
pub fn states(start: Start, rules: Rules) -> Vec<State> {
    let (waiters, joining, newcomers) = match start {
        Start::Empty { newcomers } => {
            return vec![State {
                masters: Default::default(),
                clients: vec![Client::new(Own::default()); newcomers],
                timers: 0,
            }];
        }
        Start::HandOff {
            waiters,
            joining,
            newcomers,
        } => (waiters as Token, joining as Token, newcomers),
        Start::StaleMarker => return stale_marker(rules),
    };
    let holder = Client {
        phase: Phase::Holding,
        arrived: true,
        served: true,
        // Taken by ACQUIRE on every master.
        won_with: won_with(rules, [true; MASTERS]),
        ..Client::new(Own::default())
    };
    let holders = rules.kind.limit() as Token;
    let holding = (1 << holders) - 1;
    let mut master = Master {
        lock: (rules.kind == Kind::Lock).then_some(0),
        slots: if rules.kind == Kind::Lock { 0 } else { holding },
        counter: waiters + joining,
        ..Master::default()
    };
    for ticket in 1..=waiters {
        master.queue.insert(Place {
            ticket,
            token: holders + ticket - 1,
        });
    }
    let mut states = vec![State {
        masters: [master; MASTERS],
        clients: vec![holder; holders as usize],
        timers: 0,
    }];
    for ticket in 1..=waiters + joining {
        let token = holders + ticket - 1;
        let waiter = Client {
            ticket,
            arrived: true,
            // Those placed before it arrived were placed everywhere.
            behind: ((1 << token.min(holders + waiters)) - 1) & !holding,
            phase: if ticket > waiters {
                Phase::Joining
            } else if ticket == 1 {
                Phase::Sleeping(Sleep::Backoff)
            } else {
                Phase::Sleeping(Sleep::Heartbeat)
            },
            ..Client::new(Own::default())
        };
        if ticket > waiters {
            for state in &mut states {
                state.clients.push(waiter);
            }
            continue;
        }
        let mut grown = Vec::new();
        for state in &states {
            for &listening in rules.listen_sets() {
                let mut state = state.clone();
                state.clients.push(Client {
                    listening,
                    ..waiter
                });
                grown.push(state);
            }
        }
        states = grown;
    }
    for state in &mut states {
        state
            .clients
            .extend((0..newcomers).map(|_| Client::new(Own::default())));
    }
    states
}

/// The answers a holder of the start won with, where the rules keep them (`Rules::keeps_grants`):
/// taken on the masters `taken`, not heard from the others.
fn won_with(rules: Rules, taken: [bool; MASTERS]) -> [Option<Answer>; MASTERS] {
    taken.map(|taken| (rules.keeps_grants && taken).then_some(Answer::Taken))
}

/// `Start::StaleMarker`'s states (one per subscription of the waiter).
fn stale_marker(rules: Rules) -> Vec<State> {
    assert_eq!(rules.kind, Kind::Lock, "a stale marker is the lock's");
    let holder = Client {
        phase: Phase::Holding,
        arrived: true,
        served: true,
        won_with: won_with(rules, [true, true, false]),
        ..Client::new(Own::default())
    };
    let mut held = Master {
        lock: Some(0),
        counter: 1,
        ..Master::default()
    };
    held.queue.insert(Place {
        ticket: 1,
        token: 1,
    });
    let marked = Master {
        lock: None,
        revoked: Some(1),
        stale: true,
        ..held
    };
    let waiter = Client {
        ticket: 1,
        arrived: true,
        phase: Phase::Sleeping(Sleep::Backoff),
        ..Client::new(Own::default())
    };
    // A loop, not a closure: rustc 1.95's borrow checker stumbles (an internal error) on a
    // closure that moves these clients' const-sized arrays.
    let mut states = Vec::new();
    for &listening in rules.listen_sets() {
        let mut waiter = waiter;
        waiter.listening = listening;
        states.push(State {
            masters: [held, held, marked],
            clients: vec![holder, waiter],
            timers: 0,
        });
    }
    states
}
