//! Running a command under a held lock.
//!
//! The promise: **the child never runs past the lock's validity.** The supervisor keeps it with
//! one event loop on the main thread, fed by three sources:
//!
//! - the signal thread ([`signals`]): forwarded to the child's process group (a terminating
//!   one followed by SIGCONT, so that a stopped group acts on it);
//! - SIGCHLD, on the same signal thread: if the child ([`child`]) ended, stop looping; if it
//!   was stopped from the terminal, stop redlock's job with it ([`job`]), and resume it on
//!   SIGCONT;
//! - the renewal thread ([`renew`]): each extension moves the validity forward.
//!
//! Between events it sleeps until its own deadline, computed from the last validity it saw:
//! SIGTERM to the group at `validity − margin − kill_after`, SIGKILL at `validity − margin`. A
//! renewal that reports the lock gone starts the same sequence at once. Because the deadlines
//! live here and not in the renewal thread, a renewal that hangs cannot delay the stop.
//!
//! None of this runs while redlock itself is stopped: the [`guard`] process, which is not
//! stopped with it, holds the SIGKILL deadline too (moved after each confirmed renewal) and
//! kills the group at it. A supervisor that wakes up past that deadline reports the lock lost,
//! whatever the renewal thread says, since the guard judged from the same deadline.

pub mod child;
pub mod guard;
pub mod job;
pub mod renew;
pub mod signals;
mod spawn;
pub mod watch;

use std::ffi::OsString;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use crate::lock::{Lock, Redlock};
use crate::{info, log};
use child::{Exit, StateChange};
use renew::{LossReason, Renewal, Renewer};

/// Everything the supervisor reacts to.
#[derive(Debug)]
pub enum Event {
    /// redlock received this signal.
    Signal(i32),
    /// News from the renewal thread.
    Renewal(Renewal),
    /// The process watched by `acquire --renew-while` exited.
    WatchedExited,
}

/// The supervisor's channel. Create it (and install the signal handlers on it) before taking
/// the lock, so that no signal is missed.
pub fn channel() -> (Sender<Event>, Receiver<Event>) {
    std::sync::mpsc::channel()
}

/// Timing of renewal and of the stop on lock loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Extend the lock this often (TTL/3).
    pub renew_every: Duration,
    /// Time between SIGTERM and SIGKILL when the lock is lost.
    pub kill_after: Duration,
    /// How long before the validity ends the child must be dead: room for the signal to be
    /// delivered and the processes to die (TTL/25, between 5 ms and 1 s).
    pub stop_margin: Duration,
    /// Stop the child once it has run this long (`--max-duration`).
    pub max_duration: Option<Duration>,
}

impl Options {
    /// The default grace between SIGTERM and SIGKILL: 5 s, or TTL/4 for short TTLs, so that
    /// the whole stop still fits inside the validity.
    pub fn default_kill_after(ttl: Duration) -> Duration {
        (ttl / 4).min(Duration::from_secs(5))
    }

    /// The longest `--kill-after` a TTL allows: the stop must start after the first renewal
    /// had a chance, and end inside the validity.
    pub fn max_kill_after(ttl: Duration) -> Duration {
        ttl / 2
    }

    pub fn new(ttl: Duration, kill_after: Duration) -> Options {
        Options {
            renew_every: ttl / 3,
            kill_after,
            // Generous: it only matters once the lock is being lost, and it must absorb a late
            // wake-up of this thread on a loaded machine.
            stop_margin: (ttl / 25).clamp(Duration::from_millis(5), Duration::from_secs(1)),
            max_duration: None,
        }
    }

    pub fn with_max_duration(self, max_duration: Option<Duration>) -> Options {
        Options {
            max_duration,
            ..self
        }
    }
}

/// How a supervised run ended.
#[derive(Debug)]
pub enum Ending {
    /// The child ended by itself (or by a signal it was sent through redlock).
    Exited(Exit),
    /// redlock stopped the child.
    Stopped { reason: StopReason, child: Exit },
    /// The command could not be started.
    NotStarted(std::io::Error),
}

/// Why redlock stopped the child.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The lock was lost (or about to run out without a renewal).
    LockLost(LossReason),
    /// The child ran longer than `--max-duration`.
    MaxDuration(Duration),
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::LockLost(reason) => write!(f, "lost the lock: {reason}"),
            StopReason::MaxDuration(max) => write!(
                f,
                "the command ran longer than --max-duration {}",
                humantime::format_duration(*max)
            ),
        }
    }
}

