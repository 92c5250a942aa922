//! The standard descriptors 0, 1 and 2: made safe before anything else opens a file, and
//! remembered as they were handed to us.
//!
//! The problem: a process started with a standard descriptor closed (`redlock acquire >&-`)
//! has that number free, and the next file or socket it opens takes it. A connection to a
//! master opened onto fd 1 would receive everything printed to standard output: the lock's
//! token would be written into the Redis connection, and `acquire` would report success with
//! the token handed to nobody. Rust's runtime guards against the reuse itself (on Linux it
//! opens /dev/null onto a closed standard descriptor before `main`), but that makes the
//! problem invisible instead: by `main`, a closed stdout looks like `>/dev/null` and every
//! write to it "succeeds".
//!
//! The fix, in order:
//! 1. [`guard_standard_fds`] runs before Rust's runtime starts (the binary registers it as an
//!    ELF `.init_array` entry) and notes which of 0, 1, 2 are closed.
//! 2. It opens /dev/null onto each closed one at once, so no later open can land there,
//!    whatever the runtime does or stops doing.
//! 3. Commands ask [`stdout_was_closed`]: `acquire` refuses before touching a master, since a
//!    token that cannot be handed over must not be taken.
//!
//! [`guard_standard_fds`] may run twice (from `.init_array` and again from `main`, which is the
//! only call on a platform without `.init_array`); the second call finds every descriptor open
//! and keeps what the first one noted.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// Bit `fd` is set when standard descriptor `fd` was closed at start-up.
static CLOSED: AtomicU8 = AtomicU8::new(0);
/// Set when a closed standard descriptor could not be filled with /dev/null.
static UNFILLED: AtomicBool = AtomicBool::new(false);

/// Notes which standard descriptors are closed and opens /dev/null onto each of them.
///
/// Runs before `main` (see the module docs), so it uses nothing but system calls: no
/// allocation, no panics, no standard streams.
pub extern "C" fn guard_standard_fds() {
    for fd in 0..3 {
        // SAFETY: F_GETFD on any integer is harmless; it fails with EBADF when `fd` is closed.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1 {
            continue;
        }
        CLOSED.fetch_or(1 << fd, Ordering::Relaxed);
        if !fill_with_dev_null(fd) {
            UNFILLED.store(true, Ordering::Relaxed);
        }
    }
}

/// Opens /dev/null onto descriptor `fd`, which is closed; true on success.
fn fill_with_dev_null(fd: libc::c_int) -> bool {
    // SAFETY: the path is a NUL-terminated literal; open has no other preconditions. No
    // O_CLOEXEC: standard descriptors must survive exec (a child of `run` inherits them).
    let opened = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
    if opened == -1 {
        return false;
    }
    // open returns the lowest free number: `fd`, unless a lower one is closed too (the caller
    // fills that one first, so this is a safeguard).
    if opened == fd {
        return true;
    }
    // SAFETY: both descriptors are ours: `opened` was just opened, `fd` is closed.
    let duplicated = unsafe { libc::dup2(opened, fd) } == fd;
    // SAFETY: `opened` is ours and no longer needed.
    unsafe { libc::close(opened) };
    duplicated
}

/// True when redlock was started with standard output closed (`>&-`): whatever it prints goes
/// nowhere.
pub fn stdout_was_closed() -> bool {
    CLOSED.load(Ordering::Relaxed) & (1 << libc::STDOUT_FILENO) != 0
}

/// True when redlock was started with standard error closed (`2>&-`).
pub fn stderr_was_closed() -> bool {
    CLOSED.load(Ordering::Relaxed) & (1 << libc::STDERR_FILENO) != 0
}

/// True when a closed standard descriptor could not be filled with /dev/null (no /dev/null in
/// a chroot): the next file or socket opened could land on it, so redlock must not go on.
pub fn unguarded() -> bool {
    UNFILLED.load(Ordering::Relaxed)
}

/// Calls `gone` (on a thread of its own) once nobody can read standard output any more: the
/// reading end of its pipe closed (`redlock status --watch | head -1`, once `head` exited), or
/// its socket's peer hung up. A stream that prints only on a change would otherwise learn of
/// it only at its next line, hours later perhaps. On a file or a terminal it never calls.
pub fn when_stdout_is_gone(gone: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("redlock-stdout".into())
        .spawn(move || {
            // No event asked for: poll reports only POLLERR (a pipe without readers) and
            // POLLHUP (a socket whose peer hung up), which it always reports.
            let mut out = libc::pollfd {
                fd: 1,
                events: 0,
                revents: 0,
            };
            loop {
                // SAFETY: `out` is one valid pollfd that lives across the call.
                let ready = unsafe { libc::poll(&mut out, 1, -1) };
                if ready > 0 && out.revents & (libc::POLLERR | libc::POLLHUP) != 0 {
                    gone();
                    return;
                }
                if ready < 0
                    && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
                {
                    return;
                }
            }
        })
        .map(drop)
}
