//! Starting the child: `std::process::Command` in a new process group, with the setup that
//! ties it to redlock done in a `pre_exec` hook.
//!
//! The problem: between fork and exec the child must
//! - lead a new process group (`process_group(0)`: one `killpg` reaches all it starts);
//! - carry a parent-death signal (SIGKILL), and check that redlock did not die before it was
//!   set (the signal would then never come, and the command would run without the lock);
//! - take the terminal's foreground when redlock hands it over (see [`super::child`]);
//! - start with the default action for every signal redlock handles (its handlers are
//!   redlock's code, and would write into redlock's self-pipe).
//!
//! The race: a signal delivered in the child before its dispositions are reset runs redlock's
//! handler there; a SIGTTOU delivered during `tcsetpgrp` from what is still a background group
//! stops the child.
//!
//! The fix, in order:
//! 1. The calling thread blocks every signal before `spawn`; std's fork inherits that mask
//!    (std does not reset it), so nothing is delivered in the child until step 4.
//! 2. std calls `setpgid(0, 0)`, then our hook: dispositions back to default (a signal that
//!    was ignored when redlock started stays ignored, as `nohup` means it), the parent-death
//!    signal, the parent check, `tcsetpgrp`.
//! 3. The hook restores the mask the calling thread had, and std execs (`execvp`, which runs a
//!    script without `#!` with /bin/sh on ENOEXEC). A failed exec comes back from `spawn` as an
//!    error (NotFound: 127, anything else: 126).
//! 4. The calling thread restores its own mask.
//!
//! std forks (rather than using posix_spawn) when a `pre_exec` hook is set: this copies the
//! page tables of redlock, a cost measured in NOTES-supervise.md / BENCHMARKS.md. The hook only
//! makes async-signal-safe calls on values captured before the fork, and never allocates.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::process::CommandExt;

/// Starts `program` (a path, already looked up on PATH, or the bare name if it was not found)
/// with `argv` (argv[0] as the user typed it) and `env` added to redlock's environment, in a
/// new process group, with the parent-death signal set and, when `terminal` is given, the
/// terminal handed to its group. `handled`: the signals redlock has handlers for. Returns its
/// pid. Must be called from the main thread (the parent-death signal follows the thread).
pub fn spawn(
    program: &OsStr,
    argv: &[OsString],
    env: &[(&str, String)],
    terminal: Option<libc::c_int>,
    handled: &[libc::c_int],
) -> io::Result<libc::pid_t> {
    let mut command = std::process::Command::new(program);
    command
        .arg0(&argv[0])
        .args(&argv[1..])
        .envs(env.iter().map(|(name, value)| (name, value)))
        .process_group(0);
    // SAFETY: getpid cannot fail.
    let parent = unsafe { libc::getpid() };
    let handled = handled.to_vec();
    let blocked = BlockedSignals::block_all();
    let mask = blocked.previous;
    // SAFETY: the hook runs in the forked child before exec, and keeps to async-signal-safe
    // calls (sigaction, prctl, getppid, getpid, tcsetpgrp, pthread_sigmask) on values captured
    // before the fork; it allocates nothing.
    unsafe {
        command.pre_exec(move || {
            let mut default: libc::sigaction = std::mem::zeroed();
            default.sa_sigaction = libc::SIG_DFL;
            let mut current: libc::sigaction = std::mem::zeroed();
            for &signal in &handled {
                libc::sigaction(signal, std::ptr::null(), &mut current);
                if current.sa_sigaction != libc::SIG_IGN {
                    libc::sigaction(signal, &default, std::ptr::null_mut());
                }
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                return Err(io::Error::last_os_error());
            }
            // If redlock died before the line above, the death signal will never come: do not
            // run the command without the lock.
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            if let Some(fd) = terminal {
                // Every signal is still blocked, so SIGTTOU cannot stop us here. A failure (the
                // terminal went away) leaves the command in the background, nothing worse.
                libc::tcsetpgrp(fd, libc::getpid());
            }
            libc::pthread_sigmask(libc::SIG_SETMASK, &mask, std::ptr::null_mut());
            Ok(())
        });
    }
    let spawned = command.spawn();
    drop(blocked);
    // std's handle is dropped without waiting: the supervisor reaps the pid itself (waitid
    // with WNOWAIT first), which std's `Child` cannot do.
    Ok(spawned?.id() as libc::pid_t)
}

/// Every signal blocked in the calling thread until dropped.
struct BlockedSignals {
    previous: libc::sigset_t,
}

impl BlockedSignals {
    fn block_all() -> BlockedSignals {
        let mut all = std::mem::MaybeUninit::<libc::sigset_t>::zeroed();
        let mut previous = std::mem::MaybeUninit::<libc::sigset_t>::zeroed();
        // SAFETY: both sets are valid storage; sigfillset initialises `all`, pthread_sigmask
        // fills `previous` (both were zeroed, so they are initialised even if a call failed).
        unsafe {
            libc::sigfillset(all.as_mut_ptr());
            libc::pthread_sigmask(libc::SIG_SETMASK, all.as_ptr(), previous.as_mut_ptr());
            BlockedSignals {
                previous: previous.assume_init(),
            }
        }
    }
}

impl Drop for BlockedSignals {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved in `block_all`, a valid sigset_t.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.previous, std::ptr::null_mut()) };
    }
}
