//! The guard: a small process that kills the command's whole process group when redlock can no
//! longer vouch for the lock, because redlock died or because it was stopped.
//!
//! Invariant: **while the command's group lives, some process that is not stopped with redlock
//! holds a deadline no later than the end of the lock's validity, and kills the group at it.**
//!
//! 1. The problem. The command must never run past the lock's validity. redlock's own event
//!    loop stops it in time (SIGTERM, grace, SIGKILL), but only while redlock runs:
//!    - redlock killed (SIGKILL, OOM, a crash): the parent-death signal reaches only the direct
//!      child, so a shell's own children would run on without the lock;
//!    - redlock *stopped* (SIGSTOP, `kill -STOP -PGID`, the job suspended with Ctrl-Z, a
//!      debugger): its renewal stops too, the validity runs out, another host takes the lock,
//!      and the command, which runs in a group of its own, goes on.
//! 2. The fix. A guard process, forked by redlock, waits on a pipe whose only write end redlock
//!    holds. It is in a process group of its own (so a signal to redlock's group, or the shell's
//!    job control, does not stop it), blocks every signal, and holds no descriptor but its pipe
//!    (no socket, no terminal, no output pipe of the caller's). It knows the group and the
//!    first kill deadline from its copy of redlock's memory; over the pipe redlock sends
//!    fixed-size records: later deadlines, and finally "dismissed".
//!    - End of file (redlock died): SIGKILL to the group, exit.
//!    - The deadline passes: SIGKILL to the group, exit. The deadline is a CLOCK_MONOTONIC
//!      instant, the same clock in every process on the host, and absolute, so a record that
//!      travels late grants nothing extra.
//!    - Dismissed: exit without killing.
//! 3. Which deadlines are sent. The deadline is `validity − stop_margin`, the instant at which
//!    redlock itself sends SIGKILL. redlock moves it only after a *confirmed* extension (a
//!    majority answered before the previous validity ended), and the new validity is measured
//!    from the *start* of that extension; so each deadline was true when sent, and the guard
//!    takes a new one only if it is later than the one it has.
//! 4. The race: redlock confirms an extension, then is stopped before the new deadline reaches
//!    the guard. The guard still holds the previous deadline, which is still correct (it is
//!    earlier), and kills at it: the command loses time, never safety. When redlock resumes it
//!    sees that its own kill deadline has passed and reports the lock lost, whatever the renewal
//!    thread says: the supervisor and the guard judge from the same deadline.
//! 5. The race at the end: redlock dismisses the guard, then reaps the command (after which its
//!    group id may be reused). The guard decides to kill only after reading the clock past its
//!    deadline *and then* finding its pipe empty, so a dismissal written before the deadline
//!    always wins. When redlock cannot show that it wrote the dismissal before the deadline it
//!    SIGKILLs the guard and reaps it first ([`Guard::dismiss`]): no kill can land after the
//!    reap.
//!
//! The guard is a plain `fork` (no shared memory with redlock), which never calls `exec`:
//! between fork and its exit it makes only async-signal-safe calls (setpgid, chdir,
//! close_range/close, clock_gettime, ppoll, read, kill, setpriority, _exit) on its own stack,
//! with no allocation and no lock, as a child of a multi-threaded process must.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Instant;

use super::watch::monotonic_ns;

/// One order on the pipe: `[kind, value]`. 16 bytes, far below PIPE_BUF, so every write is
/// atomic and every read returns whole records.
type Record = [u64; 2];
const DEADLINE: u64 = 2;
const DISMISS: u64 = 3;

/// The guard's exit codes (for whoever reaps it; nothing depends on them).
const DISMISSED: i32 = 0;
const ORPHANED: i32 = 1;
const FIRED: i32 = 2;

/// No deadline.
const NEVER: u64 = u64::MAX;

/// The running guard. Call [`Guard::dismiss`] on every normal exit path, before reaping the
/// command.
pub struct Guard {
    pid: libc::pid_t,
    orders: OwnedFd,
    /// The deadline the guard is certain to have before it could act on an earlier one: a
    /// deadline counts once it was written before the previous one passed.
    firm: u64,
}

