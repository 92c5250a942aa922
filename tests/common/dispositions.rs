//! The signal dispositions a test process hands to what it starts: the defaults, whatever the
//! suite itself was started with.
//!
//! The problem: a signal ignored when a process starts stays ignored across `exec` (and std's
//! `Command` resets only SIGPIPE). A suite started in the background by a non-interactive shell
//! (`scripts/test &`, a CI runner's `nohup`, a job without job control) begins with SIGINT and
//! SIGQUIT (or SIGHUP) ignored, and so does every redlock it starts; redlock keeps an inherited
//! SIG_IGN as it is (a nohup'ed command must stay nohup'ed, see src/supervise/signals.rs), so a
//! test that sends redlock SIGINT waited forever for an exit that never came (seen in a loop
//! of `scripts/test` runs started with `&`).
//!
//! The fix: before `main`, the test process resets every signal redlock forwards or watches
//! from SIG_IGN to SIG_DFL, as a user's interactive shell would have them. A test that needs a
//! signal ignored (`run::a_signal_ignored_by_the_parent_stays_ignored_for_the_command`) says
//! so itself, in the child it starts.

/// The signals redlock forwards to its command or acts on itself.
const RESET: [libc::c_int; 11] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGTSTP,
    libc::SIGTTIN,
    libc::SIGTTOU,
    libc::SIGCONT,
    libc::SIGCHLD,
];

/// Sets each signal of [`RESET`] that is ignored back to its default action. Async-signal-safe.
extern "C" fn default_dispositions() {
    for signal in RESET {
        let mut current = std::mem::MaybeUninit::<libc::sigaction>::zeroed();
        // SAFETY: with a null new action sigaction only fills `current`, valid storage for one
        // `struct sigaction`; the zeroed `default` is a valid action (SIG_DFL, empty mask).
        unsafe {
            if libc::sigaction(signal, std::ptr::null(), current.as_mut_ptr()) == 0
                && current.assume_init().sa_sigaction == libc::SIG_IGN
            {
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(signal, &default, std::ptr::null_mut());
            }
        }
    }
}

/// Runs before the test harness's `main`, while the process has one thread.
// SAFETY: `.init_array` holds pointers to functions the loader calls with the C ABI before
// `main`; this one reads no arguments and makes only async-signal-safe calls.
#[used]
#[unsafe(link_section = ".init_array")]
static DEFAULT_DISPOSITIONS: extern "C" fn() = default_dispositions;