/// Where the stop sequence stands.
enum Stop {
    /// Renewal keeps up; SIGTERM goes out at the deadline unless the validity moves.
    NotNeeded,
    /// SIGTERM sent; SIGKILL at `kill_at`.
    Terminating {
        reason: StopReason,
        kill_at: Instant,
    },
    /// SIGKILL sent; only the exit is awaited.
    Killed { reason: StopReason },
}

/// The lock a supervised command runs under.
#[derive(Clone, Copy, Debug)]
pub enum Lease<'a> {
    /// Taken by this redlock, with its fencing token if one was obtained: renewed here, and the
    /// command is stopped if it is lost.
    Held(&'a Lock, Option<u64>),
    /// Held by an enclosing redlock (re-entrance): that one renews it, and stops its whole
    /// process group, this redlock included, if it is lost. The command inherits REDLOCK_*.
    Inherited,
}

impl<'a> Lease<'a> {
    fn held(self) -> Option<&'a Lock> {
        match self {
            Lease::Held(lock, _) => Some(lock),
            Lease::Inherited => None,
        }
    }
}

/// Runs `command` under `lease`, and returns how it ended. Releasing a held lock is the
/// caller's: it happens on every path, including when this returns `NotStarted`.
pub fn supervise(
    client: &Arc<Redlock>,
    lease: Lease<'_>,
    command: &[OsString],
    options: Options,
    (events, inbox): (Sender<Event>, &Receiver<Event>),
) -> Ending {
    let held = lease.held();
    let mut env: Vec<(&str, String)> = held.map_or_else(Vec::new, |lock| {
        vec![
            ("REDLOCK_KEY", lock.key().to_string()),
            ("REDLOCK_TOKEN", lock.token().to_string()),
            (
                "REDLOCK_VALIDITY_MS",
                lock.validity().as_millis().to_string(),
            ),
        ]
    });
    if let Lease::Held(_, Some(fence)) = lease {
        env.push(("REDLOCK_FENCE", fence.to_string()));
    }
    let child = match child::spawn(command, &env) {
        Ok(child) => child,
        Err(error) => return Ending::NotStarted(error),
    };
    info!("started pid {}", child.pid());
    let mut guard = start_guard(
        &child,
        held.map(|lock| kill_deadline(lock.validity_end(), options)),
    );
    // The child may have exited before this point; its SIGCHLD is then already queued. The
    // renewal thread starts when the first renewal is due: a short command never needs it.
    let mut start_renewer = || {
        let lock = held?.clone();
        Renewer::start(
            Arc::clone(client),
            lock,
            options.renew_every,
            events.clone(),
        )
        .inspect_err(|error| {
            // No renewal: the deadline stops the child before the validity ends.
            log::line(format_args!("cannot start the renewal thread: {error}"));
        })
        .ok()
    };
    let (stop, renewer) =
        wait_for_exit(&child, held, options, inbox, &mut start_renewer, &mut guard);
    finish(child, guard, renewer, stop)
}

/// Starts the guard on the child's group, with the first kill deadline when there is one.
/// Without a guard the command still runs: the parent-death signal stops the child itself if
/// redlock dies, and redlock's own deadlines stop it while redlock runs.
fn start_guard(child: &child::Child, deadline: Option<Instant>) -> Option<guard::Guard> {
    let started = guard::Guard::start().and_then(|mut guard| {
        guard.watch(child.pid())?;
        if let Some(at) = deadline {
            guard.move_deadline(at)?;
        }
        Ok(guard)
    });
    started
        .inspect_err(|error| {
            log::line(format_args!(
                "cannot start the guard process ({error}): if redlock is killed or stopped, \
                 programs the command started may outlive the lock"
            ));
        })
        .ok()
}

