//! Running a command under a held lock.
//!
//! The promise: **the child never runs past the lock's validity.** It is kept by one event loop
//! on the main thread, fed by three sources:
//!
//! - the signal thread ([`signals`]): forwarded to the child's process group (a terminating
//!   one followed by SIGCONT, so that a stopped group acts on it);
//! - SIGCHLD, on the same signal thread: if the child ([`child`]) ended, stop looping; if it
//!   was stopped from the terminal, stop redlock's job with it ([`job`]), and resume it on
//!   SIGCONT;
//! - the renewal thread ([`renew`]): each extension moves the validity forward.
//!
//! Every deadline lives in one value, the [`supervisor::Supervisor`] (its header has the
//! schedule: SIGTERM at `validity − margin − kill_after`, SIGKILL at `validity − margin`,
//! both moved only by a confirmed renewal); the loop sleeps until its next deadline and carries
//! out what it decides. Because the deadlines live here and not in the renewal thread, a renewal
//! that hangs cannot delay the stop.
//!
//! The same loop speaks to systemd when it asked (`src/notify.rs`): READY=1 once the command
//! started, STATUS= on each renewal and on a stop, and the watchdog's WATCHDOG=1, which is
//! one of the supervisor's deadlines, so that only a loop that still runs sends it.
//!
//! None of this runs while redlock itself is stopped: the [`guard`] process, which is not
//! stopped with it, holds the SIGKILL deadline too (moved after each confirmed renewal) and
//! kills the group at it. A loop that wakes up past that deadline reports the lock lost,
//! whatever the renewal thread says, since the guard judged from the same deadline.

pub mod child;
pub mod guard;
pub mod job;
mod options;
pub mod renew;
mod revoked;
pub mod signals;
mod spawn;
pub mod supervisor;
pub mod watch;
mod words;

use std::ffi::OsString;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use crate::lock::{Lock, Redlock};
use crate::notify::Notifier;
use child::{Exit, StateChange};
pub use options::Options;
use renew::{LossReason, Renewal, Renewer};
use supervisor::{Action, Supervisor};
use words::Held;

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

/// How a supervised run ended.
#[derive(Debug)]
pub enum Ending {
    /// The child ended by itself (or by a signal it was sent through redlock).
    Exited(Exit),
    /// redlock stopped the child.
    Stopped { reason: StopReason, child: Exit },
    /// The command could not be started.
    NotStarted(std::io::Error),
    /// The child ended by itself (or was stopped for `--max-duration`), but its release
    /// found that `release --force` had revoked the lock before that (`by`: who, where the
    /// record says): see [`Ending::after_release`].
    Revoked {
        by: Option<Box<crate::lock::Revocation>>,
        child: Exit,
    },
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

/// Runs `command` under `lease`, and returns how it ended, telling `notify` (systemd) as it
/// goes. Releasing a held lock is the caller's: it happens on every path, including when this
/// returns `NotStarted`.
pub fn supervise(
    client: &Arc<Redlock>,
    lease: Lease<'_>,
    command: &[OsString],
    mut options: Options,
    (events, inbox): (Sender<Event>, &Receiver<Event>),
    notify: &Notifier,
) -> Ending {
    options.watchdog_every = notify.watchdog_every();
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
    let child = match child::spawn(command, &env, notify.hidden_from_command()) {
        Ok(child) => child,
        Err(error) => return Ending::NotStarted(error),
    };
    log::info!(event = "started", pid = child.pid(); "started pid {}", child.pid());
    let since = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    notify.ready(&match held {
        Some(lock) => format!(
            "holding lock {:?} since {since}; running pid {}",
            lock.key(),
            child.pid()
        ),
        None => format!(
            "running pid {} under the enclosing redlock's lock",
            child.pid()
        ),
    });
    let supervisor = Supervisor::new(Instant::now(), held.map(Lock::validity_end), options);
    let guard = start_guard(&child, supervisor.kill_at());
    // The child may have exited before this point; its SIGCHLD is then already queued. The
    // renewal thread starts when the first renewal is due: a short command never needs it.
    let start_renewer = || {
        let lock = held?.clone();
        Renewer::start(
            Arc::clone(client),
            lock,
            options.renew_every,
            events.clone(),
        )
        .inspect_err(|error| {
            // No renewal: the deadline stops the child before the validity ends.
            log::error!("cannot start the renewal thread: {error}");
        })
        .ok()
    };
    let mut run = Run {
        child,
        guard,
        renewer: None,
        supervisor,
        held: Held::of(held),
        suspended: false,
        notify,
        since,
    };
    run.wait_for_exit(inbox, start_renewer);
    run.finish()
}

/// Starts the guard on the child's group, with the first kill deadline when there is one.
/// Without a guard the command still runs: the parent-death signal stops the child itself if
/// redlock dies, and redlock's own deadlines stop it while redlock runs.
fn start_guard(child: &child::Child, deadline: Option<Instant>) -> Option<guard::Guard> {
    guard::Guard::start(child.pid(), deadline)
        .inspect_err(|error| {
            log::error!(
                "cannot start the guard process ({error}): if redlock is killed or stopped, \
                 programs the command started may outlive the lock"
            );
        })
        .ok()
}

/// One supervised command: the [`Supervisor`] decides, this carries out its decisions on the
/// processes and says what happens.
struct Run<'a> {
    child: child::Child,
    guard: Option<guard::Guard>,
    renewer: Option<Renewer>,
    supervisor: Supervisor,
    /// What the run holds, for messages.
    held: Held<'a>,
    /// The command's stop was mirrored on redlock's job (see [`job`]): resume it on SIGCONT.
    suspended: bool,
    /// systemd, when it listens.
    notify: &'a Notifier,
    /// When the command started, for systemd's STATUS=.
    since: String,
}

