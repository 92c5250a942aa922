//! The "waiting for lock" line: redrawn in place on a terminal, one line per change of holder
//! with -v otherwise, nothing with --quiet or when neither applies.
//!
//! On a terminal the line says how long redlock has waited and how much of `--wait` is left,
//! and is cut to the terminal's width: a line that wraps cannot be redrawn in place (`\r` goes
//! back to the start of the last row only), so each redraw would scroll a new copy down.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use std::time::UNIX_EPOCH;

use crate::lock::{AttemptFailure, Holder};

use super::wording::{self, list};

/// The "waiting for lock" line: updated in place on a terminal, one line per change of holder
/// with -v otherwise, nothing with --quiet or when neither applies.
pub struct WaitProgress<'a> {
    key: &'a str,
    started: Instant,
    /// The wait budget (`Duration::MAX`: forever).
    wait: Duration,
    terminal: bool,
    enabled: bool,
    last: Option<String>,
    last_drawn: Option<Instant>,
    drawn: bool,
}

impl<'a> WaitProgress<'a> {
    pub fn new(key: &'a str, quiet: bool, wait: Duration) -> WaitProgress<'a> {
        let terminal = std::io::stderr().is_terminal();
        WaitProgress {
            key,
            started: Instant::now(),
            wait,
            terminal,
            enabled: !quiet && (terminal || log::log_enabled!(log::Level::Info)),
            last: None,
            last_drawn: None,
            drawn: false,
        }
    }

    pub fn update(&mut self, failure: &AttemptFailure) {
        if !self.enabled {
            return;
        }
        let why = reason(failure, Age::HeldFor);
        let line = format!("waiting for lock {:?}: {why}", self.key);
        if self.terminal {
            // Redraw at most a few times a second; the holder's age changes every second.
            let due = self
                .last_drawn
                .is_none_or(|t| t.elapsed() >= Duration::from_millis(250));
            if due || self.last.as_deref() != Some(line.as_str()) {
                let waited = self.started.elapsed();
                let full = format!("redlock: {line} ({})", budget(waited, self.wait));
                let width = terminal_size::terminal_size_of(std::io::stderr())
                    .map_or(80, |(width, _)| usize::from(width.0));
                eprint!("\r\x1b[2K{}", fit(&full, width));
                self.drawn = true;
                self.last_drawn = Some(Instant::now());
            }
        } else if self.last.as_deref().map(strip_age) != Some(strip_age(&line)) {
            log::error!("{line}");
        }
        self.last = Some(line);
    }

    pub fn finish(&mut self) {
        if self.drawn {
            eprint!("\r\x1b[2K");
        }
    }
}

/// How a holder's age is said: "for 2m10s" on a line drawn now, "since <UTC time>" in a
/// status that stays up until the next change (systemd's STATUS=).
#[derive(Clone, Copy)]
enum Age {
    HeldFor,
    Since,
}

impl Age {
    fn describe(self, holder: &Holder) -> String {
        match self {
            Age::HeldFor => holder.describe(),
            Age::Since => {
                let since = UNIX_EPOCH + Duration::from_millis(holder.since_ms);
                let line = holder.describe();
                format!(
                    "{}) since {}",
                    strip_age(&line),
                    humantime::format_rfc3339_seconds(since)
                )
            }
        }
    }
}

/// What systemd's STATUS= says while waiting: who is in the way, and our place in line.
pub fn wait_status(key: &str, failure: &AttemptFailure) -> String {
    format!("waiting for lock {key:?}: {}", reason(failure, Age::Since))
}

/// Why the lock could not be taken yet, in words.
fn reason(failure: &AttemptFailure, age: Age) -> String {
    match failure {
        AttemptFailure::Held {
            holder,
            free,
            shared,
            revoked,
            waiters,
            place,
            ..
        } => {
            let who = match holder {
                _ if *free => "free, others first".to_string(),
                // As the give-up line says it (`wording`): readers hold no token of a holder.
                _ if *shared => "held by readers (--shared)".to_string(),
                _ if *revoked => {
                    "revoked by `redlock release --force`, closed until the revoked holder stops"
                        .to_string()
                }
                Some(holder) => format!("held by {}", age.describe(holder)),
                None => "held by another client".into(),
            };
            match place {
                Some(place) => format!("{who}; place {place} of {waiters} in line"),
                None => who,
            }
        }
        AttemptFailure::Unreachable { failures, .. } => {
            let how = wording::how_failed(failures.iter().map(|f| &f.error));
            format!("masters {how}: {}", list(failures))
        }
        AttemptFailure::TooSlow { .. } => "masters too slow".into(),
        AttemptFailure::Full {
            limit,
            holders,
            waiters,
            place,
            ..
        } => {
            let taken = format!(
                "{} taken{}",
                wording::all_slots(*limit),
                wording::slot_holders(holders)
            );
            match place {
                Some(place) => format!("{taken}; place {place} of {waiters} in line"),
                None => taken,
            }
        }
    }
}

/// The line without the trailing "for 2m10s", so that a non-terminal log gets a new line
/// only when the holder changes, not every second.
fn strip_age(line: &str) -> &str {
    match line.rfind(") for ") {
        Some(i) => &line[..i],
        None => line,
    }
}

/// `waited 12s of 5m` (or `waited 12s, no limit` for --wait forever), in whole seconds.
fn budget(waited: Duration, wait: Duration) -> String {
    let seconds = |d: Duration| humantime::format_duration(Duration::from_secs(d.as_secs()));
    if Instant::now().checked_add(wait).is_none() {
        format!("waited {}, no limit", seconds(waited))
    } else {
        format!("waited {} of {}", seconds(waited), seconds(wait))
    }
}

/// `line` cut to fewer than `width` columns (with an ellipsis when cut), so that it never
/// reaches the last column, where some terminals wrap at once. Counts characters: wide
/// characters may still overflow, which only costs a scrolled line.
fn fit(line: &str, width: usize) -> String {
    let room = width.saturating_sub(1).max(10);
    if line.chars().count() <= room {
        return line.to_string();
    }
    let mut cut: String = line.chars().take(room - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_fit_the_terminal() {
        assert_eq!(fit("short", 60), "short");
        let long = "x".repeat(200);
        assert_eq!(fit(&long, 60).chars().count(), 59);
        assert!(fit(&long, 60).ends_with('…'));
        assert_eq!(fit(&long, 0).chars().count(), 10);
    }

    #[test]
    fn the_budget_reads_in_whole_seconds() {
        let s = Duration::from_secs;
        assert_eq!(
            budget(Duration::from_millis(12_400), s(300)),
            "waited 12s of 5m"
        );
        assert_eq!(budget(s(3), Duration::MAX), "waited 3s, no limit");
    }
}
