//! Taking the lock from a command: signals that end the wait, and `take_in_turn`, the glue
//! around the library's sequence that `run` and `acquire` share (the wait's progress line,
//! what each step counts, and the failure each step's error maps to).

use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::config::LockSettings;
use crate::exit::{self, Failure};
use crate::lock::{
    AcquireError, AttemptFailure, Cancel, Holder, Lock, Redlock, Request, Steps, TakeError,
    TakeObserver, Taken, Wakeup,
};
use crate::metrics::{Observations, Outcome};
use crate::notify::Notifier;
use crate::plural::counted;
use crate::supervise::{self, Event, signals};

use super::ordering::{self, Stage};
use super::progress::{self, WaitProgress};
use super::releasing::say_release;
use super::wording;

/// What a command that may wait for a lock hears of signals: the supervisor's channel, with the
/// handlers installed on it, and the cancel that a terminating signal triggers.
pub struct Signals {
    pub events: Sender<Event>,
    pub inbox: Receiver<Event>,
    pub cancel: Cancel,
}

/// Installs the signal handlers. Done before taking the lock, so that a signal arriving
/// meanwhile ends the wait and releases whatever was taken.
pub fn listen_for_signals() -> Result<Signals, Failure> {
    let (events, inbox) = supervise::channel();
    let cancel = Cancel::default();
    signals::install(events.clone(), cancel.clone())
        .map_err(|e| Failure::os(format!("cannot install signal handlers: {e}")))?;
    Ok(Signals {
        events,
        inbox,
        cancel,
    })
}

/// The failure for a wait that a signal ended: exit 128+N for the signal found in `inbox`
/// (SIGINT if none is there any more), and nothing printed.
fn interrupted(inbox: &Receiver<Event>, key: &str) -> Failure {
    let signal = inbox
        .try_iter()
        .find_map(|event| match event {
            Event::Signal(s) if signals::ends_the_wait(s) => Some(s),
            _ => None,
        })
        .unwrap_or(libc::SIGINT);
    log::info!(
        "{} while waiting for lock {key:?}: gave up",
        signals::name(signal)
    );
    Failure::new(exit::killed_by(signal), "")
}

/// The note for the holder record, as `settings` have it; said with -v, with where it came
/// from (an automatic one is easy to forget).
pub fn note(settings: &LockSettings) -> Option<String> {
    let note = settings.note.as_ref()?;
    log::info!(
        "lock {:?}: the holder record's note is {} (from {})",
        settings.key,
        crate::escape::quoted(&note.text),
        note.from
    );
    Some(note.text.clone())
}

/// Takes the lock as `run` and `acquire` do: the library's sequence
/// (`Redlock::take_in_turn`: the `--order` check before any wait, the lock, the order raised
/// under it, a fencing token if asked), and what a command says of it. While waiting, says who
/// is in the way (with -v, or when stderr is a terminal), and tells systemd in STATUS= when it
/// listens (`notify`). A wait that a signal ended fails with 128+N, quietly. `seen` gets what
/// each step observed, for `--metrics-file`. With the lock comes the asking after the masters
/// its round did not hear ([`LateRefusals::finish`] once the command has started).
pub fn take_in_turn(
    client: &Arc<Redlock>,
    settings: &LockSettings,
    holder: &Holder,
    signals: &Signals,
    quiet: bool,
    (seen, notify): (&mut Observations, &Notifier),
) -> Result<(Taken, LateRefusals), Failure> {
    let kind = settings.kind();
    let quorum = match kind.limit() {
        Some(limit) => {
            announce_slot_quorum(client, &settings.key, limit);
            client.slot_quorum(limit)
        }
        None => client.quorum(),
    };
    let request = Request {
        key: &settings.key,
        kind,
        timing: settings.timing,
        holder: Some(holder),
        wait: settings.wait,
        supersede: settings.supersede,
        history: settings.history,
    };
    let steps = Steps {
        order: settings.order,
        fence: settings.fence,
    };
    let mut heard = Heard {
        client,
        settings,
        progress: WaitProgress::new(&settings.key, quiet, settings.wait),
        told: String::new(),
        notify,
        seen,
        late: None,
    };
    let taken = client.take_in_turn(&request, steps, &signals.cancel, &mut heard);
    let Heard { late, seen, .. } = heard;
    let key = &settings.key;
    // Only a run with an order fails in the order's steps.
    let order = settings.order.unwrap_or_default();
    let error = match taken {
        Ok(taken) => return Ok((taken, late.unwrap_or_default())),
        Err(error) => error,
    };
    Err(match error {
        TakeError::Order(error) => {
            ordering::failure(key, order, error, settings, quiet, seen, Stage::Read)
        }
        TakeError::Acquire(error) => acquire_failure(error, settings, signals, quorum, quiet),
        TakeError::Raise { error, released } => {
            say_release(key, settings.timing.ttl, &released);
            ordering::failure(key, order, error, settings, quiet, seen, Stage::Raised)
        }
        TakeError::Fence { error, released } => {
            say_release(key, settings.timing.ttl, &released);
            wording::fence_failure(key, error)
        }
    })
}

/// What a command hears of its take in turn: the progress line and systemd's STATUS= while
/// it waits; then the wait's outcome, counted in `seen`, and, with the lock, the warnings
/// about masters that refused and the asking after those not heard.
struct Heard<'a> {
    client: &'a Arc<Redlock>,
    settings: &'a LockSettings,
    progress: WaitProgress<'a>,
    told: String,
    notify: &'a Notifier,
    seen: &'a mut Observations,
    late: Option<LateRefusals>,
}