/// Whether the event loop goes on.
enum Flow {
    Continue,
    /// The child has exited.
    Exited,
}

impl Run<'_> {
    /// The event loop, until the child exits: signals forwarded, renewals followed, the child
    /// stopped when the supervisor says so.
    fn wait_for_exit(
        &mut self,
        inbox: &Receiver<Event>,
        mut start_renewer: impl FnMut() -> Option<Renewer>,
    ) {
        loop {
            let event = match self.supervisor.next_deadline() {
                Some(at) => inbox.recv_timeout(at.saturating_duration_since(Instant::now())),
                None => inbox.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            // Before anything else, whatever woke us (see `Supervisor::overdue`).
            if self.supervisor.overdue(Instant::now())
                && let Flow::Exited = self.killed_late()
            {
                return;
            }
            let flow = match event {
                Ok(Event::Signal(libc::SIGCHLD)) => self.on_child_changed(),
                Ok(Event::Signal(libc::SIGCONT)) => self.on_resumed(),
                Ok(Event::Signal(signal)) => self.forward(signal),
                Ok(Event::WatchedExited) => Flow::Continue,
                Ok(Event::Renewal(renewal)) => self.on_renewal(renewal),
                Err(RecvTimeoutError::Timeout) => {
                    let action = self.supervisor.on_timeout(Instant::now());
                    if action == Action::StartRenewer {
                        self.renewer = start_renewer();
                    }
                    self.carry_out(action);
                    Flow::Continue
                }
                Err(RecvTimeoutError::Disconnected) => Flow::Exited,
            };
            if let Flow::Exited = flow {
                return;
            }
        }
    }

    fn carry_out(&mut self, action: Action) {
        match action {
            Action::Wait | Action::StartRenewer => {}
            Action::Ping => self.notify.ping(),
            Action::Terminate { reason, kill_at } => {
                let (context, stop) = (self.held.context(), self.held.stop(&reason));
                self.notify
                    .status(&format!("{context}{stop}; stopping the command"));
                log::error!(
                    event = "stopping", key = self.held.key(), reason:% = reason;
                    "{context}{stop}; stopping the command (SIGTERM now, SIGKILL in {})",
                    humantime::format_duration(supervisor::round_ms(
                        kill_at.saturating_duration_since(Instant::now())
                    ))
                );
                let _ = self.child.signal_group_awake(libc::SIGTERM);
            }
            Action::Kill => {
                log::error!("the command did not stop after SIGTERM: sending SIGKILL");
                let _ = self.child.signal_group(libc::SIGKILL);
            }
        }
    }

    /// redlock ran too late to stop the command itself (see `Supervisor::overdue`): the guard
    /// has killed, or is killing, the group. If the command had ended by itself before that
    /// (an exit, or a signal other than SIGKILL), it ran under the lock: `Exited`. Otherwise
    /// the loss is reported.
    fn killed_late(&mut self) -> Flow {
        // Whatever the leader did, nothing of its group may outlive the lock.
        let _ = self.child.signal_group(libc::SIGKILL);
        if self
            .child
            .exit_status()
            .is_some_and(|exit| exit != Exit::Signal(libc::SIGKILL))
        {
            return Flow::Exited;
        }
        let (context, lost) = (self.held.context(), self.held.lost());
        log::error!(
            event = "stopping", key = self.held.key(), reason = "validity ran out while redlock was stopped";
            "{context}{lost}: its validity ran out while redlock was stopped (or not \
             scheduled), before it could renew it; the command was killed"
        );
        self.notify.status(&format!(
            "{context}{lost}: its validity ran out while redlock was stopped; the command was \
             killed"
        ));
        self.supervisor.killed_late();
        Flow::Continue
    }

    /// SIGCHLD: the child exited, stopped or continued.
    fn on_child_changed(&mut self) -> Flow {
        if self.child.has_exited() {
            return Flow::Exited;
        }
        match (self.child.state_change(), self.child.terminal()) {
            (Some(StateChange::Stopped(signal)), Some(terminal))
                if self.supervisor.is_running() =>
            {
                self.suspended =
                    job::suspend(&self.child, terminal, signal) == job::Suspension::Mirrored;
            }
            (Some(StateChange::Stopped(signal)), _) => log::info!(
                "the command was stopped ({}); redlock keeps the lock meanwhile",
                signals::name(signal)
            ),
            (Some(StateChange::Continued), _) => log::info!("the command was resumed"),
            (None, _) => {}
        }
        Flow::Continue
    }

    /// SIGCONT: redlock's job was resumed; so is the command, if its stop was mirrored.
    fn on_resumed(&mut self) -> Flow {
        if std::mem::take(&mut self.suspended)
            && self.supervisor.is_running()
            && let Some(terminal) = self.child.terminal()
        {
            job::resume(&self.child, terminal);
        }
        Flow::Continue
    }

    fn forward(&mut self, signal: i32) -> Flow {
        log::info!(
            event = "signal", signal:% = signals::name(signal);
            "forwarding {} to the command", signals::name(signal)
        );
        let _ = if signals::is_terminating(signal) {
            self.notify.status(&format!(
                "stopping: {} received, forwarded to the command",
                signals::name(signal)
            ));
            self.child.signal_group_awake(signal)
        } else {
            self.child.signal_group(signal)
        };
        Flow::Continue
    }

    fn on_renewal(&mut self, renewal: Renewal) -> Flow {
        match renewal {
            Renewal::Extended(until) => {
                let Some(kill_at) = self.supervisor.on_extended(until) else {
                    return Flow::Continue;
                };
                let key = self.held.key();
                log::debug!(event = "renewed", key = key; "renewed {key:?}");
                self.notify.holding(&format!(
                    "holding lock {key:?} since {}; last renewal {}",
                    self.since,
                    humantime::format_rfc3339_seconds(std::time::SystemTime::now())
                ));
                let moved = self
                    .guard
                    .as_mut()
                    .map(|guard| guard.move_deadline(kill_at));
                match moved {
                    // Written after the guard's previous deadline: it may have fired.
                    Some(Ok(false)) => return self.killed_late(),
                    Some(Err(error)) => {
                        log::error!(
                            "the guard process is gone ({error}): if redlock is killed or \
                             stopped, programs the command started may outlive the lock"
                        );
                        self.guard = None;
                    }
                    Some(Ok(true)) | None => {}
                }
            }
            Renewal::Unconfirmed(failures) => {
                self.supervisor.on_unconfirmed();
                let why: Vec<String> = failures.iter().map(ToString::to_string).collect();
                let key = self.held.key();
                self.notify.holding(&format!(
                    "holding lock {key:?} since {}; renewal not confirmed by a majority ({}), \
                     retrying",
                    self.since,
                    why.join(", ")
                ));
                log::info!(
                    event = "renewal_unconfirmed", key = key, outcome = "retrying";
                    "renewal of {key:?} not confirmed by a majority ({}); retrying",
                    why.join(", ")
                );
            }
            Renewal::Lost(reason) => {
                let action = self.supervisor.on_lost(Instant::now(), reason);
                self.carry_out(action);
            }
        }
        Flow::Continue
    }

    /// After the child exited: makes sure nothing of its group outlives a lost lock, stops the
    /// helpers, and reaps it.
    fn finish(mut self) -> Ending {
        let stopped = self.supervisor.stop_reason().cloned();
        if stopped.is_some() {
            // The leader is gone, but what it started may not be: nothing in the group may
            // outlive the lock.
            let _ = self.child.signal_group(libc::SIGKILL);
        }
        if let Some(renewer) = &self.renewer {
            renewer.stop();
        }
        // Dismissed before reaping: until the leader is reaped, its group id cannot be reused,
        // so the guard can never kill a stranger.
        if let Some(guard) = self.guard.take() {
            guard.dismiss();
        }
        let exit = self.child.reap().unwrap_or_else(|error| {
            log::error!("cannot reap the command: {error}");
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
}
