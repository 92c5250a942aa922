//! Clap definitions for operators: `list` (every lock, the leak scan), `--metrics-file`,
//! `doctor` and `config`.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueHint};

use super::{DurationOption, parse_duration};

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only locks whose key matches this glob (Redis's rules: *, ?, [a-z], \ escapes), e.g.
    /// 'deploy-*'.
    #[arg(short, long, value_name = "GLOB", value_hint = ValueHint::Other)]
    pub pattern: Option<String>,

    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,

    /// Also look for leaks: keys without a TTL, holder records whose lock is gone or holds
    /// another token, queued waiters whose lease lapsed, fencing counters unused for --idle.
    /// Each finding says what to do; exits 1 when anything is found.
    #[arg(long)]
    pub problems: bool,

    /// With --problems: report a fencing counter whose lock is absent and that nothing has
    /// used for this long. Default: 90d.
    #[arg(long, value_parser = parse_duration, requires = "problems", duration())]
    pub idle: Option<Duration>,

    /// Stop scanning after this long; masters not scanned fully by then are named. Default:
    /// 10s.
    #[arg(long, value_parser = parse_duration, duration())]
    pub timeout: Option<Duration>,

    /// How long one master gets to answer one request. Default: 1s.
    #[arg(long, value_parser = parse_duration, duration())]
    pub node_timeout: Option<Duration>,
}

// `--metrics-file`, for `run`, `acquire` and `release`.
#[derive(Debug, Default, Args)]
pub struct MetricsArgs {
    /// Add what this command saw (seconds waited for the lock, seconds held, the outcome) to
    /// this Prometheus text file, for node_exporter's textfile collector; merged with what
    /// other redlock processes wrote there. Default: `metrics_file` in the config file.
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath)]
    pub metrics_file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,

    /// How long one master gets to answer each check. Default: 1s.
    #[arg(long, value_parser = parse_duration, duration())]
    pub node_timeout: Option<Duration>,
}

#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}
