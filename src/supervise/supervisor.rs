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
            Stop::NotNeeded => [self.term_at(), self.max_end, self.renew_due]
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
        self.kill_at()
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
mod tests {
    use super::*;

    const TTL: Duration = Duration::from_secs(3);

    fn options() -> Options {
        Options::new(TTL, Options::default_kill_after(TTL))
    }

    /// A run started at `now` with a fresh lock valid for TTL − drift.
    fn fresh(now: Instant) -> (Supervisor, Instant) {
        let validity_end = now + TTL - Duration::from_millis(32);
        (
            Supervisor::new(now, Some(validity_end), options()),
            validity_end,
        )
    }

    #[test]
    fn the_stop_fits_inside_the_validity() {
        for ttl_ms in [100u64, 1_000, 3_000, 30_000, 600_000] {
            let ttl = Duration::from_millis(ttl_ms);
            let options = Options::new(ttl, Options::default_kill_after(ttl));
            let now = Instant::now();
            let validity_end = now + ttl;
            let supervisor = Supervisor::new(now, Some(validity_end), options);
            let term = supervisor.term_at().unwrap();
            let kill = supervisor.kill_at().unwrap();
            assert!(term + options.kill_after <= kill, "ttl {ttl:?}");
            assert!(kill < validity_end, "ttl {ttl:?}");
            // The first renewal happens well before the child would have to be stopped.
            assert!(now + options.renew_every < term, "ttl {ttl:?}");
        }
    }

    #[test]
    fn default_kill_after_is_a_few_seconds_at_most() {
        assert_eq!(
            Options::default_kill_after(Duration::from_secs(60)),
            Duration::from_secs(5)
        );
        assert_eq!(
            Options::default_kill_after(Duration::from_secs(2)),
            Duration::from_millis(500)
        );
    }

    #[test]
    fn without_renewal_the_first_renewal_then_term_then_kill() {
        let start = Instant::now();
        let (mut s, validity_end) = fresh(start);
        let o = options();
        // First the renewal is due.
        let due = start + o.renew_every;
        assert_eq!(s.next_deadline(), Some(due));
        assert_eq!(s.on_timeout(due), Action::StartRenewer);
        // Then, with no renewal confirmed, SIGTERM at V − margin − grace ...
        let term = validity_end - o.stop_margin - o.kill_after;
        assert_eq!(s.next_deadline(), Some(term));
        assert_eq!(s.on_timeout(term - Duration::from_millis(1)), Action::Wait);
        let kill = validity_end - o.stop_margin;
        assert_eq!(
            s.on_timeout(term),
            Action::Terminate {
                reason: StopReason::LockLost(LossReason::Expired),
                kill_at: kill
            }
        );
        // ... and SIGKILL at V − margin, once.
        assert_eq!(s.next_deadline(), Some(kill));
        assert_eq!(s.on_timeout(kill), Action::Kill);
        assert_eq!(s.next_deadline(), None);
        assert_eq!(s.on_timeout(kill), Action::Wait);
        assert_eq!(
            s.stop_reason(),
            Some(&StopReason::LockLost(LossReason::Expired))
        );
    }

