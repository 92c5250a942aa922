//! A watchdog that kills the child's whole process group if redlock dies abruptly.
//!
//! The problem: the parent-death signal reaches only the direct child. If redlock is killed
//! with SIGKILL (or crashes, or is OOM-killed) while the command is a shell running other
//! programs, those grandchildren would run on without the lock, and the lock expires under them.
//!
//! The fix, in numbered steps:
//! 1. After the child is spawned, redlock starts a guard: a separate process that does nothing
//!    but block in `read` on a pipe whose only write end redlock holds.
//! 2. If redlock dies, the kernel closes the write end and `read` returns 0: the guard sends
//!    SIGKILL to the child's process group and exits.
//! 3. When redlock finishes normally it writes one byte first: the guard exits without killing.
//!
//! The guard is started with `clone(CLONE_VM)`: it shares redlock's memory instead of copying
//! it (a `fork` of redlock costs ~0.35 ms, a tenth of a whole `run`), but it is a process of its
//! own, so a SIGKILL to redlock leaves it running. Sharing memory with threads that keep running
//! sets strict rules, which `guard_main` keeps:
//! - it touches no memory but its own stack: its arguments travel in the clone argument itself;
//! - it makes raw system calls, not libc's wrappers, which would write `errno` in redlock's
//!   thread-local storage;
//! - it starts with every signal blocked (the creating thread blocks them around the clone), so
//!   no handler of redlock's ever runs in it, and a Ctrl-C on the terminal does not reach it;
//! - it closes its copies of every descriptor but its pipe, so it holds no socket or output pipe.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// The guard's stack. It needs a few hundred bytes; a page-rounded 64 KiB leaves no doubt.
const STACK: usize = 64 * 1024;

/// The running guard. Call [`Guard::dismiss`] on every normal exit path.
pub struct Guard {
    pid: libc::pid_t,
    stand_down: OwnedFd,
    stack: *mut libc::c_void,
}

