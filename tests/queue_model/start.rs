//! Where runs start.

use crate::client::{Client, MASTERS, Phase};
use crate::master::{Master, Place, Token};
use crate::protocol::{Protocol, Sleep};
use crate::system::State;

#[derive(Clone, Copy, Debug)]
pub enum Start {
    /// Nothing stored anywhere; `newcomers` clients, each wanting the lock once.
    Empty { newcomers: usize },
    /// A hand-off about to happen: client 0 holds the lock on every master (taken by ACQUIRE);
    /// then `waiters` clients placed on every master in that order, asleep (the first on its
    /// backoff, the others on their heartbeat) and subscribed on any of the sets `listen_on`
    /// may draw; then `joining` clients refused by every master, each with its ticket, about
    /// to subscribe and place themselves; then `newcomers` that have not arrived yet.
    /// Reachable from `Empty`: the holder arrives alone, then each other in turn, each round
    /// answered by every master before the next arrives.
    HandOff {
        waiters: usize,
        joining: usize,
        newcomers: usize,
    },
}

/// The states a run may start in (one per choice of subscriptions).
pub fn states(start: Start, protocol: Protocol) -> Vec<State> {
    let (waiters, joining, newcomers) = match start {
        Start::Empty { newcomers } => {
            return vec![State {
                masters: Default::default(),
                clients: vec![Client::new(); newcomers],
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
        ..Client::new()
    };
    let mut master = Master {
        lock: Some(0),
        counter: waiters + joining,
        ..Master::default()
    };
    for token in 1..=waiters {
        master.queue.insert(Place {
            ticket: token,
            token,
        });
    }
    let mut states = vec![State {
        masters: [master; MASTERS],
        clients: vec![holder],
        timers: 0,
    }];
    for token in 1..=waiters + joining {
        let waiter = Client {
            ticket: token,
            arrived: true,
            // Those placed before it arrived were placed everywhere.
            behind: ((1 << token.min(waiters + 1)) - 1) & !1,
            phase: if token > waiters {
                Phase::Joining
            } else if token == 1 {
                Phase::Sleeping(Sleep::Backoff)
            } else {
                Phase::Sleeping(Sleep::Heartbeat)
            },
            ..Client::new()
        };
        if token > waiters {
            for state in &mut states {
                state.clients.push(waiter);
            }
            continue;
        }
        let mut grown = Vec::new();
        for state in &states {
            for &listening in protocol.listen_sets() {
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
        state.clients.extend((0..newcomers).map(|_| Client::new()));
    }
    states
}
