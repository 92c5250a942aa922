//! What names a lock and how it is taken: the options `run` and `acquire` share.

use std::time::Duration;

use clap::{Args, ValueHint};

use super::{DurationOption, parse_duration, parse_wait};

// What names a lock and how it is taken.
#[derive(Debug, Args)]
pub struct LockArgs {
    /// The lock's name (the Redis key). Everyone who must not overlap uses the same key.
    #[arg(short, long, value_name = "KEY", value_hint = ValueHint::Other)]
    pub key: String,

    /// How long the lock lives on each master without renewal, e.g. 30s, 2m, 500ms. If redlock
    /// dies, others wait at most this long. Default: 30s (or `ttl` in the config file).
    #[arg(short, long, value_parser = parse_duration, duration())]
    pub ttl: Option<Duration>,

    /// If the lock is taken, wait in line for it (first come, first served) for up to this
    /// long before giving up, or `forever`. Default: try once.
    #[arg(short, long, value_parser = parse_wait, conflicts_with = "no_wait", duration())]
    pub wait: Option<Duration>,

    /// Try once and give up at once if the lock is taken (the default; same as --wait 0).
    #[arg(long)]
    pub no_wait: bool,

    /// How long one master gets to answer one request, connecting included. Default: TTL/20,
    /// between 10ms and 1s.
    #[arg(long, value_parser = parse_duration, duration())]
    pub node_timeout: Option<Duration>,

    /// Share of the TTL set aside for clock drift between hosts (Redlock's drift factor).
    /// Default: 0.01.
    #[arg(long, value_name = "FACTOR", value_hint = ValueHint::Other)]
    pub drift_factor: Option<f64>,

    /// Also obtain a fencing token: a number greater than any handed out before for this key,
    /// given to the command as REDLOCK_FENCE (acquire prints it with --format env or json).
    /// Have the protected resource refuse numbers lower than the highest it has seen.
    #[arg(long)]
    pub fence: bool,

    /// Exit with this code instead of 75 when the lock is held elsewhere (0 suits cron jobs
    /// that should just skip their turn).
    #[arg(
        long,
        value_name = "CODE",
        value_parser = clap::value_parser!(u8),
        // `-1` is a value out of range, not a flag: the range check says so in one line.
        allow_negative_numbers = true,
        value_hint = ValueHint::Other,
    )]
    pub conflict_exit_code: Option<u8>,

    /// This run's order: a number that grows with each run, such as the CI pipeline's number.
    /// A run whose order is lower than the highest that already took the lock is outdated: it
    /// neither waits nor runs, and exits 81. The same order may run again (a retry). Only for
    /// a lock (not with --limit or --shared).
    #[arg(
        long,
        value_name = "N",
        value_parser = parse_order,
        allow_hyphen_values = true,
        value_hint = ValueHint::Other,
        env = "REDLOCK_ORDER"
    )]
    pub order: Option<u64>,

    /// Exit with this code instead of 81 when a higher --order already took the lock (0 counts
    /// a skipped deploy as a success).
    #[arg(
        long,
        value_name = "CODE",
        value_parser = clap::value_parser!(u8),
        // `-1` is a value out of range, not a flag: the range check says so in one line.
        allow_negative_numbers = true,
        value_hint = ValueHint::Other
    )]
    pub outdated_exit_code: Option<u8>,

    /// Waiting, let the newest waiter evict the older waiters of the key (never the holder): an
    /// evicted run does not run its command and exits 80, naming who superseded it. Newer
    /// means a higher --order, else a later arrival. Needs --wait; every waiter of a key must
    /// agree (a waiter without it is refused, exit 64, and the other way round). Only for a
    /// lock (not with --limit or --shared).
    #[arg(long)]
    pub supersede: bool,

    /// Exit with this code instead of 80 when a newer waiter superseded this one (0 counts a
    /// skipped deploy as a success).
    #[arg(
        long,
        value_name = "CODE",
        value_parser = clap::value_parser!(u8),
        // `-1` is a value out of range, not a flag: the range check says so in one line.
        allow_negative_numbers = true,
        value_hint = ValueHint::Other
    )]
    pub superseded_exit_code: Option<u8>,

    /// Let up to L holders in at once (a counting semaphore) instead of one; L is 1 to 1000.
    /// Each holder needs a slot on floor(L*N/(L+1))+1 of the N masters (-v shows it), so fewer
    /// masters may be down than for a lock. Every holder of the key must use the same L.
    #[arg(
        long,
        value_name = "L",
        value_parser = clap::value_parser!(u32).range(1..=1000),
        value_hint = ValueHint::Other,
    )]
    pub limit: Option<u32>,

    /// Take the lock as a reader, shared with any other readers (as flock -s); without it the
    /// lock is exclusive, a writer (as flock -x). Readers and writers of a key wait in one
    /// line: a reader that comes behind a waiting writer waits for it.
    #[arg(long, conflicts_with = "limit")]
    pub shared: bool,

    /// Say why, or for which job, the lock is held: status, list, a conflict and a waiter
    /// show it beside the holder. At most 256 bytes. Default: in a CI job (GitHub Actions,
    /// GitLab CI, Jenkins, Buildkite), the job's URL; --note '' gives none.
    #[arg(
        long,
        value_name = "TEXT",
        value_hint = ValueHint::Other,
        env = "REDLOCK_NOTE",
        hide_env_values = true
    )]
    pub note: Option<String>,

    /// Record this turn in the key's history (`redlock history`), which keeps the last N
    /// events of the key on each master, for 30 days after its last use; `off` records
    /// nothing. N is 1 to 10000; default 1000.
    #[arg(
        long,
        value_name = "N|off",
        value_parser = parse_history,
        value_hint = ValueHint::Other
    )]
    pub history: Option<u32>,
}

/// Parses `--history`: a number of events from 1 to 10000, or `off` (0).
fn parse_history(text: &str) -> Result<u32, String> {
    if text == "off" {
        return Ok(0);
    }
    match text.parse::<u32>() {
        Ok(n) if (1..=10_000).contains(&n) => Ok(n),
        _ => Err("--history takes how many events the key keeps, 1 to 10000, or `off`".into()),
    }
}

/// Parses `--order` (or `REDLOCK_ORDER`, which clap does not name in its error): a whole
/// number, with a line that says what an order is (an empty or unexpanded CI variable is the
/// usual mistake). Its upper bound is checked with the settings (`config`).
fn parse_order(text: &str) -> Result<u64, String> {
    text.parse().map_err(|_| {
        "--order (or REDLOCK_ORDER) takes a whole number that grows with each run, such as \
         the CI pipeline's number"
            .to_string()
    })
}
