//! The child: spawned in a process group of its own, tied to redlock's life, reaped once.
//!
//! Invariants this module keeps:
//! - The child leads a new process group, so one `killpg` reaches it and everything it started.
//! - It carries a parent-death signal (SIGKILL): if redlock dies, even by SIGKILL, the child does
//!   not run on without the lock. Linux sends it when the *thread* that forked the child exits,
//!   so the spawn happens on the main thread, which lives as long as the process.
//! - The group is signalled only while the leader is unreaped (a zombie still owns the group
//!   id), so a signal can never hit an unrelated group that reused the id. The exit is noticed
//!   through SIGCHLD and checked with `waitid(WNOWAIT)`; only the supervisor reaps, after its
//!   last signal.
//! - When redlock runs in the foreground of a terminal, the terminal is handed to the child's
//!   group (as a shell does for a job), so an interactive command can read from it instead of
//!   being stopped by SIGTTIN; redlock takes it back when the child ends, if the child's group
//!   still has it (after `bg` it is the shell's). Its stops and resumptions are mirrored on
//!   redlock's own job, see [`super::job`].

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::PathBuf;

pub struct Child {
    pid: libc::pid_t,
    reaped: bool,
    /// The terminal handed to the child's group, to take back when it ends.
    terminal: Option<libc::c_int>,
}

/// A change of the child's state short of its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateChange {
    /// Stopped by this signal (SIGTSTP, SIGTTIN, SIGTTOU or SIGSTOP).
    Stopped(i32),
    Continued,
}

/// How the child ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

impl Exit {
    /// The status a shell would report: the code, or 128+N for death by signal N.
    pub fn shell_code(self) -> i32 {
        match self {
            Exit::Code(code) => code,
            Exit::Signal(signal) => crate::exit::killed_by(signal),
        }
    }
}

/// Starts `command` with `env` added to redlock's environment and the variables named in
/// `hidden` removed from it; stdin, stdout and stderr are inherited untouched.
pub fn spawn(command: &[OsString], env: &[(&str, String)], hidden: &[&str]) -> io::Result<Child> {
    if command.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "no command given",
        ));
    }
    // Found on PATH here, once, rather than by execvp in the child trying every directory; the
    // command still sees argv[0] as it was typed.
    let program = find_program(&command[0]);
    let terminal = foreground_terminal();
    let handled: Vec<i32> = super::signals::handled().collect();
    let pid = super::spawn::spawn(
        program.as_os_str(),
        command,
        (env, hidden),
        terminal,
        &handled,
    )?;
    Ok(Child {
        pid,
        reaped: false,
        terminal,
    })
}

impl Child {
    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Sends `signal` to the child's whole process group.
    pub fn signal_group(&self, signal: i32) -> io::Result<()> {
        assert!(!self.reaped, "signalling the group of a reaped child");
        // SAFETY: killpg takes plain integers; the group id is our unreaped child's pid, which
        // cannot have been reused (see the module invariants).
        if unsafe { libc::killpg(self.pid, signal) } == -1 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// The terminal handed to the child's group, if redlock did (interactive foreground).
    pub fn terminal(&self) -> Option<libc::c_int> {
        self.terminal
    }

    /// Sends `signal` to the group, then SIGCONT: a stopped group (suspended from the
    /// terminal, or by `kill -STOP`) would otherwise keep a terminating signal pending and never
    /// act on it.
    pub fn signal_group_awake(&self, signal: i32) -> io::Result<()> {
        self.signal_group(signal)?;
        self.signal_group(libc::SIGCONT)
    }

    /// Whether the child stopped or continued since last asked (consumes that report; never
    /// reaps: an exit is left for [`Child::exit_status`] and [`Child::reap`]).
    pub fn state_change(&self) -> Option<StateChange> {
        let mut info = std::mem::MaybeUninit::<libc::siginfo_t>::zeroed();
        // SAFETY: as in `exit_status`; without WEXITED, waitid never reaps.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                self.pid as libc::id_t,
                info.as_mut_ptr(),
                libc::WSTOPPED | libc::WCONTINUED | libc::WNOHANG,
            )
        };
        // SAFETY: initialised by waitid, or still zeroed.
        let info = unsafe { info.assume_init() };
        // SAFETY: si_pid and si_status are valid for the SIGCHLD information waitid returns.
        let (pid, status) = unsafe { (info.si_pid(), info.si_status()) };
        if rc != 0 || pid != self.pid {
            return None;
        }
        match info.si_code {
            libc::CLD_STOPPED => Some(StateChange::Stopped(status)),
            libc::CLD_CONTINUED => Some(StateChange::Continued),
            _ => None,
        }
    }

    /// True once the child has exited. Does not reap it: the group id stays ours until
    /// [`Child::reap`], so the supervisor may still signal the group.
    pub fn has_exited(&self) -> bool {
        self.exit_status().is_some()
    }

    /// How the child ended, once it has; without reaping it (see [`Child::has_exited`]).
    pub fn exit_status(&self) -> Option<Exit> {
        let mut info = std::mem::MaybeUninit::<libc::siginfo_t>::zeroed();
        // SAFETY: `info` is valid storage for one siginfo_t, zeroed so that si_pid reads 0 when
        // the child has not exited; WNOWAIT leaves the child waitable.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                self.pid as libc::id_t,
                info.as_mut_ptr(),
                libc::WEXITED | libc::WNOWAIT | libc::WNOHANG,
            )
        };
        // SAFETY: waitid succeeded (or failed, then the zeroed value is read), so `info` is
        // initialised either way.
        let info = unsafe { info.assume_init() };
        // SAFETY: si_pid and si_status are valid for the SIGCHLD information waitid returns.
        let (pid, status) = unsafe { (info.si_pid(), info.si_status()) };
        if rc != 0 || pid != self.pid {
            return None;
        }
        Some(if info.si_code == libc::CLD_EXITED {
            Exit::Code(status)
        } else {
            Exit::Signal(status)
        })
    }

    /// Reaps the exited child and takes the terminal back. After this the group is never
    /// signalled again.
    pub fn reap(&mut self) -> io::Result<Exit> {
        let mut status = 0;
        loop {
            // SAFETY: `status` is valid writable storage for the call.
            let rc = unsafe { libc::waitpid(self.pid, &mut status, 0) };
            if rc == self.pid {
                break;
            }
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::Interrupted {
                return Err(error);
            }
        }
        self.reaped = true;
        if let Some(fd) = self.terminal.take()
            && foreground_group(fd) == Some(self.pid)
        {
            // Only from the child's group: if redlock's job was sent to the background in
            // the meantime, the terminal is the shell's.
            // SAFETY: getpgrp cannot fail.
            give_terminal(fd, unsafe { libc::getpgrp() });
        }
        Ok(if libc::WIFSIGNALED(status) {
            Exit::Signal(libc::WTERMSIG(status))
        } else {
            Exit::Code(libc::WEXITSTATUS(status))
        })
    }
}

