//! The command line, as clap definitions only. Doc comments are the help text; values are
//! checked for syntax here and for meaning in `config/`. Beside the definitions:
//! `placement` (options before or after the subcommand), `examples` (one table for help, man
//! and README), `errors` (clap errors as one line).

use std::ffi::OsString;
use std::time::Duration;

use clap::builder::PossibleValuesParser;
use clap::{Args, Parser, Subcommand, ValueHint};

mod durations;
mod errors;
mod examples;
mod global;
mod lock_args;
mod ops;
mod placement;
mod renew_while;
mod sd_notify;

pub use durations::{DurationOption, LONGEST_DURATION, parse_duration, parse_wait};
pub use errors::{one_line, subcommand_in};
use examples::examples_help;
pub use examples::{EXAMPLES, SUBCOMMANDS, examples};
pub use global::{LogFormat, MasterArgs, OutputArgs, QuietArg};
pub use lock_args::LockArgs;
pub use ops::{ConfigArgs, DoctorArgs, ListArgs, MetricsArgs};
pub use placement::{GlobalArgs, check_placement};
pub use renew_while::{RENEW_WHILE, RenewWhileArgs};
pub use sd_notify::{NotifyArgs, SdNotify};

/// What `redlock --version` prints after the name: the version, then the commit and the
/// target, as users paste them into bug reports (build.rs finds them). `-V` prints the version
/// alone, and so do the man pages, which would otherwise change with every commit.
pub const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "\ncommit ",
    env!("REDLOCK_BUILD_COMMIT"),
    "\ntarget ",
    env!("REDLOCK_BUILD_TARGET"),
);

/// Distributed locks for shell scripts, cron jobs and CI pipelines.
///
/// redlock takes a lock on a majority of N independent Redis masters (the Redlock algorithm),
/// keeps it alive while your command runs, and releases it when the command ends.
#[derive(Debug, Parser)]
#[command(
    name = "redlock",
    version,
    long_version = LONG_VERSION,
    propagate_version = true,
    disable_help_subcommand = true,
    max_term_width = 100
)]
#[command(after_help = crate::exit::help_table())]
pub struct Cli {
    // Options given before the subcommand count as given after it, for a subcommand that takes
    // them (`redlock -s URL run ...`); `check_placement` refuses them for one that does not.
    #[command(flatten)]
    pub masters: MasterArgs,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub quiet: QuietArg,

    #[command(subcommand)]
    pub command: Command,
}

