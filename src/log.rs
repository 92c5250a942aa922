//! Diagnostics on stderr, gated by `-v` (1) and `-vv` (2).
//!
//! Kept deliberately small: one level, set once at start-up, read with a relaxed atomic on the
//! hot path (a disabled message costs a load and a branch).

use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};

static LEVEL: AtomicU8 = AtomicU8::new(0);

/// Sets how much is said: 0 errors only, 1 progress (`-v`), 2 per-master detail (`-vv`).
pub fn set_level(level: u8) {
    LEVEL.store(level, Ordering::Relaxed);
}

pub fn enabled(level: u8) -> bool {
    LEVEL.load(Ordering::Relaxed) >= level
}

/// Writes one `redlock: ...` line to stderr. A closed stderr is not an error worth dying for.
pub fn line(args: std::fmt::Arguments<'_>) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "redlock: {args}");
}

/// `-v`: what redlock is doing.
#[macro_export]
macro_rules! info {
    ($($arg:tt)*) => {
        if $crate::log::enabled(1) {
            $crate::log::line(format_args!($($arg)*));
        }
    };
}

/// `-vv`: what each master answered, with timings.
#[macro_export]
macro_rules! debug {
    ($($arg:tt)*) => {
        if $crate::log::enabled(2) {
            $crate::log::line(format_args!($($arg)*));
        }
    };
}
