//! The "waiting for lock" line: redrawn in place on a terminal, one line per change of holder
//! with -v otherwise, nothing with --quiet or when neither applies.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use crate::lock::AttemptFailure;
use crate::log;

use super::wording::list;

/// The "waiting for lock" line: updated in place on a terminal, one line per change of holder
/// with -v otherwise, nothing with --quiet or when neither applies.
pub struct WaitProgress<'a> {
    key: &'a str,
    terminal: bool,
    enabled: bool,
    last: Option<String>,
    last_drawn: Option<Instant>,
    drawn: bool,
}

impl<'a> WaitProgress<'a> {
    pub fn new(key: &'a str, quiet: bool) -> WaitProgress<'a> {
        let terminal = std::io::stderr().is_terminal();
        WaitProgress {
            key,
            terminal,
            enabled: !quiet && (terminal || log::enabled(1)),
            last: None,
            last_drawn: None,
            drawn: false,
        }
    }

    pub fn update(&mut self, failure: &AttemptFailure) {
        if !self.enabled {
            return;
        }
        let why = match failure {
            AttemptFailure::Held {
                holder: Some(holder),
                ..
            } => format!("held by {}", holder.describe()),
            AttemptFailure::Held { holder: None, .. } => "held by another client".into(),
            AttemptFailure::Unreachable { failures, .. } => {
                format!("masters unreachable: {}", list(failures))
            }
            AttemptFailure::TooSlow { .. } => "masters too slow".into(),
        };
        let line = format!("waiting for lock {:?}: {why}", self.key);
        if self.terminal {
            // Redraw at most a few times a second; the holder's age changes every second.
            let due = self
                .last_drawn
                .is_none_or(|t| t.elapsed() >= Duration::from_millis(250));
            if due || self.last.as_deref() != Some(line.as_str()) {
                eprint!("\r\x1b[2Kredlock: {line}");
                self.drawn = true;
                self.last_drawn = Some(Instant::now());
            }
        } else if self.last.as_deref().map(strip_age) != Some(strip_age(&line)) {
            log::line(format_args!("{line}"));
        }
        self.last = Some(line);
    }

    pub fn finish(&mut self) {
        if self.drawn {
            eprint!("\r\x1b[2K");
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
