//! The options every subcommand that talks to masters shares (where they are, how to log in),
//! and those of output (format, verbosity, quiet): flattened into `Cli` and into each
//! subcommand, so that they may come before or after it (see `placement`).

use std::path::PathBuf;

use clap::{Args, ValueHint};

// Where the masters are and how to log in: for every subcommand that talks to them.
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "Master options")]
pub struct MasterArgs {
    /// A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS),
    /// valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port
    /// (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or
    /// space-separated), else redis://127.0.0.1:6379.
    #[arg(long = "server", short = 's', value_name = "URL", value_hint = ValueHint::Url)]
    pub servers: Vec<String>,

    /// Read settings from this TOML file (default: $REDLOCK_CONFIG, else
    /// ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present).
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath)]
    pub config: Option<PathBuf>,

    /// Read the Redis password from the first line of this file (for masters whose URL has
    /// none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file.
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath)]
    pub password_file: Option<PathBuf>,

    /// Trust this CA (PEM) for rediss:// masters instead of the system's trust store.
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath)]
    pub tls_ca_cert: Option<PathBuf>,

    // Whether --tls-key came too is checked once the options before and after the subcommand
    // are merged (`Cli::into_parts`): clap's `requires` would look at one side only.
    /// Present this client certificate (PEM) to rediss:// masters; needs --tls-key.
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath)]
    pub tls_cert: Option<PathBuf>,

    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath)]
    pub tls_key: Option<PathBuf>,
}

// What redlock says on stderr: for every subcommand that talks to masters.
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "Output options")]
pub struct OutputArgs {
    /// Say more on stderr: -v what redlock does, -vv what each master answered.
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// How to write diagnostics on stderr: text (the default), or one JSON object per line.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub log_format: Option<LogFormat>,
}

// `-q`: for the subcommands that may find the lock held elsewhere.
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "Output options")]
pub struct QuietArg {
    /// Quiet: `run` and `acquire` say nothing when the lock is held elsewhere; `status` prints
    /// no report. The exit code still says it.
    #[arg(short, long)]
    pub quiet: bool,
}

/// The shape of diagnostics on stderr.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}