impl TakeObserver for Heard<'_> {
    fn retry(&mut self, failure: &AttemptFailure) {
        self.progress.update(failure);
        // Each change once: a waiter may be retried often, and systemd reads every datagram.
        let status = progress::wait_status(&self.settings.key, failure);
        if status != self.told {
            self.notify.status(&status);
            self.told = status;
        }
    }

    fn waited(&mut self, outcome: &Result<Lock, AcquireError>, waited: Duration) {
        self.progress.finish();
        self.seen.wait = Some(waited);
        self.seen
            .outcomes
            .extend(outcome_of(self.settings, outcome));
        if let Ok(lock) = outcome {
            wording::warn_degraded(&self.settings.key, lock.refusals());
            self.seen.wakeup = lock.woken_by().map(Wakeup::label);
            self.late = Some(LateRefusals::start(self.client, lock));
        }
    }
}

/// The outcome a wait counts in the metrics.
fn outcome_of(settings: &LockSettings, outcome: &Result<Lock, AcquireError>) -> Option<Outcome> {
    match outcome {
        Ok(_) => Some(Outcome::Acquired),
        Err(AcquireError::Failed(AttemptFailure::Held { .. } | AttemptFailure::Full { .. })) => {
            Some(Outcome::Conflict)
        }
        Err(AcquireError::Failed(_)) => Some(Outcome::Unavailable),
        Err(AcquireError::Superseded(superseded)) if outdated(settings, superseded) => {
            Some(Outcome::Outdated)
        }
        Err(AcquireError::Superseded(_)) => Some(Outcome::Superseded),
        Err(AcquireError::LostPlace) => Some(Outcome::LostPlace),
        // Interrupted: the time spent counts, but nothing was decided. A key used two ways is
        // a usage error, not an outcome of the lock.
        Err(AcquireError::Cancelled | AcquireError::Conflict(_)) => None,
    }
}

/// The failure of a wait that ended without the lock (`quorum`: what one hold needs).
fn acquire_failure(
    error: AcquireError,
    settings: &LockSettings,
    signals: &Signals,
    quorum: usize,
    quiet: bool,
) -> Failure {
    match error {
        AcquireError::Cancelled => interrupted(&signals.inbox, &settings.key),
        AcquireError::Failed(failure) => {
            wording::describe_failure(&settings.key, &failure, settings, quorum, quiet)
        }
        AcquireError::Conflict(conflict) => wording::conflict(&settings.key, &conflict),
        AcquireError::Superseded(superseded) => {
            let outdated = outdated(settings, &superseded);
            let code = if outdated {
                settings.outdated_exit_code
            } else {
                settings.superseded_exit_code
            };
            let line =
                wording::superseded(&settings.key, &superseded, settings.order, outdated, code);
            Failure::new(code, if quiet { String::new() } else { line })
        }
        AcquireError::LostPlace => {
            Failure::new(exit::LOST_PLACE, wording::lost_place(&settings.key))
        }
    }
}

/// Whether a waiter that a newer one superseded is outdated rather than superseded: it has an
/// order, and a higher order was waiting in line before it came (`--supersede` with
/// `--order`), so it was refused on arrival, not evicted.
fn outdated(settings: &LockSettings, superseded: &crate::lock::Superseded) -> bool {
    let theirs = superseded.mark.by.as_ref().and_then(|by| by.order);
    match (settings.order, theirs) {
        (Some(ours), Some(theirs)) => theirs > ours && superseded.was_there_first(),
        _ => false,
    }
}

/// Says (with -v) how many masters a slot needs, and warns when that is all of them.
fn announce_slot_quorum(client: &Redlock, key: &str, limit: u32) {
    let n = client.masters().count();
    let q = client.slot_quorum(limit);
    log::info!(
        "semaphore {key:?}: limit {limit}, a slot needs {q} of {} (tolerates {} down)",
        counted(n, "master"),
        n - q
    );
    if q == n && n > 1 {
        log::warn!(
            "warning: --limit {limit} with {n} masters needs a slot on all {n}: one master down \
             stops every holder; use more masters (see docs/semaphore.md)"
        );
    }
}

/// The masters a lock was taken without that the round did not hear (still being connected
/// to, or answering after the quorum decided), asked again from a thread of their own (see
/// the lock's `late` module): each that refused for a configuration reason (a certificate that
/// does not verify, a wrong password or database, a read-only replica) gets the warning a
/// refusal in the round gets. The command does not wait for it; [`LateRefusals::finish`]
/// does, at most one node timeout after the start.
#[derive(Default)]
pub struct LateRefusals(Option<(JoinHandle<()>, Cancel)>);

impl LateRefusals {
    pub fn start(client: &Arc<Redlock>, lock: &Lock) -> LateRefusals {
        if !client.has_unheard(lock) {
            return LateRefusals(None);
        }
        let (client, lock) = (Arc::clone(client), lock.clone());
        let done = Cancel::default();
        let ended = done.clone();
        let asking = std::thread::Builder::new()
            .name("redlock-late".into())
            .spawn(move || {
                wording::warn_degraded(lock.key(), &client.late_refusals(&lock, &ended));
            });
        LateRefusals(asking.ok().map(|asking| (asking, done)))
    }

    /// Waits until the answers are in and reported (bounded: see [`LateRefusals::start`]); a
    /// master that had the round's request and is still silent is not waited for (it may be
    /// paused), what it sent by now is reported.
    pub fn finish(self) {
        if let Some((asking, done)) = self.0 {
            done.cancel();
            let _ = asking.join();
        }
    }
}
