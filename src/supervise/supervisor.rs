//! The supervisor's deadlines, as one value: when to renew, when to stop the command, and how.
//!
//! The promise: **the command never runs past the lock's validity.** With V the end of the last
//! confirmed validity (measured from the start of the extension that gave it), margin the
//! `stop_margin` and grace the `kill_after`:
//!
//! | when                                  | what                                          |
//! |---------------------------------------|-----------------------------------------------|
//! | V − margin − grace ([`term_at`])      | SIGTERM (+SIGCONT) to the group, unless a     |
//! |                                       | renewal moved V first                         |
//! | V − margin ([`kill_at`])              | SIGKILL to the group; the guard process holds |
//! |                                       | the same deadline                             |
//! | lock reported lost at t               | SIGTERM now, SIGKILL at min(t + grace,        |
//! |                                       | V − margin)                                   |
//! | woken at or after V − margin with no  | redlock did not run in time: the guard has    |
//! | stop begun ([`overdue`])              | killed the group; the lock is lost            |
//!
//! [`term_at`]: Supervisor::term_at
//! [`kill_at`]: Supervisor::kill_at
//! [`overdue`]: Supervisor::overdue
//!
//! A SIGTERM at `term_at` says why: that no renewal was confirmed in time
//! ([`LossReason::Expired`]), or, when redlock itself woke up more than `stop_margin` past the
//! deadline it slept until ([`LossReason::Stalled`]: stopped with SIGSTOP or Ctrl-Z, a suspended
//! VM, a starved CPU), that it did not run: then no renewal may even have been tried, and
//! saying that no renewal reached the masters would send the user after healthy masters.
//!
//! So a stop of redlock loses the lock, with every master healthy, when it lasts past
//! `term_at`: renewed every TTL/3, the lock keeps a validity of at most TTL − drift from the
//! start of the last renewal, so a stop that begins just before a renewal was due loses it
//! once it lasts longer than about 2·TTL/3 − drift − margin − grace (1.1 s for TTL 3s with
//! the default grace), one that begins just after a renewal once it lasts longer than
//! TTL − drift − margin − grace. docs/run.md says the same to users.
//!
//! The systemd watchdog (with `WATCHDOG_USEC`, see `src/notify.rs`) is one more deadline of
//! this schedule: [`Action::Ping`] every `watchdog_every`, only while no stop has begun and the
//! last word of the renewal thread was a confirmed extension (or none has been due yet: the
//! lock was just taken on a majority). The ping goes out from the loop that carries out these
//! actions, never from the renewal thread, so a loop that hangs stops pinging, and systemd
//! restarts a redlock that could no longer stop its command in time.
//!
//! V moves only on a confirmed extension, and only while no stop has begun. Nothing here
//! touches a process or a clock: the caller passes `now` and carries out the [`Action`]s, so
//! the schedule is unit-tested as it is.

use std::time::{Duration, Instant};

use super::renew::LossReason;
use super::{Options, StopReason};

/// Where the stop sequence stands.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Stop {
    /// Renewal keeps up; SIGTERM goes out at `term_at` unless the validity moves.
    NotNeeded,
    /// SIGTERM sent; SIGKILL at `kill_at`.
    Terminating {
        reason: StopReason,
        kill_at: Instant,
    },
    /// SIGKILL sent (by redlock, or by the guard while redlock was stopped); only the exit is
    /// awaited.
    Killed { reason: StopReason },
}

/// What the caller must do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Nothing.
    Wait,
    /// The first renewal is due: start the renewal thread.
    StartRenewer,
    /// Send SIGTERM (then SIGCONT) to the group now, and say why; SIGKILL follows at
    /// `kill_at`, in a later [`Action::Kill`].
    Terminate {
        reason: StopReason,
        kill_at: Instant,
    },
    /// Send SIGKILL to the group: the grace after SIGTERM is over.
    Kill,
    /// Tell systemd's watchdog that redlock lives and keeps the lock.
    Ping,
}

/// The deadlines of one supervised run.
#[derive(Clone, Debug)]
pub struct Supervisor {
    options: Options,
    /// The end of the lock's validity; `None` when this redlock holds no lock (re-entrance).
    validity_end: Option<Instant>,
    /// `--max-duration`, from the start.
    max_end: Option<Instant>,
    /// The first renewal; `None` once the renewal thread runs (or with no lock).
    renew_due: Option<Instant>,
    /// The next watchdog ping, when systemd asked for them.
    ping_due: Option<Instant>,
    /// The last renewal was confirmed by a majority (or none was due yet).
    confirmed: bool,
    stop: Stop,
}

impl Supervisor {
    /// A run that starts at `now`, under a lock valid until `validity_end` (if this redlock
    /// holds one).
    pub fn new(now: Instant, validity_end: Option<Instant>, options: Options) -> Supervisor {
        Supervisor {
            options,
            validity_end,
            max_end: options.max_duration.map(|max| now + max),
            renew_due: validity_end.map(|_| now + options.renew_every),
            ping_due: options.watchdog_every.map(|every| now + every),
            confirmed: true,
            stop: Stop::NotNeeded,
        }
    }

    /// When SIGTERM goes out if no renewal moves the validity first: early enough that
    /// SIGKILL, `kill_after` later, still lands `stop_margin` before the validity ends.
    pub fn term_at(&self) -> Option<Instant> {
        self.validity_end
            .map(|end| term_deadline(end, self.options))
    }

    /// When the group must be dead: SIGKILL from redlock, and the guard's deadline.
    pub fn kill_at(&self) -> Option<Instant> {
        self.validity_end
            .map(|end| kill_deadline(end, self.options))
    }

