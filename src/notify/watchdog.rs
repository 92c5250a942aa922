//! systemd's watchdog variables: whether the watchdog is redlock's, and how often to ping it.
//!
//! sd_watchdog_enabled(3) is the rule every program under systemd follows, and so is ours:
//! - `WATCHDOG_USEC` is a whole number of microseconds, neither 0 nor 2^64-1 (systemd's
//!   "infinity"); anything else is an error, and no watchdog.
//! - `WATCHDOG_PID`, when set, names the one process the watchdog is for: the service's main
//!   process, which is redlock when systemd starts it (or a shell that execs it). Unset, the
//!   watchdog is for whoever reads `WATCHDOG_USEC`. A `WATCHDOG_PID` that is no process id is
//!   an error, and no watchdog.
//!
//! Where libsystemd returns an error and its callers carry on silently, redlock says so once on
//! stderr: a unit with `WatchdogSec=` whose process never pings is killed by systemd, and one
//! with a value that systemd never writes (`0`, `abc`, `-1`, a number past 2^64) was set by
//! hand and is worth a word.
//!
//! **The shortest interval.** systemd arms a unit's watchdog timer with sd-event's default
//! accuracy, 250 ms (`DEFAULT_ACCURACY_USEC`): the timer may fire anywhere up to 250 ms after
//! it is due, so systemd cannot measure a watchdog shorter than that. `WATCHDOG_USEC=1` once
//! made redlock send WATCHDOG=1 every half microsecond, a whole core spent on 388,926 datagrams
//! in 2 s. An interval below [`SHORTEST`] is taken as [`SHORTEST`] (a ping every 125 ms), with
//! a warning: a unit that asks for less cannot be kept alive by any process, and redlock's
//! loop, whose deadlines keep the command inside the lock's validity, is not to spin for it.
//!
//! Who is told what under `--sd-notify command`: [`is_for`]. `WATCHDOG_PID` names redlock (the
//! process systemd started), never the command, whose pid exists only once it is spawned; when
//! the watchdog is redlock's, redlock hands it to the command by passing `WATCHDOG_USEC` on
//! without `WATCHDOG_PID` (unset, it is for whoever reads it: the command). When it names some
//! other process, the watchdog is neither redlock's nor its command's, and the command gets
//! neither variable.

use std::time::Duration;

/// The shortest watchdog interval redlock keeps: systemd's own timer accuracy (see above).
pub const SHORTEST: Duration = Duration::from_millis(250);

/// systemd's "infinity" (`USEC_INFINITY`), which sd_watchdog_enabled(3) refuses.
const INFINITY: u64 = u64::MAX;

/// How often redlock pings, when the watchdog is redlock's, and what is worth one warning.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Reading {
    /// Half of the interval (sd_watchdog_enabled(3) advises half), at least half of
    /// [`SHORTEST`]; `None` when there is no watchdog for redlock.
    pub every: Option<Duration>,
    /// One line for stderr, when a value was unusable or too short.
    pub warning: Option<String>,
}

/// Reads the variables as they were set (`None`: unset; a value that is not UTF-8 counts as
/// unreadable) for the process `own`.
pub fn read(usec: Option<&str>, pid: Option<Result<&str, ()>>, own: u32) -> Reading {
    let Some(usec) = usec else {
        return Reading::default();
    };
    match owner(pid, own) {
        Owner::Redlock => {}
        Owner::Another => return Reading::default(),
        Owner::Unreadable(pid) => {
            return Reading {
                every: None,
                warning: Some(format!(
                    "warning: WATCHDOG_PID {pid:?} is not a process id, so systemd's watchdog \
                     is not redlock's: redlock sends no WATCHDOG=1"
                )),
            };
        }
    }
    let interval = match usec.trim().parse::<u64>() {
        Ok(usec) if usec != 0 && usec != INFINITY => Duration::from_micros(usec),
        _ => {
            return Reading {
                every: None,
                warning: Some(format!(
                    "warning: WATCHDOG_USEC {usec:?} is not a watchdog interval (a whole number \
                     of microseconds from 1 to 2^64-2, as systemd sets it from WatchdogSec=): \
                     redlock sends no WATCHDOG=1"
                )),
            };
        }
    };
    if interval < SHORTEST {
        return Reading {
            every: Some(SHORTEST / 2),
            warning: Some(format!(
                "warning: WATCHDOG_USEC {usec:?} asks for a watchdog of {}, shorter than the \
                 {} that systemd's own watchdog timer can tell apart: redlock pings as for {} \
                 (every {}); set WatchdogSec= to {} or more",
                humantime::format_duration(interval),
                humantime::format_duration(SHORTEST),
                humantime::format_duration(SHORTEST),
                humantime::format_duration(SHORTEST / 2),
                humantime::format_duration(SHORTEST),
            )),
        };
    }
    Reading {
        every: Some(interval / 2),
        warning: None,
    }
}