/// The executable `program` names, looked up on PATH like execvp does (the first regular file
/// with execute permission); `program` itself when it contains a slash or nothing matches, so
/// that the spawn reports the error execvp would.
fn find_program(program: &OsStr) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    if program.as_bytes().contains(&b'/') {
        return PathBuf::from(program);
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .unwrap_or_else(|| PathBuf::from(program))
}

/// The terminal on stdin, if redlock is in its foreground process group (and so a child in a
/// group of its own would be stopped when it reads from it).
fn foreground_terminal() -> Option<libc::c_int> {
    let fd = libc::STDIN_FILENO;
    // SAFETY: isatty, tcgetpgrp and getpgrp take plain integers and touch no memory.
    unsafe {
        if libc::isatty(fd) != 1 {
            return None;
        }
        let foreground = libc::tcgetpgrp(fd);
        (foreground != -1 && foreground == libc::getpgrp()).then_some(fd)
    }
}

/// The foreground process group of the terminal `fd`.
pub(super) fn foreground_group(fd: libc::c_int) -> Option<libc::pid_t> {
    // SAFETY: tcgetpgrp takes a plain integer.
    let group = unsafe { libc::tcgetpgrp(fd) };
    (group > 0).then_some(group)
}

/// Makes `group` the foreground process group of the terminal `fd`. Blocks SIGTTOU around the
/// call: a background process changing the foreground would otherwise be stopped by it.
/// Async-signal-safe, for use between fork and exec.
pub(super) fn give_terminal(fd: libc::c_int, group: libc::pid_t) {
    let mut block = std::mem::MaybeUninit::<libc::sigset_t>::zeroed();
    let mut previous = std::mem::MaybeUninit::<libc::sigset_t>::zeroed();
    // SAFETY: both sets are valid storage; sigemptyset/sigaddset initialise `block` before
    // pthread_sigmask reads it, and pthread_sigmask fills `previous` before it is restored.
    // tcsetpgrp takes plain integers. Its failure (the terminal went away) changes nothing
    // worth reporting: the child then simply runs in the background.
    unsafe {
        libc::sigemptyset(block.as_mut_ptr());
        libc::sigaddset(block.as_mut_ptr(), libc::SIGTTOU);
        libc::pthread_sigmask(libc::SIG_BLOCK, block.as_ptr(), previous.as_mut_ptr());
        libc::tcsetpgrp(fd, group);
        libc::pthread_sigmask(libc::SIG_SETMASK, previous.as_ptr(), std::ptr::null_mut());
    }
}

/// The exit code for a command that could not be started: 127 when it does not exist, 126
/// when it exists but cannot be executed.
pub fn spawn_failure_code(error: &io::Error) -> i32 {
    match error.kind() {
        io::ErrorKind::NotFound => crate::exit::NOT_FOUND,
        _ => crate::exit::CANNOT_EXECUTE,
    }
}