    /// Until when the caller may sleep, waiting for events; `None`: until the next event.
    pub fn next_deadline(&self) -> Option<Instant> {
        match &self.stop {
            Stop::NotNeeded => [self.term_at(), self.max_end, self.renew_due, self.ping_due]
                .into_iter()
                .flatten()
                .min(),
            Stop::Terminating { kill_at, .. } => Some(*kill_at),
            Stop::Killed { .. } => None,
        }
    }

    /// Whether redlock woke up too late to stop the command itself: the SIGKILL deadline has
    /// passed and no stop was begun (redlock was stopped, or starved of CPU). The guard has
    /// then killed the group, from the same deadline. Ask on every wake-up, before anything
    /// else; when true, the caller kills the group (unless the command ended by itself in
    /// time) and calls [`Supervisor::killed_late`].
    pub fn overdue(&self, now: Instant) -> bool {
        self.stop == Stop::NotNeeded && self.kill_at().is_some_and(|kill_at| now >= kill_at)
    }

    /// The group was killed because redlock woke up past its deadline (see
    /// [`Supervisor::overdue`]).
    pub fn killed_late(&mut self) {
        self.stop = Stop::Killed {
            reason: StopReason::LockLost(LossReason::Expired),
        };
    }

    /// A renewal confirmed the lock until `until`. Returns the new SIGKILL deadline, for the
    /// guard, unless a stop has begun (then the validity no longer matters: the command is
    /// being stopped anyway).
    pub fn on_extended(&mut self, until: Instant) -> Option<Instant> {
        if self.stop != Stop::NotNeeded {
            return None;
        }
        self.validity_end = Some(until);
        self.confirmed = true;
        self.kill_at()
    }

    /// An extension was not confirmed by a majority (it is retried): no watchdog ping until
    /// one is.
    pub fn on_unconfirmed(&mut self) {
        self.confirmed = false;
    }

    /// The renewal thread says the lock is gone.
    pub fn on_lost(&mut self, now: Instant, reason: LossReason) -> Action {
        match self.stop {
            Stop::NotNeeded => self.terminate(now, StopReason::LockLost(reason)),
            _ => Action::Wait,
        }
    }

    /// [`Supervisor::next_deadline`] was reached.
    pub fn on_timeout(&mut self, now: Instant) -> Action {
        match &self.stop {
            Stop::NotNeeded => {
                if let (Some(end), Some(max)) = (self.max_end, self.options.max_duration)
                    && now >= end
                {
                    self.terminate(now, StopReason::MaxDuration(max))
                } else if self.term_at().is_some_and(|term_at| now >= term_at) {
                    let reason = self.late_stop_reason(now);
                    self.terminate(now, StopReason::LockLost(reason))
                } else if self.renew_due.is_some_and(|due| now >= due) {
                    self.renew_due = None;
                    Action::StartRenewer
                } else if let Some(every) = self.options.watchdog_every
                    && self.ping_due.is_some_and(|due| now >= due)
                {
                    // From now, not from the missed due time: after a stall, one ping, not a
                    // burst of them.
                    self.ping_due = Some(now + every);
                    if self.confirmed {
                        Action::Ping
                    } else {
                        Action::Wait
                    }
                } else {
                    Action::Wait
                }
            }
            Stop::Terminating { reason, kill_at } if now >= *kill_at => {
                self.stop = Stop::Killed {
                    reason: reason.clone(),
                };
                Action::Kill
            }
            Stop::Terminating { .. } | Stop::Killed { .. } => Action::Wait,
        }
    }

    /// Why the command must be stopped at `now`, past `term_at` with no stop begun: redlock
    /// stalled if it woke more than `stop_margin` past the deadline it slept until (computed
    /// before anything changes it), else no renewal was confirmed in time.
    fn late_stop_reason(&self, now: Instant) -> LossReason {
        let slept_until = self.next_deadline().unwrap_or(now);
        let stalled = now.saturating_duration_since(slept_until);
        if stalled > self.options.stop_margin {
            LossReason::Stalled {
                stalled,
                kill_after: self.options.kill_after,
            }
        } else {
            LossReason::Expired
        }
    }

    /// Why the command was stopped, if it was.
    pub fn stop_reason(&self) -> Option<&StopReason> {
        match &self.stop {
            Stop::NotNeeded => None,
            Stop::Terminating { reason, .. } | Stop::Killed { reason } => Some(reason),
        }
    }

    /// True until a stop has begun.
    pub fn is_running(&self) -> bool {
        self.stop == Stop::NotNeeded
    }

    fn terminate(&mut self, now: Instant, reason: StopReason) -> Action {
        let mut kill_at = now + self.options.kill_after;
        if let Some(deadline) = self.kill_at() {
            kill_at = kill_at.min(deadline);
        }
        self.stop = Stop::Terminating {
            reason: reason.clone(),
            kill_at,
        };
        Action::Terminate { reason, kill_at }
    }
}

fn term_deadline(validity_end: Instant, options: Options) -> Instant {
    let kill_at = kill_deadline(validity_end, options);
    kill_at.checked_sub(options.kill_after).unwrap_or(kill_at)
}

fn kill_deadline(validity_end: Instant, options: Options) -> Instant {
    validity_end
        .checked_sub(options.stop_margin)
        .unwrap_or(validity_end)
}

/// `d` in whole milliseconds, for messages.
pub fn round_ms(d: Duration) -> Duration {
    Duration::from_millis(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests;
