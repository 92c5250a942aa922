//! Taking the lock from a command: signals that end the wait, the wait itself with its
//! progress line, and the fencing token that may follow; `take_in_turn`, the whole sequence
//! that `run` and `acquire` share.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender};
use std::thread::JoinHandle;

use crate::config::LockSettings;
use crate::exit::{self, Failure};
use crate::lock::{AcquireError, AttemptFailure, Cancel, Holder, Lock, Redlock, Request, Wakeup};
use crate::metrics::{Observations, Outcome};
use crate::notify::Notifier;
use crate::plural::counted;
use crate::supervise::{self, Event, signals};

use super::ordering;
use super::progress::{self, WaitProgress};
use super::releasing::report_release;
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

/// A lock taken in turn (`take_in_turn`): the lock and when it was taken (before the order
/// raise and the fence: `--hold-min` and the metrics count from there), the asking after the
/// masters its round did not hear (`LateRefusals::finish` once the command has started), and
/// the fencing token when `--fence` asked for one.
pub struct Taken {
    pub lock: Lock,
    pub taken_at: std::time::Instant,
    pub late: LateRefusals,
    pub fence: Option<u64>,
}

/// Takes the lock as `run` and `acquire` do, in order: the `--order` check before any wait,
/// the lock itself (`acquire`), the order raised under it, a fencing token if asked. A step
/// that fails after the lock was taken releases it and says why (see `ordering`,
/// `fence_if_asked`). `seen` gets what each step observed, for `--metrics-file`.
pub fn take_in_turn(
    client: &Arc<Redlock>,
    settings: &LockSettings,
    holder: &Holder,
    signals: &Signals,
    quiet: bool,
    (seen, notify): (&mut Observations, &Notifier),
) -> Result<Taken, Failure> {
    ordering::check_before_waiting(client, settings, quiet, seen)?;
    let lock = acquire(client, settings, holder, signals, quiet, (seen, notify))?;
    let taken_at = std::time::Instant::now();
    let late = LateRefusals::start(client, &lock);
    ordering::raise_if_asked(client, &lock, settings, quiet, seen)?;
    let fence = fence_if_asked(client, &lock, settings.fence)?;
    Ok(Taken {
        lock,
        taken_at,
        late,
        fence,
    })
}

/// Takes the lock as `settings` say. While waiting, says who is in the way (with -v, or when
/// stderr is a terminal), and tells systemd in STATUS= when it listens (`notify`). A wait that
/// a signal ended fails with 128+N, quietly. `seen` gets the time spent and the outcome, for
/// `--metrics-file`.
pub fn acquire(
    client: &Redlock,
    settings: &LockSettings,
    holder: &Holder,
    signals: &Signals,
    quiet: bool,
    (seen, notify): (&mut Observations, &Notifier),
) -> Result<Lock, Failure> {
    let mut progress = WaitProgress::new(&settings.key, quiet, settings.wait);
    let asked = std::time::Instant::now();
    let mut told = String::new();
    let mut on_retry = |failure: &AttemptFailure| {
        progress.update(failure);
        // Each change once: a waiter may be retried often, and systemd reads every datagram.
        let status = progress::wait_status(&settings.key, failure);
        if status != told {
            notify.status(&status);
            told = status;
        }
    };
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
    let result = client.acquire(&request, &signals.cancel, &mut on_retry);
    progress.finish();
    seen.wait = Some(asked.elapsed());
    seen.outcomes.extend(match &result {
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
    });
    if let Ok(lock) = &result {
        wording::warn_degraded(&settings.key, lock.refusals());
        seen.wakeup = lock.woken_by().map(Wakeup::label);
    }
    result.map_err(|error| match error {
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
    })
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

/// Obtains a fencing token for a lock just taken, if `--fence` asked for one; on failure the
/// lock is released and the failure explains why.
pub fn fence_if_asked(client: &Redlock, lock: &Lock, asked: bool) -> Result<Option<u64>, Failure> {
    if asked {
        fence(client, lock).map(Some)
    } else {
        Ok(None)
    }
}

fn fence(client: &Redlock, lock: &Lock) -> Result<u64, Failure> {
    client.fence(lock).map_err(|error| {
        report_release(client, lock);
        wording::fence_failure(lock.key(), error)
    })
}

/// The masters a lock was taken without that the round did not hear (still being connected
/// to, or answering after the quorum decided), asked again from a thread of their own (see
/// the lock's `late` module): each that refused for a configuration reason (a certificate that
/// does not verify, a wrong password or database, a read-only replica) gets the warning a
/// refusal in the round gets. The command does not wait for it; [`LateRefusals::finish`]
/// does, at most one node timeout after the start.
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