/// Each subcommand's arguments are added only when clap builds that subcommand (`defer`): a
/// `run` builds the arguments of `run` alone, not of all eleven, which was most of the heap a
/// whole `run` touched (BENCHMARKS.md, issue 35). Whoever reads arguments without parsing
/// (man pages, completions, the environment check) builds the command first. The `Args`
/// structs carry `//` comments, not doc comments: deferred, a struct's doc comment would
/// replace its subcommand's description (tests/generated.rs sees it in the man pages).
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Take the lock, run a command while renewing it, release it, and exit with the
    /// command's status.
    ///
    /// The command runs in its own process group; INT, TERM, HUP, QUIT, USR1 and USR2 sent to
    /// redlock are forwarded to it. If the lock is lost (renewal cannot keep a majority), the
    /// command is stopped before the lock's validity ends: SIGTERM, then SIGKILL after
    /// --kill-after; redlock then exits 70. The command sees REDLOCK_KEY, REDLOCK_TOKEN and
    /// REDLOCK_VALIDITY_MS in its environment.
    #[command(after_help = examples_help("run"))]
    Run {
        #[command(flatten)]
        args: RunArgs,
        #[command(flatten)]
        masters: MasterArgs,
        #[command(flatten)]
        output: OutputArgs,
        #[command(flatten)]
        quiet: QuietArg,
    },

    /// Take the lock and print its token, for scripts that release it in a later step.
    ///
    /// Prints the token (plain), `export` lines for `eval` (env), or one JSON object (json).
    /// Without --renew-while the lock simply expires after --ttl unless extended or released.
    #[command(after_help = examples_help("acquire"))]
    Acquire {
        #[command(flatten)]
        args: AcquireArgs,
        #[command(flatten)]
        masters: MasterArgs,
        #[command(flatten)]
        output: OutputArgs,
        #[command(flatten)]
        quiet: QuietArg,
    },

    /// Release a lock taken with `acquire`, on every master; or, with --force, revoke whoever
    /// holds it.
    ///
    /// Exits 0 when a majority released it, 70 when the token does not hold the lock (it
    /// expired, or is someone else's: nothing is deleted then), 69 when too few masters answered.
    /// With --force: 0 when a majority now holds the revocation, 79 when nobody held the lock,
    /// 69 when the force reached fewer than a majority.
    #[command(after_help = examples_help("release"))]
    Release {
        #[command(flatten)]
        args: TokenArgs,
        #[command(flatten)]
        force: ForceArgs,
        #[command(flatten)]
        metrics: MetricsArgs,
        #[command(flatten)]
        masters: MasterArgs,
        #[command(flatten)]
        output: OutputArgs,
    },

    /// Extend a lock taken with `acquire` to a full TTL again, on a majority of masters.
    ///
    /// Exits 0 when a majority confirmed, 70 when the lock is gone (expired or someone
    /// else's; it is never re-created), 69 when too few masters answered.
    #[command(after_help = examples_help("extend"))]
    Extend {
        #[command(flatten)]
        args: ExtendArgs,
        #[command(flatten)]
        masters: MasterArgs,
        #[command(flatten)]
        output: OutputArgs,
    },

    /// Show who holds a lock, master by master, and the verdict; with --watch, a line each
    /// time its holder changes.
    ///
    /// Exits 0 when a majority holds it, 1 when it is free, 2 when split (no majority
    /// either way), 69 when too many masters are unreachable to tell. --watch runs until
    /// SIGINT or SIGTERM and exits 0.
    #[command(after_help = examples_help("status"))]
    Status {
        #[command(flatten)]
        args: StatusArgs,
        #[command(flatten)]
        masters: MasterArgs,
        #[command(flatten)]
        output: OutputArgs,
        // `if redlock status -q ...` is how docs/status.md tests for "held".
        #[command(flatten)]
        quiet: QuietArg,
    },

    /// Show a lock's last turns, newest first: who held it, when, for how long, and how each
    /// turn ended (released with the command's status, lost, revoked, expired; or never ran:
    /// superseded, gave up).
    ///
    /// Read from every master and merged: a turn that any master recorded is shown once.
    /// Exits 0 (also with no history: "no history"), 69 when too many masters are unreachable
    /// to tell.
    #[command(after_help = examples_help("history"))]
    History {
        #[command(flatten)]
        args: HistoryArgs,
        #[command(flatten)]
        masters: MasterArgs,
        #[command(flatten)]
        output: OutputArgs,
    },

    /// List every lock held on the masters, with its holder and queued waiters, and every
    /// semaphore (--limit) with its slots; with --problems, also look for leaks.
    ///
    /// Finds locks through redlock's own keys (SCAN, never KEYS), so locks that other Redlock
    /// clients hold are not seen. Exits 0; with --problems, 1 when something was found; 69
    /// when a majority of masters (with --problems: any master) could not be scanned fully.
    #[command(after_help = examples_help("list"))]
    List {
        #[command(flatten)]
        args: ListArgs,
        #[command(flatten)]
        masters: MasterArgs,
        #[command(flatten)]
        output: OutputArgs,
    },

    /// Check the masters: reachable, which server (Redis, Valkey, KeyDB, Dragonfly, Garnet,
    /// Kvrocks) and whether it can hold a lock by itself, a master and not a replica, version,
    /// eviction policy, persistence, clock skew, odd N, the same server listed twice.
    ///
    /// Exits 0 when nothing is an error (warnings allowed), 1 when something is.
    #[command(after_help = examples_help("doctor"))]
    Doctor {
        #[command(flatten)]
        args: DoctorArgs,
        #[command(flatten)]
        masters: MasterArgs,
        #[command(flatten)]
        output: OutputArgs,
    },

    /// Show the settings redlock would use, and where each comes from (passwords redacted).
    #[command(after_help = examples_help("config"))]
    Config {
        #[command(flatten)]
        args: ConfigArgs,
        #[command(flatten)]
        masters: MasterArgs,
        #[command(flatten)]
        output: OutputArgs,
    },

    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_help = examples_help("completions"))]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },

    /// Print the man page (roff), or the page of one subcommand.
    #[command(after_help = examples_help("man"))]
    Man {
        /// The subcommand whose page to print (e.g. run); default: the main page.
        #[arg(value_name = "SUBCOMMAND", value_parser = PossibleValuesParser::new(SUBCOMMANDS))]
        subcommand: Option<String>,
    },

    // Ours rather than clap's, whose `help` takes no --help of its own (`redlock help --help`
    // was a usage error) and offers no subcommand names to complete.
    /// Print the help of redlock, or of one of its subcommands (the same as --help).
    #[command(after_help = examples_help("help"))]
    Help {
        /// The subcommand whose help to print (e.g. run); default: redlock's own.
        #[arg(value_name = "SUBCOMMAND", value_parser = PossibleValuesParser::new(SUBCOMMANDS))]
        subcommand: Option<String>,
    },

    // Internal: hidden from help, and kept out of the completions, the man pages and clap's
    // "a similar subcommand exists" tips (see `commands::generate` and `one_line`).
    /// The detached renewer that `acquire --renew-while` leaves behind (internal).
    #[command(name = RENEW_WHILE, hide = true)]
    RenewWhile {
        #[command(flatten)]
        args: RenewWhileArgs,
        #[command(flatten)]
        masters: MasterArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
}

