//! A watchdog that kills the child's whole process group if redlock dies abruptly.
//!
//! The problem: the parent-death signal reaches only the direct child. If redlock is killed
//! with SIGKILL (or crashes, or is OOM-killed) while the command is a shell running other
//! programs, those grandchildren would run on without the lock, and the lock expires under them.
//!
//! The fix, in numbered steps:
//! 1. After the child is spawned, redlock forks a guard: a copy of itself that does nothing but
//!    block in `read` on a pipe whose only write end redlock holds.
//! 2. If redlock dies, the kernel closes the write end and `read` returns 0: the guard sends
//!    SIGKILL to the child's process group and exits.
//! 3. When redlock finishes normally it writes one byte first: the guard exits without killing.
//!
//! The guard runs between `fork` and nothing (no exec), in a copy of a multi-threaded process,
//! so it makes only async-signal-safe system calls: no allocation, no locks, no Rust I/O. It
//! ignores the signals redlock forwards (it sits in redlock's process group, so a Ctrl-C on the
//! terminal reaches it too, and redlock's inherited handlers must not run in it), and it closes
//! every descriptor but its pipe, so it keeps no socket or output pipe open.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::signals::FORWARDED;

/// The running guard. Call [`Guard::dismiss`] on every normal exit path.
pub struct Guard {
    pid: libc::pid_t,
    stand_down: OwnedFd,
}

impl Guard {
    /// Forks the guard for the process group `group`.
    pub fn start(group: libc::pid_t) -> io::Result<Guard> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` is valid storage for two descriptors. O_CLOEXEC keeps both ends out of
        // any program exec'd later.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == -1 {
            return Err(io::Error::last_os_error());
        }
        let [read_end, write_end] = fds;
        // Block every signal across the fork so that none is handled in the guard before it
        // has set its own dispositions.
        let mut all = std::mem::MaybeUninit::<libc::sigset_t>::zeroed();
        let mut previous = std::mem::MaybeUninit::<libc::sigset_t>::zeroed();
        // SAFETY: both sets are valid storage; sigfillset initialises `all` before it is read,
        // pthread_sigmask fills `previous` before it is read.
        unsafe {
            libc::sigfillset(all.as_mut_ptr());
            libc::pthread_sigmask(libc::SIG_SETMASK, all.as_ptr(), previous.as_mut_ptr());
        }
        // SAFETY: fork has no memory preconditions. In the child only async-signal-safe calls
        // follow (see `guard_main`), as required after forking a multi-threaded process.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: we are the forked guard; `guard_main` never returns.
            unsafe { guard_main(group, read_end) }
        }
        let fork_error = io::Error::last_os_error();
        // SAFETY: restores the mask saved above; `previous` was filled by pthread_sigmask.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, previous.as_ptr(), std::ptr::null_mut());
            libc::close(read_end);
        }
        // SAFETY: `write_end` came from pipe2 above and nothing else owns it.
        let stand_down = unsafe { OwnedFd::from_raw_fd(write_end) };
        if pid == -1 {
            return Err(fork_error);
        }
        Ok(Guard { pid, stand_down })
    }

    /// Tells the guard redlock is done (the child was reaped), and reaps the guard.
    pub fn dismiss(self) {
        let byte = [1u8];
        // SAFETY: writes one byte from a live buffer to a descriptor we own.
        unsafe { libc::write(self.stand_down.as_raw_fd(), byte.as_ptr().cast(), 1) };
        drop(self.stand_down);
        let mut status = 0;
        // SAFETY: waits for our own child; `status` is valid storage. The guard exits as soon
        // as it reads the byte, so this returns at once.
        while unsafe { libc::waitpid(self.pid, &mut status, 0) } == -1
            && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
        {}
    }
}

/// The guard's whole life. Only async-signal-safe system calls.
///
/// # Safety
/// Must be called only in the child of `fork`, with all signals blocked.
unsafe fn guard_main(group: libc::pid_t, read_end: libc::c_int) -> ! {
    // SAFETY: each call in this block is an async-signal-safe system call on plain integers or
    // on storage local to this frame, as the forked guard requires.
    unsafe {
        let mut ignore: libc::sigaction = std::mem::zeroed();
        ignore.sa_sigaction = libc::SIG_IGN;
        for signal in FORWARDED.iter().copied().chain([libc::SIGPIPE]) {
            libc::sigaction(signal, &ignore, std::ptr::null_mut());
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        close_all_but(read_end);
        let mut byte = 0u8;
        let told_to_stand_down = loop {
            let n = libc::read(read_end, (&raw mut byte).cast(), 1);
            if n == 1 {
                break true;
            }
            if n == -1 && *libc::__errno_location() == libc::EINTR {
                continue;
            }
            break false;
        };
        if !told_to_stand_down {
            libc::killpg(group, libc::SIGKILL);
        }
        libc::_exit(0)
    }
}

/// Closes every descriptor except `keep`.
///
/// # Safety
/// Async-signal-safe; for the forked guard only (it closes descriptors other code may own).
unsafe fn close_all_but(keep: libc::c_int) {
    // SAFETY: close_range and close take plain integers.
    unsafe {
        let below = if keep > 0 {
            libc::syscall(libc::SYS_close_range, 0u32, (keep - 1) as u32, 0u32)
        } else {
            0
        };
        let above = libc::syscall(libc::SYS_close_range, (keep + 1) as u32, u32::MAX, 0u32);
        if below == -1 || above == -1 {
            // Kernels before 5.9 have no close_range: close what a process usually has.
            for fd in (0..4096).filter(|fd| *fd != keep) {
                libc::close(fd);
            }
        }
    }
}
