//! Starting the child without copying redlock: `clone(CLONE_VM | CLONE_VFORK)`.
//!
//! The problem: the child needs setup that `posix_spawn` cannot express (the parent-death
//! signal), and std's spawn with a `pre_exec` closure then falls back to `fork`, which copies
//! redlock's page tables: measured here at ~1 ms per spawn against ~0.6 ms for the vfork path,
//! a quarter of a whole `redlock run -- true`.
//!
//! The fix is what glibc's `posix_spawn` does inside, with our setup added:
//! 1. Everything the child needs (paths, argv, envp as C strings) is prepared in the parent.
//! 2. All signals are blocked in the calling thread, so no handler of redlock's can run in the
//!    child while it shares redlock's memory.
//! 3. `clone(CLONE_VM | CLONE_VFORK)` starts the child on a small private stack; the calling
//!    thread sleeps until the child has exec'd or exited.
//! 4. The child makes only async-signal-safe system calls: new process group, parent-death
//!    signal, terminal, signal dispositions back to default, the signal mask redlock inherited
//!    (see `signals`), execve.
//!    If exec fails it stores the error in memory the parent reads after the clone returns
//!    (the memory is shared), and exits 127.
//! 5. The parent restores its signal mask, frees the stack, and reaps the child itself if the
//!    exec failed.
//!
//! While the child shares redlock's memory it runs with the calling thread's thread-local
//! storage, so a failing call may write that thread's errno: harmless, since that thread is
//! asleep until the child is gone.
//!
//! Why this and not `std::process::Command` with a `pre_exec` hook (tried, and kept in git
//! history): std then forks, copying redlock's page tables, and the child's copy-on-write
//! faults come before its exec. Measured in paired whole-process runs of `redlock run -- true`
//! with 5 masters (A and B alternated, 100 pairs each): this path took 0.936x and 0.939x the time of
//! std's. The behaviour of both is the same, and `tests/spawn.rs` proves it for this one:
//! process group, parent-death signal, exit codes 126/127, a script without `#!` run by
//! /bin/sh, signal dispositions.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicI32, Ordering};

/// What the child needs, prepared before the clone (no allocation may happen in the child).
struct Plan {
    program: CString,
    argv: Vec<CString>,
    argv_ptrs: Vec<*const libc::c_char>,
    /// argv for running a script without `#!` through /bin/sh, as execvp does on ENOEXEC.
    sh_argv_ptrs: Vec<*const libc::c_char>,
    sh: CString,
    envp: Vec<CString>,
    envp_ptrs: Vec<*const libc::c_char>,
    parent: libc::pid_t,
    terminal: Option<libc::c_int>,
    /// The calling thread's mask before everything was blocked, for the parent to restore.
    mask: libc::sigset_t,
    /// The mask the child execs with: the one redlock inherited (see `signals`), or the calling
    /// thread's when none was noted.
    child_mask: libc::sigset_t,
    /// Signals redlock handles, reset to their default action in the child.
    handled: Vec<libc::c_int>,
    /// The errno of a failed exec, 0 while none.
    error: AtomicI32,
}

/// Maps `size` bytes for a cloned process to run on; `None` when the kernel refuses.
pub(super) fn map_stack(size: usize) -> Option<*mut libc::c_void> {
    // SAFETY: an anonymous private mapping, with no address hint; the result is checked.
    let stack = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
            -1,
            0,
        )
    };
    (stack != libc::MAP_FAILED).then_some(stack)
}