/// Whether a watchdog of systemd's is meant for the process `own` (redlock): `WATCHDOG_PID`
/// unset or naming it.
pub fn is_for(pid: Option<Result<&str, ()>>, own: u32) -> bool {
    owner(pid, own) == Owner::Redlock
}

#[derive(Debug, PartialEq, Eq)]
enum Owner {
    Redlock,
    Another,
    /// Not a process id (as it was written, lossily where it is not UTF-8).
    Unreadable(String),
}

fn owner(pid: Option<Result<&str, ()>>, own: u32) -> Owner {
    match pid {
        None => Owner::Redlock,
        Some(Err(())) => Owner::Unreadable("(not UTF-8)".into()),
        Some(Ok(pid)) => match pid.trim().parse::<u32>() {
            Ok(0) | Err(_) => Owner::Unreadable(pid.to_string()),
            Ok(pid) if pid == own => Owner::Redlock,
            Ok(_) => Owner::Another,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every(usec: &str, pid: Option<&str>) -> Option<Duration> {
        read(Some(usec), pid.map(Ok), 7).every
    }

    fn warns(usec: &str, pid: Option<&str>) -> bool {
        read(Some(usec), pid.map(Ok), 7).warning.is_some()
    }

    #[test]
    fn the_watchdog_is_pinged_at_half_its_interval_and_only_when_it_is_ours() {
        let half = Some(Duration::from_secs(15));
        assert_eq!(every("30000000", None), half);
        assert_eq!(every("30000000", Some("7")), half);
        assert_eq!(every("30000000", Some("8")), None);
        assert!(!warns("30000000", Some("8")));
        assert_eq!(read(None, Some(Ok("7")), 7), Reading::default());
    }

    #[test]
    fn values_systemd_never_sets_are_no_watchdog_and_one_warning() {
        for usec in [
            "0",
            "abc",
            "-1",
            "1.5",
            "",
            "99999999999999999999",
            "18446744073709551615",
        ] {
            assert_eq!(every(usec, None), None, "{usec:?}");
            assert!(warns(usec, None), "{usec:?}");
        }
        for pid in ["abc", "0", "-1"] {
            assert_eq!(every("30000000", Some(pid)), None, "{pid:?}");
            assert!(warns("30000000", Some(pid)), "{pid:?}");
        }
        assert!(read(Some("30000000"), Some(Err(())), 7).warning.is_some());
    }

    #[test]
    fn an_interval_shorter_than_systemds_timer_accuracy_is_clamped_with_a_warning() {
        assert_eq!(every("1", None), Some(Duration::from_millis(125)));
        assert!(warns("1", None));
        assert_eq!(every("249999", None), Some(Duration::from_millis(125)));
        assert_eq!(every("250000", None), Some(Duration::from_millis(125)));
        assert!(!warns("250000", None));
        // The largest interval systemd can set: no overflow, no warning.
        assert_eq!(
            every("18446744073709551614", None),
            Some(Duration::from_micros(u64::MAX - 1) / 2)
        );
    }

    #[test]
    fn the_command_is_handed_only_a_watchdog_meant_for_redlock() {
        assert!(is_for(None, 7));
        assert!(is_for(Some(Ok("7")), 7));
        assert!(!is_for(Some(Ok("8")), 7));
        assert!(!is_for(Some(Ok("x")), 7));
        assert!(!is_for(Some(Err(())), 7));
    }
}
