//! The hidden subcommand `acquire --renew-while` starts as its detached renewer: not for users,
//! so never in `--help`, the man pages or completions.

use std::time::Duration;

use clap::Args;

use super::{DurationOption, parse_duration};

/// The hidden subcommand that `acquire --renew-while` starts as the detached renewer.
pub const RENEW_WHILE: &str = "__renew-while";

// Arguments of the detached renewer (`redlock __renew-while [global options] --key K ...`);
// the token comes in REDLOCK_TOKEN, never in argv.
#[derive(Debug, Args)]
pub struct RenewWhileArgs {
    #[arg(long)]
    pub key: String,
    #[arg(long, value_parser = parse_duration, duration())]
    pub ttl: Duration,
    #[arg(long, value_parser = parse_duration, duration())]
    pub node_timeout: Duration,
    #[arg(long)]
    pub drift_factor: f64,
    /// The process to outlive no longer than.
    #[arg(long)]
    pub pid: i32,
    /// The lock's validity end, as CLOCK_MONOTONIC nanoseconds.
    #[arg(long)]
    pub valid_until_ns: u64,
}
