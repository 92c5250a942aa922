//! Durations on the command line and in the config file: humantime, with a hint for bare
//! numbers, a year at most, and `forever` for `--wait`.

use std::time::Duration;

/// Parses a humantime duration (`30s`, `1m30s`, `250ms`), with a hint for bare numbers.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.starts_with('-') {
        return Err(format!("invalid duration {text:?}: must not be negative"));
    }
    if !text.is_empty() && text.chars().all(|c| c.is_ascii_digit()) && text != "0" {
        return Err(format!(
            "invalid duration {text:?}: add a unit, e.g. {text}s or {text}ms"
        ));
    }
    let duration = humantime::parse_duration(text)
        .map_err(|e| format!("invalid duration {text:?}: {e} (examples: 30s, 1m30s, 250ms)"))?;
    // Far beyond any lock or wait a script needs, and short enough that deadlines computed
    // from it cannot overflow, nor milliseconds overflow Redis's 64-bit integers.
    if duration > LONGEST_DURATION {
        return Err(format!(
            "invalid duration {text:?}: longer than a year (366d), the most redlock accepts"
        ));
    }
    Ok(duration)
}

/// Parses `--wait`: a duration, or `forever` (as long as it takes; a signal still ends the
/// wait), which is `Duration::MAX`.
pub fn parse_wait(text: &str) -> Result<Duration, String> {
    if text.trim().eq_ignore_ascii_case("forever") {
        return Ok(Duration::MAX);
    }
    parse_duration(text).map_err(|e| format!("{e}, or forever"))
}

/// The longest duration any option or config value accepts.
pub const LONGEST_DURATION: Duration = Duration::from_secs(366 * 24 * 3600);

/// What every duration option has besides its parser ([`parse_duration`], or [`parse_wait`]
/// for `--wait`) and its help: one definition, called from the derive as a method of the
/// option (`#[arg(long, value_parser = parse_duration, duration())]`; the derive needs the
/// parser named, since a `Duration` has none of its own). A value that starts with `-` is
/// handed to the parser, which says why a negative duration is refused, rather than read as
/// a flag; completions offer no files for it.
pub trait DurationOption {
    fn duration(self) -> Self;
}

impl DurationOption for clap::Arg {
    fn duration(self) -> clap::Arg {
        self.value_name("DURATION")
            .allow_hyphen_values(true)
            .value_hint(clap::ValueHint::Other)
    }
}
