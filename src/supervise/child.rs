//! The child: spawned in a process group of its own, tied to redlock's life, reaped once.
//!
//! Invariants this module keeps:
//! - The child leads a new process group, so one `killpg` reaches it and everything it started.
//! - It carries a parent-death signal (SIGKILL): if redlock dies, even by SIGKILL, the child does
//!   not run on without the lock. Linux sends it when the *thread* that forked the child exits,
//!   so the spawn happens on the main thread, which lives as long as the process.
//! - The group is signalled only while the leader is unreaped (a zombie still owns the group
//!   id), so a signal can never hit an unrelated group that reused the id. The exit is observed
//!   with `waitid(WNOWAIT)` on a watcher thread; only the supervisor reaps, after its last signal.
//! - When redlock runs in the foreground of a terminal, the terminal is handed to the child's
//!   group (as a shell does for a job), so an interactive command can read from it instead of
//!   being stopped by SIGTTIN; redlock takes it back when the child ends.

use std::ffi::OsString;
use std::io;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::mpsc::Sender;

use super::Event;

pub struct Child {
    pid: libc::pid_t,
    reaped: bool,
    /// The terminal handed to the child's group, to take back when it ends.
    terminal: Option<libc::c_int>,
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

/// Starts `command` with `env` added to redlock's environment; stdin, stdout and stderr are
/// inherited untouched.
pub fn spawn(command: &[OsString], env: &[(&str, String)]) -> io::Result<Child> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no command given"))?;
    // SAFETY: getpid cannot fail.
    let parent = unsafe { libc::getpid() };
    let terminal = foreground_terminal();
    let mut cmd = Command::new(program);
    cmd.args(args).process_group(0);
    for (name, value) in env {
        cmd.env(name, value);
    }
    let child_setup = move || -> io::Result<()> {
        // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number and touches no memory.
        if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) } == -1 {
            return Err(io::Error::last_os_error());
        }
        // If redlock died between fork and prctl, the death signal will never come: refuse to
        // run the command without the lock rather than run it unguarded.
        // SAFETY: getppid cannot fail.
        if unsafe { libc::getppid() } != parent {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        if let Some(fd) = terminal {
            // SAFETY: getpid cannot fail; this process already leads its own group (std calls
            // setpgid before running this closure).
            give_terminal(fd, unsafe { libc::getpid() });
        }
        Ok(())
    };
    // SAFETY: the closure runs in the forked child before exec and only makes
    // async-signal-safe system calls (prctl, getppid, getpid, pthread_sigmask, tcsetpgrp); it
    // allocates nothing and takes no lock.
    unsafe { cmd.pre_exec(child_setup) };
    let child = cmd.spawn()?;
    let pid = libc::pid_t::try_from(child.id()).expect("pid fits pid_t");
    // std's Child is dropped here without waiting: reaping is ours, see `reap`.
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

    /// Starts a thread that reports [`Event::ChildExited`] once the child has exited, without
    /// reaping it.
    pub fn watch_exit(&self, events: Sender<Event>) -> io::Result<()> {
        let pid = self.pid;
        std::thread::Builder::new()
            .name("redlock-child".into())
            .spawn(move || {
                loop {
                    let mut info = std::mem::MaybeUninit::<libc::siginfo_t>::zeroed();
                    // SAFETY: `info` is valid storage for one siginfo_t; WNOWAIT leaves the child
                    // waitable, so the supervisor still owns the reaping.
                    let rc = unsafe {
                        libc::waitid(
                            libc::P_PID,
                            pid as libc::id_t,
                            info.as_mut_ptr(),
                            libc::WEXITED | libc::WNOWAIT,
                        )
                    };
                    if rc == 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                        break;
                    }
                }
                let _ = events.send(Event::ChildExited);
            })?;
        Ok(())
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
        if let Some(fd) = self.terminal.take() {
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

/// Makes `group` the foreground process group of the terminal `fd`. Blocks SIGTTOU around the
/// call: a background process changing the foreground would otherwise be stopped by it.
/// Async-signal-safe, for use between fork and exec.
fn give_terminal(fd: libc::c_int, group: libc::pid_t) {
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
