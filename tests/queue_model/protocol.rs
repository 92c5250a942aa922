//! Where the protocol versions differ: today's (src/lock/queue.rs at the time of issue 23),
//! and the fix.

/// Which version of the protocol the model runs.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub enum Protocol {
    /// As on main when issue 23 was filed: RELEASE publishes only where it deleted the lock,
    /// to the first live waiter; LEAVE where the leaver was first and the lock is free.
    Today,
    /// The fix of /work/notes/23-fix.md (v1): every script that lets a waiter in on a master
    /// (RELEASE, its clean-up, LEAVE) publishes to it there; no quick retry after a woken turn.
    Fixed,
}

/// How a waiter sleeps between turns (`wait_in_line`'s `delay`).
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub enum Sleep {
    /// A prompt retry (today: 1-5 ms after a woken turn that found us first): part of the
    /// hand-off, not a timer the no-lost-wake-up property may rely on.
    Soon,
    /// The first waiter's jittered backoff (10-250 ms, or up to a heartbeat while a lock with
    /// a TTL is in the way): a timer.
    Backoff,
    /// A waiter that is not first renews its place once per heartbeat (1 s): a timer.
    Heartbeat,
}

impl Sleep {
    /// Whether its end is a timer firing (rather than a step of the hand-off).
    pub fn is_timer(self) -> bool {
        self != Sleep::Soon
    }
}

/// What a failed turn found, as far as choosing the next sleep goes.
#[derive(Clone, Copy, Debug)]
pub struct FailedTurn {
    /// Some master names the waiter first.
    pub first: bool,
    /// The sleep before this turn was ended by a notice.
    pub woken: bool,
}

impl Protocol {
    /// The sets of masters (a bit per master) a waiter may subscribe on; `listen_on` draws one.
    pub fn listen_sets(self) -> &'static [u8] {
        match self {
            // Today N - q + 1, the fix q: with 3 masters both are 2 of the 3, at random.
            Protocol::Today | Protocol::Fixed => &[0b011, 0b101, 0b110],
        }
    }

    /// The sleep after a failed turn.
    pub fn after_failed_turn(self, turn: FailedTurn) -> Sleep {
        match self {
            Protocol::Today => {
                if !turn.first {
                    Sleep::Heartbeat
                } else if turn.woken {
                    Sleep::Soon
                } else {
                    Sleep::Backoff
                }
            }
            // Not first: the heartbeat. First: some master has another's lock (every lock in
            // the model has a holder record), and the fix sleeps max(backoff, min(TTL,
            // heartbeat)) for it: a timer either way.
            Protocol::Fixed => {
                if turn.first {
                    Sleep::Backoff
                } else {
                    Sleep::Heartbeat
                }
            }
        }
    }
}

impl Protocol {
    /// Whether every script that lets a waiter in on a master publishes to it there (the
    /// fix's "notify newly eligible"), rather than RELEASE only where it deleted the lock and
    /// LEAVE only where the leaver was first.
    pub fn wakes_whoever_it_lets_in(self) -> bool {
        self == Protocol::Fixed
    }
}