impl Guard {
    /// Forks the guard for the process group `group`, with the first kill deadline if there is
    /// one. Start it while the group's leader is unreaped (its id cannot be reused until then).
    pub fn start(group: libc::pid_t, deadline: Option<Instant>) -> io::Result<Guard> {
        let deadline = deadline.map_or(NEVER, deadline_ns);
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` is valid storage for two descriptors. O_CLOEXEC keeps both ends out of
        // the command.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == -1 {
            return Err(io::Error::last_os_error());
        }
        let [read_end, write_end] = fds;
        // SAFETY: both came from pipe2 above and nothing else owns them.
        let (read_end, orders) = unsafe {
            (
                OwnedFd::from_raw_fd(read_end),
                OwnedFd::from_raw_fd(write_end),
            )
        };
        // Both values travel in the fork's copy of memory: no record, no wake-up of the guard.
        let pid = fork_with_signals_blocked(|| guard_main(read_end.as_raw_fd(), group, deadline))?;
        // Also from this side, so that the guard is out of redlock's group by the time this
        // returns (whichever of the two runs first); it fails only if the guard already did it
        // or is already gone.
        // SAFETY: setpgid takes plain integers; `pid` is our child.
        unsafe { libc::setpgid(pid, pid) };
        drop(read_end);
        Ok(Guard {
            pid,
            orders,
            firm: deadline,
        })
    }

    /// Moves the kill deadline to `at` (later only: the guard ignores an earlier one).
    /// `Ok(false)` when the record may have arrived after the previous deadline passed: the
    /// guard may then have killed the group already, and the caller must treat the lock as
    /// lost. An error when the guard is gone.
    pub fn move_deadline(&mut self, at: Instant) -> io::Result<bool> {
        let at = deadline_ns(at);
        self.send([DEADLINE, at])?;
        let previous = self.firm;
        if previous == NEVER {
            self.firm = at;
            return Ok(true);
        }
        // Read after the write: if the previous deadline had not passed yet, the record was
        // in the pipe before it, and the guard reads it before it may act on the old one.
        if monotonic_ns() < previous {
            self.firm = previous.max(at);
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Tells the guard redlock is done. Does not wait for it in the usual case, to keep one more
    /// process wake-up out of the time between the command's exit and the release of the lock;
    /// but when the dismissal cannot be shown to have been written before the guard's
    /// deadline, the guard is killed and reaped here, so that it cannot kill after the caller
    /// reaps the command (see the module header, step 5).
    pub fn dismiss(self) {
        let sent = self.send([DISMISS, 0]).is_ok();
        let in_time = sent && monotonic_ns() < self.firm;
        let mut status = 0;
        if in_time {
            // SAFETY: polls our own child without blocking; `status` is valid storage.
            unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
        } else {
            // SAFETY: kill and waitpid take plain integers and valid storage; the guard is our
            // unreaped child, so its pid is still its own.
            unsafe {
                libc::kill(self.pid, libc::SIGKILL);
                while libc::waitpid(self.pid, &mut status, 0) == -1
                    && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
                {
                }
            }
        }
    }

    fn send(&self, record: Record) -> io::Result<()> {
        let bytes = record_bytes(&record);
        loop {
            // SAFETY: writes from a live buffer of the given length to a descriptor we own.
            let n =
                unsafe { libc::write(self.orders.as_raw_fd(), bytes.as_ptr().cast(), bytes.len()) };
            if n == bytes.len() as isize {
                return Ok(());
            }
            let error = io::Error::last_os_error();
            if n != -1 || error.kind() != io::ErrorKind::Interrupted {
                // EPIPE: the guard is gone (SIGPIPE is ignored in Rust programs).
                return Err(error);
            }
        }
    }
}

/// `at` on CLOCK_MONOTONIC (which `Instant` reads on Linux), rounded down: the shared clock is
/// read *before* `Instant::now()`, so the time between the two reads makes the guard's deadline
/// earlier, never later.
fn deadline_ns(at: Instant) -> u64 {
    let base = monotonic_ns();
    let now = Instant::now();
    match at.checked_duration_since(now) {
        Some(ahead) => base.saturating_add(u64::try_from(ahead.as_nanos()).unwrap_or(u64::MAX)),
        None => base.saturating_sub(u64::try_from((now - at).as_nanos()).unwrap_or(u64::MAX)),
    }
    .min(NEVER - 1)
}

fn record_bytes(record: &Record) -> [u8; 16] {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&record[0].to_ne_bytes());
    bytes[8..].copy_from_slice(&record[1].to_ne_bytes());
    bytes
}

/// Forks with every signal blocked in the calling thread, so that none of redlock's handlers
/// can run in the child; the child keeps them blocked. Runs `child` in the child, which must
/// not return (if it does, the child exits at once). Returns the child's pid in the parent.
fn fork_with_signals_blocked(child: impl FnOnce()) -> io::Result<libc::pid_t> {
    let mut all = std::mem::MaybeUninit::<libc::sigset_t>::zeroed();
    let mut previous = std::mem::MaybeUninit::<libc::sigset_t>::zeroed();
    // SAFETY: both sets are valid storage; sigfillset initialises `all`, pthread_sigmask fills
    // `previous` before it is read below. fork has no memory preconditions; in the child only
    // `child` runs, which keeps to async-signal-safe calls (see guard_main).
    unsafe {
        libc::sigfillset(all.as_mut_ptr());
        libc::pthread_sigmask(libc::SIG_SETMASK, all.as_ptr(), previous.as_mut_ptr());
        let pid = libc::fork();
        if pid == 0 {
            child();
            libc::_exit(127);
        }
        let error = io::Error::last_os_error();
        libc::pthread_sigmask(libc::SIG_SETMASK, previous.as_ptr(), std::ptr::null_mut());
        if pid == -1 { Err(error) } else { Ok(pid) }
    }
}

/// The guard's whole life; see the module header. Async-signal-safe calls only; never returns.
fn guard_main(orders: libc::c_int, group: libc::pid_t, mut deadline: u64) -> ! {
    // SAFETY: every call below is an async-signal-safe system call wrapper taking plain
    // integers or pointers to this function's own locals; `_exit` ends the process without
    // running anything of redlock's.
    unsafe {
        libc::setpgid(0, 0);
        // Hold no directory either (an unmount must not wait for a lock helper).
        libc::chdir(c"/".as_ptr());
        close_all_but(orders);
        loop {
            let now = monotonic_ns();
            let expired = group > 0 && now >= deadline;
            let mut wait = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            let timeout: *const libc::timespec = if expired {
                &wait
            } else if group > 0 && deadline != NEVER {
                let left = deadline - now;
                // `as _`: the field's own type; naming libc::time_t is deprecated on musl
                // (its width changed in musl 1.2), and the seconds left always fit.
                wait.tv_sec = (left / 1_000_000_000) as _;
                wait.tv_nsec = (left % 1_000_000_000) as libc::c_long;
                &wait
            } else {
                std::ptr::null()
            };
            let mut poll = libc::pollfd {
                fd: orders,
                events: libc::POLLIN,
                revents: 0,
            };
            // With a null mask ppoll keeps the current one: everything blocked.
            let ready = libc::ppoll(&mut poll, 1, timeout, std::ptr::null());
            if ready > 0 {
                let mut record: Record = [0; 2];
                let n = libc::read(orders, record.as_mut_ptr().cast(), 16);
                if n == 0 || (n == -1 && *libc::__errno_location() != libc::EINTR) {
                    // redlock is gone.
                    if group > 0 {
                        libc::kill(-group, libc::SIGKILL);
                    }
                    libc::_exit(ORPHANED);
                }
                if n == 16 {
                    match record[0] {
                        DEADLINE if deadline == NEVER || record[1] > deadline => {
                            deadline = record[1];
                        }
                        DISMISS => {
                            // Nothing is left to guard: leave the CPU to redlock's release
                            // (tearing down this copy of its memory competes with it).
                            libc::setpriority(libc::PRIO_PROCESS, 0, 19);
                            libc::_exit(DISMISSED)
                        }
                        _ => {}
                    }
                }
            } else if ready == 0 && expired {
                // The clock was past the deadline, and after that the pipe was empty: no
                // later deadline and no dismissal was sent in time.
                libc::kill(-group, libc::SIGKILL);
                libc::_exit(FIRED);
            }
        }
    }
}

/// Closes every descriptor but `keep`. Async-signal-safe.
///
/// # Safety
/// Only for the guard, which owns nothing else.
unsafe fn close_all_but(keep: libc::c_int) {
    let keep = keep as libc::c_uint;
    // SAFETY: close_range takes plain integers (see the function's contract).
    let (below, above) = unsafe {
        let below = if keep > 0 {
            libc::syscall(libc::SYS_close_range, 0, keep - 1, 0)
        } else {
            0
        };
        (
            below,
            libc::syscall(libc::SYS_close_range, keep + 1, libc::c_uint::MAX, 0),
        )
    };
    if below < 0 || above < 0 {
        // Kernels before 5.9 have no close_range: close what a process usually has.
        for fd in (0..4096).filter(|fd| *fd != keep) {
            // SAFETY: as above.
            unsafe { libc::close(fd as libc::c_int) };
        }
    }
}