impl Guard {
    /// Starts the guard for the process group `group`.
    pub fn start(group: libc::pid_t) -> io::Result<Guard> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` is valid storage for two descriptors. O_CLOEXEC keeps both ends out of
        // any program exec'd later.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == -1 {
            return Err(io::Error::last_os_error());
        }
        let [read_end, write_end] = fds;
        // SAFETY: `write_end` came from pipe2 above and nothing else owns it.
        let stand_down = unsafe { OwnedFd::from_raw_fd(write_end) };
        let Some(stack) = super::spawn::map_stack(STACK) else {
            let error = io::Error::last_os_error();
            // SAFETY: closes the read end we own.
            unsafe { libc::close(read_end) };
            return Err(error);
        };
        // Both numbers in the argument itself, so the guard reads no shared memory.
        let argument = (u64::from(group as u32) << 32) | u64::from(read_end as u32);
        let mut all = std::mem::MaybeUninit::<libc::sigset_t>::zeroed();
        let mut previous = std::mem::MaybeUninit::<libc::sigset_t>::zeroed();
        // SAFETY: both sets are valid storage; sigfillset initialises `all`, pthread_sigmask
        // fills `previous`. The clone starts the guard on the top of the fresh stack (stacks
        // grow down on every Linux target) with this thread's mask: everything blocked.
        let pid = unsafe {
            libc::sigfillset(all.as_mut_ptr());
            libc::pthread_sigmask(libc::SIG_SETMASK, all.as_ptr(), previous.as_mut_ptr());
            let pid = libc::clone(
                guard_main,
                stack.cast::<u8>().add(STACK).cast(),
                libc::CLONE_VM | libc::SIGCHLD,
                argument as usize as *mut libc::c_void,
            );
            let error = io::Error::last_os_error();
            libc::pthread_sigmask(libc::SIG_SETMASK, previous.as_ptr(), std::ptr::null_mut());
            libc::close(read_end);
            (pid, error)
        };
        match pid {
            (-1, error) => {
                // SAFETY: no guard runs on the stack; unmap what we mapped.
                unsafe { libc::munmap(stack, STACK) };
                Err(error)
            }
            (pid, _) => Ok(Guard {
                pid,
                stand_down,
                stack,
            }),
        }
    }

    /// Tells the guard redlock is done. Does not wait for it to leave: that would put one more
    /// process wake-up between the command's exit and the release of the lock. It is reaped
    /// here if it is already gone, else when redlock exits (by whoever reaps orphans); its
    /// stack, which it may still be running on, is then simply not unmapped.
    pub fn dismiss(self) {
        let byte = [1u8];
        // SAFETY: writes one byte from a live buffer to a descriptor we own.
        unsafe { libc::write(self.stand_down.as_raw_fd(), byte.as_ptr().cast(), 1) };
        drop(self.stand_down);
        let mut status = 0;
        // SAFETY: polls our own child without blocking; `status` is valid storage.
        let reaped = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG | libc::__WALL) };
        if reaped == self.pid {
            // SAFETY: the guard has exited, so nothing runs on its stack any more.
            unsafe { libc::munmap(self.stack, STACK) };
        }
    }
}

/// The guard's whole life; see the module rules. Never returns.
extern "C" fn guard_main(argument: *mut libc::c_void) -> libc::c_int {
    let argument = argument as usize as u64;
    let read_end = (argument & 0xffff_ffff) as usize;
    let group = (argument >> 32) as u32 as i32;
    // SAFETY: raw system calls on plain integers and on one byte of this function's own stack.
    unsafe {
        let below = if read_end > 0 {
            raw_syscall(libc::SYS_close_range, 0, read_end - 1, 0)
        } else {
            0
        };
        let above = raw_syscall(libc::SYS_close_range, read_end + 1, u32::MAX as usize, 0);
        if below < 0 || above < 0 {
            // Kernels before 5.9 have no close_range: close what a process usually has.
            for fd in (0..4096).filter(|fd| *fd != read_end) {
                raw_syscall(libc::SYS_close, fd, 0, 0);
            }
        }
        let mut byte = 0u8;
        let read = loop {
            let n = raw_syscall(libc::SYS_read, read_end, (&raw mut byte) as usize, 1);
            if n != -(libc::EINTR as isize) {
                break n;
            }
        };
        if read != 1 {
            let group = -(group as isize);
            raw_syscall(libc::SYS_kill, group as usize, libc::SIGKILL as usize, 0);
        }
        raw_syscall(libc::SYS_exit, 0, 0, 0);
    }
    0
}

/// A system call without libc's wrapper (which would write `errno`): returns the result, or
/// minus the error number.
#[cfg(target_arch = "x86_64")]
unsafe fn raw_syscall(number: libc::c_long, a: usize, b: usize, c: usize) -> isize {
    let result: isize;
    // SAFETY: the Linux x86_64 system call convention: number in rax, arguments in rdi, rsi,
    // rdx; the kernel clobbers rcx and r11; no stack is used.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") number as isize => result,
            in("rdi") a,
            in("rsi") b,
            in("rdx") c,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    result
}

/// A system call without libc's wrapper (which would write `errno`): returns the result, or
/// minus the error number.
#[cfg(target_arch = "aarch64")]
unsafe fn raw_syscall(number: libc::c_long, a: usize, b: usize, c: usize) -> isize {
    let result: isize;
    // SAFETY: the Linux aarch64 system call convention: number in x8, arguments in x0 to x2,
    // result in x0; no stack is used.
    unsafe {
        std::arch::asm!(
            "svc 0",
            in("x8") number as usize,
            inlateout("x0") a => result,
            in("x1") b,
            in("x2") c,
            options(nostack),
        );
    }
    result
}

/// Elsewhere, libc's generic wrapper: it may write `errno` of the thread that started the
/// guard on a failed call, a benign race this platform has to live with.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
unsafe fn raw_syscall(number: libc::c_long, a: usize, b: usize, c: usize) -> isize {
    // SAFETY: plain integer arguments; see the function comment about errno.
    let result = unsafe { libc::syscall(number, a, b, c) };
    if result == -1 {
        -(io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO) as isize)
    } else {
        result as isize
    }
}
