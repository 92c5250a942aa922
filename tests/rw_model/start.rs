//! Where runs start.

use super::client::{self, Client, Phase, Timer};
use super::master::{Key, Master, Place, Token};
use super::protocol::{LISTEN_SETS, Mode};
use super::system::State;
use crate::model_kit::MASTERS;

/// A state reachable from the empty one (each client arriving in turn, each round answered by
/// every master before the next client arrives), chosen so that a hand-off is about to happen.
/// Clients are numbered in the order listed: holders, waiters, joining, newcomers.
#[derive(Clone, Copy, Debug)]
pub struct Start {
    /// Hold K on every master: one writer (ours or foreign), or readers.
    pub holding: &'static [Mode],
    /// Placed on every master in this order, asleep, each subscribed on any of the sets
    /// `listen_on` may draw.
    pub waiting: &'static [Mode],
    /// Refused by every master, each with its ticket, about to subscribe and place themselves.
    pub joining: &'static [Mode],
    /// Not arrived yet.
    pub newcomers: &'static [Mode],
}

impl Start {
    /// Nothing stored anywhere; `newcomers` to come.
    pub const fn empty(newcomers: &'static [Mode]) -> Start {
        Start {
            holding: &[],
            waiting: &[],
            joining: &[],
            newcomers,
        }
    }

    /// Whether two readers of this start may ever hold together: a run of readers in the line
    /// (holders first, then the queue), two readers to come, or one to come behind the last
    /// one in line (a later reader never passes a writer that waits).
    pub fn readers_may_share(&self) -> bool {
        let line = [self.holding, self.waiting, self.joining];
        let line: Vec<Mode> = line.into_iter().flatten().copied().collect();
        let run = line.split(|&m| m != Mode::Reader).map(<[Mode]>::len).max();
        let coming = self
            .newcomers
            .iter()
            .filter(|&&m| m == Mode::Reader)
            .count();
        let last = line.last().map_or(0, |&m| usize::from(m == Mode::Reader));
        run.unwrap_or(0) >= 2 || coming >= 2 || (coming == 1 && last == 1)
    }

    /// Whether two readers of this start that are in line (waiting or joining) may hold
    /// together: two of them one after the other.
    pub fn line_may_share(&self) -> bool {
        let line = [self.waiting, self.joining];
        let line: Vec<Mode> = line.into_iter().flatten().copied().collect();
        line.windows(2)
            .any(|pair| pair == [Mode::Reader, Mode::Reader])
    }

    pub fn clients(&self) -> impl Iterator<Item = Mode> + '_ {
        let all = [self.holding, self.waiting, self.joining, self.newcomers];
        all.into_iter().flatten().copied()
    }
}

/// The states a run may start in (one per choice of subscriptions).
pub fn states(start: Start) -> Vec<State> {
    let mut master = Master::default();
    let mut clients = Vec::new();
    for &mode in start.holding {
        let token = clients.len() as Token;
        match mode {
            Mode::Reader => {
                master.readers |= 1 << token;
                master.key = Key::Marker;
            }
            Mode::Writer => master.key = Key::Writer(token),
            Mode::Foreign => master.key = Key::Foreign,
            Mode::Forcer => unreachable!("a forcer never holds"),
        }
        clients.push(Client {
            phase: Phase::Holding,
            arrived: true,
            served: true,
            ..client::new(mode)
        });
    }
    let mut waited = 0u8;
    for (n, &mode) in start.waiting.iter().chain(start.joining).enumerate() {
        let token = clients.len() as Token;
        let ticket = n as u8 + 1;
        let joining = n >= start.waiting.len();
        if !joining {
            master.queue.insert(Place {
                ticket,
                token,
                reader: mode == Mode::Reader,
            });
        }
        let mut waiter = Client {
            phase: if joining {
                Phase::Joining
            } else {
                Phase::Sleeping(Timer)
            },
            ticket,
            arrived: true,
            // Those placed before it arrived were placed everywhere.
            behind: waited,
            ..client::new(mode)
        };
        waiter.own.queued = !joining;
        clients.push(waiter);
        if !joining {
            waited |= 1 << token;
        }
    }
    master.counter = (start.waiting.len() + start.joining.len()) as u8;
    clients.extend(start.newcomers.iter().map(|&mode| client::new(mode)));
    let mut states = vec![State {
        masters: [master; MASTERS],
        clients,
        timers: 0,
    }];
    let first_waiter = start.holding.len();
    for token in first_waiter..first_waiter + start.waiting.len() {
        states = states
            .into_iter()
            .flat_map(|state| {
                LISTEN_SETS.map(|listening| {
                    let mut state = state.clone();
                    state.clients[token].listening = listening;
                    state
                })
            })
            .collect();
    }
    states
}
