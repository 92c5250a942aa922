//! Job control on a terminal: Ctrl-Z suspends the whole job, `fg` and `bg` resume it.
//!
//! The problem: when redlock runs in the foreground of a terminal it hands the terminal to the
//! command's process group (see [`super::child`]), so Ctrl-Z stops only the command. The shell
//! waits for redlock, which is not stopped: the prompt never comes back, and Ctrl-C or
//! `kill -TERM` reach a group that is stopped and cannot act on them.
//!
//! The fix mirrors what a shell does for a job, only while redlock handed the terminal over:
//! 1. The command's group stops (SIGCHLD, CLD_STOPPED, with the signal that stopped it).
//! 2. redlock takes the terminal back (if the command's group still has it) and stops its own
//!    process group with the same signal: the shell sees its job stopped and prints its prompt.
//!    The renewal stops with redlock; the guard, in a group of its own, does not, and kills the
//!    command if the suspension outlasts the lock's validity.
//! 3. `fg` gives the terminal to redlock's group and sends it SIGCONT: redlock passes the
//!    terminal on to the command's group (only when its own group is in the foreground, so
//!    `bg` does not steal it) and sends the command's group SIGCONT.
//!
//! The kernel discards SIGTSTP, SIGTTIN and SIGTTOU for an *orphaned* process group (one that
//! no job-control shell watches, e.g. under `script -c` or a non-interactive session): without
//! redlock in between, the command would not have stopped at all. redlock then cannot stop
//! either, and instead resumes the command at once, so that Ctrl-Z changes nothing, as it
//! would without redlock.
//!
//! Without a terminal handed over nothing is mirrored: a command stopped by someone stays
//! stopped, and redlock keeps renewing the lock for it.

use std::io;

use super::child::{self, Child};

/// What became of a stop of the command's group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suspension {
    /// redlock's job was stopped with the command: resume the command on SIGCONT.
    Mirrored,
    /// redlock's job cannot be stopped by this signal, and without redlock the command would
    /// not have been either: it was resumed at once.
    Undone,
    /// Stopped by SIGSTOP (someone's `kill -STOP`, not the terminal) in a job nobody can
    /// resume: left stopped, as without a terminal.
    Left,
}

/// The command's group was stopped by `signal` while it had redlock's terminal (see the
/// module header, step 2). When the stop is mirrored, this returns after redlock's job was
/// resumed (or at once, if the stop did not take after all).
pub fn suspend(child: &Child, terminal: libc::c_int, signal: i32) -> Suspension {
    let name = super::signals::name(signal);
    // SIGSTOP cannot be ignored, nor is it discarded for an orphaned group.
    let job_control = signal != libc::SIGSTOP;
    if own_group_is_orphaned() || (job_control && ignored(signal)) {
        if !job_control {
            log::info!("the command was stopped ({name}); redlock keeps the lock meanwhile");
            return Suspension::Left;
        }
        log::info!("the command was stopped ({name}), but this job cannot be: resuming it");
        let _ = child.signal_group(libc::SIGCONT);
        return Suspension::Undone;
    }
    log::info!("the command was stopped ({name}): stopping redlock's job with it");
    if child::foreground_group(terminal) == Some(child.pid()) {
        // SAFETY: getpgrp cannot fail.
        child::give_terminal(terminal, unsafe { libc::getpgrp() });
    }
    // SAFETY: killpg takes plain integers; our own group exists while we run.
    unsafe { libc::killpg(libc::getpgrp(), signal) };
    Suspension::Mirrored
}

/// redlock's job was resumed: hands the terminal back to the command's group when the job is
/// in the foreground (`fg`, not `bg`), and resumes that group.
pub fn resume(child: &Child, terminal: libc::c_int) {
    // SAFETY: getpgrp cannot fail.
    if child::foreground_group(terminal) == Some(unsafe { libc::getpgrp() }) {
        child::give_terminal(terminal, child.pid());
    }
    let _ = child.signal_group(libc::SIGCONT);
}

/// Whether redlock ignores `signal` (inherited SIG_IGN): it would then not be stopped by it.
fn ignored(signal: i32) -> bool {
    let mut current = std::mem::MaybeUninit::<libc::sigaction>::zeroed();
    // SAFETY: with a null new action sigaction only fills `current`, valid storage.
    let rc = unsafe { libc::sigaction(signal, std::ptr::null(), current.as_mut_ptr()) };
    // SAFETY: filled by sigaction, or still zeroed.
    rc == 0 && unsafe { current.assume_init() }.sa_sigaction == libc::SIG_IGN
}

/// Whether redlock's process group is orphaned, as far as its line of ancestors tells: the
/// group is watched by a job-control shell when a member's parent is in another group of the
/// same session. The ancestors are the members that matter in practice (a pipeline's other
/// members share the parent of one of them).
fn own_group_is_orphaned() -> bool {
    // SAFETY: getpgrp, getsid and getpid take no pointers and cannot fail for ourselves.
    let (group, session, mut pid) = unsafe { (libc::getpgrp(), libc::getsid(0), libc::getpid()) };
    for _ in 0..64 {
        let Ok(parent) = parent_of(pid) else {
            return true;
        };
        if parent <= 1 {
            return true;
        }
        // SAFETY: getpgid and getsid take plain integers; -1 when the parent is gone.
        let (parent_group, parent_session) =
            unsafe { (libc::getpgid(parent), libc::getsid(parent)) };
        if parent_group == -1 || parent_session == -1 {
            return true;
        }
        if parent_group != group {
            return parent_session != session;
        }
        pid = parent;
    }
    true
}

fn parent_of(pid: libc::pid_t) -> io::Result<libc::pid_t> {
    // SAFETY: getpid and getppid cannot fail.
    if pid == unsafe { libc::getpid() } {
        // SAFETY: as above.
        return Ok(unsafe { libc::getppid() });
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // After the command name, which may contain anything: state, then the parent's pid.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse().ok())
        .ok_or_else(|| io::Error::other("unreadable /proc stat"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_of_this_process_is_known() {
        // SAFETY: getpid and getppid cannot fail.
        let (me, parent) = unsafe { (libc::getpid(), libc::getppid()) };
        assert_eq!(parent_of(me).unwrap(), parent);
        if parent > 1 {
            // Through /proc this time.
            assert!(parent_of(parent).unwrap() >= 0);
        }
    }
}
