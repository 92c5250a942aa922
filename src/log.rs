//! Diagnostics on stderr: errors and warnings always, progress with `-v`, per-master detail with
//! `-vv`; as text (`redlock: ...`) or, with `--log-format json`, one JSON object per line
//! (`{"time": ..., "level": ..., "message": ...}`).
//!
//! Kept deliberately small: the level and format are set once at start-up and read with
//! relaxed atomics, so a disabled message costs a load and a branch.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::SystemTime;

static LEVEL: AtomicU8 = AtomicU8::new(0);
static JSON: AtomicBool = AtomicBool::new(false);

/// How important a line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Error,
    Warn,
    Info,
    Debug,
}

impl Level {
    fn name(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warn => "warn",
            Level::Info => "info",
            Level::Debug => "debug",
        }
    }
}

/// Sets how much is said: 0 errors and warnings only, 1 progress (`-v`), 2 per-master detail
/// (`-vv`); and whether lines are JSON.
pub fn configure(verbosity: u8, json: bool) {
    LEVEL.store(verbosity, Ordering::Relaxed);
    JSON.store(json, Ordering::Relaxed);
}

pub fn enabled(verbosity: u8) -> bool {
    LEVEL.load(Ordering::Relaxed) >= verbosity
}

/// Writes one line. A closed stderr is not an error worth dying for.
pub fn emit(level: Level, args: std::fmt::Arguments<'_>) {
    let line = if JSON.load(Ordering::Relaxed) {
        let value = serde_json::json!({
            "time": humantime::format_rfc3339_micros(SystemTime::now()).to_string(),
            "level": level.name(),
            "message": args.to_string(),
        });
        format!("{value}\n")
    } else {
        format!("redlock: {args}\n")
    };
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// An error or notice the user must see.
pub fn line(args: std::fmt::Arguments<'_>) {
    emit(Level::Error, args);
}

/// A warning: something works, but is unsafe or surprising.
pub fn warn(args: std::fmt::Arguments<'_>) {
    emit(Level::Warn, args);
}

/// `-v`: what redlock is doing.
#[macro_export]
macro_rules! info {
    ($($arg:tt)*) => {
        if $crate::log::enabled(1) {
            $crate::log::emit($crate::log::Level::Info, format_args!($($arg)*));
        }
    };
}

/// `-vv`: what each master answered, with timings.
#[macro_export]
macro_rules! debug {
    ($($arg:tt)*) => {
        if $crate::log::enabled(2) {
            $crate::log::emit($crate::log::Level::Debug, format_args!($($arg)*));
        }
    };
}
