//! Where runs start.

use super::client::{Client, Own, Phase};
use super::master::{Master, Place, Token};
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
    };
    let holder = Client {
        phase: Phase::Holding,
        arrived: true,
        served: true,
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