    #[test]
    fn woken_late_past_term_at_says_redlock_stalled_not_that_renewal_failed() {
        let start = Instant::now();
        let (mut s, validity_end) = fresh(start);
        let o = options();
        let term = validity_end - o.stop_margin - o.kill_after;
        // Asleep until the first renewal was due, woken only after term_at.
        let due = start + o.renew_every;
        let woke = term + Duration::from_millis(10);
        match s.on_timeout(woke) {
            Action::Terminate {
                reason:
                    StopReason::LockLost(LossReason::Stalled {
                        stalled,
                        kill_after,
                    }),
                ..
            } => {
                assert_eq!(stalled, woke - due);
                assert_eq!(kill_after, o.kill_after);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_confirmed_extension_moves_both_deadlines_and_the_guards() {
        let start = Instant::now();
        let (mut s, _) = fresh(start);
        let o = options();
        let until = start + Duration::from_secs(4);
        assert_eq!(s.on_extended(until), Some(until - o.stop_margin));
        assert_eq!(s.kill_at(), Some(until - o.stop_margin));
        assert_eq!(s.term_at(), Some(until - o.stop_margin - o.kill_after));
    }

    #[test]
    fn once_a_stop_has_begun_an_extension_changes_nothing() {
        let start = Instant::now();
        let (mut s, validity_end) = fresh(start);
        let o = options();
        let action = s.on_lost(start, LossReason::Refused);
        let kill_at = start + o.kill_after;
        assert_eq!(
            action,
            Action::Terminate {
                reason: StopReason::LockLost(LossReason::Refused),
                kill_at
            }
        );
        assert_eq!(s.on_extended(validity_end + TTL), None);
        assert_eq!(s.next_deadline(), Some(kill_at));
        // A second report of the loss does not restart the grace.
        assert_eq!(s.on_lost(start, LossReason::Expired), Action::Wait);
    }

    #[test]
    fn a_loss_late_in_the_validity_shortens_the_grace() {
        let start = Instant::now();
        let (mut s, validity_end) = fresh(start);
        let o = options();
        let late = validity_end - o.stop_margin - o.kill_after / 2;
        assert_eq!(
            s.on_lost(late, LossReason::Refused),
            Action::Terminate {
                reason: StopReason::LockLost(LossReason::Refused),
                kill_at: validity_end - o.stop_margin
            }
        );
    }

    #[test]
    fn whenever_the_loss_comes_sigkill_is_never_past_validity_minus_margin() {
        let start = Instant::now();
        let o = options();
        for step in 0..=100u32 {
            let (mut s, validity_end) = fresh(start);
            let at = start + (validity_end - start) * step / 100;
            match s.on_lost(at, LossReason::Refused) {
                Action::Terminate { kill_at, .. } => {
                    assert!(kill_at <= validity_end - o.stop_margin, "step {step}");
                    assert!(kill_at <= at + o.kill_after, "step {step}");
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn woken_past_the_kill_deadline_is_overdue_until_killed() {
        let start = Instant::now();
        let (mut s, _) = fresh(start);
        let kill = s.kill_at().unwrap();
        assert!(!s.overdue(kill - Duration::from_millis(1)));
        assert!(s.overdue(kill));
        assert!(s.overdue(kill + Duration::from_secs(60)));
        s.killed_late();
        assert!(!s.overdue(kill + Duration::from_secs(60)));
        assert_eq!(s.next_deadline(), None);
        assert_eq!(
            s.stop_reason(),
            Some(&StopReason::LockLost(LossReason::Expired))
        );
        // An extension confirmed too late is not taken.
        assert_eq!(s.on_extended(kill + TTL), None);
    }

    #[test]
    fn a_stop_in_progress_is_not_overdue() {
        let start = Instant::now();
        let (mut s, _) = fresh(start);
        s.on_lost(start, LossReason::Refused);
        assert!(!s.overdue(start + TTL * 10));
    }

    #[test]
    fn max_duration_stops_with_the_full_grace_and_before_the_validity() {
        let start = Instant::now();
        let o = options().with_max_duration(Some(Duration::from_millis(200)));
        let validity_end = start + TTL;
        let mut s = Supervisor::new(start, Some(validity_end), o);
        let end = start + Duration::from_millis(200);
        assert_eq!(s.next_deadline(), Some(end));
        assert_eq!(
            s.on_timeout(end),
            Action::Terminate {
                reason: StopReason::MaxDuration(Duration::from_millis(200)),
                kill_at: end + o.kill_after
            }
        );
    }

    #[test]
    fn without_a_lock_of_its_own_only_max_duration_applies() {
        let start = Instant::now();
        let mut s = Supervisor::new(start, None, options());
        assert_eq!(s.next_deadline(), None);
        assert!(!s.overdue(start + Duration::from_secs(3600)));
        assert_eq!(s.on_timeout(start + TTL), Action::Wait);
    }
}
