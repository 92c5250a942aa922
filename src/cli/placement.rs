//! Options given before or after the subcommand's name (`redlock -s URL run ...`): merged into
//! one [`GlobalArgs`], and refused for a subcommand that does not take them.

use std::path::PathBuf;

use super::*;
/// The options of [`MasterArgs`], [`OutputArgs`] and [`QuietArg`] that apply to the
/// subcommand, given before or after its name, merged (see [`Cli::into_parts`]).
#[derive(Debug, Default)]
pub struct GlobalArgs {
    pub servers: Vec<String>,
    pub verbose: u8,
    pub quiet: bool,
    pub config: Option<PathBuf>,
    pub password_file: Option<PathBuf>,
    pub tls_ca_cert: Option<PathBuf>,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    pub log_format: LogFormat,
}

impl GlobalArgs {
    /// Merges what was given before the subcommand with what was given after it: servers
    /// and -v add up, -q from either side holds, and for a file or a format given on both
    /// sides the later one wins.
    fn merge(before: (MasterArgs, OutputArgs, QuietArg), after: Options) -> GlobalArgs {
        let (masters, output, quiet) = before;
        let mut servers = masters.servers;
        servers.extend(after.masters.servers);
        GlobalArgs {
            servers,
            verbose: output.verbose.saturating_add(after.output.verbose),
            quiet: quiet.quiet || after.quiet.quiet,
            config: after.masters.config.or(masters.config),
            password_file: after.masters.password_file.or(masters.password_file),
            tls_ca_cert: after.masters.tls_ca_cert.or(masters.tls_ca_cert),
            tls_cert: after.masters.tls_cert.or(masters.tls_cert),
            tls_key: after.masters.tls_key.or(masters.tls_key),
            log_format: after
                .output
                .log_format
                .or(output.log_format)
                .unwrap_or_default(),
        }
    }

    /// The checks clap cannot make on one side of the subcommand alone.
    pub fn check(&self) -> Result<(), crate::exit::Failure> {
        if self.tls_cert.is_some() != self.tls_key.is_some() {
            return Err(crate::exit::Failure::usage(
                "--tls-cert and --tls-key go together (a client certificate and its private \
                 key): give both or neither",
            ));
        }
        Ok(())
    }
}

/// The option groups a subcommand took after its name (empty for those it does not take).
#[derive(Default)]
struct Options {
    masters: MasterArgs,
    output: OutputArgs,
    quiet: QuietArg,
}

impl Cli {
    /// The options that apply to the subcommand, from both sides of its name, and the
    /// subcommand.
    pub fn into_parts(mut self) -> (GlobalArgs, Command) {
        use std::mem::take;
        let after = match &mut self.command {
            Command::Run {
                masters,
                output,
                quiet,
                ..
            }
            | Command::Acquire {
                masters,
                output,
                quiet,
                ..
            }
            | Command::Status {
                masters,
                output,
                quiet,
                ..
            } => Options {
                masters: take(masters),
                output: take(output),
                quiet: take(quiet),
            },
            Command::Release {
                masters, output, ..
            }
            | Command::Extend {
                masters, output, ..
            }
            | Command::List {
                masters, output, ..
            }
            | Command::History {
                masters, output, ..
            }
            | Command::Doctor {
                masters, output, ..
            }
            | Command::Config {
                masters, output, ..
            }
            | Command::RenewWhile {
                masters, output, ..
            } => Options {
                masters: take(masters),
                output: take(output),
                quiet: QuietArg::default(),
            },
            Command::Completions { .. } | Command::Man { .. } | Command::Help { .. } => {
                Options::default()
            }
        };
        let global = GlobalArgs::merge((self.masters, self.output, self.quiet), after);
        (global, self.command)
    }
}

/// Refuses an option given before a subcommand that does not take it (`redlock -q completions
/// bash`): it would do nothing, silently. `command` is the one that parsed `matches` (building
/// clap's command again would cost as much as the rest of a `run`'s own work).
pub fn check_placement(
    command: &mut clap::Command,
    matches: &clap::ArgMatches,
) -> Result<(), clap::Error> {
    use clap::parser::ValueSource;
    let Some(name) = matches.subcommand_name() else {
        return Ok(());
    };
    let Some(subcommand) = command.find_subcommand(name) else {
        return Ok(());
    };
    let misplaced = command.get_arguments().find(|arg| {
        matches.value_source(arg.get_id().as_str()) == Some(ValueSource::CommandLine)
            && !subcommand
                .get_arguments()
                .any(|a| a.get_id() == arg.get_id())
    });
    match misplaced {
        None => Ok(()),
        Some(arg) => {
            let flag = match (arg.get_long(), arg.get_short()) {
                (Some(long), _) => format!("--{long}"),
                (None, Some(short)) => format!("-{short}"),
                (None, None) => arg.get_id().to_string(),
            };
            let message = format!("'{flag}' does not apply to 'redlock {name}'");
            Err(command.error(clap::error::ErrorKind::ArgumentConflict, message))
        }
    }
}
