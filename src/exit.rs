//! Every exit code `redlock` can return, in one place.
//!
//! The numbers follow `sysexits.h` where a code exists for the situation, and the shell's
//! conventions (126, 127, 128+N) for the child. README.md and the man page document the same
//! table; `tests/exit_codes.rs` checks each one against the real binary.

/// Success.
pub const OK: i32 = 0;
/// Bad arguments or values (`EX_USAGE`).
pub const USAGE: i32 = 64;
/// A majority of the masters could not be reached or answered with errors (`EX_UNAVAILABLE`).
pub const UNAVAILABLE: i32 = 69;
/// `status`: the lock is free.
pub const STATUS_FREE: i32 = 1;
/// `status`: masters disagree; neither one holder nor "free" has a majority.
pub const STATUS_SPLIT: i32 = 2;
/// The lock was lost: `run` stopped the child because renewal could not keep a majority;
/// `release` and `extend` found that the token no longer holds the lock (`EX_SOFTWARE`).
pub const LOCK_LOST: i32 = 70;
/// The operating system refused something redlock needs: a thread, a pipe, a signal handler
/// (`EX_OSERR`).
pub const OS_ERROR: i32 = 71;
/// The lock is held by someone else and the wait ran out (`EX_TEMPFAIL`).
pub const CONFLICT: i32 = 75;
/// Bad configuration: config file, environment, or server list (`EX_CONFIG`).
pub const CONFIG: i32 = 78;
/// `run`: the command ran longer than `--max-duration` and was stopped (as `timeout(1)`).
pub const MAX_DURATION: i32 = 124;
/// The command was found but could not be executed.
pub const CANNOT_EXECUTE: i32 = 126;
/// The command was not found.
pub const NOT_FOUND: i32 = 127;

/// The exit code of a process killed by signal `signal`, as shells report it.
pub fn killed_by(signal: i32) -> i32 {
    128 + signal
}

/// A failure the user sees: one line on stderr and an exit code from the table above.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Failure {
    pub code: i32,
    /// One line saying what went wrong and what to do; empty when nothing should be printed
    /// (`--quiet` on an expected conflict).
    pub message: String,
}

impl Failure {
    pub fn new(code: i32, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
        }
    }

    pub fn usage(message: impl Into<String>) -> Failure {
        Failure::new(USAGE, message)
    }

    pub fn config(message: impl Into<String>) -> Failure {
        Failure::new(CONFIG, message)
    }

    pub fn os(message: impl Into<String>) -> Failure {
        Failure::new(OS_ERROR, message)
    }
}