/// How `acquire` prints the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The token alone.
    Plain,
    /// `export` lines for `eval`: REDLOCK_KEY, REDLOCK_TOKEN, REDLOCK_VALIDITY_MS, and
    /// REDLOCK_FENCE with --fence.
    Env,
    /// One JSON object: key, token, nested, ttl_ms, validity_ms, fence, limit (--limit),
    /// holder.
    Json,
}

#[derive(Debug, Args)]
pub struct AcquireArgs {
    #[command(flatten)]
    pub lock: LockArgs,

    /// How to print the lock.
    #[arg(short, long, value_enum, default_value_t = Format::Plain)]
    pub format: Format,

    /// Keep the lock renewed by a small detached process for as long as process PID lives
    /// (e.g. $$, the calling shell); it is released when PID exits.
    // A process id: completing file names there would only mislead.
    #[arg(long, value_name = "PID", value_hint = ValueHint::Other)]
    pub renew_while: Option<i32>,

    #[command(flatten)]
    pub metrics: MetricsArgs,
}

// A lock named by key and token, as printed by `acquire`.
#[derive(Debug, Args)]
pub struct TokenArgs {
    /// The lock's name.
    // Help shows where a value may come from, never the value (nor `=` and an empty one).
    #[arg(
        short,
        long,
        value_name = "KEY",
        value_hint = ValueHint::Other,
        env = "REDLOCK_KEY",
        hide_env_values = true
    )]
    pub key: String,

    /// The token `acquire` printed (required, but for `release --force`).
    #[arg(
        long,
        value_name = "TOKEN",
        value_hint = ValueHint::Other,
        env = "REDLOCK_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,

    /// How long one master gets to answer. Default: 1s for release; for extend, as for
    /// acquire: TTL/20, between 10ms and 1s.
    #[arg(long, value_parser = parse_duration, duration())]
    pub node_timeout: Option<Duration>,
}

