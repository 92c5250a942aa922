//! Catching the signals redlock forwards to its child.
//!
//! The problem: a signal that arrives while redlock waits for the lock must end the wait and
//! release what it holds; one that arrives while the child runs must reach the child's process
//! group; and one must never be lost in between (for example while the child is being spawned).
//!
//! The fix, in order:
//! 1. Install the handlers before anything else happens (before the first request to a master,
//!    long before the spawn). signal-hook's handler only writes to a self-pipe.
//! 2. A dedicated thread reads the pipe and turns each signal into an [`Event::Signal`] on the
//!    supervisor's channel, and wakes a waiting `acquire` for the forwarded ones.
//! 3. The supervisor handles events only after the spawn returned and the pid is known; a
//!    signal that came during the spawn waits in the channel and is forwarded then.
//!
//! Before the command exists (while redlock takes the lock or waits in line), every forwarded
//! signal ends the wait ([`ends_the_wait`]): redlock gives back what it took, leaves the line
//! and exits 128+N. SIGUSR1 and SIGUSR2 included: there is nobody yet to forward them to, and
//! holding them for a command that does not exist yet would deliver them the moment it
//! starts, where their default action kills it before it did anything (exit 138 or 140 for a
//! run that never ran). Ending the wait is what the signal asked of redlock, the process it
//! was sent to: its default action ends a process without a handler for it. Dropping it would
//! leave `kill -USR1` without any effect at all. Once the command runs, they are forwarded to
//! it, as every other.
//!
//! A signal that was ignored when redlock started (`nohup` ignores HUP, a non-interactive shell
//! ignores INT and QUIT for background jobs) stays ignored: redlock installs no handler for it,
//! so the child inherits SIG_IGN just as it would without redlock in between.
//!
//! The signal mask is inherited too, and the same transparency applies to it, with one twist:
//! a handler never runs for a signal that every thread blocks. A parent that spawned redlock
//! with SIGCHLD blocked (std's `Command` keeps the parent's mask; so do many supervisors) left
//! `run` waiting forever for an exit it was never told of; with TERM blocked, `kill` did
//! nothing. So [`install`], the first thing a command that handles signals does (before any
//! thread but the main one exists), notes the mask redlock inherited and unblocks, in the main
//! thread, every signal it installs a handler for; threads started later inherit that. The
//! command starts with the inherited mask ([`inherited_mask`], restored by `spawn` between
//! clone and exec), as it would have without redlock in between.

use std::sync::OnceLock;
use std::sync::mpsc::Sender;

use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2};
use signal_hook::iterator::Signals;

use super::Event;
use crate::lock::Cancel;

/// The signals forwarded to the child's process group.
pub const FORWARDED: [i32; 6] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2];

/// Signals that a stopped command must be woken to act on (SIGCONT follows them), and that
/// end redlock's own bounded steps once the command has ended (see `commands::bounded`).
pub fn is_terminating(signal: i32) -> bool {
    matches!(signal, SIGINT | SIGTERM | SIGHUP | SIGQUIT)
}

/// Signals that end a wait for the lock, before the command exists: every forwarded one (see
/// the module header for SIGUSR1 and SIGUSR2).
pub fn ends_the_wait(signal: i32) -> bool {
    FORWARDED.contains(&signal)
}

/// Caught but never forwarded: SIGCHLD tells the supervisor that its child exited, stopped or
/// continued, so no thread has to sit in waitpid; SIGCONT tells it that redlock's own job was
/// resumed (`fg`, `bg`), so it can resume a command whose stop it mirrored.
pub const WATCHED: [i32; 2] = [libc::SIGCHLD, libc::SIGCONT];

/// Every signal redlock may have a handler for; the command starts with their default action.
pub fn handled() -> impl Iterator<Item = i32> {
    FORWARDED.into_iter().chain(WATCHED)
}

/// The signal mask redlock started with, noted by [`install`] before it unblocked anything.
static INHERITED_MASK: OnceLock<libc::sigset_t> = OnceLock::new();

/// The mask the command starts with: the one redlock inherited, when [`install`] noted it.
pub fn inherited_mask() -> Option<libc::sigset_t> {
    INHERITED_MASK.get().copied()
}

/// Installs the handlers and starts the thread that reports signals as events. Call it from
/// the main thread, before starting any other (see the module header for the mask).
pub fn install(events: Sender<Event>, cancel: Cancel) -> std::io::Result<()> {
    let caught: Vec<i32> = FORWARDED
        .into_iter()
        .filter(|s| !ignored_at_start(*s))
        .chain(WATCHED)
        .collect();
    let mut signals = Signals::new(&caught)?;
    unblock(&caught)?;
    std::thread::Builder::new()
        .name("redlock-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                // Queue the event before waking the wait: whoever is woken looks for it.
                let delivered = events.send(Event::Signal(signal)).is_ok();
                if ends_the_wait(signal) {
                    cancel.cancel();
                }
                if !delivered {
                    return;
                }
            }
        })?;
    Ok(())
}

/// Unblocks `caught` in the calling thread, after noting the mask it had (once: the first
/// call's is the inherited one).
fn unblock(caught: &[i32]) -> std::io::Result<()> {
    let mut set = std::mem::MaybeUninit::<libc::sigset_t>::zeroed();
    let mut previous = std::mem::MaybeUninit::<libc::sigset_t>::zeroed();
    // SAFETY: both sets are valid storage for one sigset_t; sigemptyset initialises `set`
    // before sigaddset and pthread_sigmask read it, and pthread_sigmask fills `previous`.
    let rc = unsafe {
        libc::sigemptyset(set.as_mut_ptr());
        for &signal in caught {
            libc::sigaddset(set.as_mut_ptr(), signal);
        }
        libc::pthread_sigmask(libc::SIG_UNBLOCK, set.as_ptr(), previous.as_mut_ptr())
    };
    if rc != 0 {
        return Err(std::io::Error::from_raw_os_error(rc));
    }
    // SAFETY: pthread_sigmask succeeded, so it filled `previous`.
    let _ = INHERITED_MASK.set(unsafe { previous.assume_init() });
    Ok(())
}

/// True when `signal` is set to SIG_IGN, as inherited from whoever started redlock.
fn ignored_at_start(signal: i32) -> bool {
    let mut current = std::mem::MaybeUninit::<libc::sigaction>::zeroed();
    // SAFETY: with a null new action, sigaction only reads the current disposition into
    // `current`, which is valid writable storage for one `struct sigaction`.
    let rc = unsafe { libc::sigaction(signal, std::ptr::null(), current.as_mut_ptr()) };
    if rc != 0 {
        return false;
    }
    // SAFETY: sigaction succeeded, so it filled `current` (and it was zeroed before anyway).
    let current = unsafe { current.assume_init() };
    current.sa_sigaction == libc::SIG_IGN
}

/// The conventional name of a forwarded signal, for messages.
pub fn name(signal: i32) -> String {
    match signal {
        SIGINT => "SIGINT".into(),
        SIGTERM => "SIGTERM".into(),
        SIGHUP => "SIGHUP".into(),
        SIGQUIT => "SIGQUIT".into(),
        SIGUSR1 => "SIGUSR1".into(),
        SIGUSR2 => "SIGUSR2".into(),
        libc::SIGKILL => "SIGKILL".into(),
        libc::SIGSTOP => "SIGSTOP".into(),
        libc::SIGTSTP => "SIGTSTP".into(),
        libc::SIGTTIN => "SIGTTIN".into(),
        libc::SIGTTOU => "SIGTTOU".into(),
        libc::SIGCONT => "SIGCONT".into(),
        other => format!("signal {other}"),
    }
}
