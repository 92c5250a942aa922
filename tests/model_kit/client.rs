//! A client as a state machine, one round at a time, as `take::take` (the one wait loop,
//! behind `Redlock::acquire`) and `queue::wait_in_line` (src/lock/kinds/take.rs,
//! src/lock/kinds/queue.rs) go: what every model's clients have (where each is, its
//! connections, its subscriptions, the ghosts the properties read), with a model's own fields in `own` and its requests, answers and ways to
//! sleep as type parameters. How a client decides on its answers is each model's.

use super::wire::{Wire, stop_awaiting, write_all};
use super::{MASTERS, TICKETS};

/// Where a client is; `S` says how it sleeps between turns.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase<S> {
    /// Not yet arrived.
    Start,
    /// Its ACQUIRE round runs (`Until::WonOrAllAnswered`; the foreign client's SET NX round).
    Acquiring,
    /// Refused with a ticket: it subscribes to its wake channel next, then places itself.
    Joining,
    /// Its SUBSCRIBE requests, written on the connections it keeps for its requests (RESP3:
    /// tests/queue_model/kept.rs), wait for their confirmations; then its join turn.
    Subscribing,
    /// Refused without tickets enough to join the queue (the foreign client: refused): it
    /// backs off and arrives again.
    Outside,
    /// Its WAIT round runs (`Until::WonOrAllAnswered`).
    Turn,
    /// Between turns: until a notice is read or the sleep ends.
    Sleeping(S),
    /// Holds the lock (a slot, a share of K), within its validity.
    Holding,
    /// Holds, and renews: an EXTEND round runs.
    Renewing,
    /// Released; gone.
    Done,
    /// Gave up or was interrupted while waiting, and left the queue.
    Left,
    /// Died; what it had written to its connections still arrives.
    Crashed,
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct Client<R, A, S, X> {
    pub phase: Phase<S>,
    pub ticket: u8,
    /// The current round's answers, by master.
    pub answers: [Option<A>; MASTERS],
    /// Per master, the requests written to that connection and not yet run, oldest first.
    pub sent: [Wire<R>; MASTERS],
    /// The masters (a bit each) it is subscribed to its wake channel on.
    pub listening: u8,
    /// A notice published to it is unread (the coalesced flag `Notices::next` clears; one
    /// still on the wire counts: how long it travels is how long the waiter takes to read it).
    pub noticed: bool,
    /// The masters (a bit each) whose notices are among those unread, kept only where a
    /// connection may break (`Bounds::breaks`): a break loses what was unread from there
    /// alone. Elsewhere 0, so that runs that never read it have no more states.
    pub unread_from: u8,
    /// Ghost: its first ACQUIRE has run somewhere.
    pub arrived: bool,
    /// Ghost: the clients (a bit each) that had a live place on a majority when it arrived.
    pub behind: u8,
    /// Ghost: it has held.
    pub served: bool,
    /// Ghost: one of its connections broke while it waited in line (`Action::Break`): from
    /// then on it may rely on its heartbeat, by design.
    pub broken: bool,
    /// What the round that took its hold was answered, by master (`None`: not heard before
    /// it won): what the hold knows of where it holds (`Lock::granted_by`). Kept only where a
    /// model asks (`hold_keeping_answers`), so that runs that never read it have no more states.
    pub won_with: [Option<A>; MASTERS],
    /// What the model keeps of a client besides.
    pub own: X,
}

impl<R: Copy, A: Copy, S: Copy, X> Client<R, A, S, X> {
    pub fn new(own: X) -> Self {
        Client {
            phase: Phase::Start,
            ticket: 0,
            answers: [None; MASTERS],
            sent: Default::default(),
            listening: 0,
            noticed: false,
            unread_from: 0,
            arrived: false,
            behind: 0,
            served: false,
            broken: false,
            won_with: [None; MASTERS],
            own,
        }
    }

    pub fn holds(&self) -> bool {
        matches!(self.phase, Phase::Holding | Phase::Renewing)
    }

    pub fn is_alive(&self) -> bool {
        !matches!(self.phase, Phase::Done | Phase::Left | Phase::Crashed)
    }

    /// Starts a round: `request` on every master's connection, answers awaited.
    pub fn round(&mut self, request: R, phase: Phase<S>) {
        self.answers = [None; MASTERS];
        write_all(&mut self.sent, request, true);
        self.phase = phase;
    }

    /// Writes `request` to every master without waiting for answers (a release, an undo or
    /// LEAVE: `Until::DecidedAndSent`; what it answers changes nothing the models track).
    pub fn send(&mut self, request: R) {
        write_all(&mut self.sent, request, false);
    }

    /// The round is decided (or abandoned): later answers are not listened to.
    pub fn stop_listening(&mut self) {
        stop_awaiting(&mut self.sent);
    }

    /// Drops its subscriptions (`Notices` dropped at the end of `wait_in_line`, or death).
    pub fn unsubscribe(&mut self) {
        self.listening = 0;
        self.noticed = false;
        self.unread_from = 0;
    }

    /// Its newcomer round lost: each refusal drew a ticket, and with tickets from
    /// N - majority + 1 masters it joins the queue with the highest, else it backs off outside.
    pub fn join_or_back_off(&mut self, tickets: impl Iterator<Item = u8> + Clone) {
        self.phase = if tickets.clone().count() >= TICKETS {
            self.ticket = tickets.max().expect("tickets");
            Phase::Joining
        } else {
            Phase::Outside
        };
    }

    /// Its round won: it holds.
    pub fn hold(&mut self) {
        self.stop_listening();
        self.served = true;
        self.phase = Phase::Holding;
    }

    /// Its round won, and the hold remembers the answers it won with (`won_with`).
    pub fn hold_keeping_answers(&mut self) {
        self.won_with = self.answers;
        self.hold();
    }
}
