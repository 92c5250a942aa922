//! Blocking steps that a terminating signal, or their own deadline, ends.
//!
//! The problem: once redlock's signal handlers are installed (before the first request to a
//! master; see `supervise::signals`), SIGINT, SIGTERM and SIGHUP no longer end the process by
//! their default action: they become events that redlock's own code must look at. Code blocked
//! in the kernel never looks. Opening a FIFO waits for a writer, a write to a pipe that nobody
//! reads waits for a reader, a file on a hung network mount waits for its server; `kill -TERM`
//! then does nothing, only SIGKILL ends redlock, and a cron job's status is lost.
//!
//! The fix: every step that may block after the handlers are installed runs through
//! [`bounded`], on a thread of its own, while the caller waits for whichever comes first: the
//! step's result, a terminating signal, or the step's deadline. When the signal or the deadline
//! wins, the step is abandoned on its thread, which ends with the process a moment later; the
//! caller decides the exit status (the command's own, or 128+N, as the docs say).
//!
//! Which steps, and why the others need no thread:
//! - the metrics file (`--metrics-file`): its lock wait has a bound of its own, and a path that
//!   is not a regular file is refused without being opened, but a file system can still hang;
//! - `acquire` handing the token over on standard output, which blocks on a full pipe.
//! - Config, password and certificate files are read before the handlers are installed, where
//!   a signal still ends redlock by its default action.
//! - Requests to masters, name resolution included, run under the node timeout and end on
//!   [`crate::lock::Cancel`]; the client's runtime is shut down without waiting for a name
//!   lookup still blocked in the C library.
//!
//! A step's thread is never joined: a thread blocked in the kernel cannot be interrupted, and a
//! process that exits takes it along. So a step must not hold anything that the exit path
//! needs: the token goes out through a duplicate of descriptor 1, not through `std::io::stdout`,
//! whose lock the exit path takes to flush.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::supervise::{Event, signals};

use crate::metrics::{self, Observations};

use super::acquiring::Signals;

/// How often the wait looks for a signal while the step runs: the delay between a signal and
/// redlock's exit, at most.
const SIGNAL_POLL: Duration = Duration::from_millis(10);

/// How a bounded step ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended<T> {
    /// The step finished, with this result.
    Done(T),
    /// This terminating signal came first; the step was abandoned.
    Signalled(i32),
    /// The step was abandoned, or never started, for this reason ("it took more than 10s").
    Abandoned(String),
}

/// Runs `step` on a thread of its own and waits for its result, a terminating signal in
/// `signals` (when the handlers are installed), or `limit`, whichever comes first (see the
/// module header).
pub fn bounded<T: Send + 'static>(
    signals: Option<&Signals>,
    limit: Duration,
    step: impl FnOnce() -> T + Send + 'static,
) -> Ended<T> {
    let (done, result) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("redlock-step".into())
        .spawn(move || {
            let _ = done.send(step());
        });
    if let Err(error) = spawned {
        return Ended::Abandoned(format!("cannot start a thread for it: {error}"));
    }
    let give_up = Instant::now() + limit;
    loop {
        let slice = give_up
            .saturating_duration_since(Instant::now())
            .min(SIGNAL_POLL);
        match result.recv_timeout(slice) {
            Ok(value) => return Ended::Done(value),
            Err(RecvTimeoutError::Disconnected) => {
                return Ended::Abandoned("its thread ended without a result".into());
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
        if let Some(signal) = signals.and_then(terminating_signal) {
            return Ended::Signalled(signal);
        }
        if Instant::now() >= give_up {
            return Ended::Abandoned(format!(
                "it took more than {}",
                humantime::format_duration(limit)
            ));
        }
    }
}

/// Adds `seen` to the metrics file at `path`, if one is asked for, as a bounded step. Metrics
/// never change how a command ends: a failure, the deadline or a signal each cost one warning
/// line. The signal is returned, so that the caller can stop at once.
pub fn record_metrics(
    signals: Option<&Signals>,
    path: Option<&std::path::Path>,
    seen: &Observations,
) -> Option<i32> {
    let path = path?.to_path_buf();
    let shown = path.display().to_string();
    let seen = seen.clone();
    let why = match bounded(signals, metrics::WRITE_LIMIT, move || {
        metrics::record(&path, &seen)
    }) {
        Ended::Done(Ok(())) => return None,
        Ended::Done(Err(why)) | Ended::Abandoned(why) => why,
        Ended::Signalled(signal) => {
            log::warn!(
                "warning: metrics file {shown}: not written: interrupted by {}",
                signals::name(signal)
            );
            return Some(signal);
        }
    };
    log::warn!("warning: metrics file {shown}: {why} (the command's result is unaffected)");
    None
}

/// The first terminating signal waiting in the supervisor's channel, if any; other events
/// (a forwarded USR1 after the command ended, renewal news) no longer matter here.
fn terminating_signal(signals: &Signals) -> Option<i32> {
    signals.inbox.try_iter().find_map(|event| match event {
        Event::Signal(signal) if signals::is_terminating(signal) => Some(signal),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::Cancel;

    fn signals() -> Signals {
        let (events, inbox) = crate::supervise::channel();
        Signals {
            events,
            inbox,
            cancel: Cancel::default(),
        }
    }

    #[test]
    fn a_step_that_finishes_gives_its_result() {
        assert_eq!(
            bounded(Some(&signals()), Duration::from_secs(5), || 7),
            Ended::Done(7)
        );
    }

    #[test]
    fn a_terminating_signal_ends_a_blocked_step() {
        let signals = signals();
        signals.events.send(Event::Signal(libc::SIGUSR1)).unwrap();
        signals.events.send(Event::Signal(libc::SIGTERM)).unwrap();
        let ended = bounded(Some(&signals), Duration::from_secs(60), || {
            std::thread::sleep(Duration::from_secs(3600))
        });
        assert_eq!(ended, Ended::Signalled(libc::SIGTERM));
    }

    #[test]
    fn a_blocked_step_ends_at_its_deadline() {
        let ended = bounded(None, Duration::from_millis(30), || {
            std::thread::sleep(Duration::from_secs(3600))
        });
        assert_eq!(ended, Ended::Abandoned("it took more than 30ms".into()));
    }
}