/// Starts `program` (a path, already looked up on PATH) with `argv` (argv[0] as the user typed
/// it) and `env` added to redlock's environment (the names in `hidden` left out of it), in a
/// new process group, with the parent-death signal set and, when `terminal` is given, the
/// terminal handed to its group. Returns its pid.
pub fn spawn(
    program: &OsStr,
    argv: &[OsString],
    (env, hidden): (&[(&str, String)], &[&str]),
    terminal: Option<libc::c_int>,
    handled: &[libc::c_int],
) -> io::Result<libc::pid_t> {
    let c = |s: &OsStr| {
        CString::new(s.as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL byte in the command"))
    };
    let argv: Vec<CString> = argv.iter().map(|a| c(a)).collect::<io::Result<_>>()?;
    let mut envp = Vec::new();
    for (name, value) in std::env::vars_os() {
        if env.iter().any(|(added, _)| OsStr::new(added) == name)
            || hidden.iter().any(|hidden| OsStr::new(hidden) == name)
        {
            continue;
        }
        let mut pair = name;
        pair.push("=");
        pair.push(value);
        if let Ok(pair) = c(&pair) {
            envp.push(pair);
        }
    }
    for (name, value) in env {
        envp.push(c(OsStr::new(&format!("{name}={value}")))?);
    }
    let program = c(program)?;
    let sh = CString::new("/bin/sh").expect("no NUL");
    let null_terminated = |strings: &[&CString]| {
        let mut ptrs: Vec<*const libc::c_char> = strings.iter().map(|s| s.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        ptrs
    };
    let argv_ptrs = null_terminated(&argv.iter().collect::<Vec<_>>());
    let mut sh_args: Vec<&CString> = vec![&sh, &program];
    sh_args.extend(argv.iter().skip(1));
    let sh_argv_ptrs = null_terminated(&sh_args);
    let envp_ptrs = null_terminated(&envp.iter().collect::<Vec<_>>());

    let mut all = std::mem::MaybeUninit::<libc::sigset_t>::zeroed();
    let mut mask = std::mem::MaybeUninit::<libc::sigset_t>::zeroed();
    // SAFETY: both sets are valid storage; sigfillset initialises `all`, pthread_sigmask fills
    // `mask` with the current mask.
    unsafe {
        libc::sigfillset(all.as_mut_ptr());
        libc::pthread_sigmask(libc::SIG_SETMASK, all.as_ptr(), mask.as_mut_ptr());
    }
    let plan = Plan {
        program,
        argv,
        argv_ptrs,
        sh_argv_ptrs,
        sh,
        envp,
        envp_ptrs,
        // SAFETY: getpid cannot fail.
        parent: unsafe { libc::getpid() },
        terminal,
        // SAFETY: filled by pthread_sigmask above.
        mask: unsafe { mask.assume_init() },
        // SAFETY: as above.
        child_mask: super::signals::inherited_mask().unwrap_or(unsafe { mask.assume_init() }),
        handled: handled.to_vec(),
        error: AtomicI32::new(0),
    };

    const STACK: usize = 64 * 1024;
    let stack = map_stack(STACK);
    let pid = if let Some(stack) = stack {
        // SAFETY: the stack grows down on every Linux target we build for, so the child starts
        // at the top of the mapping. `plan` outlives the child's use of it: with CLONE_VFORK
        // this call returns only once the child has exec'd or exited.
        unsafe {
            libc::clone(
                child,
                stack.cast::<u8>().add(STACK).cast(),
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                (&raw const plan).cast_mut().cast(),
            )
        }
    } else {
        -1
    };
    let clone_error = io::Error::last_os_error();
    // SAFETY: restores the mask saved above; unmaps the stack we mapped (the child no longer
    // runs on it: it has exec'd or exited).
    unsafe {
        libc::pthread_sigmask(libc::SIG_SETMASK, &plan.mask, std::ptr::null_mut());
        if let Some(stack) = stack {
            libc::munmap(stack, STACK);
        }
    }
    if pid == -1 {
        return Err(clone_error);
    }
    let exec_error = plan.error.load(Ordering::SeqCst);
    if exec_error != 0 {
        let mut status = 0;
        // The child has exited (CLONE_VFORK returned), so this does not block; but any
        // signal may interrupt a system call of any thread (redlock has handlers), and an
        // unreaped child would stay a zombie: retried on EINTR, as every wait here is.
        // SAFETY: reaps our own child, which has exited; `status` is valid storage.
        while unsafe { libc::waitpid(pid, &mut status, 0) } == -1
            && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
        {}
        return Err(io::Error::from_raw_os_error(exec_error));
    }
    drop(plan.argv);
    drop(plan.envp);
    Ok(pid)
}

/// The child, between clone and exec. Only async-signal-safe calls on prepared data.
extern "C" fn child(plan: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `plan` points to the parent's `Plan`, alive and not mutated while this runs (the
    // parent sleeps under CLONE_VFORK); every call below is an async-signal-safe system call
    // on plain integers or on pointers into that plan.
    unsafe {
        let plan = &*(plan as *const Plan);
        let fail = |plan: &Plan| -> libc::c_int {
            plan.error
                .store(*libc::__errno_location(), Ordering::SeqCst);
            libc::_exit(127)
        };
        if libc::setpgid(0, 0) == -1 {
            return fail(plan);
        }
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
            return fail(plan);
        }
        // If redlock died before the line above, the death signal will never come: do not run
        // the command without the lock.
        if libc::getppid() != plan.parent {
            plan.error.store(libc::ESRCH, Ordering::SeqCst);
            libc::_exit(127);
        }
        if let Some(fd) = plan.terminal {
            // Still blocking every signal, so SIGTTOU cannot stop us here.
            libc::tcsetpgrp(fd, libc::getpid());
        }
        // Handlers are redlock's code; the command starts with default actions (exec would
        // reset them too, but a signal could arrive before it). SIGPIPE: Rust ignores it in
        // redlock; the command gets the default.
        // A signal ignored when redlock started (nohup) has no handler and stays ignored.
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        let mut current: libc::sigaction = std::mem::zeroed();
        for &signal in &plan.handled {
            libc::sigaction(signal, std::ptr::null(), &mut current);
            if current.sa_sigaction != libc::SIG_IGN {
                libc::sigaction(signal, &default, std::ptr::null_mut());
            }
        }
        libc::sigaction(libc::SIGPIPE, &default, std::ptr::null_mut());
        libc::pthread_sigmask(libc::SIG_SETMASK, &plan.child_mask, std::ptr::null_mut());
        libc::execve(
            plan.program.as_ptr(),
            plan.argv_ptrs.as_ptr(),
            plan.envp_ptrs.as_ptr(),
        );
        if *libc::__errno_location() == libc::ENOEXEC {
            // A script without #!: run it with the shell, as execvp does.
            libc::execve(
                plan.sh.as_ptr(),
                plan.sh_argv_ptrs.as_ptr(),
                plan.envp_ptrs.as_ptr(),
            );
        }
        fail(plan)
    }
}
