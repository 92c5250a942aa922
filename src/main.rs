use std::io::Write;

use clap::Parser;
use redlock_cli::cli::Cli;
use redlock_cli::exit;

fn main() {
    let code = match Cli::try_parse() {
        Ok(cli) => {
            let json = cli.global.log_format == redlock_cli::cli::LogFormat::Json;
            redlock_cli::log::configure(cli.global.verbose, json);
            match redlock_cli::commands::dispatch(cli) {
                Ok(code) => code,
                Err(failure) => {
                    if !failure.message.is_empty() {
                        redlock_cli::log::line(format_args!("{}", failure.message));
                    }
                    failure.code
                }
            }
        }
        Err(error) => usage_error(&error),
    };
    let _ = std::io::stdout().flush();
    std::process::exit(code);
}

/// Prints help and version as clap does; anything else becomes one line and exit code 64.
fn usage_error(error: &clap::Error) -> i32 {
    use clap::error::ErrorKind;
    match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = error.print();
            exit::OK
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            redlock_cli::log::line(format_args!(
                "a subcommand is required (run, acquire, release, extend, status, doctor, \
                 config, completions, man); see 'redlock --help'"
            ));
            exit::USAGE
        }
        _ => {
            let args: Vec<String> = std::env::args().collect();
            let subcommand = redlock_cli::cli::subcommand_in(&args);
            let line = redlock_cli::cli::one_line(error, subcommand.as_deref());
            redlock_cli::log::line(format_args!("{line}"));
            exit::USAGE
        }
    }
}