/// The event loop: forwards signals, follows renewals, and stops the child when the lock is
/// lost, until the child exits. Returns where the stop sequence stood.
fn wait_for_exit(
    child: &child::Child,
    held: Option<&Lock>,
    options: Options,
    inbox: &Receiver<Event>,
    start_renewer: &mut dyn FnMut() -> Option<Renewer>,
    guard: &mut Option<guard::Guard>,
) -> (Stop, Option<Renewer>) {
    let key = held.map_or("", Lock::key);
    let mut validity_end = held.map(Lock::validity_end);
    let max_end = options.max_duration.map(|max| Instant::now() + max);
    let mut renew_due = held.map(|_| Instant::now() + options.renew_every);
    let mut renewer = None;
    let mut stop = Stop::NotNeeded;
    // The command's stop was mirrored on redlock's job (see [`job`]); resume it on SIGCONT.
    let mut suspended = false;
    loop {
        let deadline = match &stop {
            Stop::NotNeeded => {
                let term = validity_end.map(|end| term_deadline(end, options));
                [term, max_end, renew_due].into_iter().flatten().min()
            }
            Stop::Terminating { kill_at, .. } => Some(*kill_at),
            Stop::Killed { .. } => None,
        };
        let event = match deadline {
            Some(at) => inbox.recv_timeout(at.saturating_duration_since(Instant::now())),
            None => inbox.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        // Before anything else, whatever woke us: if our own SIGKILL deadline has passed while
        // the stop was not even started, redlock did not run in time (it was stopped, or
        // starved), and the guard has killed, or is killing, the command. A renewal that
        // reports success now changes nothing: the guard judged from the same deadline.
        if let (Stop::NotNeeded, Some(end)) = (&stop, validity_end)
            && Instant::now() >= kill_deadline(end, options)
        {
            match overslept(child, key) {
                Some(next) => stop = next,
                None => return (stop, renewer),
            }
        }
        match event {
            Ok(Event::Signal(libc::SIGCHLD)) => {
                if child.has_exited() {
                    return (stop, renewer);
                }
                match (child.state_change(), child.terminal()) {
                    (Some(StateChange::Stopped(signal)), Some(terminal))
                        if matches!(stop, Stop::NotNeeded) =>
                    {
                        suspended =
                            job::suspend(child, terminal, signal) == job::Suspension::Mirrored;
                    }
                    (Some(StateChange::Stopped(signal)), _) => info!(
                        "the command was stopped ({}); redlock keeps the lock meanwhile",
                        signals::name(signal)
                    ),
                    (Some(StateChange::Continued), _) => info!("the command was resumed"),
                    (None, _) => {}
                }
            }
            Ok(Event::Signal(libc::SIGCONT)) => {
                // redlock's job was resumed after it mirrored the command's stop.
                if std::mem::take(&mut suspended)
                    && matches!(stop, Stop::NotNeeded)
                    && let Some(terminal) = child.terminal()
                {
                    job::resume(child, terminal);
                }
            }
            Err(RecvTimeoutError::Disconnected) => return (stop, renewer),
            Ok(Event::WatchedExited) => {}
            Ok(Event::Signal(signal)) => {
                info!("forwarding {} to the command", signals::name(signal));
                let _ = if signals::is_terminating(signal) {
                    child.signal_group_awake(signal)
                } else {
                    child.signal_group(signal)
                };
            }
            Ok(Event::Renewal(Renewal::Extended(until))) => {
                if matches!(stop, Stop::NotNeeded) {
                    validity_end = Some(until);
                    crate::debug!("renewed {key:?}");
                    let moved = guard
                        .as_mut()
                        .map(|guard| guard.move_deadline(kill_deadline(until, options)));
                    match moved {
                        Some(Ok(false)) => match overslept(child, key) {
                            Some(next) => stop = next,
                            None => return (stop, renewer),
                        },
                        Some(Err(error)) => {
                            log::line(format_args!(
                                "the guard process is gone ({error}): if redlock is killed or \
                                 stopped, programs the command started may outlive the lock"
                            ));
                            *guard = None;
                        }
                        Some(Ok(true)) | None => {}
                    }
                }
            }
            Ok(Event::Renewal(Renewal::Unconfirmed(failures))) => {
                let why: Vec<String> = failures.iter().map(ToString::to_string).collect();
                info!(
                    "renewal of {key:?} not confirmed by a majority ({}); retrying",
                    why.join(", ")
                );
            }
            Ok(Event::Renewal(Renewal::Lost(reason))) => {
                if matches!(stop, Stop::NotNeeded) {
                    let reason = StopReason::LockLost(reason);
                    stop = begin_stop(child, key, reason, validity_end, options);
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                let now = Instant::now();
                stop = match stop {
                    Stop::NotNeeded => {
                        let expiring =
                            validity_end.is_some_and(|end| now >= term_deadline(end, options));
                        match (max_end, options.max_duration) {
                            (Some(end), Some(max)) if now >= end => begin_stop(
                                child,
                                key,
                                StopReason::MaxDuration(max),
                                validity_end,
                                options,
                            ),
                            _ if expiring => begin_stop(
                                child,
                                key,
                                StopReason::LockLost(LossReason::Expired),
                                validity_end,
                                options,
                            ),
                            _ => {
                                // The first renewal is due: from now on a thread keeps it up.
                                if renew_due.is_some_and(|due| now >= due) {
                                    renew_due = None;
                                    renewer = start_renewer();
                                }
                                Stop::NotNeeded
                            }
                        }
                    }
                    // Only reached when the SIGKILL went out just above (overslept).
                    killed @ Stop::Killed { .. } => killed,
                    Stop::Terminating { reason, .. } => {
                        log::line(format_args!(
                            "the command did not stop after SIGTERM: sending SIGKILL"
                        ));
                        let _ = child.signal_group(libc::SIGKILL);
                        Stop::Killed { reason }
                    }
                };
            }
        }
    }
}

/// After the child exited: makes sure nothing of its group outlives a lost lock, stops the
/// helpers, and reaps it.
fn finish(
    mut child: child::Child,
    guard: Option<guard::Guard>,
    renewer: Option<Renewer>,
    stop: Stop,
) -> Ending {
    let stopped = match stop {
        Stop::NotNeeded => None,
        Stop::Terminating { reason, .. } | Stop::Killed { reason } => {
            // The leader is gone, but what it started may not be: nothing in the group may
            // outlive the lock.
            let _ = child.signal_group(libc::SIGKILL);
            Some(reason)
        }
    };
    if let Some(renewer) = &renewer {
        renewer.stop();
    }
    // Dismissed before reaping: until the leader is reaped, its group id cannot be reused, so
    // the guard can never kill a stranger.
    if let Some(guard) = guard {
        guard.dismiss();
    }
    let exit = child.reap().unwrap_or_else(|error| {
        log::line(format_args!("cannot reap the command: {error}"));
        Exit::Code(crate::exit::OS_ERROR)
    });
    match stopped {
        Some(reason) => Ending::Stopped {
            reason,
            child: exit,
        },
        None => Ending::Exited(exit),
    }
}

/// When SIGTERM must go out so that SIGKILL, `kill_after` later, still lands inside the
/// validity with `stop_margin` to spare.
fn term_deadline(validity_end: Instant, options: Options) -> Instant {
    let kill_at = kill_deadline(validity_end, options);
    kill_at.checked_sub(options.kill_after).unwrap_or(kill_at)
}

fn kill_deadline(validity_end: Instant, options: Options) -> Instant {
    validity_end
        .checked_sub(options.stop_margin)
        .unwrap_or(validity_end)
}

/// redlock ran too late to stop the command itself: its SIGKILL deadline has passed, so the
/// guard has killed (or is killing) the group. Returns `None` when the command had ended by
/// itself before that (it exited, or died of a signal other than SIGKILL): then it ran under
/// the lock. Otherwise the group is killed here too (if the guard could not, or is late) and
/// the loss is reported.
fn overslept(child: &child::Child, key: &str) -> Option<Stop> {
    // Whatever the leader did, nothing of its group may outlive the lock.
    let _ = child.signal_group(libc::SIGKILL);
    if child
        .exit_status()
        .is_some_and(|exit| exit != Exit::Signal(libc::SIGKILL))
    {
        return None;
    }
    log::line(format_args!(
        "{}lost the lock: its validity ran out while redlock was stopped (or not scheduled), \
         before it could renew it; the command was killed",
        lock_context(key)
    ));
    Some(Stop::Killed {
        reason: StopReason::LockLost(LossReason::Expired),
    })
}

fn lock_context(key: &str) -> String {
    if key.is_empty() {
        String::new()
    } else {
        format!("lock {key:?}: ")
    }
}

/// Sends SIGTERM to the group and schedules SIGKILL `kill_after` later, or earlier if the
/// validity (when known) requires it.
fn begin_stop(
    child: &child::Child,
    key: &str,
    reason: StopReason,
    validity_end: Option<Instant>,
    options: Options,
) -> Stop {
    let now = Instant::now();
    let mut kill_at = now + options.kill_after;
    if let Some(end) = validity_end {
        kill_at = kill_at.min(kill_deadline(end, options));
    }
    log::line(format_args!(
        "{}{reason}; stopping the command (SIGTERM now, SIGKILL in {})",
        lock_context(key),
        humantime::format_duration(round_ms(kill_at.saturating_duration_since(now)))
    ));
    let _ = child.signal_group_awake(libc::SIGTERM);
    Stop::Terminating { reason, kill_at }
}

fn round_ms(d: Duration) -> Duration {
    Duration::from_millis(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stop_fits_inside_the_validity() {
        for ttl_ms in [100u64, 1_000, 3_000, 30_000, 600_000] {
            let ttl = Duration::from_millis(ttl_ms);
            let kill_after = Options::default_kill_after(ttl);
            let options = Options::new(ttl, kill_after);
            let now = Instant::now();
            let validity_end = now + ttl;
            let term = term_deadline(validity_end, options);
            let kill = kill_deadline(validity_end, options);
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
}