// Breaking glass: `release --force`.
#[derive(Debug, Args)]
pub struct ForceArgs {
    /// Revoke whoever holds the lock (the lock, every reader, every slot of a `--limit`
    /// semaphore), without their token. The key stays closed (each revoked slot stays taken)
    /// until the revoked holders have stopped and said so, or their TTL has run out: never two
    /// holders, never more than the limit. A revoked `run` stops its command (exit 70) and
    /// names who revoked it, from which host, and why.
    #[arg(long)]
    pub force: bool,

    /// Why (with --force): recorded with the revocation and shown to the revoked holder, to
    /// `status` and `list`. At most 256 bytes.
    #[arg(long, value_name = "TEXT", requires = "force", value_hint = ValueHint::Other)]
    pub reason: Option<String>,
}

#[derive(Debug, Args)]
pub struct ExtendArgs {
    #[command(flatten)]
    pub lock: TokenArgs,

    /// The new time to live, counted from now. Default: 30s (or `ttl` in the config file).
    #[arg(short, long, value_parser = parse_duration, duration())]
    pub ttl: Option<Duration>,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The lock's name.
    #[arg(short, long, value_name = "KEY", value_hint = ValueHint::Other)]
    pub key: String,

    /// Print one JSON object instead of text (with --watch: one a line).
    #[arg(long)]
    pub json: bool,

    /// Keep watching: print the holder now, then a line each time it changes (taken,
    /// released, expired, lost), a master goes down or comes back, or the state cannot be
    /// told; until SIGINT or SIGTERM (exit 0). Driven by the masters' release notices, with a
    /// read at least every second.
    #[arg(long, conflicts_with = "quiet")]
    pub watch: bool,

    /// How long one master gets to answer. Default: 1s.
    #[arg(long, value_parser = parse_duration, duration())]
    pub node_timeout: Option<Duration>,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The lock's name.
    #[arg(short, long, value_name = "KEY", value_hint = ValueHint::Other)]
    pub key: String,

    /// Show at most this many turns, 1 to 1000. Default: 20.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 20,
        value_parser = clap::value_parser!(u32).range(1..=1000),
        value_hint = ValueHint::Other
    )]
    pub limit: u32,

    /// Show only the turns that started (or ended) within this long before now, e.g. 1h, 7d.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, duration())]
    pub since: Option<Duration>,

    /// Print one JSON object a line, one a turn, instead of text (docs/protocol.md, "History").
    #[arg(long)]
    pub json: bool,

    /// How long one master gets to answer each page of the read. Default: 1s.
    #[arg(long, value_parser = parse_duration, duration())]
    pub node_timeout: Option<Duration>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub lock: LockArgs,

    /// On lock loss, time between SIGTERM and SIGKILL to the command. Default: 5s, or TTL/4
    /// if shorter; at most TTL/2, so the command is always dead before the validity ends.
    #[arg(long, value_parser = parse_duration, duration())]
    pub kill_after: Option<Duration>,

    /// Keep the lock at least this long after the start, even if the command ends sooner: the
    /// key is left to expire then instead of being deleted (cron on several hosts: the same job
    /// fired a moment later elsewhere does not run again).
    #[arg(long, value_parser = parse_duration, duration())]
    pub hold_min: Option<Duration>,

    /// Stop the command (SIGTERM, then SIGKILL after --kill-after) and release the lock once it
    /// has run this long; redlock then exits 124. Caps how long renewal may hold the lock.
    #[arg(long, value_parser = parse_duration, duration())]
    pub max_duration: Option<Duration>,

    #[command(flatten)]
    pub metrics: MetricsArgs,

    #[command(flatten)]
    pub notify: NotifyArgs,

    /// The command to run and its arguments (put them after --).
    // Completed as a command line of its own: a command name, then its own arguments.
    #[arg(
        value_name = "COMMAND",
        required = true,
        trailing_var_arg = true,
        value_hint = ValueHint::CommandWithArguments
    )]
    pub command: Vec<OsString>,
}

#[cfg(test)]
mod tests;
