//! The supervisor's schedule, as a pure function of the times it is given.

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
fn the_watchdog_is_pinged_only_while_renewals_keep_a_majority() {
    let start = Instant::now();
    let every = Duration::from_millis(100);
    let o = Options {
        watchdog_every: Some(every),
        ..options()
    };
    let validity_end = start + TTL - Duration::from_millis(32);
    let mut s = Supervisor::new(start, Some(validity_end), o);
    assert_eq!(s.next_deadline(), Some(start + every));
    assert_eq!(s.on_timeout(start + every), Action::Ping);
    // A renewal that no majority confirmed: the due ping is skipped.
    s.on_unconfirmed();
    assert_eq!(s.on_timeout(start + every * 2), Action::Wait);
    // Confirmed again: pinged again. Woken late, one ping, then the next a full interval on.
    assert!(s.on_extended(validity_end + TTL).is_some());
    assert_eq!(s.on_timeout(start + every * 5), Action::Ping);
    assert_eq!(s.next_deadline(), Some(start + every * 6));
    // Once a stop has begun, no ping and no ping deadline.
    let stop = s.on_lost(start + every * 6, LossReason::Refused);
    assert!(matches!(stop, Action::Terminate { .. }));
    assert!(s.next_deadline() != Some(start + every * 7));
    assert_eq!(s.on_timeout(start + every * 7), Action::Wait);
}

#[test]
fn without_a_lock_of_its_own_only_max_duration_applies() {
    let start = Instant::now();
    let mut s = Supervisor::new(start, None, options());
    assert_eq!(s.next_deadline(), None);
    assert!(!s.overdue(start + Duration::from_secs(3600)));
    assert_eq!(s.on_timeout(start + TTL), Action::Wait);
}
