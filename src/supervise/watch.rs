//! `acquire --renew-while PID`: keep a lock alive for as long as another process lives.
//!
//! The renewer is a detached redlock process. It renews the lock at TTL/3 (the same renewal
//! thread as `run`) and watches PID through a pidfd, which names that exact process: a later
//! process that reuses the number is never mistaken for it. It stops at the first of:
//! - PID exits: the lock is released;
//! - the lock is released by `redlock release` (or lost): the next renewal finds it gone;
//! - the validity runs out without a successful renewal: the lock is lost.

use std::io;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender};
use std::time::{Duration, Instant};

use super::Event;
use super::renew::{LossReason, Renewal, Renewer};
use crate::lock::{Lock, Redlock};

/// Why the renewer stopped.
#[derive(Debug, PartialEq, Eq)]
pub enum WatchEnd {
    /// The watched process exited; the caller releases the lock.
    WatchedExited,
    /// The renewer itself was asked to stop; the caller releases the lock.
    Signalled(i32),
    /// The lock is gone (released by someone with the token, expired, or lost).
    Lost(LossReason),
}

/// Renews `lock` while `pid` lives. `events` is the channel the signal handlers feed.
pub fn renew_while(
    client: &Arc<Redlock>,
    lock: Lock,
    pid: i32,
    every: Duration,
    (events, inbox): (Sender<Event>, &Receiver<Event>),
) -> WatchEnd {
    if watch_exit(pid, events.clone()).is_err() {
        return WatchEnd::WatchedExited;
    }
    let renewer = Renewer::start(Arc::clone(client), lock.clone(), every, events);
    let Ok(renewer) = renewer else {
        return WatchEnd::Lost(LossReason::Expired);
    };
    let mut validity_end = lock.validity_end();
    let end = loop {
        let wait = validity_end.saturating_duration_since(Instant::now());
        match inbox.recv_timeout(wait) {
            Ok(Event::WatchedExited) => break WatchEnd::WatchedExited,
            Ok(Event::Signal(signal)) if super::signals::is_terminating(signal) => {
                break WatchEnd::Signalled(signal);
            }
            Ok(Event::Renewal(Renewal::Extended(until))) => validity_end = until,
            Ok(Event::Renewal(Renewal::Lost(reason))) => break WatchEnd::Lost(reason),
            Ok(_) => {}
            Err(_) => break WatchEnd::Lost(LossReason::Expired),
        }
    };
    renewer.stop();
    end
}

/// Reports [`Event::WatchedExited`] when `pid` exits. Fails if there is no such process.
fn watch_exit(pid: i32, events: Sender<Event>) -> io::Result<()> {
    // SAFETY: pidfd_open takes plain integers and returns a new descriptor or -1.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if pidfd < 0 {
        let error = io::Error::last_os_error();
        if error.raw_os_error() == Some(libc::ESRCH) {
            return Err(error);
        }
        // No pidfd (kernel before 5.3): poll for the pid instead.
        return spawn_watcher(move || {
            // SAFETY: signal 0 only checks that the process exists.
            while unsafe { libc::kill(pid, 0) } == 0
                || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
            {
                std::thread::sleep(Duration::from_millis(200));
            }
            let _ = events.send(Event::WatchedExited);
        });
    }
    let pidfd = pidfd as libc::c_int;
    spawn_watcher(move || {
        let mut poll = libc::pollfd {
            fd: pidfd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: `poll` is one valid pollfd; a pidfd becomes readable when the process exits.
        while unsafe { libc::poll(&mut poll, 1, -1) } == -1
            && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
        {}
        let _ = events.send(Event::WatchedExited);
    })
}

fn spawn_watcher(watch: impl FnOnce() + Send + 'static) -> io::Result<()> {
    std::thread::Builder::new()
        .name("redlock-watch".into())
        .spawn(watch)
        .map(drop)
}

/// Whether a process with this pid exists (for validating `--renew-while`).
pub fn process_exists(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    pid > 0
        && (unsafe { libc::kill(pid, 0) } == 0
            || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}

/// CLOCK_MONOTONIC now, in nanoseconds. The same clock for every process on the host, so a
/// deadline can be handed from one process to another exactly.
pub fn monotonic_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is valid storage for one timespec; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    (now.tv_sec as u64) * 1_000_000_000 + now.tv_nsec as u64
}

/// An `Instant` expressed on the shared monotonic clock.
pub fn instant_to_monotonic_ns(at: Instant) -> u64 {
    let now = Instant::now();
    let base = monotonic_ns();
    match at.checked_duration_since(now) {
        Some(ahead) => base + ahead.as_nanos() as u64,
        None => base.saturating_sub(now.duration_since(at).as_nanos() as u64),
    }
}

/// The inverse of [`instant_to_monotonic_ns`].
pub fn monotonic_ns_to_instant(ns: u64) -> Instant {
    let now = Instant::now();
    let base = monotonic_ns();
    if ns >= base {
        now + Duration::from_nanos(ns - base)
    } else {
        now.checked_sub(Duration::from_nanos(base - ns))
            .unwrap_or(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_survive_the_trip_through_the_shared_clock() {
        let at = Instant::now() + Duration::from_millis(1500);
        let back = monotonic_ns_to_instant(instant_to_monotonic_ns(at));
        let error = if back > at { back - at } else { at - back };
        // Each conversion is off by the time between its two clock reads: nanoseconds, unless
        // the thread is preempted right there, as it can be on a loaded machine.
        assert!(error < Duration::from_millis(100), "{error:?}");
    }
}
